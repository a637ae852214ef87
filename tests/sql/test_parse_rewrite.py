"""Parsing OPTIMIZE, DELETE and INSERT ... REPLACE WHERE into the statement model."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from tsfile_catalog.exceptions import SqlError, SqlParseError
from tsfile_catalog.sql import parse_statement
from tsfile_catalog.sql.dialect import TsFileSpark
from tsfile_catalog.sql.statements import Delete, Insert, Optimize, TableName


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
