"""The sqlglot dialect for ``catalog.sql()``: Spark SQL plus the catalog's own statements.

Spark's dialect turns ``SHOW ...``, ``EXPLAIN ...`` and ``VACUUM ...`` into an opaque
``exp.Command`` whose body is one unparsed string. This subclass gives the statements the
catalog owns real parser entries and expression nodes, so they are parsed token by token,
get positioned syntax errors, and round-trip through the generator:

* ``SHOW TABLES [IN|FROM db]``                          -> :class:`ShowTables`
* ``SHOW PARTS name [VERSION AS OF n | TIMESTAMP AS OF 'ts']`` -> :class:`ShowParts`
* ``EXPLAIN PARTS <query>``                             -> :class:`ExplainParts`
* ``VACUUM name [RETAIN n HOURS] [DRY RUN]``            -> :class:`Vacuum`
* ``EXPIRE SNAPSHOTS name [RETAIN n HOURS | OLDER THAN 'ts'] [RETAIN LAST n]``
                                                        -> :class:`ExpireSnapshots`
* ``RESTORE [TABLE] name TO VERSION AS OF n | TIMESTAMP AS OF 'ts'`` -> :class:`Restore`
* ``SHOW CREATE TABLE name``                            -> :class:`ShowCreateTable`
* ``OPTIMIZE name [WHERE predicate]``                   -> :class:`Optimize`
* ``DESCRIBE DETAIL name``                              -> ``exp.Describe(style="DETAIL")``
* ``ALTER TABLE name ADD PART OPTIONS (…)``              -> ``exp.Alter`` with :class:`AddPart`
* ``ALTER TABLE name DROP PART 'path-or-glob'``          -> ``exp.Alter`` with :class:`DropPart`
* ``ALTER TABLE name UNSET TBLPROPERTIES [IF EXISTS] ('k', …)``
                                                  -> ``exp.Alter`` with :class:`UnsetProperties`

Every other ``SHOW``/``EXPLAIN`` form still falls back to ``exp.Command``, which
:func:`tsfile_catalog.sql.parse_statement` rejects rather than guessing at.
"""

from __future__ import annotations

import typing as t

from sqlglot import exp
from sqlglot.generators.spark import SparkGenerator
from sqlglot.tokens import TokenType
from sqlglot.trie import new_trie

from tsfile_catalog.metadata.spark.dialect import SparkDialect, SparkLiteralParser

__all__ = [
    "TsFileSpark",
    "ShowTables",
    "ShowParts",
    "ExplainParts",
    "Vacuum",
    "AddPart",
    "DropPart",
    "UnsetProperties",
    "ShowCreateTable",
    "ExpireSnapshots",
    "Restore",
    "Optimize",
    "MoveColumn",
]

T = t.TypeVar("T")

# The catalog's URL table function (sql.statements.URL_FUNCTION, which imports this module).
URL_FUNCTION = "tsfile"


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
    """``VACUUM name [RETAIN n HOURS] [DRY RUN]``; ``retain`` is the number literal."""

    arg_types = {"this": True, "dry_run": False, "retain": False}


class ExpireSnapshots(exp.Expression):
    """``EXPIRE SNAPSHOTS name [RETAIN n HOURS | OLDER THAN 'ts'] [RETAIN LAST n]``."""

    arg_types = {"this": True, "retain": False, "older_than": False, "retain_last": False}


class Restore(exp.Expression):
    """``RESTORE [TABLE] name TO VERSION AS OF n | TIMESTAMP AS OF 'ts'``; the clause sits
    on the table, as for a query's time travel."""

    arg_types = {"this": True}


class ShowCreateTable(exp.Expression):
    """``SHOW CREATE TABLE name``."""

    arg_types = {"this": True}


class AddPart(exp.Expression):
    """``ADD PART OPTIONS (…)``, an ALTER TABLE action; ``this`` is the OptionsProperty."""

    arg_types = {"this": True}


class DropPart(exp.Expression):
    """``DROP PART 'path-or-glob'``, an ALTER TABLE action; ``this`` is the string."""

    arg_types = {"this": True}


class UnsetProperties(exp.Expression):
    """``UNSET TBLPROPERTIES [IF EXISTS] ('k', …)``, an ALTER TABLE action; ``expressions``
    are the keys as string literals (a dotted identifier key is read as its text)."""

    arg_types = {"expressions": True, "exists": False}


class MoveColumn(exp.Expression):
    """``ALTER COLUMN c FIRST | AFTER other``, an ALTER TABLE action (sqlglot keeps it only
    as an opaque command); ``after`` is the other column, absent for FIRST."""

    arg_types = {"this": True, "after": False}


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
        "CREATE TABLE": lambda self: self.expression(
            ShowCreateTable(this=self._parse_plain_table())
        ),
    }
    SHOW_TRIE = new_trie(key.split(" ") for key in SHOW_PARSERS)

    DESCRIBE_STYLES = {*SparkLiteralParser.DESCRIBE_STYLES, "DETAIL"}

    def _parse_group(self, skip_group_by_token: bool = False) -> exp.Group | None:
        # sqlglot's GROUP BY stops at any token that starts a query modifier, WINDOW among them
        # (the named-window clause), so Spark's ``GROUP BY window(time, '1 hour')`` failed to
        # parse. A WINDOW clause names its windows (``WINDOW w AS (...)``): a WINDOW followed
        # by "(" is always the function, so it is parsed as one here.
        self._window_is_function = True
        try:
            return super()._parse_group(skip_group_by_token)
        finally:
            self._window_is_function = False

    def _match_set(self, types: t.Collection[TokenType], advance: bool = True) -> bool:
        if (
            getattr(self, "_window_is_function", False)
            and types is self.QUERY_MODIFIER_TOKENS
            and self._curr is not None
            and self._curr.token_type == TokenType.WINDOW
            and self._next is not None
            and self._next.token_type == TokenType.L_PAREN
        ):
            return False
        return super()._match_set(types, advance)

    # EXPLAIN and VACUUM reach the parser as plain words (see the tokenizer below), so they
    # are dispatched here rather than through STATEMENT_PARSERS, which is keyed by token type.
    WORD_STATEMENT_PARSERS: t.ClassVar[dict[str, t.Callable[[_Parser], exp.Expr]]] = {
        "EXPLAIN": lambda self: self._parse_explain(),
        "VACUUM": lambda self: self._parse_vacuum(),
        "EXPIRE": lambda self: self._parse_expire(),
        "RESTORE": lambda self: self._parse_restore(),
        "OPTIMIZE": lambda self: self._parse_optimize(),
    }

    ALTER_PARSERS = {
        **SparkLiteralParser.ALTER_PARSERS,
        "UNSET": lambda self: self._parse_alter_table_unset(),
    }

    def _parse_statement(self) -> exp.Expr | None:
        token = self._curr
        if token is not None and token.token_type == TokenType.VAR:
            parser = self.WORD_STATEMENT_PARSERS.get(token.text.upper())
            if parser is not None:
                self._advance()
                return parser(self)
        return super()._parse_statement()

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

    # Tokens that may follow an OPTIONS key: its value, or the optional '='.
    _OPTION_VALUE_START = frozenset(
        {TokenType.STRING, TokenType.NUMBER, TokenType.TRUE, TokenType.FALSE, TokenType.EQ}
    )

    def _parse_key_value_property(
        self, parse_value: t.Callable[[], exp.Expr | None] | None = None, optional: bool = False
    ) -> exp.Property | None:
        # Spark reads an OPTIONS key as an identifier even when the word is a SQL keyword
        # (``OPTIONS (where '...', table 't')``); sqlglot's column parser stops at the keyword
        # with an opaque error, hiding the message the option deserves (a per-query option).
        key = self._curr
        if (
            optional
            and key is not None
            and key.token_type not in (TokenType.VAR, TokenType.STRING)
            and key.text.isidentifier()
            and self._next is not None
            and self._next.token_type in self._OPTION_VALUE_START
        ):
            self._advance()
            self._match(TokenType.EQ)
            value = parse_value() if parse_value else self._parse_bitwise()
            return self.expression(exp.Property(this=exp.var(key.text), value=value))
        return super()._parse_key_value_property(parse_value, optional)

    def _warn_unsupported(self) -> None:
        # sqlglot logs a warning whenever it falls back to exp.Command; parse_statement
        # rejects every Command with a proper error, so the log line would only be noise.
        return

    def _parse_describe(self) -> exp.Describe:
        # sqlglot reads ``DESCRIBE tsfile('<url>')`` as a table named tsfile with a column
        # list; the catalog's URL reference is a table function there, as in FROM.
        start = self._index
        kind = self._prev.text if self._match_set(self.CREATABLES) else None
        style = self._prev.text.upper() if self._match_texts(self.DESCRIBE_STYLES) else None
        if (
            self._curr is not None
            and self._next is not None
            and self._curr.text.lower() == URL_FUNCTION
            and self._next.token_type == TokenType.L_PAREN
        ):
            table = self._parse_plain_table()
            return self.expression(exp.Describe(this=table, style=style, kind=kind))
        self._retreat(start)
        return super()._parse_describe()

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
        retain = self._parse_retain_hours() if self._match_text_seq("RETAIN") else None
        dry_run = self._match_text_seq("DRY", "RUN")
        return self.expression(Vacuum(this=table, dry_run=dry_run, retain=retain))

    def _parse_expire(self) -> exp.Expr:
        start = self._prev
        if not self._match_text_seq("SNAPSHOTS"):
            return self._parse_as_command(start)
        node = ExpireSnapshots(this=self._parse_plain_table())
        if self._match_text_seq("OLDER", "THAN"):
            older_than = self._parse_primary()
            if not (isinstance(older_than, exp.Literal) and older_than.is_string):
                self.raise_error("Expected a timestamp string after OLDER THAN")
            node.set("older_than", older_than)
        while self._match_text_seq("RETAIN"):
            if self._match_text_seq("LAST"):
                node.set("retain_last", self._parse_number_literal())
            elif node.args.get("retain") is None and node.args.get("older_than") is None:
                node.set("retain", self._parse_retain_hours())
            else:
                self.raise_error("Expected LAST: give one of RETAIN n HOURS and OLDER THAN")
        return self.expression(node)

    def _parse_restore(self) -> Restore:
        self._match(TokenType.TABLE)
        table = self._parse_plain_table()
        if not self._match_text_seq("TO"):
            self.raise_error("Expected TO VERSION AS OF n or TO TIMESTAMP AS OF 'ts'")
        version = self._parse_version()
        if version is None:
            self.raise_error("Expected VERSION AS OF n or TIMESTAMP AS OF 'ts'")
        table.set("version", version)
        return self.expression(Restore(this=table))

    def _parse_retain_hours(self) -> exp.Literal:
        hours = self._parse_number_literal()
        if not self._match_text_seq("HOURS") and not self._match_text_seq("HOUR"):
            self.raise_error("Expected HOURS")
        return hours

    def _parse_number_literal(self) -> exp.Literal:
        number = self._parse_primary()
        if not (isinstance(number, exp.Literal) and number.is_number):
            self.raise_error("Expected a number")
            raise AssertionError("raise_error raises at the IMMEDIATE error level")
        return number

    def _parse_optimize(self) -> Optimize:
        table = self._parse_plain_table()
        return self.expression(Optimize(this=table, where=self._parse_where()))

    def _parse_versioned_table(self) -> exp.Table:
        table = self._parse_plain_table()
        version = self._parse_version()
        if version is not None:
            table.set("version", version)
        return table

    # ALTER TABLE … ADD PART / DROP PART (external parts): new actions beside sqlglot's ADD
    # COLUMNS / DROP PARTITION, which keep their parsers.
    def _parse_alter_table_add(self) -> list[exp.Expr]:
        if not self._match_text_seq("PART"):
            return super()._parse_alter_table_add()
        if not self._match_text_seq("OPTIONS", "(", advance=False):
            self.raise_error(
                "Expected OPTIONS (path '<file, folder or glob>', format 'parquet'|'orc'|'csv') "
                "after ADD PART: the file is an option"
            )
        options = self._parse_property()
        self._refuse_second_part_action()
        return [self.expression(AddPart(this=options))]

    def _parse_alter_table_drop(self) -> list[exp.Expr]:
        if not self._match_text_seq("PART"):
            return super()._parse_alter_table_drop()
        target = self._parse_string()
        if target is None:
            self.raise_error("Expected a quoted path or glob after DROP PART")
        self._refuse_second_part_action()
        return [self.expression(DropPart(this=target))]

    def _parse_alter_table_alter(self) -> exp.Expr | None:
        start = self._index
        self._match(TokenType.COLUMN)
        column = self._parse_field(any_token=True)
        if column is not None:
            if self._match_text_seq("FIRST"):
                return self.expression(MoveColumn(this=column))
            if self._match_text_seq("AFTER"):
                after = self._parse_field(any_token=True)
                if after is None:
                    self.raise_error("Expected a column name after AFTER")
                return self.expression(MoveColumn(this=column, after=after))
        self._retreat(start)
        return super()._parse_alter_table_alter()

    def _parse_alter_table_unset(self) -> UnsetProperties:
        if not self._match_text_seq("TBLPROPERTIES"):
            self.raise_error("Expected TBLPROPERTIES after UNSET")
        exists = self._match_text_seq("IF", "EXISTS")
        keys = self._parse_wrapped_csv(self._parse_property_key)
        return self.expression(UnsetProperties(expressions=keys, exists=exists))

    def _parse_property_key(self) -> exp.Expr:
        # Spark's propertyKey: a string, or identifiers separated by dots (spark.sql.x).
        key = self._parse_string()
        if key is not None:
            return key
        names: list[str] = []
        while True:
            name = self._parse_id_var(any_token=True)
            if name is None:
                self.raise_error("Expected a property key: a quoted string or a.b.c")
                raise AssertionError("raise_error raises at the IMMEDIATE error level")
            names.append(name.name)
            if not self._match(TokenType.DOT):
                return exp.Literal.string(".".join(names))

    def _refuse_second_part_action(self) -> None:
        # Without this, sqlglot gives the whole ALTER up as an opaque command, and the message
        # would blame ALTER TABLE itself.
        if self._curr is not None and (
            self._curr.token_type == TokenType.COMMA or self._curr.text.upper() in ("ADD", "DROP")
        ):
            self.raise_error(
                "ALTER TABLE takes one ADD PART or DROP PART per statement: run one statement "
                "each, or add many files in one commit with a folder or glob as ADD PART's path"
            )

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
    retain = expression.args.get("retain")
    hours = f" RETAIN {generator.sql(retain)} HOURS" if retain is not None else ""
    dry_run = " DRY RUN" if expression.args.get("dry_run") else ""
    return f"VACUUM {generator.sql(expression, 'this')}{hours}{dry_run}"


def _expire_sql(generator: SparkGenerator, expression: ExpireSnapshots) -> str:
    out = f"EXPIRE SNAPSHOTS {generator.sql(expression, 'this')}"
    if expression.args.get("older_than") is not None:
        out += f" OLDER THAN {generator.sql(expression, 'older_than')}"
    if expression.args.get("retain") is not None:
        out += f" RETAIN {generator.sql(expression, 'retain')} HOURS"
    if expression.args.get("retain_last") is not None:
        out += f" RETAIN LAST {generator.sql(expression, 'retain_last')}"
    return out


def _restore_sql(generator: SparkGenerator, expression: Restore) -> str:
    table = expression.this
    version = table.args.get("version")
    plain = table.copy()
    plain.set("version", None)
    return f"RESTORE TABLE {generator.sql(plain)} TO {generator.sql(version)}"


def _show_create_sql(generator: SparkGenerator, expression: ShowCreateTable) -> str:
    return f"SHOW CREATE TABLE {generator.sql(expression, 'this')}"


def _add_part_sql(generator: SparkGenerator, expression: AddPart) -> str:
    return f"ADD PART {generator.sql(expression, 'this')}"


def _drop_part_sql(generator: SparkGenerator, expression: DropPart) -> str:
    return f"DROP PART {generator.sql(expression, 'this')}"


def _unset_properties_sql(generator: SparkGenerator, expression: UnsetProperties) -> str:
    exists = " IF EXISTS" if expression.args.get("exists") else ""
    return f"UNSET TBLPROPERTIES{exists} ({generator.expressions(expression, flat=True)})"


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
        AddPart: _add_part_sql,
        DropPart: _drop_part_sql,
        UnsetProperties: _unset_properties_sql,
        ExpireSnapshots: _expire_sql,
        Restore: _restore_sql,
        ShowCreateTable: _show_create_sql,
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

    String literals follow Spark's rules (see :mod:`tsfile_catalog.metadata.spark.dialect`).
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
