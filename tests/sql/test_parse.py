"""Statement parsing: the dialect's own nodes, the statement model, errors, hostile input."""

from __future__ import annotations

import re

import pytest
import sqlglot
from hypothesis import given
from hypothesis import strategies as st
from sqlglot import exp

from tsfile_catalog.exceptions import SqlError, SqlParseError
from tsfile_catalog.sql import (
    AlterTableAddColumns,
    AlterTableAlterColumn,
    AlterTableChangeColumn,
    AlterTableDropColumns,
    AlterTableRename,
    AlterTableRenameColumn,
    AlterTableSetProperties,
    AlterTableUnsetProperties,
    AlterTableUnsupported,
    ColumnPosition,
    ColumnSpec,
    CreateTable,
    DescribeDetail,
    DescribeHistory,
    DescribeTable,
    DropTable,
    ExpireSnapshots,
    ExplainParts,
    Insert,
    PassThrough,
    RestoreTable,
    Select,
    ShowCreateTable,
    ShowParts,
    ShowTables,
    Statement,
    TableName,
    TimestampAsOf,
    TsFileSpark,
    Vacuum,
    VersionAsOf,
    parse_statement,
    quote_identifier,
    quote_string,
)


def _round_trip(sql: str) -> Statement:
    statement = parse_statement(sql)
    again = parse_statement(statement.to_sql())
    assert again == statement, statement.to_sql()
    assert again.to_sql() == statement.to_sql()
    return statement


# -- the dialect ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "SHOW TABLES",
        "SHOW TABLES IN db",
        "SHOW PARTS t",
        "SHOW PARTS db.t VERSION AS OF 3",
        "SHOW PARTS t TIMESTAMP AS OF '2024-01-01 00:00:00'",
        "EXPLAIN PARTS SELECT * FROM t WHERE a > 1",
        "VACUUM t",
        "VACUUM db.t DRY RUN",
        "VACUUM t RETAIN 168 HOURS DRY RUN",
        "EXPIRE SNAPSHOTS t RETAIN 2 HOURS RETAIN LAST 3",
        "EXPIRE SNAPSHOTS db.t OLDER THAN '2024-01-01 00:00:00'",
        "RESTORE TABLE t TO VERSION AS OF 3",
        "RESTORE TABLE db.t TO TIMESTAMP AS OF '2024-01-01'",
        "SHOW CREATE TABLE db.t",
        "DESCRIBE DETAIL t",
        "DESCRIBE HISTORY t",
        "SELECT TIMESTAMP '2024-01-01 00:00:00', DATE '2024-01-01', TIMESTAMP_NTZ '2024-01-01'",
    ],
)
def test_dialect_round_trips_custom_statements(sql: str) -> None:
    tree = sqlglot.parse_one(sql, read=TsFileSpark)
    assert not isinstance(tree, exp.Command)
    assert tree.sql(dialect=TsFileSpark) == sql
    assert sqlglot.parse_one(tree.sql(dialect=TsFileSpark), read=TsFileSpark) == tree


def test_dialect_keeps_explain_and_vacuum_usable_as_column_names() -> None:
    tree = sqlglot.parse_one("SELECT explain, vacuum FROM t", read=TsFileSpark)
    assert [column.name for column in tree.find_all(exp.Column)] == ["explain", "vacuum"]


def test_dialect_does_not_change_the_spark_dialect() -> None:
    assert isinstance(sqlglot.parse_one("SHOW PARTS t", read="spark"), exp.Command)


# -- round trips of every statement -----------------------------------------------------------


def test_create_table_with_columns() -> None:
    statement = _round_trip(
        "CREATE TABLE IF NOT EXISTS Db.Weather (Time BIGINT, city STRING, temp DOUBLE) "
        "USING tsfile LOCATION 's3://bucket/weather' "
        "OPTIONS (tagColumns 'city,device', compression = 'LZ4', 'x.y' 1, flag true) "
        "TBLPROPERTIES ('owner'='ops', retention=-7)"
    )
    assert statement == CreateTable(
        table=TableName("weather", "db"),
        columns=(
            ColumnSpec("time", "BIGINT"),
            ColumnSpec("city", "STRING"),
            ColumnSpec("temp", "DOUBLE"),
        ),
        location="s3://bucket/weather",
        options={"tagColumns": "city,device", "compression": "LZ4", "x.y": "1", "flag": "true"},
        properties={"owner": "ops", "retention": "-7"},
        if_not_exists=True,
    )


@pytest.mark.parametrize(
    ("type_sql", "expected"),
    [
        ("TIMESTAMP", "TIMESTAMP"),
        ("LONG", "BIGINT"),
        ("INTEGER", "INT"),
        ("BOOLEAN", "BOOLEAN"),
        ("FLOAT", "FLOAT"),
        ("DATE", "DATE"),
        ("BINARY", "BINARY"),
    ],
)
def test_create_table_column_types(type_sql: str, expected: str) -> None:
    statement = _round_trip(f"CREATE TABLE t (time {type_sql}) USING tsfile")
    assert isinstance(statement, CreateTable)
    assert statement.columns == (ColumnSpec("time", expected),)  # type: ignore[arg-type]


def test_create_table_adopting_a_location() -> None:
    statement = _round_trip("CREATE TABLE t USING TsFile LOCATION '/data/weather'")
    assert statement == CreateTable(table=TableName("t"), location="/data/weather")


def test_create_table_as_select() -> None:
    statement = _round_trip(
        "CREATE TABLE t USING tsfile OPTIONS (tagColumns 'city') LOCATION 'file:///x' "
        "AS SELECT time, city, temp FROM src WHERE temp > 0"
    )
    assert isinstance(statement, CreateTable)
    assert statement.columns is None
    assert statement.options == {"tagColumns": "city"}
    assert statement.query is not None
    assert statement.query.sql(dialect=TsFileSpark) == (
        "SELECT time, city, temp FROM src WHERE temp > 0"
    )


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TABLE t (a INT) USING parquet",
        "CREATE TABLE t (a INT)",
        "CREATE TABLE t STORED AS tsfile",
        "CREATE VIEW v AS SELECT 1",
        "CREATE TEMPORARY VIEW v USING tsfile OPTIONS (path '/x')",
    ],
)
def test_create_for_other_providers_passes_through(sql: str) -> None:
    assert _round_trip(sql) == PassThrough(sql)


def test_drop_table() -> None:
    assert _round_trip("DROP TABLE IF EXISTS db.t PURGE") == DropTable(
        table=TableName("t", "db"), if_exists=True, purge=True
    )
    assert _round_trip("drop table t") == DropTable(table=TableName("t"))
    assert _round_trip("DROP VIEW v") == PassThrough("DROP VIEW v")


def test_insert_values() -> None:
    statement = _round_trip("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    assert isinstance(statement, Insert)
    assert statement.table == TableName("t")
    assert statement.columns is None
    assert not statement.overwrite
    assert statement.query_sql == "VALUES (1, 'a'), (2, 'b')"


def test_insert_table_reads_every_row_of_the_table() -> None:
    """Spark's ``INSERT INTO t TABLE u`` is ``INSERT INTO t SELECT * FROM u``."""
    for sql in ("INSERT INTO t TABLE u", "INSERT OVERWRITE TABLE t TABLE db.u"):
        statement = parse_statement(sql)
        assert isinstance(statement, Insert) and statement.table == TableName("t")
        assert statement.query_sql.startswith("SELECT * FROM ")
        assert parse_statement(statement.to_sql()) == statement


def test_insert_select_with_columns() -> None:
    statement = _round_trip("INSERT INTO TABLE t (Time, city) SELECT time, city FROM s")
    assert isinstance(statement, Insert)
    assert statement.columns == ("time", "city")
    assert statement.query_sql == "SELECT time, city FROM s"


@pytest.mark.parametrize(
    "sql", ["INSERT OVERWRITE t SELECT * FROM s", "INSERT OVERWRITE TABLE t SELECT * FROM s"]
)
def test_insert_overwrite(sql: str) -> None:
    statement = _round_trip(sql)
    assert isinstance(statement, Insert)
    assert statement.overwrite


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT a FROM t WHERE b > 1",
        "WITH c AS (SELECT * FROM t) SELECT count(*) FROM c",
        "SELECT * FROM t VERSION AS OF 3",
        "SELECT * FROM t TIMESTAMP AS OF '2024-01-01 00:00:00' AS x",
        "SELECT a FROM t UNION ALL SELECT a FROM u",
        "(SELECT 1)",
        "SELECT * FROM t WHERE time >= TIMESTAMP '2024-01-01 00:00:00'",
    ],
)
def test_select(sql: str) -> None:
    statement = _round_trip(sql)
    assert isinstance(statement, Select)
    assert isinstance(statement.query, exp.Query)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("DESCRIBE t", DescribeTable(table=TableName("t"))),
        ("DESC TABLE t", DescribeTable(table=TableName("t"))),
        ("DESCRIBE TABLE EXTENDED db.t", DescribeTable(table=TableName("t", "db"), extended=True)),
        ("DESCRIBE EXTENDED t", DescribeTable(table=TableName("t"), extended=True)),
        ("DESCRIBE FORMATTED t", DescribeTable(table=TableName("t"), extended=True)),
        ("DESCRIBE HISTORY t", DescribeHistory(TableName("t"))),
        ("DESCRIBE DETAIL t", DescribeDetail(TableName("t"))),
        ("DESCRIBE FUNCTION f", PassThrough("DESCRIBE FUNCTION f")),
        ("DESCRIBE DATABASE d", PassThrough("DESCRIBE DATABASE d")),
    ],
)
def test_describe(sql: str, expected: Statement) -> None:
    assert _round_trip(sql) == expected


def test_show() -> None:
    assert _round_trip("SHOW TABLES") == ShowTables()
    assert _round_trip("show tables in Db") == ShowTables("db")
    assert _round_trip("SHOW PARTS t") == ShowParts(table=TableName("t"))
    assert _round_trip("SHOW PARTS t VERSION AS OF 7") == ShowParts(
        table=TableName("t"), time_travel=VersionAsOf(7)
    )
    assert _round_trip("SHOW PARTS db.t TIMESTAMP AS OF '2024-01-01 00:00:00'") == ShowParts(
        table=TableName("t", "db"), time_travel=TimestampAsOf("2024-01-01 00:00:00")
    )


def test_explain_parts() -> None:
    statement = _round_trip("EXPLAIN PARTS SELECT * FROM t WHERE time > 10")
    assert isinstance(statement, ExplainParts)
    assert statement.query.sql(dialect=TsFileSpark) == "SELECT * FROM t WHERE time > 10"


def test_alter_table_set_tblproperties() -> None:
    assert _round_trip("ALTER TABLE t SET TBLPROPERTIES ('a' = 'b', c = 1)") == (
        AlterTableSetProperties(table=TableName("t"), properties={"a": "b", "c": "1"})
    )
    other = "ALTER TABLE t SET LOCATION '/x'"
    assert _round_trip(other) == PassThrough(other)


def test_alter_table_unset_tblproperties() -> None:
    assert _round_trip("ALTER TABLE db.t UNSET TBLPROPERTIES ('a', spark.x.y)") == (
        AlterTableUnsetProperties(table=TableName("t", "db"), keys=("a", "spark.x.y"))
    )
    assert _round_trip("alter table t unset tblproperties if exists ('a')") == (
        AlterTableUnsetProperties(table=TableName("t"), keys=("a",), if_exists=True)
    )
    with pytest.raises(SqlParseError, match="expected a property key"):
        parse_statement("ALTER TABLE t UNSET TBLPROPERTIES ()")
    with pytest.raises(SqlParseError, match="expected TBLPROPERTIES"):
        parse_statement("ALTER TABLE t UNSET LOCATION")


def test_vacuum() -> None:
    assert _round_trip("VACUUM t") == Vacuum(table=TableName("t"))
    assert _round_trip("VACUUM db.t DRY RUN") == Vacuum(table=TableName("t", "db"), dry_run=True)
    assert _round_trip("vacuum t retain 1.5 hours") == Vacuum(
        table=TableName("t"), retain_hours=1.5
    )
    with pytest.raises(SqlParseError, match="expected HOURS"):
        parse_statement("VACUUM t RETAIN 5 DAYS")


def test_expire_snapshots() -> None:
    assert _round_trip("EXPIRE SNAPSHOTS t") == ExpireSnapshots(table=TableName("t"))
    assert _round_trip("EXPIRE SNAPSHOTS t OLDER THAN '2024-01-01' RETAIN LAST 2") == (
        ExpireSnapshots(table=TableName("t"), older_than="2024-01-01", retain_last=2)
    )
    assert _round_trip("EXPIRE SNAPSHOTS t RETAIN 24 HOURS") == ExpireSnapshots(
        table=TableName("t"), retain_hours=24
    )
    with pytest.raises(SqlParseError, match="one of RETAIN n HOURS and OLDER THAN"):
        parse_statement("EXPIRE SNAPSHOTS t OLDER THAN '2024-01-01' RETAIN 3 HOURS")
    with pytest.raises(SqlError, match="RETAIN LAST needs at least 1"):
        parse_statement("EXPIRE SNAPSHOTS t RETAIN LAST 0")
    with pytest.raises(SqlParseError, match="EXPIRE 't'"):
        parse_statement("EXPIRE t")


def test_restore() -> None:
    assert _round_trip("RESTORE TABLE db.t TO VERSION AS OF 2") == RestoreTable(
        table=TableName("t", "db"), time_travel=VersionAsOf(2)
    )
    assert _round_trip("RESTORE t TO TIMESTAMP AS OF '2024-01-01'") == RestoreTable(
        table=TableName("t"), time_travel=TimestampAsOf("2024-01-01")
    )
    with pytest.raises(SqlParseError, match="expected TO VERSION AS OF"):
        parse_statement("RESTORE TABLE t VERSION AS OF 2")


def test_alter_table_columns_and_rename() -> None:
    assert _round_trip("ALTER TABLE t ADD COLUMNS (Rain DOUBLE, n INT)") == AlterTableAddColumns(
        table=TableName("t"), columns=(ColumnSpec("rain", "DOUBLE"), ColumnSpec("n", "INT"))
    )
    assert parse_statement("ALTER TABLE t ADD COLUMN n INT") == AlterTableAddColumns(
        table=TableName("t"), columns=(ColumnSpec("n", "INT"),)
    )
    widen = AlterTableAlterColumn(table=TableName("t"), column=ColumnSpec("n", "BIGINT"))
    assert _round_trip("ALTER TABLE t ALTER COLUMN n TYPE BIGINT") == widen
    assert parse_statement("ALTER TABLE t CHANGE COLUMN n n BIGINT") == widen
    assert _round_trip("ALTER TABLE db.t RENAME TO db.u") == AlterTableRename(
        table=TableName("t", "db"), new_name=TableName("u", "db")
    )
    assert _round_trip("SHOW CREATE TABLE t") == ShowCreateTable(TableName("t"))
    with pytest.raises(SqlError, match="'c' given twice"):
        parse_statement("ALTER TABLE t ADD COLUMNS (c INT, c INT)")
    with pytest.raises(SqlError, match="type VARCHAR"):
        parse_statement("ALTER TABLE t ADD COLUMNS (c VARCHAR(3))")


def test_alter_table_column_evolution_forms_round_trip() -> None:
    t = TableName("t")
    rename = AlterTableRenameColumn(table=t, column="c", new_name="d")
    assert _round_trip("ALTER TABLE t RENAME COLUMN C TO d") == rename
    drop = AlterTableDropColumns(table=t, columns=("c",))
    assert _round_trip("ALTER TABLE t DROP COLUMN c") == drop
    assert _round_trip("ALTER TABLE t DROP COLUMNS (c, `e f`)") == AlterTableDropColumns(
        table=t, columns=("c", "e f")
    )
    assert _round_trip("ALTER TABLE t DROP COLUMN IF EXISTS c") == AlterTableDropColumns(
        table=t, columns=("c",), if_exists=True
    )
    move = AlterTableChangeColumn(table=t, column="c", after="d")
    assert _round_trip("ALTER TABLE t ALTER COLUMN c AFTER d") == move
    assert _round_trip("ALTER TABLE t ALTER COLUMN c FIRST") == AlterTableChangeColumn(
        table=t, column="c"
    )
    assert _round_trip("ALTER TABLE t ALTER COLUMN c DROP NOT NULL") == AlterTableChangeColumn(
        table=t, column="c", drop_not_null=True
    )
    with pytest.raises(SqlError, match="'a.b' is not a column name"):
        parse_statement("ALTER TABLE t RENAME COLUMN a.b TO c")


def test_add_columns_keeps_each_columns_place() -> None:
    t = TableName("t")
    placed = AlterTableAddColumns(
        table=t,
        columns=(ColumnSpec("c", "INT"), ColumnSpec("d", "DOUBLE"), ColumnSpec("e", "STRING")),
        positions=(ColumnPosition(after="b"), None, ColumnPosition()),
    )
    assert _round_trip("ALTER TABLE t ADD COLUMNS (c INT AFTER B, d DOUBLE, e STRING FIRST)") == (
        placed
    )
    assert placed.placed()[1] == (ColumnSpec("d", "DOUBLE"), None)
    assert _round_trip("ALTER TABLE t ADD COLUMN c INT AFTER `b c`").positions == (
        ColumnPosition(after="b c"),
    )
    assert _round_trip("ALTER TABLE t ADD COLUMNS (c INT)").positions == ()


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("ALTER TABLE t CHANGE COLUMN c d BIGINT", "only ALTER COLUMN c TYPE"),
        ("ALTER TABLE t ALTER COLUMN c SET NOT NULL", "only ALTER COLUMN c TYPE"),
        ("ALTER TABLE t ALTER COLUMN c COMMENT 'x'", "only ALTER COLUMN c TYPE"),
    ],
)
def test_alter_table_forms_a_catalog_table_refuses(sql: str, reason: str) -> None:
    statement = parse_statement(sql)
    assert isinstance(statement, AlterTableUnsupported) and statement.to_sql() == sql
    assert statement.table == TableName("t")
    assert re.search(reason, statement.reason)


@pytest.mark.parametrize(
    "sql",
    [
        "USE db",
        "SET spark.sql.shuffle.partitions = 4",
        "CACHE TABLE t",
        "REFRESH TABLE t",
        "TRUNCATE TABLE t",
        "INSERT OVERWRITE LOCAL DIRECTORY '/tmp/out' SELECT * FROM t",
        "VALUES (1, 2)",
    ],
)
def test_other_statements_pass_through_as_written(sql: str) -> None:
    assert parse_statement(sql + " ;  ") == PassThrough(sql)


def test_pass_through_keeps_the_original_text() -> None:
    sql = "CREATE TABLE t (a INT) USING parquet LOCATION 'it''s'"
    statement = parse_statement("  " + sql + ";")
    assert statement == PassThrough(sql)


def test_trailing_semicolon_is_one_statement() -> None:
    assert isinstance(parse_statement("SELECT 1;"), Select)


# -- errors -----------------------------------------------------------------------------------


def test_syntax_error_names_line_column_and_token() -> None:
    with pytest.raises(SqlParseError, match=r"at or near 'FROM' at line 2, column 9") as info:
        parse_statement("SELECT a\nFROM t  FROM u")
    assert isinstance(info.value.__cause__, sqlglot.errors.ParseError)


def test_syntax_error_at_end_of_input() -> None:
    with pytest.raises(SqlParseError, match="end of input"):
        parse_statement("SELECT * FROM")


def test_unterminated_string() -> None:
    with pytest.raises(SqlParseError, match="unclosed string literal starting at line 1, column 8"):
        parse_statement("SELECT 'abc")


# Typical typos of a new user: each error says where and near what, in SQL terms.
@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELEC * FROM t", "at or near 'SELEC' at line 1, column 1"),
        ("SELECT * FORM t", "at or near 't' at line 1, column 15"),
        ("SELECT * FROM", "unexpected end of input after 'FROM' at line 1, column 10"),
        ("SELECT a FROM t WHERE", "unexpected end of input after 'WHERE' at line 1, column 17"),
        ("SELECT * FROM t\nWHERE a = = 1", "at or near '=' at line 2, column 11"),
        ("SELECT 'abc FROM t", "unclosed string literal starting at line 1, column 8"),
        ("SELECT `abc FROM t", "unclosed quoted identifier starting at line 1, column 8"),
        ("SELECT (a FROM t", "at or near 'FROM' at line 1, column 11: expected '\\)'"),
        ("SELECT a FROM t WHERE a IN (1, 2", "end of input after '2' at line 1, column 32"),
        ("SELECT a, FROM t", "at or near 'FROM' at line 1, column 11: nothing follows ','"),
        ("INSERT INTO t VALUES (1, 2,)", "at or near '\\)' at line 1, column 28"),
        ("CREATE TABEL t (a INT) USING tsfile", "'TABEL' at line 1, column 8"),
        ("DESCRIBE HISTORY", "end of input after 'HISTORY' at line 1, column 10"),
        ("SHOW PARTS", "end of input after 'PARTS' at line 1, column 6"),
        ("SELECT 1 +", "end of input after '\\+' at line 1, column 10"),
        ("@@@ !!", "at or near '!' at line 1, column 5"),
    ],
)
def test_syntax_errors_are_readable(sql: str, expected: str) -> None:
    with pytest.raises(SqlParseError, match=expected) as info:
        parse_statement(sql)
    message = str(info.value)
    for internal in ("sqlglot", "<class", "Required keyword", "Token", "Invalid expression"):
        assert internal not in message, message


@pytest.mark.parametrize(
    "sql",
    ["SHOW DATABASES", "EXPLAIN SELECT 1", "EXPLAIN EXTENDED SELECT 1", "ADD JAR /tmp/x.jar"],
)
def test_opaque_commands_are_rejected(sql: str) -> None:
    with pytest.raises(SqlParseError, match="unsupported statement at line 1, column 1"):
        parse_statement(sql)


@pytest.mark.parametrize("sql", ["foo bar", "1 + 1", "t"])
def test_bare_expressions_are_not_statements(sql: str) -> None:
    with pytest.raises(SqlParseError, match="not a SQL statement"):
        parse_statement(sql)


@pytest.mark.parametrize("sql", ["SELECT 1; SELECT 2", "DROP TABLE a;\n  DROP TABLE b;"])
def test_multiple_statements_are_rejected(sql: str) -> None:
    with pytest.raises(SqlParseError, match="multiple statements are not supported"):
        parse_statement(sql)


def test_multiple_statement_error_points_at_the_second_statement() -> None:
    with pytest.raises(SqlParseError, match=r"line 2, column 3 \('DROP'\)"):
        parse_statement("DROP TABLE a;\n  DROP TABLE b")


@pytest.mark.parametrize("sql", ["", "   ", ";", " ; ;"])
def test_empty_text(sql: str) -> None:
    with pytest.raises(SqlParseError, match="no statement"):
        parse_statement(sql)


def test_explain_parts_needs_a_query() -> None:
    with pytest.raises(SqlParseError, match="EXPLAIN PARTS expects a query"):
        parse_statement("EXPLAIN PARTS DROP TABLE t")


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("CREATE TABLE t USING tsfile", "needs a column list, AS SELECT, or a LOCATION"),
        ("CREATE TABLE t (a TINYINT) USING tsfile", "type TINYINT"),
        ("CREATE TABLE t (a ARRAY<INT>) USING tsfile", "type ARRAY<INT>"),
        ("CREATE TABLE t (a INT NOT NULL) USING tsfile", "constraints or a comment"),
        ("CREATE TABLE t (a INT COMMENT 'x') USING tsfile", "constraints or a comment"),
        ("CREATE TABLE t (a INT, A STRING) USING tsfile", "duplicate column 'a'"),
        ("CREATE OR REPLACE TABLE t (a INT) USING tsfile", "does not support REPLACE"),
        ("CREATE EXTERNAL TABLE t (a INT) USING tsfile", "EXTERNAL"),
        ("CREATE TABLE t (a INT) USING tsfile PARTITIONED BY (a)", "PARTITIONED BY"),
        ("CREATE TABLE t (a INT) USING tsfile COMMENT 'c'", "COMMENT"),
        ("CREATE TABLE t USING tsfile LOCATION 'x' OPTIONS (a 'b', A 'c')", "sets 'A' twice"),
        ("CREATE TABLE t USING tsfile LOCATION 'x' OPTIONS (a b)", "string, number or boolean"),
        ("CREATE TABLE t USING tsfile LOCATION 'x' OPTIONS ('a b' 'c')", "invalid OPTIONS key"),
        ("CREATE TABLE t USING tsfile LOCATION 'x' OPTIONS (`a;b` 'c')", "invalid OPTIONS key"),
        ("CREATE TABLE t USING tsfile LOCATION 1", "LOCATION expects a string literal"),
        ("CREATE TABLE t (a INT) USING tsfile AS SELECT 1", "not both"),
        ("INSERT INTO t PARTITION (a = 1) SELECT 1", "PARTITION"),
        (
            "INSERT INTO tsfile('/x') VALUES (1)",
            r"INSERT needs a registered table name, not the URL reference \"tsfile\('/x'\)\".*"
            r"CREATE TABLE name USING tsfile LOCATION.*save\('<url>'\)",
        ),
        ("WITH c AS (SELECT 1) INSERT INTO t SELECT * FROM c", "WITH"),
        ("DESCRIBE t PARTITION (a = 1)", "PARTITION"),
        ("DROP TABLE cat.db.t", "use name or database.name"),
        ("SHOW PARTS t VERSION AS OF '3'", "integer literal"),
        ("SHOW PARTS t VERSION AS OF -1", "integer literal"),
        ("SHOW PARTS t TIMESTAMP AS OF current_timestamp()", "string literal"),
        ("SHOW PARTS t AS x", "syntax error at or near 'AS' at line 1, column 14"),
    ],
)
def test_invalid_statements(sql: str, message: str) -> None:
    with pytest.raises(SqlError, match=message):
        parse_statement(sql)


# -- hostile input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["`t; DROP TABLE x`", "`a``b`", "`../t`", "`1abc`", "`t-1`", "`t x`", "`db.t`", "`ünï`"],
)
def test_hostile_table_names_are_rejected_by_name(name: str) -> None:
    for sql in (
        f"CREATE TABLE {name} (a INT) USING tsfile",
        f"DROP TABLE {name}",
        f"INSERT INTO {name} VALUES (1)",
        f"DESCRIBE {name}",
        f"SHOW PARTS {name}",
        f"VACUUM {name}",
    ):
        with pytest.raises(SqlError, match="invalid table name") as info:
            parse_statement(sql)
        assert not isinstance(info.value, SqlParseError)


def test_unquoted_injection_is_two_statements() -> None:
    with pytest.raises(SqlParseError, match="multiple statements"):
        parse_statement("DROP TABLE t; DROP TABLE x")


def test_backquoted_valid_names_are_accepted() -> None:
    assert parse_statement("DROP TABLE `Db`.`My_Table`") == DropTable(
        table=TableName("my_table", "db")
    )


@pytest.mark.parametrize(
    "location",
    [
        "../../etc/passwd",
        "s3://bucket/it's here; DROP TABLE x --",
        "C:\\data\\new",
        'file:///a"b`c',
        "line\nbreak",
        "\\'",
    ],
)
def test_hostile_locations_round_trip_escaped(location: str) -> None:
    statement = CreateTable(
        table=TableName("t"), location=location, options={"k": location}, properties={"p": location}
    )
    sql = statement.to_sql()
    assert parse_statement(sql) == statement
    assert sqlglot.parse(sql, read=TsFileSpark)[0] is not None
    assert len([s for s in sqlglot.parse(sql, read=TsFileSpark) if s is not None]) == 1


def test_model_rejects_hostile_names_on_construction() -> None:
    with pytest.raises(SqlError, match="invalid table name"):
        TableName("t; DROP TABLE x")
    with pytest.raises(SqlError, match="invalid database name"):
        TableName("t", "db`")
    with pytest.raises(SqlError, match="tsfile tables do not support"):
        ColumnSpec("a", "INT); DROP TABLE x; --")  # type: ignore[arg-type]
    with pytest.raises(SqlError, match="invalid database name"):
        ShowTables("db; x")


def test_hostile_column_names_are_quoted() -> None:
    statement = CreateTable(
        table=TableName("t"), columns=(ColumnSpec("a`) using x; --", "INT"),), location="/x"
    )
    assert "`a``) using x; --`" in statement.to_sql()
    assert parse_statement(statement.to_sql()) == statement


def test_quote_identifier() -> None:
    assert quote_identifier("a") == "`a`"
    assert quote_identifier("a`b") == "`a``b`"
    tree = sqlglot.parse_one(f"SELECT {quote_identifier('x`; DROP')} FROM t", read=TsFileSpark)
    assert [column.name for column in tree.find_all(exp.Column)] == ["x`; DROP"]


def test_quote_string() -> None:
    assert quote_string("it's") == "'it\\'s'"
    assert quote_string("a\\b") == "'a\\\\b'"


@given(st.text(alphabet=st.characters(exclude_categories=["Cs"])))
def test_quote_string_round_trips_through_the_dialect(value: str) -> None:
    tree = sqlglot.parse_one(f"SELECT {quote_string(value)}", read=TsFileSpark)
    literal = tree.expressions[0]
    assert isinstance(literal, exp.Literal)
    assert literal.this == value


@given(st.text(alphabet=st.characters(exclude_categories=["Cs"]), min_size=1))
def test_quote_identifier_round_trips_through_the_dialect(value: str) -> None:
    tree = sqlglot.parse_one(f"SELECT {quote_identifier(value)}", read=TsFileSpark)
    assert tree.expressions[0].name == value


def test_create_table_statement_spells_out_tags_and_time() -> None:
    from tests.factories import weather_schema
    from tsfile_catalog.metadata.schema import DataType
    from tsfile_catalog.sql.statements import create_table_statement

    schema = weather_schema(("temp", DataType.FLOAT), ("at", DataType.TIMESTAMP))
    statement = create_table_statement(
        TableName("w"), schema, location="/data/w", options={}, properties={"o": "p"}
    )
    assert _round_trip(statement.to_sql()) == statement
    assert statement.to_sql() == (
        "CREATE TABLE `w` (`time` BIGINT, `city` STRING, `device` STRING, `temp` FLOAT, "
        "`at` TIMESTAMP) USING tsfile OPTIONS ('tagColumns' = 'city,device', "
        "'timestampAs' = 'long') LOCATION '/data/w' TBLPROPERTIES ('o' = 'p')"
    )


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT WINDOW(time, '1 hour') AS w, AVG(v) FROM t GROUP BY WINDOW(time, '1 hour')",
        "SELECT city, COUNT(*) FROM t GROUP BY city, WINDOW(time, '10 minutes') LIMIT 3",
        # The named-window clause after GROUP BY still is one.
        "SELECT city, AVG(v) OVER w FROM t GROUP BY city, v WINDOW w AS (PARTITION BY city)",
    ],
)
def test_group_by_spark_window_function_parses(sql: str) -> None:
    # sqlglot stopped GROUP BY at the WINDOW keyword, so Spark's window() grouping (the
    # tumbling-window aggregation of every time-series query) did not parse at all.
    assert parse_statement(sql).to_sql() == sql
