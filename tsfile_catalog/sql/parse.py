"""Text to statement model: :func:`parse_statement` reads one statement of ``catalog.sql()``.

The text is tokenized and parsed with :class:`~tsfile_catalog.sql.dialect.TsFileSpark`; the
catalog's own statements become the frozen models of :mod:`tsfile_catalog.sql.statements`,
every other statement Spark can run a :class:`~tsfile_catalog.sql.statements.PassThrough`.
Errors name the line and column where the offending token starts.

Table and column names are lower-cased (by the models), as Spark resolves them
case-insensitively and TsFile's table model stores them in lower case; option and property
keys keep their spelling.

One job: one builder per statement the catalog owns, from the dialect's parse tree to its
model, with the checks and line/column errors that statement needs; it grows by one builder
per statement, and splitting the builders apart would only scatter what they share.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import cast

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from tsfile_catalog.exceptions import SqlError, SqlParseError
from tsfile_catalog.metadata.spark.sql_errors import (
    position,
    snippet,
    syntax_error_message,
    token_error_message,
)
from tsfile_catalog.sql import dialect
from tsfile_catalog.sql.statements import (
    _DIALECT,
    _SPARK_TYPES,
    PROVIDER,
    URL_FUNCTION,
    URL_SETTINGS,
    AlterTableAddColumns,
    AlterTableAddPart,
    AlterTableAlterColumn,
    AlterTableChangeColumn,
    AlterTableDropColumns,
    AlterTableDropPart,
    AlterTableRename,
    AlterTableRenameColumn,
    AlterTableSetProperties,
    AlterTableUnsetProperties,
    AlterTableUnsupported,
    ColumnPosition,
    ColumnSpec,
    CreateTable,
    Delete,
    DescribeDetail,
    DescribeHistory,
    DescribeTable,
    DropTable,
    ExpireSnapshots,
    ExplainParts,
    Insert,
    Merge,
    MergeClause,
    Optimize,
    PassThrough,
    RestoreTable,
    Select,
    ShowCreateTable,
    ShowParts,
    ShowTables,
    SparkType,
    Statement,
    TableName,
    TableUrl,
    TimestampAsOf,
    TimeTravel,
    Update,
    Vacuum,
    VersionAsOf,
)
from tsfile_catalog.storage_options import (
    CREDENTIALS_AT_RUN_TIME,
    STORAGE_PREFIX,
    redact_text,
    url_credentials,
)

__all__ = [
    "parse_statement",
    "row_level_condition",
    "condition_sql",
    "tokenize",
    "time_travel_from_sqlglot",
    "table_url_from_sqlglot",
    "parse_table_reference",
    "url_reference_refused",
    "query_source",
    "source_text",
    "starts_a_query",
]

# The meta entry of a query parsed by parse_statement: (sql, start, end, hash), the text it
# was parsed from, where the query is in it, and the parsed tree's hash. The positions
# sqlglot keeps on the query's identifiers and literals are offsets in that same text, so a
# query can be run as the user wrote it with only its table names swapped
# (ref_rewrite.rewrite_table_refs).
_SOURCE = "tsfile_catalog.source"
# Tokens a query can start with (INSERT's and CTAS's query follows the statement's head).
_QUERY_STARTS = frozenset(
    {TokenType.SELECT, TokenType.WITH, TokenType.VALUES, TokenType.FROM, TokenType.L_PAREN}
)

# Statements that start with a plain word rather than a keyword token.
_WORD_STATEMENTS = frozenset(dialect._Parser.WORD_STATEMENT_PARSERS)

_PROPERTY_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


# Statements sqlglot parses into a real node that the catalog leaves to Spark. Anything else
# at the top level (a bare expression like ``foo bar``) is not a statement at all.
_PASS_THROUGH_NODES: tuple[type[exp.Expr], ...] = (
    exp.Create,
    exp.Drop,
    exp.Insert,
    exp.Describe,
    exp.Alter,
    exp.Use,
    exp.Set,
    exp.Cache,
    exp.Uncache,
    exp.Refresh,
    exp.Analyze,
    exp.TruncateTable,
    exp.Delete,
    exp.Update,
    exp.Merge,
    exp.LoadData,
    exp.Declare,
    exp.Transaction,
    exp.Commit,
    exp.Rollback,
    exp.Grant,
    exp.Revoke,
    exp.Comment,
    exp.Values,
)


def parse_statement(sql: str) -> Statement:
    """Parse one Spark SQL statement into the statement model.

    Raises:
        SqlParseError: the text is not exactly one statement sqlglot can parse (syntax error,
            several ``;``-separated statements, or a statement sqlglot only keeps as an opaque
            command).
        SqlError: the statement parses but is invalid for the catalog (bad table name,
            unsupported clause or column type, ...).
    """
    tokens = _tokenize(sql)
    _reject_credentials(sql, tokens)
    statement_tokens = [token for token in tokens if token.token_type != TokenType.SEMICOLON]
    if not statement_tokens:
        raise SqlParseError("the SQL text holds no statement")
    _reject_multiple_statements(sql, tokens)
    try:
        trees = _DIALECT.parser().parse(tokens, sql)
    except ParseError as e:
        raise SqlParseError(_parse_error_message(sql, statement_tokens, e)) from e
    node = next(tree for tree in trees if tree is not None and not isinstance(tree, exp.Semicolon))
    first = statement_tokens[0]
    if node.find(exp.Command) is not None:
        raise SqlParseError(_command_message(sql, statement_tokens))
    end = statement_tokens[-1].end + 1
    text = sql[first.start : end]
    model = _to_model(node, text)
    _keep_source(model, sql, first.start, end)
    return model


def row_level_condition(text: str, operation: str) -> tuple[str | None, tuple[str, ...]] | None:
    """The condition of an UPDATE, DELETE or MERGE ``text`` (``operation``) as the statement
    model holds it (a WHERE's, None without one; a MERGE's ON condition) and an UPDATE's
    columns set, in their order: what :func:`parse_statement` reads of it, for a text it
    cannot read whole (a target named with its catalog). None when sqlglot reads no such
    statement in it."""
    try:
        node = sqlglot.parse_one(text, dialect=_DIALECT)
    except (ParseError, TokenError):
        return None
    if operation == "UPDATE" and isinstance(node, exp.Update):
        columns = tuple(
            item.this.name
            for item in node.expressions
            if isinstance(item, exp.EQ) and isinstance(item.this, exp.Column)
        )
        if len(columns) != len(node.expressions):
            return None
        return _where_sql(node.args.get("where")), columns
    if operation == "DELETE" and isinstance(node, exp.Delete):
        return _where_sql(node.args.get("where")), ()
    if operation == "MERGE" and isinstance(node, exp.Merge) and node.args.get("on") is not None:
        return _node_sql(node.args["on"]), ()
    return None


def condition_sql(text: str) -> str:
    """A condition ``text`` as the statement model holds one (sqlglot's Spark SQL of it), or
    as it is when sqlglot cannot read it."""
    try:
        return _node_sql(sqlglot.parse_one(text, dialect=_DIALECT))
    except (ParseError, TokenError):
        return text


def _keep_source(model: Statement, sql: str, start: int, end: int) -> None:
    """Record where the statement's query is in ``sql`` (see :func:`query_source`): a SELECT
    is the whole statement, the query of an INSERT or CREATE TABLE ... AS its tail."""
    if isinstance(model, Select):
        model.query.meta[_SOURCE] = (sql, start, end, hash(model.query))
    elif isinstance(model, (Insert, CreateTable)) and isinstance(model.query, exp.Query):
        tail = source_text(sql[:end], model.query)
        if tail is not None:
            model.query.meta[_SOURCE] = (sql, end - len(tail), end, hash(model.query))


def starts_a_query(sql: str) -> bool:
    """Whether ``sql`` is one statement (nothing after a ``;``) that starts as a query does
    (``SELECT``, ``WITH``, ``FROM``, ``VALUES``, ``TABLE``, ``(``): what Spark may run
    although :func:`parse_statement` cannot read it."""
    try:
        tokens = _DIALECT.tokenize(sql)
    except TokenError:
        return False
    try:
        _reject_multiple_statements(sql, tokens)
    except SqlParseError:
        return False
    first = next((t for t in tokens if t.token_type != TokenType.SEMICOLON), None)
    return first is not None and first.token_type in (*_QUERY_STARTS, TokenType.TABLE)


def query_source(query: exp.Expr) -> tuple[str, int, int] | None:
    """``(sql, start, end)`` when ``query`` is the query of a statement :func:`parse_statement`
    read: ``sql[start:end]`` is its text as the user wrote it, and its identifiers' and
    literals' positions are offsets in ``sql``. None for a tree built in code or changed
    since it was parsed."""
    found = query.meta.get(_SOURCE)
    if found is None:
        return None
    sql, start, end, parsed = found
    # A copy keeps its meta: a tree rewritten from the parsed one (a partial aggregate's
    # outer query, say) no longer is that text.
    return (sql, start, end) if hash(query) == parsed else None


def source_text(text: str, query: exp.Expr) -> str | None:
    """The exact text of ``query`` inside the statement ``text`` (the query of an ``INSERT``
    or ``CREATE TABLE ... AS``, which runs to the statement's end), or None when no tail of
    the text parses to that query (``INSERT ... TABLE u``, say).

    A tail is tried where a query can start; the first whose parse equals ``query`` is it.
    """
    try:
        tokens = _DIALECT.tokenize(text)
    except TokenError:
        return None
    for token in tokens[1:]:
        if token.token_type not in _QUERY_STARTS:
            continue
        tail = text[token.start :]
        try:
            trees = [t for t in _DIALECT.parse(tail) if t is not None]
        except (ParseError, TokenError):
            continue  # not where the query starts: a column list, a predicate
        if len(trees) == 1 and trees[0] == query:
            return tail
    return None


def _command_message(sql: str, statement: Sequence[Token]) -> str:
    # The parser gave up after the statement's first word(s): ``CREATE TABEL``, ``SHOW
    # DATABASES``. Name the word it did not know, as it may be a typo.
    shown = f"unsupported statement at {position(sql, statement[0])} ({snippet(sql)!r})"
    if len(statement) < 2:
        return f"{shown}; run statements the catalog does not handle with spark.sql() directly"
    word = statement[1]
    return (
        f"{shown}: the catalog does not understand {statement[0].text.upper()} "
        f"{word.text!r} at {position(sql, word)}; check the spelling, or run statements the "
        "catalog does not handle with spark.sql() directly"
    )


def time_travel_from_sqlglot(version: exp.Version) -> TimeTravel:
    """Translate a table's ``VERSION AS OF`` / ``TIMESTAMP AS OF`` clause."""
    kind = version.text("kind").upper()
    value = version.expression
    if kind == "AS OF" and version.name == "VERSION":
        if isinstance(value, exp.Literal) and value.is_int:
            return VersionAsOf(int(value.this))
        raise SqlError(f"VERSION AS OF needs an integer literal, got {_node_sql(value)!r}")
    if kind == "AS OF" and version.name == "TIMESTAMP":
        if isinstance(value, exp.Literal) and value.is_string:
            return TimestampAsOf(str(value.this))
        raise SqlError(
            "TIMESTAMP AS OF needs a string literal such as '2024-01-01 00:00:00', got "
            f"{_node_sql(value)!r}"
        )
    raise SqlError(f"unsupported time travel clause {_node_sql(version)!r}")


def tokenize(sql: str) -> list[Token]:
    """``sql``'s tokens in the catalog's dialect (its statements' keywords included).

    Raises:
        SqlParseError: the text cannot be tokenized (an unclosed quote, ...).
    """
    return _tokenize(sql)


def _tokenize(sql: str) -> list[Token]:
    try:
        return _DIALECT.tokenize(sql)
    except TokenError as e:
        raise SqlParseError(token_error_message(sql, e)) from e


def _reject_credentials(sql: str, tokens: Sequence[Token]) -> None:
    """Refuse a URL with credentials anywhere in the text (a location, ``tsfile('<url>')``),
    before any message could quote it: SQL text is logged and kept in query histories."""
    for token in tokens:
        found = url_credentials(token.text)
        if found is not None:
            raise SqlError(
                f"the URL {redact_text(token.text)!r} at {position(sql, token)} carries "
                f"credentials ({found}), and SQL text is logged and kept in query histories: "
                f"remove them and supply them at run time: {CREDENTIALS_AT_RUN_TIME}"
            )


def _reject_multiple_statements(sql: str, tokens: Sequence[Token]) -> None:
    in_statement = ended = False
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            ended = in_statement
            continue
        if ended:
            raise SqlParseError(
                f"multiple statements are not supported: another statement starts at "
                f"{position(sql, token)} ({token.text!r}); send one statement per call"
            )
        in_statement = True


def _parse_error_message(sql: str, statement: Sequence[Token], error: ParseError) -> str:
    """Say what is wrong in SQL terms, like Spark's PARSE_SYNTAX_ERROR: where, near what."""
    first = statement[0]
    if first.token_type == TokenType.VAR and first.text.upper() not in _WORD_STATEMENTS:
        # A statement cannot start with a plain word (``SELEC * FROM t``); sqlglot reads it as
        # an expression and fails later, at a token that is not the mistake.
        return (
            f"syntax error at or near {first.text!r} at {position(sql, first)}: "
            "no SQL statement starts with this word"
        )
    return syntax_error_message(sql, error)


def _node_sql(node: exp.Expr | None) -> str:
    return node.sql(dialect=_DIALECT) if node is not None else ""


def _to_model(node: exp.Expr, text: str) -> Statement:
    if isinstance(node, dialect.ShowTables):
        database = node.this
        return ShowTables(database.name if database is not None else None)
    if isinstance(node, dialect.ShowParts):
        table = node.this
        version = table.args.get("version")
        return ShowParts(
            table=_table_or_url(table, "SHOW PARTS", allowed=("version",)),
            time_travel=time_travel_from_sqlglot(version) if version is not None else None,
        )
    if isinstance(node, dialect.ExplainParts):
        return ExplainParts(node.this)
    if isinstance(node, dialect.Vacuum):
        return Vacuum(
            table=_table_name(node.this, "VACUUM"),
            dry_run=bool(node.args["dry_run"]),
            retain_hours=_hours(node.args.get("retain")),
        )
    if isinstance(node, dialect.ExpireSnapshots):
        return _expire(node)
    if isinstance(node, dialect.Restore):
        table = node.this
        return RestoreTable(
            table=_table_name(table, "RESTORE", allowed=("version",)),
            time_travel=time_travel_from_sqlglot(table.args["version"]),
        )
    if isinstance(node, dialect.ShowCreateTable):
        return ShowCreateTable(_table_name(node.this, "SHOW CREATE TABLE"))
    if isinstance(node, dialect.Optimize):
        return _optimize(node)
    if isinstance(node, exp.Delete):
        return _delete(node, text)
    if isinstance(node, exp.Update):
        return _update(node)
    if isinstance(node, exp.Merge):
        return _merge(node)
    if isinstance(node, exp.Query):
        return Select(node)
    if isinstance(node, exp.Create):
        return _create(node, text)
    if isinstance(node, exp.Drop) and node.args.get("kind") == "TABLE":
        return _drop(node)
    if isinstance(node, exp.Insert) and not isinstance(node.this, exp.Directory):
        return _insert(node)
    if isinstance(node, exp.Describe):
        return _describe(node, text)
    if isinstance(node, exp.Alter) and _part_action(node) is not None:
        return _alter_part(node)
    if isinstance(node, exp.Alter):
        return _alter(node, text)
    if isinstance(node, _PASS_THROUGH_NODES):
        return PassThrough(text)
    raise SqlParseError(f"not a SQL statement: {snippet(text)!r}")


def _reject_clauses(node: exp.Expr, allowed: Sequence[str], statement: str) -> None:
    for key, value in node.args.items():
        if key not in allowed and value:
            clause = key.rstrip("_").replace("_", " ").upper()
            raise SqlError(f"{statement} does not support {clause} here")


def url_reference_refused(statement: str, shown: str) -> str:
    return (
        f"{statement} needs a registered table name, not the URL reference {shown!r}: URL "
        "references are for reading. Register the table (CREATE TABLE name USING tsfile "
        "LOCATION '<url>') and name it, or write to the URL with the DataFrame API "
        "(df.write.format('tsfile').mode('append').save('<url>'))"
    )


def _is_url_call(node: exp.Schema) -> bool:
    """Whether ``node`` is ``tsfile('<url>', ...)`` read as a table with a column list."""
    table = node.this
    return (
        isinstance(table, exp.Table)
        and not table.args.get("db")
        and table.name.lower() == URL_FUNCTION
        and any(not isinstance(e, exp.Identifier) for e in node.expressions)
    )


def _table_name(node: exp.Expr, statement: str, allowed: Sequence[str] = ()) -> TableName:
    if not isinstance(node, exp.Table):
        raise SqlError(f"{statement} expects a table name, got {_node_sql(node)!r}")
    if table_url_from_sqlglot(node) is not None:
        raise SqlError(url_reference_refused(statement, _node_sql(node)))
    shown = ".".join(part.name for part in node.parts)
    if node.args.get("catalog") or not isinstance(node.this, exp.Identifier):
        raise SqlError(f"invalid table name {shown!r}: use name or database.name")
    _reject_clauses(node, ("this", "db", *allowed), f"{statement} {shown}")
    database = node.args.get("db")
    return TableName(node.name, database.name if database is not None else None)


def _create(node: exp.Create, text: str) -> Statement:
    properties = node.args.get("properties")
    items: list[exp.Expr] = list(properties.expressions) if properties else []
    providers = [item for item in items if isinstance(item, exp.FileFormatProperty)]
    if (
        node.kind != "TABLE"
        or len(providers) != 1
        or providers[0].args.get("hive_format")
        or providers[0].name.lower() != PROVIDER
    ):
        return PassThrough(text)

    statement = f"CREATE TABLE ... USING {PROVIDER}"
    _reject_clauses(node, ("this", "kind", "exists", "properties", "expression"), statement)
    target = node.this
    columns: tuple[ColumnSpec, ...] | None = None
    if isinstance(target, exp.Schema):
        columns = tuple(_column_spec(column, statement) for column in target.expressions)
        target = target.this
    table = _table_name(target, "CREATE TABLE")

    location: str | None = None
    options: dict[str, str] = {}
    table_properties: dict[str, str] = {}
    for item in items:
        if isinstance(item, exp.FileFormatProperty):
            continue
        if isinstance(item, exp.LocationProperty) and location is None:
            location = _string_literal(item.this, "LOCATION")
        elif isinstance(item, exp.OptionsProperty) and not options:
            options = _property_map(item.expressions, "OPTIONS")
        elif type(item) is exp.Property:
            # sqlglot lists TBLPROPERTIES entries as bare properties of the statement.
            table_properties.update(_property_map([item], "TBLPROPERTIES", table_properties))
        else:
            raise SqlError(f"{statement} does not support {_node_sql(item)!r}")

    query = node.expression
    if query is not None and not isinstance(query, exp.Query):
        raise SqlError(f"{statement} AS expects a query, got {_node_sql(query)!r}")
    return CreateTable(
        table=table,
        columns=columns,
        location=location,
        options=options,
        properties=table_properties,
        if_not_exists=bool(node.args.get("exists")),
        query=query,
    )


def _column_spec(node: exp.Expr, statement: str, *, positioned: bool = False) -> ColumnSpec:
    """A column definition; its FIRST/AFTER clause is refused unless ``positioned`` (the
    caller reads it with :func:`_column_position`)."""
    if not isinstance(node, exp.ColumnDef) or not isinstance(node.this, exp.Identifier):
        raise SqlError(f"{statement}: expected a column definition, got {_node_sql(node)!r}")
    name = node.name
    if not positioned and node.args.get("position") is not None:
        raise SqlError(
            f"{statement}: column {name!r} has a FIRST/AFTER clause, which only ALTER TABLE "
            "… ADD COLUMNS takes"
        )
    if node.args.get("constraints"):
        raise SqlError(
            f"{statement}: column {name!r} has constraints or a comment "
            f"({_node_sql(node)!r}), which tsfile tables do not support"
        )
    kind = node.args.get("kind")
    if not isinstance(kind, exp.DataType):
        raise SqlError(f"{statement}: column {name!r} needs a type")
    data_type = kind.sql(dialect=_DIALECT)
    if data_type not in _SPARK_TYPES:
        raise SqlError(
            f"column {name!r} has type {data_type}, which tsfile tables do not support "
            f"(supported: {', '.join(sorted(_SPARK_TYPES))})"
        )
    return ColumnSpec(name, cast(SparkType, data_type))


def _column_position(node: exp.Expr, statement: str) -> ColumnPosition | None:
    """The FIRST / AFTER clause of an added column, or None."""
    position = node.args.get("position") if isinstance(node, exp.ColumnDef) else None
    if position is None:
        return None
    if position.args.get("position") == "FIRST":
        return ColumnPosition()
    after = position.this
    if position.args.get("position") != "AFTER" or not isinstance(after, exp.Column):
        raise SqlError(f"{statement}: unexpected column position {_node_sql(position)!r}")
    return ColumnPosition(after=_column_name(after, statement))


def _string_literal(node: exp.Expr, clause: str) -> str:
    if isinstance(node, exp.Literal) and node.is_string:
        return str(node.this)
    raise SqlError(f"{clause} expects a string literal, got {_node_sql(node)!r}")


def _property_map(
    items: Sequence[exp.Expr], clause: str, existing: Mapping[str, str] | None = None
) -> dict[str, str]:
    result: dict[str, str] = {}
    seen = {key.lower() for key in existing or {}}
    for item in items:
        if not isinstance(item, exp.Property):
            raise SqlError(f"{clause} expects key 'value' pairs, got {_node_sql(item)!r}")
        key = _property_key(item.this, clause)
        if key.lower() in seen:
            raise SqlError(f"{clause} sets {key!r} twice")
        seen.add(key.lower())
        result[key] = _property_value(item.args.get("value"), key, clause)
    return result


def _property_key(node: exp.Expr, clause: str) -> str:
    if isinstance(node, exp.Literal) and node.is_string:
        key = str(node.this)
    elif isinstance(node, (exp.Var, exp.Identifier)):
        key = node.name
    elif isinstance(node, exp.Dot):
        key = ".".join(part.name for part in node.find_all(exp.Identifier, bfs=False))
    else:
        raise SqlError(f"{clause} keys must be identifiers, got {_node_sql(node)!r}")
    if not _PROPERTY_KEY.fullmatch(key):
        raise SqlError(
            f"invalid {clause} key {key!r}: use identifiers separated by dots, such as "
            "tagColumns or spark.sql.x"
        )
    return key


def _property_value(node: exp.Expr | None, key: str, clause: str) -> str:
    if isinstance(node, exp.Literal):
        return str(node.this)
    if isinstance(node, exp.Boolean):
        return "true" if node.this else "false"
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and node.this.is_number:
        return f"-{node.this.this}"
    raise SqlError(
        f"{clause} value of {key!r} must be a string, number or boolean literal, got "
        f"{_node_sql(node)!r}"
    )


def _drop(node: exp.Drop) -> DropTable:
    tables = node.args.get("tables") or [node.this]
    _reject_clauses(node, ("this", "tables", "kind", "exists", "purge"), "DROP TABLE")
    if len(tables) != 1:
        raise SqlError("DROP TABLE drops one table per statement")
    return DropTable(
        table=_table_name(tables[0], "DROP TABLE"),
        if_exists=bool(node.args.get("exists")),
        purge=bool(node.args.get("purge")),
    )


def _where_sql(where: exp.Expr | None) -> str | None:
    """The predicate of a WHERE clause (an ``exp.Where`` or the bare condition) as SQL."""
    if where is None:
        return None
    return _node_sql(where.this if isinstance(where, exp.Where) else where)


def _optimize(node: dialect.Optimize) -> Optimize:
    return Optimize(
        table=_table_name(node.this, "OPTIMIZE"), where=_where_sql(node.args.get("where"))
    )


def _delete(node: exp.Delete, text: str) -> Statement:
    # DELETE on a Spark table (or with USING, a join) is Spark's; the catalog owns the
    # single-table form.
    _reject_clauses(node, ("this", "where"), "DELETE")
    return Delete(
        table=_table_name(node.this, "DELETE FROM"), where=_where_sql(node.args.get("where"))
    )


def _unaliased(node: exp.Expr) -> tuple[exp.Expr, str | None]:
    """``node`` without its alias, and the alias (None when it has none)."""
    alias = node.alias if isinstance(node, (exp.Table, exp.Subquery)) else ""
    if not alias:
        return node, None
    bare = node.copy()
    bare.set("alias", None)
    return bare, alias


def _assignments(items: Sequence[exp.Expr], statement: str) -> tuple[tuple[str, str], ...]:
    """``column = expression`` items as (column, Spark SQL); a qualified column (``t.v``)
    names the target's column."""
    out: list[tuple[str, str]] = []
    for item in items:
        if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column):
            raise SqlError(f"{statement} SET expects column = expression, got {_node_sql(item)!r}")
        out.append((item.this.name, _node_sql(item.expression)))
    _check_once([c.lower() for c, _ in out], statement)
    return tuple(out)


def _check_once(columns: Sequence[str], statement: str) -> None:
    repeated = sorted({c for c in columns if columns.count(c) > 1})
    if repeated:
        raise SqlError(f"{statement} assigns column '{repeated[0]}' more than once")


def _update(node: exp.Update) -> Update:
    # UPDATE ... FROM (a join) is not Delta's and not the catalog's.
    _reject_clauses(node, ("this", "expressions", "where"), "UPDATE")
    target, alias = _unaliased(node.this)
    return Update(
        table=_table_name(target, "UPDATE"),
        assignments=_assignments(node.expressions, "UPDATE"),
        where=_where_sql(node.args.get("where")),
        alias=alias,
    )


def _merge(node: exp.Merge) -> Merge:
    _reject_clauses(node, ("this", "using", "on", "whens"), "MERGE")
    target, alias = _unaliased(node.this)
    using = node.args["using"]
    if isinstance(using, exp.Values):
        # USING (VALUES ...) AS s(c1, ...): its rows, under the names its alias gives them.
        names = using.args.get("alias")
        source_alias = names.name if names is not None and names.name else None
        source: exp.Expr = exp.select("*").from_(using.copy())
    else:
        source, source_alias = _unaliased(using)
    if isinstance(source, exp.Subquery):
        source = source.this
    if not isinstance(source, (exp.Table, exp.Query)):
        raise SqlError(f"MERGE USING expects a table or a query, got {_node_sql(source)!r}")
    on = node.args.get("on")
    if on is None:
        raise SqlError("MERGE needs an ON condition that equates every TAG column and time")
    whens = node.args.get("whens")
    clauses = tuple(_merge_clause(w) for w in (whens.expressions if whens else ()))
    return Merge(
        table=_table_name(target, "MERGE INTO"),
        source=source,
        on=on,
        clauses=clauses,
        alias=alias,
        source_alias=source_alias,
    )


def _merge_clause(when: exp.Expr) -> MergeClause:
    if when.args.get("source"):
        raise SqlError(
            "MERGE: WHEN NOT MATCHED BY SOURCE is not supported; delete the rows the source "
            "lacks with a separate DELETE"
        )
    matched = bool(when.args.get("matched"))
    condition = when.args.get("condition")
    shown = _node_sql(condition) if condition is not None else None
    then = when.args.get("then")
    if isinstance(then, exp.Var) and then.name.upper() == "DELETE":
        return MergeClause(matched=matched, action="delete", condition=shown)
    if isinstance(then, exp.Update):
        items = then.expressions
        sets = None if len(items) == 1 and isinstance(items[0], exp.Star) else items
        assignments = None if sets is None else _assignments(sets, "MERGE ... UPDATE")
        return MergeClause(
            matched=matched, action="update", condition=shown, assignments=assignments
        )
    if isinstance(then, exp.Insert):
        return MergeClause(
            matched=matched, action="insert", condition=shown, assignments=_insert_values(then)
        )
    raise SqlError(f"MERGE: unsupported WHEN action {_node_sql(then)!r}")


def _insert_values(then: exp.Insert) -> tuple[tuple[str, str], ...] | None:
    """A MERGE INSERT's (column, value) pairs; None for ``INSERT *``."""
    if isinstance(then.this, exp.Star):
        return None

    def items(node: exp.Expr | None) -> list[exp.Expr]:
        if isinstance(node, exp.Tuple):
            return list(node.expressions)
        if isinstance(node, exp.Paren):
            return [node.this]
        return [] if node is None else [node]

    columns, values = items(then.this), items(then.expression)
    names = []
    for column in columns:
        if not isinstance(column, exp.Column):
            raise SqlError(f"MERGE ... INSERT expects column names, got {_node_sql(column)!r}")
        names.append(column.name)
    if len(names) != len(values):
        raise SqlError(
            f"MERGE ... INSERT names {len(names)} columns but gives {len(values)} values"
        )
    _check_once([n.lower() for n in names], "MERGE ... INSERT")
    return tuple((n, _node_sql(v)) for n, v in zip(names, values, strict=True))


def _insert(node: exp.Insert) -> Insert:
    _reject_clauses(node, ("this", "expression", "overwrite", "where", "source"), "INSERT")
    if node.args.get("where") is not None and node.args.get("overwrite"):
        raise SqlError(
            "INSERT OVERWRITE does not take REPLACE WHERE; use INSERT INTO ... REPLACE WHERE"
        )
    target = node.this
    columns: tuple[str, ...] | None = None
    if isinstance(target, exp.Schema) and _is_url_call(target):
        # sqlglot reads ``tsfile('<url>')`` after INSERT INTO as a table with a column list.
        shown = ", ".join(_node_sql(e) for e in target.expressions)
        raise SqlError(url_reference_refused("INSERT", f"{URL_FUNCTION}({shown})"))
    if isinstance(target, exp.Schema):
        names = []
        for column in target.expressions:
            if not isinstance(column, exp.Identifier):
                raise SqlError(f"INSERT column list expects names, got {_node_sql(column)!r}")
            names.append(column.name)
        columns = tuple(names)
        target = target.this
    query = node.expression
    source = node.args.get("source")
    if isinstance(source, exp.Table) and query is None:
        query = exp.select("*").from_(source)  # Spark's INSERT ... TABLE u: every row of u
    if not isinstance(query, (exp.Query, exp.Values)):
        raise SqlError(f"INSERT expects a query or VALUES, got {_node_sql(query)!r}")
    return Insert(
        table=_table_name(target, "INSERT"),
        query=query,
        columns=columns,
        overwrite=bool(node.args.get("overwrite")),
        replace_where=_where_sql(node.args.get("where")),
    )


def _describe(node: exp.Describe, text: str) -> Statement:
    target = node.this
    kind = node.args.get("kind")
    style = (node.args.get("style") or "").upper()
    if not isinstance(target, exp.Table) or (kind and kind.upper() != "TABLE"):
        return PassThrough(text)
    _reject_clauses(node, ("this", "kind", "style"), "DESCRIBE")
    if style in ("", "EXTENDED", "FORMATTED"):
        return DescribeTable(
            table=_table_or_url(target, "DESCRIBE"), extended=style in ("EXTENDED", "FORMATTED")
        )
    if style == "HISTORY":
        return DescribeHistory(_table_or_url(target, "DESCRIBE HISTORY"))
    if style == "DETAIL":
        return DescribeDetail(_table_or_url(target, "DESCRIBE DETAIL"))
    return PassThrough(text)


def _hours(node: exp.Expr | None) -> float | None:
    return None if node is None else float(node.name)


def _expire(node: dialect.ExpireSnapshots) -> ExpireSnapshots:
    older_than = node.args.get("older_than")
    retain_last = node.args.get("retain_last")
    if retain_last is not None and not retain_last.is_int:
        raise SqlError(f"RETAIN LAST needs a whole number of versions, got {retain_last.name}")
    return ExpireSnapshots(
        table=_table_name(node.this, "EXPIRE SNAPSHOTS"),
        retain_hours=_hours(node.args.get("retain")),
        older_than=None if older_than is None else str(older_than.this),
        retain_last=None if retain_last is None else int(retain_last.name),
    )


def _alter_columns(node: exp.Alter, text: str) -> Statement | None:
    """The column and rename forms of ALTER TABLE, or None for the others."""
    actions = node.args.get("actions") or []
    if node.args.get("kind") != "TABLE" or len(actions) != 1:
        return None
    action = actions[0]
    forms = (exp.Schema, exp.ColumnDef, exp.AlterColumn, exp.AlterRename, exp.RenameColumn)
    if not isinstance(action, (*forms, dialect.MoveColumn, exp.Drop)):
        return None
    _reject_clauses(node, ("this", "kind", "actions"), "ALTER TABLE")
    table = _table_name(node.this, "ALTER TABLE")
    statement = f"ALTER TABLE {table}"
    if isinstance(action, (exp.Schema, exp.ColumnDef)):
        defs = action.expressions if isinstance(action, exp.Schema) else [action]
        clause = f"{statement} ADD COLUMNS"
        positions = tuple(_column_position(d, clause) for d in defs)
        return AlterTableAddColumns(
            table=table,
            columns=tuple(_column_spec(d, clause, positioned=True) for d in defs),
            positions=positions,
        )
    if isinstance(action, exp.AlterRename):
        return AlterTableRename(table=table, new_name=_table_name(action.this, "RENAME TO"))
    if isinstance(action, dialect.MoveColumn):
        after = action.args.get("after")
        return AlterTableChangeColumn(
            table=table,
            column=_column_name(action.this, statement),
            after=None if after is None else _column_name(after, statement),
        )
    if isinstance(action, exp.AlterColumn):
        name = action.name.lower()
        rename = action.args.get("rename_to")
        dtype = action.args.get("dtype")
        others = {k for k, v in action.args.items() if v and k not in ("this", "dtype")}
        if isinstance(dtype, exp.DataType) and (
            not others
            or (others == {"rename_to"} and rename is not None and rename.name.lower() == name)
        ):
            column = _column_spec(
                exp.ColumnDef(this=exp.to_identifier(name), kind=dtype), statement
            )
            return AlterTableAlterColumn(table=table, column=column)
        if others == {"drop", "allow_null"} and dtype is None:
            return AlterTableChangeColumn(table=table, column=name, drop_not_null=True)
        if rename is not None and dtype is None and others == {"rename_to"}:
            return AlterTableRenameColumn(table=table, column=name, new_name=rename.name.lower())
        reason = (
            f"only ALTER COLUMN {name} TYPE <wider type> (INT -> BIGINT, FLOAT -> DOUBLE), "
            "FIRST, AFTER <column> and DROP NOT NULL are supported on a tsfile table"
        )
        return AlterTableUnsupported(table=table, sql=text, reason=f"{statement}: {reason}")
    if isinstance(action, exp.RenameColumn):
        if action.args.get("exists"):
            raise SqlError(f"{statement} RENAME COLUMN does not support IF EXISTS here")
        return AlterTableRenameColumn(
            table=table,
            column=_column_name(action.this, statement),
            new_name=_column_name(action.args["to"], statement),
        )
    if action.args.get("kind") not in ("COLUMN", "COLUMNS"):
        return None
    names: list[str] = []
    for target in action.args.get("tables") or []:
        items = target.expressions if isinstance(target, exp.Schema) else [target]
        names.extend(_column_name(item, statement) for item in items)
    return AlterTableDropColumns(
        table=table, columns=tuple(names), if_exists=bool(action.args.get("exists"))
    )


def _column_name(node: exp.Expr, statement: str) -> str:
    """A single-part column name (a nested field's dotted path is refused)."""
    if isinstance(node, exp.Column) and not node.table and isinstance(node.this, exp.Identifier):
        return node.this.name.lower()
    if isinstance(node, exp.Identifier):
        return node.name.lower()
    raise SqlError(
        f"{statement}: {node.sql(dialect='spark')!r} is not a column name (tsfile tables have "
        "no nested columns)"
    )


def _alter(node: exp.Alter, text: str) -> Statement:
    columns = _alter_columns(node, text)
    if columns is not None:
        return columns
    actions = node.args.get("actions") or []
    if any(isinstance(action, dialect.UnsetProperties) for action in actions):
        return _alter_unset(node, actions)
    if (
        node.args.get("kind") != "TABLE"
        or len(actions) != 1
        or not isinstance(actions[0], exp.AlterSet)
        or {key for key, value in actions[0].args.items() if value} != {"expressions"}
        or not all(isinstance(item, exp.Properties) for item in actions[0].expressions)
    ):
        return PassThrough(text)
    _reject_clauses(node, ("this", "kind", "actions"), "ALTER TABLE")
    items = [item for properties in actions[0].expressions for item in properties.expressions]
    return AlterTableSetProperties(
        table=_table_name(node.this, "ALTER TABLE"),
        properties=_property_map(items, "TBLPROPERTIES"),
    )


def _alter_unset(node: exp.Alter, actions: Sequence[exp.Expr]) -> Statement:
    if len(actions) != 1 or node.args.get("kind") != "TABLE":
        raise SqlError("ALTER TABLE … UNSET TBLPROPERTIES takes one action per statement")
    _reject_clauses(node, ("this", "kind", "actions"), "ALTER TABLE")
    action = actions[0]
    return AlterTableUnsetProperties(
        table=_table_name(node.this, "ALTER TABLE"),
        keys=tuple(_property_key(key, "UNSET TBLPROPERTIES") for key in action.expressions),
        if_exists=bool(action.args.get("exists")),
    )


def _part_action(node: exp.Alter) -> dialect.AddPart | dialect.DropPart | None:
    """The ADD PART / DROP PART action of an ALTER TABLE, if that is what it is."""
    for action in node.args.get("actions") or []:
        if isinstance(action, (dialect.AddPart, dialect.DropPart)):
            return action
    return None


def _alter_part(node: exp.Alter) -> Statement:
    actions = node.args.get("actions") or []
    if len(actions) != 1:
        raise SqlError("ALTER TABLE … ADD PART / DROP PART takes one action per statement")
    _reject_clauses(node, ("this", "kind", "actions"), "ALTER TABLE")
    table = _table_name(node.this, "ALTER TABLE")
    action = actions[0]
    if isinstance(action, dialect.DropPart):
        return AlterTableDropPart(table=table, pattern=_string_literal(action.this, "DROP PART"))
    options = action.this
    return AlterTableAddPart(
        table=table, options=_property_map(options.expressions, "ADD PART OPTIONS")
    )


# -- table references by URL ------------------------------------------------------------------


def table_url_from_sqlglot(node: exp.Table) -> TableUrl | None:
    """The URL reference ``node`` is (``tsfile('<url>', ...)`` or ``tsfile.`<url>` ``), or
    None when it is not one.

    ``tsfile.`name` `` whose name is a plain identifier stays a table ``name`` of database
    ``tsfile``: only a name that cannot be a table name (a path, a URL) is read as a location.
    A ``VERSION AS OF`` / ``TIMESTAMP AS OF`` clause on the reference is its time travel.

    Raises:
        SqlError: a malformed call (no URL, a URL that is not a string literal, a positional
            or unknown setting, a credential, both ``version`` and ``timestamp``, ...).
    """
    if node.args.get("catalog"):
        return None
    function = node.this
    db = node.args.get("db")
    clause = node.args.get("version")
    travel = time_travel_from_sqlglot(clause) if clause is not None else None
    if isinstance(function, exp.Anonymous) and db is None:
        if function.name.lower() != URL_FUNCTION:
            return None
        url = _url_call(function)
    elif (
        isinstance(function, exp.Identifier)
        and isinstance(db, exp.Identifier)
        and db.name.lower() == URL_FUNCTION
        and not _is_identifier(function.name)
    ):
        url = TableUrl(url=function.name)
    else:
        return None
    if travel is None:
        return url
    if url.time_travel is not None:
        raise SqlError(
            f"{_node_sql(node)!r} gives time travel twice; use either the version/timestamp "
            "setting or VERSION AS OF / TIMESTAMP AS OF, not both"
        )
    return TableUrl(
        url=url.url,
        time_travel=travel,
        table=url.table,
        table_uuid=url.table_uuid,
        settings=url.settings,
    )


def parse_table_reference(text: str) -> TableUrl | None:
    """The URL reference one table reference's text is (``tsfile('<url>', version => 1)``,
    ``tsfile.`<url>` ``), read by the same rules as in a query (:func:`table_url_from_sqlglot`);
    None when it is not one (``tsfile.t`` is table ``t`` of database ``tsfile``).

    Raises:
        SqlError: a malformed reference (the messages of :func:`table_url_from_sqlglot`), a
            credential in it, or text that is not one table reference.
    """
    sql = f"SELECT * FROM {text}"
    tokens = _tokenize(sql)
    _reject_credentials(sql, tokens)
    try:
        trees = _DIALECT.parser().parse(tokens, sql)
    except ParseError as e:
        raise SqlParseError(_parse_error_message(sql, tokens, e)) from e
    tables = [t for tree in trees if tree is not None for t in tree.find_all(exp.Table)]
    if len(tables) != 1:
        raise SqlError(f"{text!r} is not one table reference")
    return table_url_from_sqlglot(tables[0])


def _is_identifier(name: str) -> bool:
    try:
        TableName(name)
    except SqlError:
        return False
    return True


def _url_call(call: exp.Anonymous) -> TableUrl:
    shown = f"{URL_FUNCTION}()"
    args = list(call.expressions)
    if not args:
        raise SqlError(f"{shown} needs the table's URL: {URL_FUNCTION}('s3://bucket/table')")
    first = args[0]
    if not (isinstance(first, exp.Literal) and first.is_string):
        raise SqlError(
            f"{shown} expects the URL as a string literal first, got {_node_sql(first)!r}"
        )
    url = str(first.this)
    shown = f"{URL_FUNCTION}({_node_sql(first)})"
    canonical = {name.lower(): name for name in URL_SETTINGS}
    named: dict[str, exp.Expr] = {}
    settings: dict[str, str] = {}
    for arg in args[1:]:
        if not isinstance(arg, exp.Kwarg):
            hint = " (write name => value, not name = value)" if isinstance(arg, exp.EQ) else ""
            raise SqlError(
                f"{shown}: settings after the URL must be named, as name => value; got "
                f"{_node_sql(arg)!r}{hint}"
            )
        key = arg.this.name
        value = arg.expression
        lowered = key.lower()
        if lowered in named or lowered in {k.lower() for k in settings}:
            raise SqlError(f"{shown} sets {key!r} twice")
        if lowered in canonical:
            named[lowered] = value
        elif lowered.startswith(STORAGE_PREFIX) and len(lowered) > len(STORAGE_PREFIX):
            settings[STORAGE_PREFIX + key[len(STORAGE_PREFIX) :]] = _property_value(
                value, key, shown
            )
        else:
            raise SqlError(
                f"{shown}: unknown setting {key!r}; valid settings are: "
                f"{', '.join(URL_SETTINGS)} and `{STORAGE_PREFIX}<name>` for non-secret "
                "file-system settings (quoted with backticks: `fs.endpoint_url` => '...')"
            )
    if "version" in named and "timestamp" in named:
        raise SqlError(f"{shown}: version and timestamp are mutually exclusive; give one")
    travel: TimeTravel | None = None
    if "version" in named:
        travel = _url_version(named["version"], shown)
    elif "timestamp" in named:
        travel = _url_timestamp(named["timestamp"], shown)
    return TableUrl(
        url=url,
        time_travel=travel,
        table=_url_string(named, "table", shown),
        table_uuid=_url_string(named, "tableuuid", shown),
        settings=settings,
    )


def _url_version(value: exp.Expr, shown: str) -> VersionAsOf:
    negative = isinstance(value, exp.Neg)
    literal = value.this if negative else value
    if not (isinstance(literal, exp.Literal) and literal.is_int):
        raise SqlError(f"{shown}: version needs an integer literal, got {_node_sql(value)!r}")
    number = int(literal.this)
    return VersionAsOf(-number if negative else number)


def _url_timestamp(value: exp.Expr, shown: str) -> TimestampAsOf:
    # A string is read as TIMESTAMP AS OF reads it; an integer is epoch milliseconds, as
    # ClickHouse's iceberg_timestamp_ms.
    if isinstance(value, exp.Literal) and (value.is_string or value.is_int):
        return TimestampAsOf(str(value.this))
    raise SqlError(
        f"{shown}: timestamp needs a string literal such as '2024-01-01 00:00:00' or epoch "
        f"milliseconds, got {_node_sql(value)!r}"
    )


def _url_string(named: Mapping[str, exp.Expr], key: str, shown: str) -> str | None:
    value = named.get(key)
    if value is None:
        return None
    if not (isinstance(value, exp.Literal) and value.is_string):
        spelled = next(name for name in URL_SETTINGS if name.lower() == key)
        raise SqlError(f"{shown}: {spelled} needs a string literal, got {_node_sql(value)!r}")
    return str(value.this)


def _table_or_url(
    node: exp.Expr, statement: str, allowed: Sequence[str] = ()
) -> TableName | TableUrl:
    """The table a statement names: a URL reference, else a table name (see
    :func:`_table_name`)."""
    if isinstance(node, exp.Table):
        # A time travel clause the statement allows is its own (SHOW PARTS ... VERSION AS OF).
        bare = node.copy()
        bare.set("version", None)
        url = table_url_from_sqlglot(bare)
        if url is not None:
            _reject_clauses(node, ("this", "db", *allowed), f"{statement} {url}")
            return url
    return _table_name(node, statement, allowed)
