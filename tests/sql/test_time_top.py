"""Which Catalog.sql queries need only the first n rows in time order of one table's scan."""

from __future__ import annotations

import pytest
import sqlglot

from tsfile_catalog.metadata.time_top import TimeTop
from tsfile_catalog.sql.dialect import TsFileSpark
from tsfile_catalog.sql.time_top import as_time_top


def _top(sql: str) -> TimeTop | None:
    found = as_time_top(sqlglot.parse_one(sql, read=TsFileSpark))
    return None if found is None else found[1]


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT * FROM t ORDER BY time DESC LIMIT 10", TimeTop(10, descending=True)),
        ("SELECT * FROM t ORDER BY time LIMIT 3", TimeTop(3, descending=False)),
        ("SELECT v FROM t WHERE device = 'a' ORDER BY time ASC, v LIMIT 2", TimeTop(2, False)),
        ("SELECT a.v FROM t AS a WHERE a.v > 1 ORDER BY a.time DESC LIMIT 5", TimeTop(5, True)),
        ("SELECT time AS time, v FROM t ORDER BY TIME DESC LIMIT 1", TimeTop(1, True)),
        ("SELECT * FROM t VERSION AS OF 3 ORDER BY time DESC LIMIT 4", TimeTop(4, True)),
    ],
)
def test_time_ordered_limits_of_one_table_are_found(sql: str, expected: TimeTop) -> None:
    assert _top(sql) == expected


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM t ORDER BY time DESC",  # no limit
        "SELECT * FROM t LIMIT 3",  # no order
        "SELECT * FROM t ORDER BY v, time LIMIT 3",  # time is not the first key
        "SELECT * FROM t ORDER BY time + 1 LIMIT 3",  # an expression of time
        "SELECT * FROM t ORDER BY 1 LIMIT 3",  # an ordinal
        "SELECT * FROM t ORDER BY time LIMIT 0",
        "SELECT * FROM t ORDER BY time DESC LIMIT 3 OFFSET 2",
        "SELECT DISTINCT device FROM t ORDER BY time LIMIT 3",
        "SELECT device, max(time) AS time FROM t GROUP BY device ORDER BY time LIMIT 3",
        "SELECT max(v) FROM t ORDER BY time LIMIT 3",
        "SELECT v, row_number() OVER (ORDER BY v) AS r FROM t ORDER BY time LIMIT 3",
        "SELECT v + 1 AS time FROM t ORDER BY time LIMIT 3",  # time is the alias
        "SELECT * FROM t WHERE upper(device) = 'A' ORDER BY time LIMIT 3",  # a filter kept
        "SELECT * FROM t JOIN u ON t.device = u.device ORDER BY t.time LIMIT 3",
        "SELECT * FROM t AS a ORDER BY s.time LIMIT 3",  # a struct's field
        "SELECT * FROM (SELECT * FROM t) ORDER BY time LIMIT 3",
    ],
)
def test_anything_else_is_left_to_spark(sql: str) -> None:
    assert _top(sql) is None
