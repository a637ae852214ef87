"""The sqlglot dialect for ``catalog.sql()``: Spark SQL plus the catalog's own statements.

Spark's dialect turns ``SHOW ...``, ``EXPLAIN ...`` and ``VACUUM ...`` into an opaque
``exp.Command`` whose body is one unparsed string. This subclass gives the statements the
catalog owns real parser entries and expression nodes, so they are parsed token by token,
get positioned syntax errors, and round-trip through the generator:

* ``SHOW TABLES [IN|FROM db]``                          -> :class:`ShowTables`
* ``SHOW PARTS name [VERSION AS OF n | TIMESTAMP AS OF 'ts']`` -> :class:`ShowParts`
* ``EXPLAIN PARTS <query>``                             -> :class:`ExplainParts`
* ``VACUUM name [DRY RUN]``                             -> :class:`Vacuum`
* ``OPTIMIZE name [WHERE predicate]``                   -> :class:`Optimize`
* ``DESCRIBE DETAIL name``                              -> ``exp.Describe(style="DETAIL")``

Every other ``SHOW``/``EXPLAIN`` form still falls back to ``exp.Command``, which
:func:`tsfile_catalog.sql.parse_statement` rejects rather than guessing at.
"""

from __future__ import annotations

import typing as t

from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.generators.spark import SparkGenerator
from sqlglot.parser import SENTINEL_NONE
from sqlglot.tokens import Token, TokenType
from sqlglot.trie import new_trie

from tsfile_catalog.metadata.spark_dialect import SparkDialect, SparkLiteralParser

__all__ = [
    "TsFileSpark",
    "ShowTables",
    "ShowParts",
    "ExplainParts",
    "Vacuum",
    "Optimize",
    "END_OF_INPUT",
]

T = t.TypeVar("T")

# Key this parser adds to each sqlglot error record: True when the input ran out.
END_OF_INPUT = "end_of_input"


class ShowTables(exp.Expression):
    """``SHOW TABLES [IN db]``; ``this`` is the database identifier or None."""

    arg_types = {"this": False}


class ShowParts(exp.Expression):
    """``SHOW PARTS name [VERSION AS OF ...]``; the time travel clause sits on the table."""

    arg_types = {"this": True}


class ExplainParts(exp.Expression):
    """``EXPLAIN PARTS <query>``: which parts a query opens and which it prunes."""

    arg_types = {"this": True}


class Vacuum(exp.Expression):
    """``VACUUM name [DRY RUN]``."""

    arg_types = {"this": True, "dry_run": False}


class Optimize(exp.Expression):
    """``OPTIMIZE name [WHERE predicate]`` (Delta's compaction statement)."""

    arg_types = {"this": True, "where": False}


class _Parser(SparkLiteralParser):
    STATEMENT_PARSERS = {
        **SparkLiteralParser.STATEMENT_PARSERS,
        TokenType.SHOW: lambda self: self._parse_show(),
    }

    SHOW_PARSERS = {
        "TABLES": lambda self: self._parse_show_tables(),
        "PARTS": lambda self: self._parse_show_parts(),
    }
    SHOW_TRIE = new_trie(key.split(" ") for key in SHOW_PARSERS)

    DESCRIBE_STYLES = {*SparkLiteralParser.DESCRIBE_STYLES, "DETAIL"}

    # EXPLAIN and VACUUM reach the parser as plain words (see the tokenizer below), so they
    # are dispatched here rather than through STATEMENT_PARSERS, which is keyed by token type.
    WORD_STATEMENT_PARSERS: t.ClassVar[dict[str, t.Callable[[_Parser], exp.Expr]]] = {
        "EXPLAIN": lambda self: self._parse_explain(),
        "VACUUM": lambda self: self._parse_vacuum(),
        "OPTIMIZE": lambda self: self._parse_optimize(),
    }

    def _parse_statement(self) -> exp.Expr | None:
        token = self._curr
        if token is not None and token.token_type == TokenType.VAR:
            parser = self.WORD_STATEMENT_PARSERS.get(token.text.upper())
            if parser is not None:
                self._advance()
                return parser(self)
        return super()._parse_statement()

    def raise_error(self, message: str, token: Token = SENTINEL_NONE) -> None:
        # sqlglot blames the last token when the input runs out, so its record cannot tell
        # "unexpected 'x'" from "the text ends after 'x'"; only the parser knows, so record it.
        at_end = not token and not self._curr
        try:
            super().raise_error(message, token)
        except ParseError as e:
            e.errors[-1][END_OF_INPUT] = at_end
            raise
        self.errors[-1].errors[-1][END_OF_INPUT] = at_end

    def _parse_csv(
        self, parse_method: t.Callable[[], T | None], sep: TokenType = TokenType.COMMA
    ) -> list[T]:
        # sqlglot silently drops a trailing separator (``SELECT a, FROM t`` runs as
        # ``SELECT a FROM t``); Spark rejects it, so the catalog must not run something else.
        parse_result = parse_method()
        items = [parse_result] if parse_result is not None else []
        while self._match(sep):
            separator = self._prev
            if isinstance(parse_result, exp.Expr):
                self._add_comments(parse_result)
            parse_result = parse_method()
            if parse_result is None:
                self.raise_error(f"nothing follows {separator.text!r}")
            else:
                items.append(parse_result)
        return items

    def _warn_unsupported(self) -> None:
        # sqlglot logs a warning whenever it falls back to exp.Command; parse_statement
        # rejects every Command with a proper error, so the log line would only be noise.
        return

    def _parse_show_tables(self) -> ShowTables:
        database = None
        if self._match_set((TokenType.IN, TokenType.FROM)):
            database = self._parse_id_var(any_token=False)
            if database is None:
                self.raise_error("Expected a database name")
        return self.expression(ShowTables(this=database))

    def _parse_show_parts(self) -> ShowParts:
        return self.expression(ShowParts(this=self._parse_versioned_table()))

    def _parse_explain(self) -> exp.Expr:
        start = self._prev
        if not self._match_text_seq("PARTS"):
            return self._parse_as_command(start)
        query = self._parse_statement()
        if not isinstance(query, exp.Query):
            self.raise_error("EXPLAIN PARTS expects a query")
        return self.expression(ExplainParts(this=query))

    def _parse_vacuum(self) -> Vacuum:
        table = self._parse_plain_table()
        dry_run = self._match_text_seq("DRY", "RUN")
        return self.expression(Vacuum(this=table, dry_run=dry_run))

    def _parse_optimize(self) -> Optimize:
        table = self._parse_plain_table()
        return self.expression(Optimize(this=table, where=self._parse_where()))

    def _parse_versioned_table(self) -> exp.Table:
        table = self._parse_plain_table()
        version = self._parse_version()
        if version is not None:
            table.set("version", version)
        return table

    def _parse_plain_table(self) -> exp.Table:
        table = self._parse_table_parts()
        if not isinstance(table, exp.Table):
            self.raise_error("Expected a table name")
            raise AssertionError("raise_error raises at the IMMEDIATE error level")
        return table


_TYPED_LITERAL_TYPES = (
    exp.DType.DATE,
    exp.DType.TIMESTAMPTZ,
    exp.DType.TIMESTAMPNTZ,
    exp.DType.TIMESTAMPLTZ,
)


def _show_tables_sql(generator: SparkGenerator, expression: ShowTables) -> str:
    database = generator.sql(expression, "this")
    return f"SHOW TABLES IN {database}" if database else "SHOW TABLES"


def _show_parts_sql(generator: SparkGenerator, expression: ShowParts) -> str:
    return f"SHOW PARTS {generator.sql(expression, 'this')}"


def _explain_parts_sql(generator: SparkGenerator, expression: ExplainParts) -> str:
    return f"EXPLAIN PARTS {generator.sql(expression, 'this')}"


def _vacuum_sql(generator: SparkGenerator, expression: Vacuum) -> str:
    dry_run = " DRY RUN" if expression.args.get("dry_run") else ""
    return f"VACUUM {generator.sql(expression, 'this')}{dry_run}"


def _optimize_sql(generator: SparkGenerator, expression: Optimize) -> str:
    return f"OPTIMIZE {generator.sql(expression, 'this')}{generator.sql(expression, 'where')}"


class _Generator(SparkGenerator):
    # Registered through TRANSFORMS: sqlglot only finds ``<key>_sql`` methods for its own
    # expression classes, and adding ours to its global class registry would be patching it.
    TRANSFORMS = {
        **SparkGenerator.TRANSFORMS,
        ShowTables: _show_tables_sql,
        ShowParts: _show_parts_sql,
        ExplainParts: _explain_parts_sql,
        Vacuum: _vacuum_sql,
        Optimize: _optimize_sql,
    }

    def cast_sql(self, expression: exp.Cast, safe_prefix: str | None = None) -> str:
        # Spark parses the typed literal TIMESTAMP '...' into a strict Cast but reads
        # CAST('...' AS TIMESTAMP) back as a TryCast (non-ANSI casts yield NULL), so the
        # Spark generator's CAST spelling neither round-trips nor keeps the literal's meaning.
        if (
            type(expression) is exp.Cast
            and isinstance(expression.this, exp.Literal)
            and expression.this.is_string
            and expression.to.is_type(*_TYPED_LITERAL_TYPES)
        ):
            return f"{self.sql(expression, 'to')} {self.sql(expression, 'this')}"
        return super().cast_sql(expression, safe_prefix)


class TsFileSpark(SparkDialect):
    """Spark SQL with tsfile-catalog's statements; use it as ``read=``/``dialect=``.

    String literals follow Spark's rules (see :mod:`tsfile_catalog.metadata.spark_dialect`).
    """

    class Tokenizer(SparkDialect.Tokenizer):
        # Spark's tokenizer swallows everything after these keywords into one string token
        # (the exp.Command fallback); as plain words they are tokenized like the rest of the
        # statement and parsed by the entries above.
        KEYWORDS = {
            key: value
            for key, value in SparkDialect.Tokenizer.KEYWORDS.items()
            if key not in ("EXPLAIN", "VACUUM", "OPTIMIZE")
        }
        COMMANDS = SparkDialect.Tokenizer.COMMANDS - {TokenType.SHOW}

    Parser = _Parser

    Generator = _Generator
