"""Which queries Catalog.sql tries to answer from statistics (pure: sqlglot only)."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from tsfile_catalog.metadata.stats_aggregates import Aggregate
from tsfile_catalog.sql.dialect import TsFileSpark
from tsfile_catalog.sql.stats_aggregates import recognize


def _recognize(sql: str) -> tuple[tuple[Aggregate, ...], tuple[str, ...], tuple[int, ...]] | None:
    tree = sqlglot.parse_one(sql, read=TsFileSpark)
    assert isinstance(tree, exp.Query)
    found = recognize(tree)
    return None if found is None else (found.aggregates, found.group_by, found.items)


def test_aggregates_group_columns_and_their_order() -> None:
    assert _recognize(
        "SELECT w.Device, COUNT(*) AS n, sum(v), max_by(s, time), city "
        "FROM weather AS w WHERE time >= 10 AND city IN ('a') GROUP BY city, device"
    ) == (
        (Aggregate("count"), Aggregate("sum", "v"), Aggregate("max_by", "s")),
        ("city", "device"),
        (-2, 0, 1, 2, -1),
    )
    assert _recognize("SELECT count(1), min_by(v, time), avg(v) FROM t VERSION AS OF 2") == (
        (Aggregate("count"), Aggregate("min_by", "v"), Aggregate("avg", "v")),
        (),
        (0, 1, 2),
    )


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT city FROM t GROUP BY city",  # no aggregate
        "SELECT city, count(*) FROM t",  # city not grouped
        "SELECT count(DISTINCT v) FROM t",
        "SELECT max_by(v, other) FROM t",  # not ordered by time
        "SELECT sum(v) + 1 FROM t",
        "SELECT max(v, w) FROM t",
        "SELECT count(*) FROM t HAVING count(*) > 1",
        "SELECT count(*) FROM t ORDER BY 1",
        "SELECT count(*) FROM t LIMIT 1",
        "SELECT count(*) FROM t GROUP BY ROLLUP (city)",
        "SELECT count(*) FROM t GROUP BY 1",
        "SELECT count(*) FROM t JOIN u ON t.a = u.a",
        "SELECT count(*) FROM (SELECT * FROM t)",
        "SELECT DISTINCT count(*) FROM t",
        "SELECT x.count_v FROM t",
    ],
)
def test_not_recognized(sql: str) -> None:
    assert _recognize(sql) is None
