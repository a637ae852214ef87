"""Which queries ``Catalog.sql`` pre-aggregates in the scan, and what the outer query merges
(pure: sqlglot only; equality with Spark is tests/sql/test_partial_aggregates_spark.py)."""

from __future__ import annotations

import pytest

from tests.factories import table_schema
from tsfile_catalog.metadata.expressions import TimestampAs
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.sql.analysis import as_single_table_scan
from tsfile_catalog.sql.parse import parse_statement
from tsfile_catalog.sql.partial_aggregates import PartialRewrite, plan_partial_aggregate
from tsfile_catalog.sql.statements import Select

SCHEMA = table_schema(
    "w", tags=["city", "dev"], fields=[("v", DataType.DOUBLE), ("n", DataType.INT32)]
)


def _plan(sql: str, timestamp_as: TimestampAs = "timestamp") -> PartialRewrite | None:
    statement = parse_statement(sql)
    assert isinstance(statement, Select)
    ref = as_single_table_scan(statement.query)
    if ref is None:
        return None
    return plan_partial_aggregate(
        statement.query, ref, SCHEMA, timestamp_as=timestamp_as, time_zone="Europe/Berlin"
    )


def test_hourly_average_per_device() -> None:
    rewrite = _plan(
        "SELECT dev, date_trunc('hour', w.time) AS h, avg(v) FROM w WHERE n > 3 "
        "GROUP BY dev, h ORDER BY h"
    )
    assert rewrite is not None
    spec = rewrite.spec
    assert spec.keys == ("dev",)
    assert spec.bucket is not None and (spec.bucket.unit, spec.bucket.time_zone) == (
        "HOUR",
        "Europe/Berlin",
    )
    assert [(s.function, s.column) for s in spec.states] == [("sum_double", "v"), ("count", "v")]
    outer = rewrite.outer.sql(dialect="spark")
    assert "WHERE" not in outer  # evaluated by the scan
    assert "SUM(__tsfc_p0) / SUM(__tsfc_p1) FROM w GROUP BY dev, h ORDER BY h" in outer


def test_states_are_shared_and_last_values_carry_their_time() -> None:
    rewrite = _plan("SELECT max_by(v, time), count(v), avg(v), max(time) FROM w")
    assert rewrite is not None
    assert [(s.function, s.column) for s in rewrite.spec.states] == [
        ("last", "v"),
        ("max", "time"),
        ("count", "v"),
        ("sum_double", "v"),
    ]


def test_floor_buckets_need_long_time() -> None:
    query = "SELECT floor(time / 60000) * 60000 AS m, count(*) FROM w GROUP BY 1"
    rewrite = _plan(query, "long")
    assert rewrite is not None and rewrite.spec.bucket is not None
    assert (rewrite.spec.bucket.kind, rewrite.spec.bucket.width) == ("floor", 60000)
    assert _plan(query, "timestamp") is None
    assert _plan("SELECT date_trunc('HOUR', time), count(*) FROM w GROUP BY 1", "long") is None


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT v, count(*) FROM w GROUP BY v",  # grouped by a FIELD
        "SELECT time, count(*) FROM w GROUP BY time",
        "SELECT count(DISTINCT v) FROM w",
        "SELECT sum(n) FILTER (WHERE n > 1) FROM w",
        "SELECT city, stddev(v) FROM w GROUP BY city",
        "SELECT sum(v + 1) FROM w",
        "SELECT max_by(v, n) FROM w",
        "SELECT city, count(*) FROM w WHERE n > 1 OR v > 2 GROUP BY city",  # not pushed
        "SELECT city, count(*) FROM w GROUP BY ROLLUP (city)",
        "SELECT DISTINCT city, count(*) FROM w GROUP BY city",
        "SELECT city FROM w GROUP BY city",  # no aggregate
        "SELECT dev, count(*) FROM w GROUP BY city",  # Spark refuses it: left to Spark
        "SELECT city, count(*), row_number() OVER (ORDER BY city) FROM w GROUP BY city",
        "SELECT count(*) FROM w JOIN x ON w.city = x.city",
        "SELECT city, count(*) FROM w GROUP BY city, date_trunc('HOUR', time), "
        "date_trunc('DAY', time)",
    ],
)
def test_other_shapes_fall_through(sql: str) -> None:
    assert _plan(sql) is None
