"""The statements Spark's parser does not know, in plain ``spark.sql`` from any client.

``DESCRIBE HISTORY``, ``DESCRIBE DETAIL``, ``SHOW PARTS``, ``EXPLAIN PARTS``, ``OPTIMIZE``,
``VACUUM``, ``RESTORE``, ``EXPIRE SNAPSHOTS`` and ``ALTER TABLE … ADD PART`` / ``DROP PART``
are the catalog's own statements (:mod:`tsfile_catalog.sql.parse`, the one grammar). The
session extensions' parser (``TsFileExtensions``, as Delta's ``DeltaSqlParser``) passes a text
whose first words may start one of them here (:func:`claim`); a text this grammar parses as
one of them becomes ``CALL <catalog>.system.sql(statement => '…')``, which Spark parses, plans
and runs once when it executes, in the catalog that names the table; anything else goes to
Spark's own parser untouched. The procedure runs the statement through the catalog's
``Catalog`` (:func:`claimed_statement`), so each statement has one implementation, with the
same columns, rows and messages as through ``Catalog.sql``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlglot.tokens import TokenType

from tsfile_catalog.exceptions import SqlError
from tsfile_catalog.spark_catalog.url_tables import url_catalog
from tsfile_catalog.sql.analysis import table_refs
from tsfile_catalog.sql.parse import parse_statement, tokenize
from tsfile_catalog.sql.statements import (
    AlterTableAddPart,
    AlterTableDropPart,
    DescribeDetail,
    DescribeHistory,
    DescribeTable,
    ExpireSnapshots,
    ExplainParts,
    Optimize,
    RestoreTable,
    ShowParts,
    Statement,
    TableUrl,
    Vacuum,
)

__all__ = ["EXTENSION_STATEMENTS", "claim", "claimed_statement"]

EXTENSION_STATEMENTS: tuple[type, ...] = (
    DescribeHistory,
    DescribeDetail,
    ShowParts,
    ExplainParts,
    Optimize,
    Vacuum,
    RestoreTable,
    ExpireSnapshots,
    AlterTableAddPart,
    AlterTableDropPart,
)

_NAME_PARTS = (TokenType.VAR, TokenType.IDENTIFIER)


def claim(sql: str, catalogs: Sequence[str], current: str) -> dict[str, Any]:
    """Whether ``sql`` is one of the catalog's own statements, and which catalog runs it.

    ``catalogs`` are the session's catalogs of this plugin (at least one), ``current`` its
    current catalog. A table named ``<catalog>.db.t`` is run by that catalog (every name the
    statement holds must name the same one); an unqualified ``db.t`` by the current catalog,
    which must be one of ``catalogs``.

    Returns:
        ``{"ours": False}``, or ``{"ours": True, "catalog": name, "statement": text}`` where
        ``text`` is ``sql`` with the catalog prefixes removed; or, for a statement of ours
        that is refused (malformed, or naming no catalog of this plugin it can run in, or two
        of them), ``{"ours": True, "catalog": name, "statement": sql, "refusal": message}``.
        The refusal is raised when the statement runs, not here: Spark's parser is a Java
        proxy in the extensions, which can throw only Spark's ``ParseException`` (whose
        error classes carry no message of ours), so a refusal thrown while parsing reached
        every client as an ``UndeclaredThrowableException`` with a Java stack trace.
        A claimed ``DESC[RIBE] HISTORY|DETAIL …`` also carries ``"unless_relation": word``:
        Spark reads the same text as ``DESCRIBE`` of a column of the table or view ``word``
        (``history``, ``detail``), so the extensions leave it to Spark when the session has
        a relation of that name (the session alone knows its temporary views).
    """
    try:
        claimed = _claim(sql, catalogs, current)
    except SqlError as e:
        known = {c.lower(): c for c in catalogs}
        runner = known.get(current.lower()) or sorted(catalogs)[0]
        claimed = {"ours": True, "catalog": runner, "statement": sql, "refusal": str(e)}
    relation = _sparks_relation(sql)
    if claimed["ours"] and relation is not None:
        claimed["unless_relation"] = relation
    return claimed


def _sparks_relation(sql: str) -> str | None:
    """The relation Spark's grammar reads in ``DESC[RIBE] HISTORY|DETAIL <column>`` (Spark:
    DESCRIBE of column ``<column>`` of the table ``history`` or ``detail``), or None for a
    text Spark cannot read so."""
    tokens = tokenize(sql)
    words = [t.text.upper() for t in tokens[:2]]
    if words[:1] in (["DESC"], ["DESCRIBE"]) and words[1:] in (["HISTORY"], ["DETAIL"]):
        return str(tokens[1].text)
    return None


def _claim(sql: str, catalogs: Sequence[str], current: str) -> dict[str, Any]:
    known = {c.lower(): c for c in catalogs}
    named: set[str] = set()
    cuts: list[tuple[int, int]] = []
    tokens = tokenize(sql)
    for i, token in enumerate(tokens):
        # <catalog> . <db> . <name>: the catalog part goes (a quoted name the same way).
        if (
            token.token_type in _NAME_PARTS
            and token.text.lower() in known
            and i + 4 < len(tokens)
            and tokens[i + 1].token_type == TokenType.DOT
            and tokens[i + 2].token_type in _NAME_PARTS
            and tokens[i + 3].token_type == TokenType.DOT
            and tokens[i + 4].token_type in _NAME_PARTS
            and (i == 0 or tokens[i - 1].token_type != TokenType.DOT)
        ):
            named.add(known[token.text.lower()])
            cuts.append((token.start, tokens[i + 1].end + 1))
    stripped = sql
    for start, end in reversed(cuts):
        stripped = stripped[:start] + stripped[end:]
    try:
        statement = parse_statement(stripped)
    except SqlError:
        if not _starts_ours(tokens):
            return {"ours": False}
        raise
    if not _ours(statement):
        return {"ours": False}
    if len(named) > 1:
        raise SqlError(
            f"{_verb(sql)} names tables of several catalogs ({', '.join(sorted(named))}); "
            "one statement runs in one catalog"
        )
    catalog = next(iter(named)) if named else known.get(current.lower())
    if catalog is None and _names_urls_only(statement):
        # A URL names its table itself: any tsfile catalog of the session reads it.
        catalog = url_catalog(catalogs, current)
    if catalog is None:
        raise SqlError(
            f"{_verb(sql)}: the current catalog {current!r} is not a tsfile catalog; name "
            f"the table with its catalog ({', '.join(sorted(catalogs))}), e.g. "
            f"{sorted(catalogs)[0] if catalogs else 'ts'}.db.t, or USE it"
        )
    return {"ours": True, "catalog": catalog, "statement": stripped}


def claimed_statement(sql: str) -> Statement:
    """The statement the extensions' ``CALL … system.sql(statement => sql)`` runs.

    Raises:
        SqlError: ``sql`` is not one of :data:`EXTENSION_STATEMENTS` (any other statement
            has its own way in: Spark's syntax, or a procedure).
    """
    statement = parse_statement(sql)
    if not _ours(statement):
        raise SqlError(
            "system.sql runs the catalog's own statements (DESCRIBE HISTORY, DESCRIBE DETAIL, "
            "SHOW PARTS, EXPLAIN PARTS, OPTIMIZE, VACUUM, RESTORE, EXPIRE SNAPSHOTS, ALTER "
            "TABLE … ADD PART / DROP PART, DESCRIBE of a URL reference); run any other "
            "statement with spark.sql"
        )
    return statement


def _ours(statement: Statement) -> bool:
    """Whether the extensions run ``statement``: one of :data:`EXTENSION_STATEMENTS`, or a
    DESCRIBE of a URL reference (Spark's grammar has no ``DESCRIBE tsfile('<url>')``)."""
    return isinstance(statement, EXTENSION_STATEMENTS) or (
        isinstance(statement, DescribeTable) and isinstance(statement.table, TableUrl)
    )


def _names_urls_only(statement: Statement) -> bool:
    """Whether every table ``statement`` names is a URL reference (its table, or each table
    of an ``EXPLAIN PARTS`` query), so that no catalog has to resolve a name."""
    if isinstance(statement, ExplainParts):
        refs = table_refs(statement.query)
        return bool(refs) and all(isinstance(ref.table, TableUrl) for ref in refs)
    return isinstance(getattr(statement, "table", None), TableUrl)


def _starts_ours(tokens: Sequence[Any]) -> bool:
    """Whether the text's first words are one of the statements' (a malformed one of ours
    gets the catalog's own error, not Spark's)."""
    words = [t.text.upper() for t in tokens[:5]]
    first = words[0] if words else ""
    second = words[1] if len(words) > 1 else ""
    # DESCRIBE [TABLE] [EXTENDED] tsfile(: a URL reference's (tsfile.x may be Spark's table).
    described = [w for w in words[1:] if w not in ("TABLE", "EXTENDED")][:2]
    return (
        first in ("OPTIMIZE", "VACUUM", "RESTORE")
        or (first == "EXPIRE" and second == "SNAPSHOTS")
        or (first in ("DESC", "DESCRIBE") and second in ("HISTORY", "DETAIL"))
        or (first in ("DESC", "DESCRIBE") and described == ["TSFILE", "("])
        or (first in ("SHOW", "EXPLAIN") and second == "PARTS")
    )


def _verb(sql: str) -> str:
    """The statement's first words, as a message names it (``OPTIMIZE``, ``SHOW PARTS``)."""
    words = sql.split()
    two = words[:2] if words and words[0].upper() in _TWO_WORDS else words[:1]
    return " ".join(w.upper() for w in two)


_TWO_WORDS = ("DESC", "DESCRIBE", "SHOW", "EXPLAIN", "EXPIRE", "ALTER")
