"""Handing a query's own text to ``spark.sql`` through the catalog plugin: when, and how.

When the session's catalog plugin serves the Catalog's warehouse
(:func:`tsfile_catalog.spark_catalog.wiring.serving`), Spark itself resolves the catalog's
table names, so ``Catalog.sql`` need not rewrite a query: the text the user wrote runs as
written, with the plugin's catalog current and ``default`` the current namespace (so
``db.t`` and a bare ``t``, that is ``default.t``, mean what they mean in ``Catalog.sql``).
The plugin plans each scan (pruning, pushdown, statistics answers).

:func:`refusal` is the rule deciding it, before anything runs: a query goes through
``spark.sql`` unless a reference in it is one Spark and the plugin cannot resolve as
``Catalog.sql`` means it (a URL reference, time travel ``Catalog.sql`` reads otherwise than
Spark, a name that is neither a catalog table nor a temporary view nor a CTE). Such a query
takes the rewriting path of :mod:`~tsfile_catalog.sql.query`. :func:`source_text` finds the
exact text of the query inside an ``INSERT`` or ``CREATE TABLE ... AS``, whose head stays the
catalog's. :func:`run` runs a text.

``UPDATE``, ``MERGE INTO`` and ``DELETE FROM`` of a catalog table go the same way, whole
(:func:`row_level_text`): Spark's row-level operation through the plugin (its copy-on-write;
a ``key.duplicates = last`` table's UPDATE written as a delta of the updated rows) is then
their one implementation, ``spark.sql``'s answer and messages theirs (docs/spark-catalog.md, "One
implementation per statement"). :func:`row_level_refusal` names the cases ``Catalog.sql``
keeps.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

import sqlglot
from pyspark.errors import AnalysisException, IllegalArgumentException, ParseException
from pyspark.errors.exceptions.captured import capture_sql_exception
from pyspark.sql import DataFrame, SparkSession
from sqlglot import exp

from tsfile_catalog.errors import unwrap
from tsfile_catalog.exceptions import SqlError, TsFileCatalogError
from tsfile_catalog.metadata.table_time import spark_rewrite_refusal
from tsfile_catalog.spark_catalog.settings import EXTENSIONS_CLASS
from tsfile_catalog.sql import table_options
from tsfile_catalog.sql.parse import source_text, table_url_from_sqlglot
from tsfile_catalog.sql.query_errors import in_user_terms
from tsfile_catalog.sql.registry import DEFAULT_DATABASE, TableEntry
from tsfile_catalog.sql.statements import (
    _DIALECT,
    Delete,
    Merge,
    TableName,
    Update,
    quote_identifier,
)

__all__ = [
    "Names",
    "refusal",
    "row_level_refusal",
    "row_level_target",
    "row_level_text",
    "row_level_tree",
    "schema_evolution_clause",
    "run",
    "source_text",
    "spark_syntax_error",
    "user_names",
]

# The session's catalog when the user chose none (CatalogManager.currentCatalog).
_DEFAULT_CATALOG = "spark.sql.defaultCatalog"
_EXTENSIONS = "spark.sql.extensions"
# Spark's global temporary views live in this database whichever catalog is current.
_GLOBAL_TEMP = "global_temp"
_DIGITS = re.compile(r"\s*[+-]?\d+\s*")


@dataclass(frozen=True)
class Names:
    """What a name means in the session, as :func:`refusal` asks it.

    Attributes:
        is_table: whether a name is a table of the Catalog's registry.
        is_temp_view: whether a bare name is a temporary view of the session.
    """

    is_table: Callable[[TableName], bool]
    is_temp_view: Callable[[str], bool]


def refusal(query: exp.Expr, names: Names) -> str | None:
    """Why ``query`` cannot run as written through the plugin, or None when it can.

    Every table reference must be one Spark resolves, with the plugin's catalog current and
    ``default`` the namespace, to what ``Catalog.sql`` means by it:

    * a catalog table (``t``, ``db.t``), a temporary view or a CTE name (Spark resolves a CTE
      in its scope, then a temporary view, then the catalog, as ``Catalog.sql`` documents),
      or a name with its catalog (``cat.db.t``);
    * with ``VERSION AS OF <integer>`` or ``TIMESTAMP AS OF '<date-time>'`` on a catalog
      table only: ``Catalog.sql`` also reads an epoch-milliseconds string, which Spark does
      not, and Spark has no time travel on views;
    * not a URL reference (``tsfile('<url>')``, ``tsfile.`<path>` ``): the plugin resolves
      names, not locations.

    A Spark table of the user's current catalog named without its catalog is refused: Spark
    would look it up in the plugin's catalog. So is a GROUP BY of a tumbling ``window()``,
    and ``max_by``/``min_by`` grouped by an expression, which only the rewriting path
    pre-aggregates in the scan, and ``count_if`` of a column, which only it answers from
    statistics.
    """
    ctes = {cte.alias_or_name.lower() for cte in query.find_all(exp.CTE)}
    for table in query.find_all(exp.Table):
        shown = ".".join(part.name for part in table.parts)
        if table_url_from_sqlglot(table) is not None:
            return f"{shown or table.sql(dialect=_DIALECT)} is a URL reference"
        if not isinstance(table.this, exp.Identifier):
            continue  # a table function: range(10), explode(...)
        if table.args.get("catalog"):
            continue
        name = _table_name(table)
        travel = table.args.get("version")
        if travel is not None:
            why = _travel_refusal(travel)
            if why is not None:
                return f"{shown}: {why}"
            if name is None or not names.is_table(name):
                return f"{shown} has time travel and is not a catalog table"
            if name.database is None and names.is_temp_view(name.name):
                return f"{shown} has time travel and is also a temporary view"
            continue
        if name is not None and names.is_table(name):
            continue
        database = table.args.get("db")
        if database is None and table.name.lower() in ctes:
            continue
        if database is None and names.is_temp_view(table.name):
            continue
        if database is not None and database.name.lower() == _GLOBAL_TEMP:
            continue
        return f"{shown} is neither a catalog table nor a temporary view nor a CTE"
    return _window_refusal(query)


def row_level_refusal(
    spark: SparkSession,
    statement: Update | Merge | Delete,
    entry: TableEntry,
    tree: exp.Expr,
    names: Names,
) -> str | None:
    """Why ``Catalog.sql`` carries out ``statement`` (an UPDATE, MERGE or DELETE of the
    catalog table ``entry``, ``tree`` its sqlglot tree) itself rather than hand its text to
    ``spark.sql`` through the plugin, or None when it hands it over:

    * the session lacks the plugin's extensions: ``spark.sql`` would return no row counts
      (``RowCounts.java`` is one of them);
    * the table stores nanoseconds read as TIMESTAMPs: Spark's copy-on-write refuses it
      (its times would be truncated), while ``Catalog.sql``'s DELETE rewrites them exactly;
    * a reference in it :func:`refusal` refuses for a query (a URL reference, a name that
      is neither a catalog table nor a temporary view nor a CTE, ...).
    """
    extensions = str(spark.conf.get(_EXTENSIONS, "") or "")
    if EXTENSIONS_CLASS not in [e.strip() for e in extensions.split(",")]:
        return "the session has not the plugin's extensions (no row counts from spark.sql)"
    if (
        spark_rewrite_refusal(
            table_options.precision(entry),
            table_options.timestamp_as(entry),
            statement="",
            instead="",
        )
        is not None
    ):
        return f"{entry.display_name} stores nanoseconds read as TIMESTAMPs"
    return refusal(tree, names)


# ``MERGE WITH SCHEMA EVOLUTION INTO`` and ``INSERT WITH SCHEMA EVOLUTION INTO`` (Spark 4.2.1+),
# which the catalog's parser does not read: group 1 is the clause.
_SCHEMA_EVOLUTION = re.compile(
    r"\s*(?:MERGE|INSERT)\s+(WITH\s+SCHEMA\s+EVOLUTION)\s", re.IGNORECASE
)


def schema_evolution_clause(text: str) -> tuple[int, int] | None:
    """Where ``WITH SCHEMA EVOLUTION`` is in a ``MERGE``/``INSERT WITH SCHEMA EVOLUTION INTO``
    ``text`` (its start and end), or None for any other statement."""
    match = _SCHEMA_EVOLUTION.match(text)
    return None if match is None else match.span(1)


def row_level_tree(text: str) -> exp.Expr:
    """The sqlglot tree of an UPDATE, MERGE or DELETE ``text`` that the catalog's parser read
    already (positions kept, for :func:`row_level_text`)."""
    return sqlglot.parse_one(text, dialect=_DIALECT)


def row_level_text(text: str, tree: exp.Expr, catalog: str, table: TableName) -> str:
    """``text`` as written, with its target ``table`` (``tree.this``) named with ``catalog``
    and its database: a bare ``t`` may also be the catalog's convenience view of the table,
    which Spark would find first and cannot update. Every other reference stays as the
    user wrote it (a view of a catalog table reads that table)."""
    parts = _target(tree).parts
    start, end = parts[0].meta.get("start"), parts[-1].meta.get("end")
    if start is None or end is None:
        raise SqlError(f"cannot locate table {table.to_sql()} in the statement's text")
    qualified = ".".join(
        quote_identifier(part) for part in (catalog, table.database or DEFAULT_DATABASE, table.name)
    )
    return f"{text[:start]}{qualified}{text[end + 1 :]}"


def row_level_target(tree: exp.Expr) -> TableName:
    """The table an UPDATE, MERGE, DELETE or INSERT ``tree`` writes.

    Raises:
        SqlError: its target is not a table name.
    """
    name = _table_name(_target(tree))
    if name is None:
        raise SqlError(f"cannot find the table {tree.sql(dialect=_DIALECT)[:80]!r} writes")
    return name


def _target(tree: exp.Expr) -> exp.Table:
    target = tree.this
    if isinstance(target, exp.Schema):  # an INSERT's column list
        target = target.this
    if not isinstance(target, exp.Table):
        raise SqlError(f"cannot find the table {tree.sql(dialect=_DIALECT)[:80]!r} writes")
    return target


def _window_refusal(query: exp.Expr) -> str | None:
    """A tumbling ``window(time, '<width>')`` grouping: Spark cannot hand it to the plugin's
    scan (its struct is no V2 expression, so Spark aggregates every row), while the rewriting
    path pre-aggregates it in the scan (:mod:`~tsfile_catalog.sql.partial_aggregates`)."""
    for select in query.find_all(exp.Select):
        if select.args.get("group") is None:
            continue
        for node in select.find_all(exp.Anonymous):
            if node.name.lower() == "window" and len(node.expressions) == 2:
                return "a window() grouping is pre-aggregated in the scan only there"
    return _by_time_refusal(query)


def _by_time_refusal(query: exp.Expr) -> str | None:
    """Aggregates only the rewriting path answers from statistics or pre-aggregates
    (:mod:`~tsfile_catalog.sql.stats_aggregates`, :mod:`~tsfile_catalog.sql.partial_aggregates`):

    * ``max_by``/``min_by`` grouped by an expression (a time bucket: ``floor(time / n) * n``,
      ``date_trunc``): Spark never offers them to a data source, and the plugin answers them
      only from statistics, by columns (its ``ByTimeAggregates`` rule), so through it Spark
      reads every row, while the rewriting path pre-aggregates the buckets in the scan.
      Grouped by columns or not at all they run as written: the plugin answers them from the
      same first/last statistics;
    * ``count_if(b)`` of a column: Spark offers it as
      ``count(CASE WHEN NOT (b = true) THEN NULL ELSE b END)``, its optimizer's rewrite, which
      the plugin does not read back (a form that may change with Spark's version), while the
      rewriting path counts a BOOLEAN's true values from statistics.

    Every other aggregate form of that path (``count``/``sum``/``avg``/``min``/``max`` of a
    column, of ``time`` or of ``CAST(b AS <integral>)``) the plugin answers from statistics
    too (:mod:`~tsfile_catalog.spark_catalog.aggregates`)."""
    for node in query.find_all(exp.CountIf):
        if isinstance(node.this, exp.Column):
            return f"{node.sql(dialect=_DIALECT)} is answered from statistics only there"
    for select in query.find_all(exp.Select):
        group = select.args.get("group")
        if group is None or next(select.find_all(exp.ArgMax, exp.ArgMin), None) is None:
            continue
        for key in group.expressions:
            if not isinstance(_grouped(select, key), exp.Column):
                shown = key.sql(dialect=_DIALECT)
                return f"max_by/min_by by {shown} are pre-aggregated only there"
    return None


def _grouped(select: exp.Select, key: exp.Expr) -> exp.Expr:
    """What a GROUP BY key groups by: the SELECT item an ordinal (``GROUP BY 1``) names."""
    if isinstance(key, exp.Literal) and key.is_int:
        position = int(key.this)
        if 1 <= position <= len(select.expressions):
            return select.expressions[position - 1].unalias()
    return key


def _table_name(table: exp.Table) -> TableName | None:
    database = table.args.get("db")
    try:
        return TableName(table.name, database.name if database is not None else None)
    except SqlError:
        return None  # not a plain identifier: never a catalog table


def _travel_refusal(travel: exp.Expr) -> str | None:
    kind = f"{travel.name} {travel.text('kind')}".upper()
    value = travel.expression
    if kind == "VERSION AS OF" and isinstance(value, exp.Literal) and value.is_int:
        return None
    if (
        kind == "TIMESTAMP AS OF"
        and isinstance(value, exp.Literal)
        and value.is_string
        and not _DIGITS.fullmatch(value.this)
    ):
        return None
    return f"{kind} takes a form only Catalog.sql reads"


def user_names(query: exp.Expr, catalog: str) -> dict[str, str]:
    """How Spark's messages name each catalog table ``query`` reads (``<catalog>.db.t``,
    quoted or not) → how ``Catalog.sql``'s errors name it (`` `db`.`t` `` or `` `t` ``, as
    the query wrote it)."""
    out: dict[str, str] = {}
    for table in query.find_all(exp.Table):
        if table.args.get("catalog") or not isinstance(table.this, exp.Identifier):
            continue
        name = _table_name(table)
        if name is None:
            continue
        parts = (catalog, name.database or DEFAULT_DATABASE, name.name)
        shown = name.to_sql()
        out[".".join(parts)] = shown
        out[".".join(f"`{part}`" for part in parts)] = shown
    return out


def run(
    spark: SparkSession, catalog: str, text: str, names: Mapping[str, str] | None = None
) -> DataFrame:
    """``spark.sql(text)`` with ``catalog`` current and ``default`` its namespace; the
    session's own current catalog and namespace are restored however the call ends.

    ``spark.sql`` analyses eagerly, so the returned DataFrame has resolved every name while
    the plugin's catalog was current. ``names``: :func:`user_names` of the query, for errors.

    Raises:
        AnalysisException: Spark's own (an unknown column, a type mismatch, a syntax error),
            its message naming the tables as the query does.
        TsFileCatalogError: the plugin's error, as this package's class (a version that
            does not exist is a :class:`~tsfile_catalog.exceptions.VersionNotFoundError`).
    """
    with _current(spark, catalog):
        try:
            return spark.sql(text)
        except (AnalysisException, IllegalArgumentException) as e:
            ours = unwrap(e)  # the delegate's error, raised by Spark with its class's name
            if isinstance(ours, TsFileCatalogError):
                raise ours from e
            if isinstance(e, AnalysisException):
                in_user_terms(e, names or {})
            raise  # Spark's own error, as spark.sql raises it


def spark_syntax_error(spark: SparkSession, text: str) -> ParseException | None:
    """Spark's own syntax error for ``text`` (its ``ParseException``, as ``spark.sql`` raises
    it), or None when Spark's parser reads it (or cannot be asked: Spark Connect). Only
    parses: nothing is resolved or run."""
    try:
        parser = spark._jsparkSession.sessionState().sqlParser()
    except AttributeError:  # Spark Connect: no JVM session in this process
        return None
    try:
        capture_sql_exception(parser.parsePlan)(text)
    except ParseException as e:
        return e
    return None


@contextmanager
def _current(spark: SparkSession, catalog: str) -> Iterator[None]:
    """``catalog``.``default`` as the session's current namespace for the block; the session's
    own current catalog and namespace are restored however it ends, as the user left them.

    Spark keeps a catalog made current by ``setCurrentCatalog`` (or ``USE``) as the user's
    choice, which no later ``spark.sql.defaultCatalog`` setting overrides. So where the user
    made no such choice the block makes ``catalog`` current through that setting, restored
    after it; only a session that chose its catalog has it switched and chosen back. Each
    switch only when needed: setting the current namespace asks the catalog whether it
    exists."""
    session = spark.catalog
    before = (session.currentCatalog(), session.currentDatabase())
    setting = spark.conf.get(_DEFAULT_CATALOG, None)
    by_setting = chosen = False
    try:
        if before[0] != catalog:
            spark.conf.set(_DEFAULT_CATALOG, catalog)
            by_setting = True
            if session.currentCatalog() != catalog or session.currentDatabase() != (
                DEFAULT_DATABASE
            ):
                # The session chose its catalog, or a namespace that would outlive the block
                # once set: switch by choice, and choose the user's back after.
                _restore_setting(spark, setting)
                by_setting = False
                session.setCurrentCatalog(catalog)  # its namespace is now its default
                chosen = True
        if session.currentDatabase() != DEFAULT_DATABASE:
            session.setCurrentDatabase(DEFAULT_DATABASE)
        yield
    finally:
        if by_setting:
            _restore_setting(spark, setting)
        if chosen and session.currentCatalog() != before[0]:
            session.setCurrentCatalog(before[0])
        if session.currentDatabase() != before[1]:
            session.setCurrentDatabase(before[1])


def _restore_setting(spark: SparkSession, setting: str | None) -> None:
    if setting is None:
        spark.conf.unset(_DEFAULT_CATALOG)
    else:
        spark.conf.set(_DEFAULT_CATALOG, setting)
