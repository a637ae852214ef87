"""Text to statement model: :func:`parse_statement` reads one statement of ``catalog.sql()``.

The text is tokenized and parsed with :class:`~tsfile_catalog.sql.dialect.TsFileSpark`; the
catalog's own statements become the frozen models of :mod:`tsfile_catalog.sql.statements`,
every other statement Spark can run a :class:`~tsfile_catalog.sql.statements.PassThrough`.
Errors name the line and column where the offending token starts.

Table and column names are lower-cased (by the models), as Spark resolves them
case-insensitively and TsFile's table model stores them in lower case; option and property
keys keep their spelling.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import cast

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from tsfile_catalog.exceptions import SqlError, SqlParseError
from tsfile_catalog.sql import dialect
from tsfile_catalog.sql.statements import (
    _DIALECT,
    _SPARK_TYPES,
    PROVIDER,
    AlterTableSetProperties,
    ColumnSpec,
    CreateTable,
    Delete,
    DescribeDetail,
    DescribeHistory,
    DescribeTable,
    DropTable,
    ExplainParts,
    Insert,
    Optimize,
    PassThrough,
    Select,
    ShowParts,
    ShowTables,
    SparkType,
    Statement,
    TableName,
    TimestampAsOf,
    TimeTravel,
    Vacuum,
    VersionAsOf,
)

__all__ = ["parse_statement", "time_travel_from_sqlglot"]

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
    text = sql[first.start : statement_tokens[-1].end + 1]
    return _to_model(node, text)


def _command_message(sql: str, statement: Sequence[Token]) -> str:
    # The parser gave up after the statement's first word(s): ``CREATE TABEL``, ``SHOW
    # DATABASES``. Name the word it did not know, as it may be a typo.
    shown = f"unsupported statement at {_position(sql, statement[0])} ({_snippet(sql)!r})"
    if len(statement) < 2:
        return f"{shown}; run statements the catalog does not handle with spark.sql() directly"
    word = statement[1]
    return (
        f"{shown}: the catalog does not understand {statement[0].text.upper()} "
        f"{word.text!r} at {_position(sql, word)}; check the spelling, or run statements the "
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


def _tokenize(sql: str) -> list[Token]:
    try:
        return _DIALECT.tokenize(sql)
    except TokenError as e:
        raise SqlParseError(_token_error_message(sql, e)) from e


_UNCLOSED = re.compile(r"Missing (\S+) from \d+:(\d+)")
_QUOTE_KINDS = {"'": "string literal", '"': "string literal", "`": "quoted identifier"}


def _token_error_message(sql: str, error: TokenError) -> str:
    # The tokenizer's own message (e.g. "Missing ' from 1:7", a character offset) is on the
    # cause; the error itself only quotes 50 characters either side of where it stopped.
    unclosed = _UNCLOSED.fullmatch(str(error.__cause__ or ""))
    if unclosed is not None:
        delimiter = unclosed.group(1)
        offset = min(int(unclosed.group(2)), len(sql) - 1)
        if sql[offset] != delimiter:
            offset = max(sql.rfind(delimiter, 0, offset + 1), 0)
        kind = _QUOTE_KINDS.get(delimiter, "quoted text")
        return (
            f"syntax error: unclosed {kind} starting at {_offset_position(sql, offset)}: "
            f"no closing {delimiter} before the end of input"
        )
    stopped = error.start + 50 if error.start else len(sql)
    return (
        f"syntax error: cannot read the SQL text near {_offset_position(sql, stopped)} "
        f"(an unclosed comment or quote?): {_snippet(sql[max(stopped - 20, 0) :])!r}"
    )


def _offset_position(sql: str, offset: int) -> str:
    offset = min(offset, len(sql))
    line = sql.count("\n", 0, offset) + 1
    column = offset - sql.rfind("\n", 0, offset)
    return f"line {line}, column {column}"


def _position(sql: str, token: Token) -> str:
    # sqlglot's Token.col is where the token ends; users look for where it starts.
    return _offset_position(sql, token.start)


def _reject_multiple_statements(sql: str, tokens: Sequence[Token]) -> None:
    in_statement = ended = False
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            ended = in_statement
            continue
        if ended:
            raise SqlParseError(
                f"multiple statements are not supported: another statement starts at "
                f"{_position(sql, token)} ({token.text!r}); send one statement per call"
            )
        in_statement = True


_TOKEN_REPR = re.compile(r"<Token token_type: TokenType\.(\w+), text: (.*?), line: .*?>")
# sqlglot descriptions that name its own classes or only restate "syntax error".
_OPAQUE_DESCRIPTION = re.compile(r"Required keyword|Invalid expression|<class|sqlglot", re.I)
_EXPECTED = re.compile(r"Expect(?:ed|ing) (.+?)(?: but got .*)?")


def _parse_error_message(sql: str, statement: Sequence[Token], error: ParseError) -> str:
    """Say what is wrong in SQL terms, like Spark's PARSE_SYNTAX_ERROR: where, near what."""
    first = statement[0]
    if first.token_type == TokenType.VAR and first.text.upper() not in _WORD_STATEMENTS:
        # A statement cannot start with a plain word (``SELEC * FROM t``); sqlglot reads it as
        # an expression and fails later, at a token that is not the mistake.
        return (
            f"syntax error at or near {first.text!r} at {_position(sql, first)}: "
            "no SQL statement starts with this word"
        )
    if not error.errors:
        return f"syntax error in {_snippet(sql)!r}"
    record = error.errors[0]
    token = str(record.get("highlight") or "")
    line, column = record.get("line"), record.get("col")
    if isinstance(column, int) and token and "\n" not in token:
        # sqlglot reports the column where the offending token ends.
        column -= len(token) - 1
    if record.get(dialect.END_OF_INPUT):
        message = (
            f"syntax error: unexpected end of input after {token!r} at line {line}, column {column}"
        )
    else:
        message = f"syntax error at or near {token!r} at line {line}, column {column}"
    detail = _readable_detail(str(record.get("description") or ""))
    return f"{message}: {detail}" if detail else message


def _readable_detail(description: str) -> str:
    # sqlglot describes tokens by their repr; name them by their text instead.
    description = _TOKEN_REPR.sub(
        lambda m: "end of input" if m.group(1) == "SENTINEL" else repr(m.group(2)), description
    )
    if not description or _OPAQUE_DESCRIPTION.search(description):
        return ""
    expected = _EXPECTED.fullmatch(description)
    if expected is not None:
        what = expected.group(1)
        return f"expected {what!r}" if len(what) == 1 else f"expected {_lower_first(what)}"
    return _lower_first(description)


def _lower_first(text: str) -> str:
    # "Expected table name" reads on after a colon as "expected table name"; keywords such
    # as "EXPLAIN PARTS" keep their case.
    return text[0].lower() + text[1:] if text[1:2].islower() else text


def _snippet(sql: str, limit: int = 60) -> str:
    text = " ".join(sql.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
            table=_table_name(table, "SHOW PARTS", allowed=("version",)),
            time_travel=time_travel_from_sqlglot(version) if version is not None else None,
        )
    if isinstance(node, dialect.ExplainParts):
        return ExplainParts(node.this)
    if isinstance(node, dialect.Vacuum):
        return Vacuum(table=_table_name(node.this, "VACUUM"), dry_run=bool(node.args["dry_run"]))
    if isinstance(node, dialect.Optimize):
        return _optimize(node)
    if isinstance(node, exp.Delete):
        return _delete(node, text)
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
    if isinstance(node, exp.Alter):
        return _alter(node, text)
    if isinstance(node, _PASS_THROUGH_NODES):
        return PassThrough(text)
    raise SqlParseError(f"not a SQL statement: {_snippet(text)!r}")


def _reject_clauses(node: exp.Expr, allowed: Sequence[str], statement: str) -> None:
    for key, value in node.args.items():
        if key not in allowed and value:
            clause = key.rstrip("_").replace("_", " ").upper()
            raise SqlError(f"{statement} does not support {clause} here")


def _table_name(node: exp.Expr, statement: str, allowed: Sequence[str] = ()) -> TableName:
    if not isinstance(node, exp.Table):
        raise SqlError(f"{statement} expects a table name, got {_node_sql(node)!r}")
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


def _column_spec(node: exp.Expr, statement: str) -> ColumnSpec:
    if not isinstance(node, exp.ColumnDef) or not isinstance(node.this, exp.Identifier):
        raise SqlError(f"{statement}: expected a column definition, got {_node_sql(node)!r}")
    name = node.name
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


def _insert(node: exp.Insert) -> Insert:
    _reject_clauses(node, ("this", "expression", "overwrite", "where"), "INSERT")
    if node.args.get("where") is not None and node.args.get("overwrite"):
        raise SqlError(
            "INSERT OVERWRITE does not take REPLACE WHERE; use INSERT INTO ... REPLACE WHERE"
        )
    target = node.this
    columns: tuple[str, ...] | None = None
    if isinstance(target, exp.Schema):
        names = []
        for column in target.expressions:
            if not isinstance(column, exp.Identifier):
                raise SqlError(f"INSERT column list expects names, got {_node_sql(column)!r}")
            names.append(column.name)
        columns = tuple(names)
        target = target.this
    query = node.expression
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
            table=_table_name(target, "DESCRIBE"), extended=style in ("EXTENDED", "FORMATTED")
        )
    if style == "HISTORY":
        return DescribeHistory(_table_name(target, "DESCRIBE HISTORY"))
    if style == "DETAIL":
        return DescribeDetail(_table_name(target, "DESCRIBE DETAIL"))
    return PassThrough(text)


def _alter(node: exp.Alter, text: str) -> Statement:
    actions = node.args.get("actions") or []
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
