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


def test_tumbling_windows_bucket_by_their_start() -> None:
    rewrite = _plan(
        "SELECT dev, window(time, '1 hour') AS w, avg(v) FROM w "
        "GROUP BY dev, window(time, '1 hour')"
    )
    assert rewrite is not None and rewrite.spec.bucket is not None
    bucket = rewrite.spec.bucket
    # Microseconds since the epoch, whatever the session zone.
    assert (bucket.kind, bucket.width, bucket.time_zone) == ("window", 3_600_000_000, None)
    outer = rewrite.outer.sql(dialect="spark")
    assert (
        "NAMED_STRUCT('start', __tsfc_bucket, 'end', "
        "TIMESTAMP_MICROS(UNIX_MICROS(__tsfc_bucket) + 3600000000)) AS w" in outer
    )
    assert outer.endswith("GROUP BY dev, __tsfc_bucket")


def test_window_fields_read_the_bucket() -> None:
    rewrite = _plan(
        "SELECT window.start, window.end, count(*) FROM w GROUP BY 1 "
        "HAVING count(*) > 1 ORDER BY window.start"
    )
    assert rewrite is None  # ordinal 1 is window.start, not the window: Spark's to group
    rewrite = _plan(
        "SELECT window.start, window.end, count(*) FROM w GROUP BY window(time, '90 minutes') "
        "ORDER BY window.start"
    )
    assert rewrite is not None and rewrite.spec.bucket is not None
    assert rewrite.spec.bucket.width == 5_400_000_000
    outer = rewrite.outer.sql(dialect="spark")
    assert outer.startswith("SELECT __tsfc_bucket, TIMESTAMP_MICROS(")
    assert outer.endswith("GROUP BY __tsfc_bucket ORDER BY __tsfc_bucket")
    by_alias = _plan("SELECT window(time, '1 day') AS d, count(*) FROM w GROUP BY d")
    assert by_alias is not None and by_alias.spec.bucket is not None
    assert by_alias.spec.bucket.width == 86_400_000_000


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT window(time, '1 hour', '30 minutes'), count(*) FROM w GROUP BY 1",  # sliding
        "SELECT window(time, '1 hour', '1 hour', '5 minutes'), count(*) FROM w GROUP BY 1",
        "SELECT window(time, '1500 microseconds'), count(*) FROM w GROUP BY 1",  # not whole ms
        "SELECT window(time, '1 month'), count(*) FROM w GROUP BY 1",  # no fixed length
        "SELECT window(time, '0 seconds'), count(*) FROM w GROUP BY 1",
        "SELECT window(n, '1 hour'), count(*) FROM w GROUP BY 1",
        "SELECT window.start, count(*) FROM w GROUP BY date_trunc('HOUR', time)",
        "SELECT window(time, '1 hour'), count(*) FROM w GROUP BY window(time, '2 hours')",
    ],
)
def test_other_windows_fall_through(sql: str) -> None:
    assert _plan(sql) is None
    assert _plan("SELECT window(time, '1 hour'), count(*) FROM w GROUP BY 1", "long") is None


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
        "SELECT city, count(*) FROM w WHERE n > 1 OR upper(city) = 'X' GROUP BY city",  # not pushed
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
