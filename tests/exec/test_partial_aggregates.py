"""Partial aggregation and time buckets in the raw domain (no Spark).

Equality with Spark on real data is the Spark differential test's job
(tests/sql/test_partial_aggregates_spark.py); these pin the cases that decide it: DST gaps and
overlaps the way java.time resolves them, NaN ordering, NULLs at the latest time.
"""

from __future__ import annotations

import datetime as dt
import math

import pyarrow as pa
import pytest

from tests.factories import table_schema
from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.exec.partial_aggregates import partial_aggregate
from tsfile_catalog.exec.time_buckets import bucket_raw
from tsfile_catalog.metadata.partial_aggregates import (
    PartialSpec,
    PartialState,
    TimeBucket,
    parse_partial_spec,
)
from tsfile_catalog.metadata.schema import DataType


def _ms(text: str) -> int:
    return int(dt.datetime.fromisoformat(text).timestamp() * 1000)


def _trunc(unit: str, zone: str, *instants: str, precision: str = "ms") -> list[str]:
    scale = {"ms": 1, "us": 1_000, "ns": 1_000_000}[precision]
    raw = pa.array([_ms(i) * scale for i in instants], pa.int64())
    bucket = TimeBucket("date_trunc", "b", unit=unit, time_zone=zone)
    out = bucket_raw(raw, bucket, precision)  # type: ignore[arg-type]
    return [
        dt.datetime.fromtimestamp(v // scale / 1000, tz=dt.timezone.utc).isoformat()
        for v in out.to_pylist()
    ]


def test_hour_keeps_the_offset_of_an_overlap_like_zoned_date_time() -> None:
    # New York, 2024-11-03: 01:30 happens twice (EDT, then EST); each keeps its own offset.
    assert _trunc(
        "HOUR", "America/New_York", "2024-11-03T05:30+00:00", "2024-11-03T06:30+00:00"
    ) == [
        "2024-11-03T05:00:00+00:00",
        "2024-11-03T06:00:00+00:00",
    ]


def test_day_start_takes_the_only_valid_offset() -> None:
    # Noon EST truncates to midnight, which was still EDT.
    assert _trunc("DAY", "America/New_York", "2024-11-03T17:00+00:00") == [
        "2024-11-03T04:00:00+00:00"
    ]
    # After the spring gap, the day started in EST.
    assert _trunc("DAY", "America/New_York", "2024-03-10T07:30+00:00") == [
        "2024-03-10T05:00:00+00:00"
    ]


def test_half_hour_zones_and_half_hour_dst() -> None:
    assert _trunc("HOUR", "Asia/Kolkata", "2024-01-01T10:45+00:00") == ["2024-01-01T10:30:00+00:00"]
    # Lord Howe falls back 30 minutes (02:00 +11 -> 01:30 +10:30): 01:45 +10:30 truncates to
    # 01:00, which exists only at +11.
    assert _trunc("HOUR", "Australia/Lord_Howe", "2024-04-06T15:15+00:00") == [
        "2024-04-06T14:00:00+00:00"
    ]


def test_week_month_year_and_fixed_offsets() -> None:
    sunday = "2024-03-10T12:00+00:00"
    assert _trunc("WEEK", "UTC", sunday) == ["2024-03-04T00:00:00+00:00"]
    assert _trunc("MONTH", "+08:00", sunday) == ["2024-02-29T16:00:00+00:00"]
    assert _trunc("QUARTER", "UTC", sunday) == ["2024-01-01T00:00:00+00:00"]
    assert _trunc("YEAR", "America/New_York", sunday) == ["2024-01-01T05:00:00+00:00"]
    assert _trunc("MINUTE", "UTC", "2024-03-10T12:34:56.789+00:00", precision="ns") == [
        "2024-03-10T12:34:00+00:00"
    ]


def test_floor_bucket_is_sparks_double_arithmetic() -> None:
    raw = pa.array([7_199_999, 7_200_000, -1, 0], pa.int64())
    out = bucket_raw(raw, TimeBucket("floor", "b", width=3_600_000), "ms")
    assert out.to_pylist() == [3_600_000, 7_200_000, -3_600_000, 0]


def test_window_start_in_raw_units() -> None:
    raw = pa.array([5_999, 6_000, -1], pa.int64())
    out = bucket_raw(raw, TimeBucket("window", "b", width=3_000_000), "ms")  # 3 s in us
    assert out.to_pylist() == [3_000, 6_000, -3_000]


_SCHEMA = table_schema("w", tags=["city"], fields=[("v", DataType.FLOAT), ("n", DataType.INT32)])


def test_partial_states_follow_spark_rules() -> None:
    table = pa.table(
        {
            "time": pa.array([3, 1, 2, 4], pa.int64()),
            "city": ["a", "a", "a", "b"],
            "v": pa.array([None, 1.0, float("nan"), None], pa.float32()),
            "n": pa.array([7, 5, None, None], pa.int32()),
        }
    )
    spec = PartialSpec(
        ("city",),
        None,
        (
            PartialState("count_all", None, "c"),
            PartialState("count", "v", "cv"),
            PartialState("sum", "n", "sn"),
            PartialState("sum_double", "n", "dn"),
            PartialState("max", "v", "mx"),
            PartialState("min", "v", "mn"),
            PartialState("last", "v", "lv"),
            PartialState("first", "n", "fn"),
        ),
    )
    rows = {r["city"]: r for r in partial_aggregate(table, spec, "ms").to_pylist()}
    a, b = rows["a"], rows["b"]
    assert (a["c"], a["cv"], a["sn"], a["dn"]) == (3, 2, 12, 12.0)
    assert math.isnan(a["mx"])  # Spark: NaN is above every number
    assert a["mn"] == 1.0
    assert a["lv"] is None  # the latest row's value, NULL included (max_by)
    assert a["fn"] == 5
    assert (b["c"], b["cv"], b["sn"], b["mx"], b["mn"]) == (1, 0, None, None, None)


def test_global_partial_states_follow_spark_rules() -> None:
    # Without group keys or first/last the states come from scalar kernels: the same rules.
    table = pa.table(
        {
            "time": pa.array([3, 1, 2, 4], pa.int64()),
            "v": pa.array([None, 1.0, float("nan"), None], pa.float32()),
            "n": pa.array([7, 5, None, None], pa.int32()),
            "s": pa.array([None, None, None, None], pa.string()),
        }
    )
    spec = PartialSpec(
        (),
        None,
        (
            PartialState("count_all", None, "c"),
            PartialState("count", "v", "cv"),
            PartialState("sum", "n", "sn"),
            PartialState("sum_double", "n", "dn"),
            PartialState("sum", "v", "sv"),
            PartialState("max", "v", "mx"),
            PartialState("min", "v", "mn"),
            PartialState("max", "s", "ms"),
            PartialState("count", "s", "cs"),
        ),
    )
    result = partial_aggregate(table, spec, "ms")
    (row,) = result.to_pylist()
    assert (row["c"], row["cv"], row["sn"], row["dn"], row["ms"], row["cs"]) == (
        4,
        2,
        12,
        12.0,
        None,
        0,
    )
    assert math.isnan(row["mx"]) and math.isnan(row["sv"]) and row["mn"] == 1.0
    types = dict(zip(result.column_names, result.schema.types, strict=True))
    assert (types["c"], types["sn"], types["sv"], types["mx"], types["ms"]) == (
        pa.int64(),
        pa.int64(),
        pa.float64(),
        pa.float32(),
        pa.string(),
    )
    big = pa.table({"time": pa.array([1, 2], pa.int64()), "n": pa.array([2**62] * 2, pa.int64())})
    with pytest.raises(ArithmeticError, match=r"sum\(n\) overflows BIGINT"):
        partial_aggregate(big, PartialSpec((), None, (PartialState("sum", "n", "sn"),)), "ms")


def test_spec_json_round_trip_and_validation() -> None:
    spec = PartialSpec(
        ("city",),
        TimeBucket("date_trunc", "b", unit="HOUR", time_zone="Europe/Berlin"),
        (PartialState("sum", "n", "s"), PartialState("count_all", None, "c")),
    )
    assert parse_partial_spec(spec.to_json(), _SCHEMA) == spec
    bad = [
        (PartialSpec(("v",), None, ()), "group key 'v' is not a TAG column"),
        (PartialSpec((), None, (PartialState("sum", "city", "s"),)), "cannot sum column 'city'"),
        (PartialSpec((), None, (PartialState("max", "nope", "m"),)), "unknown column 'nope'"),
        (PartialSpec(("city",), None, (PartialState("count_all", None, "city"),)), "repeat"),
    ]
    for wrong, message in bad:
        with pytest.raises(OptionError, match=message):
            parse_partial_spec(wrong.to_json(), _SCHEMA)
    with pytest.raises(OptionError, match="partialAggregate"):
        parse_partial_spec("{not json", _SCHEMA)
    with pytest.raises(OptionError, match="date_trunc needs a unit"):
        TimeBucket("date_trunc", "b", unit="FORTNIGHT", time_zone="UTC")


def test_count_star_alone_counts_rows() -> None:
    table = pa.table({"time": pa.array([1, 2], pa.int64()), "city": ["a", "b"]})
    spec = PartialSpec((), None, (PartialState("count_all", None, "c"),))
    assert partial_aggregate(table, spec, "ms").to_pylist() == [{"c": 2}]


def test_a_bigint_sum_that_overflows_fails_like_sparks_ansi_sum() -> None:
    # Arrow's integer sum wraps (2**62 + 2**62 is -2**63); Spark's ANSI sum fails instead.
    spec = PartialSpec(("city",), None, (PartialState("sum", "n", "sn"),))
    big = pa.table(
        {
            "time": pa.array([1, 2], pa.int64()),
            "city": ["a", "a"],
            "n": pa.array([2**62, 2**62], pa.int64()),
        }
    )
    with pytest.raises(ArithmeticError, match=r"sum\(n\) overflows BIGINT"):
        partial_aggregate(big, spec, "ms")
    fits = big.set_column(2, "n", pa.array([2**62, 2**61], pa.int64()))
    assert partial_aggregate(fits, spec, "ms").column("sn").to_pylist() == [2**62 + 2**61]


def test_a_global_last_keeps_the_null_at_the_latest_time() -> None:
    # Without group keys too (pyarrow's keyless group_by would skip the NULL): Spark's
    # max_by(v, time) over these rows is NULL, min_by is the earliest row's value.
    table = pa.table({"time": pa.array([2, 1, 3], pa.int64()), "v": pa.array([5, 4, None])})
    spec = PartialSpec((), None, (PartialState("last", "v", "l"), PartialState("first", "v", "f")))
    assert partial_aggregate(table, spec, "ms").to_pylist() == [{"l": None, "f": 4}]


def test_sum_true_counts_true_values_and_is_null_without_a_value() -> None:
    """Spark's sum(CAST(b AS INT)) per group: BIGINT, NULL when every b is NULL."""
    schema = table_schema("w", tags=["city"], fields=[("b", DataType.BOOLEAN)])
    table = pa.table(
        {
            "time": pa.array([1, 2, 3, 4, 5], pa.int64()),
            "city": ["a", "a", "a", "b", "c"],
            "b": pa.array([True, None, True, None, False], pa.bool_()),
        }
    )
    spec = PartialSpec(("city",), None, (PartialState("sum_true", "b", "t"),))
    assert parse_partial_spec(spec.to_json(), schema) == spec
    result = partial_aggregate(table, spec, "ms")
    assert result.schema.field("t").type == pa.int64()
    assert {r["city"]: r["t"] for r in result.to_pylist()} == {"a": 2, "b": None, "c": 0}
    with pytest.raises(OptionError, match="sum_true counts the true values of a BOOLEAN"):
        parse_partial_spec(
            PartialSpec((), None, (PartialState("sum_true", "n", "t"),)).to_json(), _SCHEMA
        )
