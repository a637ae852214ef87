"""Parsing OPTIMIZE, DELETE, UPDATE, MERGE and INSERT ... REPLACE WHERE into the statement
model."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from tsfile_catalog.exceptions import SqlError, SqlParseError
from tsfile_catalog.sql import parse_statement
from tsfile_catalog.sql.dialect import TsFileSpark
from tsfile_catalog.sql.statements import (
    Delete,
    Insert,
    Merge,
    MergeClause,
    Optimize,
    TableName,
    Update,
)


def _round_trip(sql: str) -> object:
    statement = parse_statement(sql)
    again = parse_statement(statement.to_sql())
    assert again == statement, statement.to_sql()
    return statement


def test_optimize_with_and_without_where() -> None:
    assert _round_trip("OPTIMIZE t") == Optimize(table=TableName("t"))
    assert _round_trip("optimize DB.T where city = 'a' AND time > 5") == Optimize(
        table=TableName("t", "db"), where="city = 'a' AND time > 5"
    )
    tree = sqlglot.parse_one("OPTIMIZE t WHERE x > 1", read=TsFileSpark)
    assert not isinstance(tree, exp.Command)
    assert tree.sql(dialect=TsFileSpark) == "OPTIMIZE t WHERE x > 1"


def test_optimize_is_still_a_usable_column_name() -> None:
    tree = sqlglot.parse_one("SELECT optimize FROM t", read=TsFileSpark)
    assert [c.name for c in tree.find_all(exp.Column)] == ["optimize"]


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("OPTIMIZE", "table name"),
        ("OPTIMIZE t WHERE", "end of input"),
        ("OPTIMIZE t ZORDER BY (a)", "syntax error"),
    ],
)
def test_malformed_optimize_is_a_parse_error(sql: str, message: str) -> None:
    with pytest.raises(SqlParseError, match=message):
        parse_statement(sql)


def test_delete_is_the_catalogs_statement() -> None:
    assert _round_trip("DELETE FROM t WHERE a = 1") == Delete(table=TableName("t"), where="a = 1")
    assert _round_trip("DELETE FROM db.t") == Delete(table=TableName("t", "db"))
    with pytest.raises(SqlError, match="DELETE"):
        parse_statement("DELETE FROM t USING s WHERE t.a = s.a")


def test_insert_replace_where() -> None:
    statement = _round_trip("INSERT INTO t REPLACE WHERE day = DATE '2024-01-02' SELECT * FROM s")
    assert isinstance(statement, Insert)
    assert statement.replace_where == "day = DATE '2024-01-02'" and not statement.overwrite
    assert statement.to_sql() == (
        "INSERT INTO `t` REPLACE WHERE day = DATE '2024-01-02' SELECT * FROM s"
    )
    with pytest.raises(SqlError, match="INSERT OVERWRITE does not take REPLACE WHERE"):
        parse_statement("INSERT OVERWRITE TABLE t REPLACE WHERE a = 1 SELECT * FROM s")


def test_update_is_the_catalogs_statement() -> None:
    statement = _round_trip("UPDATE db.T AS x SET V = x.v + 1, w = 'a' WHERE city = 'b'")
    assert statement == Update(
        table=TableName("t", "db"),
        assignments=(("v", "x.v + 1"), ("w", "'a'")),
        where="city = 'b'",
        alias="x",
    )
    assert _round_trip("UPDATE t SET v = NULL") == Update(
        table=TableName("t"), assignments=(("v", "NULL"),)
    )


def test_merge_keeps_its_clauses_in_order() -> None:
    statement = _round_trip(
        "MERGE INTO t AS tgt USING (SELECT * FROM s) src ON tgt.k = src.k AND tgt.time = "
        "src.time WHEN MATCHED AND src.d THEN DELETE WHEN MATCHED THEN UPDATE SET * WHEN "
        "MATCHED THEN UPDATE SET v = src.v WHEN NOT MATCHED AND src.v > 0 THEN INSERT * "
        "WHEN NOT MATCHED THEN INSERT (time, k) VALUES (src.time, src.k)"
    )
    assert isinstance(statement, Merge)
    assert (statement.table, statement.alias, statement.source_alias) == (
        TableName("t"),
        "tgt",
        "src",
    )
    assert isinstance(statement.source, exp.Select)
    assert statement.clauses == (
        MergeClause(matched=True, action="delete", condition="src.d"),
        MergeClause(matched=True, action="update"),
        MergeClause(matched=True, action="update", assignments=(("v", "src.v"),)),
        MergeClause(matched=False, action="insert", condition="src.v > 0"),
        MergeClause(
            matched=False, action="insert", assignments=(("time", "src.time"), ("k", "src.k"))
        ),
    )
    plain = _round_trip("MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN DELETE")
    assert isinstance(plain, Merge) and isinstance(plain.source, exp.Table)


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("UPDATE t SET v = 1, V = 2", "assigns column 'v' more than once"),
        ("UPDATE t SET v = 1 FROM s", "UPDATE does not support FROM"),
        (
            "MERGE INTO t USING s ON t.a = s.a WHEN NOT MATCHED BY SOURCE THEN DELETE",
            "NOT MATCHED BY SOURCE is not supported",
        ),
        (
            "MERGE INTO t USING s ON t.a = s.a WHEN NOT MATCHED THEN INSERT (a, b) VALUES (1)",
            "names 2 columns but gives 1 values",
        ),
        ("MERGE INTO tsfile('/x') USING s ON a = b WHEN MATCHED THEN DELETE", "registered table"),
    ],
)
def test_malformed_update_and_merge_are_refused(sql: str, message: str) -> None:
    with pytest.raises(SqlError, match=message):
        parse_statement(sql)
