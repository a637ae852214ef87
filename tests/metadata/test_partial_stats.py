"""Which (part, device) pairs statistics answer for a partial aggregate, on hand-built
statistics (no files, no Spark). Equality of the answered rows with the read path's is checked
on real TsFiles in tests/table/test_partial_stats.py."""

from __future__ import annotations

from collections.abc import Sequence

from tests.factories import part_of_devices, weather_schema
from tsfile_catalog.metadata.partial_aggregates import PartialSpec, PartialState, TimeBucket
from tsfile_catalog.metadata.partial_stats import split_by_stats
from tsfile_catalog.metadata.scan import ScanPlan, plan_scan
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.metadata.slices import FileSlice, narrow_slices, plan_slices
from tsfile_catalog.metadata.stats import DeviceStats, SeriesStats

SCHEMA = weather_schema(("v", DataType.DOUBLE), ("n", DataType.INT64))
HOURLY = TimeBucket("floor", "hour", width=3_600_000)
AVG_V = PartialSpec(
    ("device",),
    HOURLY,
    (
        PartialState("count_all", None, "rows"),
        PartialState("sum_double", "v", "sum_v"),
        PartialState("count", "v", "count_v"),
    ),
)


def _hours(times: Sequence[int]) -> list[int]:
    return [t // 3_600_000 * 3_600_000 for t in times]


def _v(count: int, total: float | None, first_time: int | None = None) -> SeriesStats:
    return SeriesStats(count, sum_double=total, first=1.0, first_time=first_time)


INSIDE = DeviceStats(("bj", "x"), 10, 0, 1_000_000, {"v": _v(4, 2.5)})
ACROSS_HOUR = DeviceStats(("bj", "y"), 10, 3_000_000, 4_000_000, {"v": _v(4, 1.0)})
NO_SUM = DeviceStats(("sh", "x"), 10, 0, 1_000, {"v": _v(4, None)})  # a NaN, say
NO_FIELDS = DeviceStats(("sh", "y"), 10, 0, 1_000)
PART = part_of_devices("a.tsfile", INSIDE, ACROSS_HOUR, NO_SUM, NO_FIELDS)


def test_only_devices_inside_one_bucket_with_every_statistic_are_answered() -> None:
    plan = plan_scan(SCHEMA, [PART], None, key="keep")
    split = split_by_stats(SCHEMA, plan.parts, plan.pushdown, AVG_V, _hours, merges=())
    assert split.pairs == (("a.tsfile", ("bj", "x")),)
    assert split.rows == (("x", 0, 10, 2.5, 4),)
    (left,) = split.parts
    assert [d.tags for d in left.devices or ()] == [("bj", "y"), ("sh", "x"), ("sh", "y")]
    assert left.row_count == 30


def test_a_device_crossing_the_where_is_read() -> None:
    plan = plan_scan(SCHEMA, [PART], "time >= 500000", key="keep")
    split = split_by_stats(SCHEMA, plan.parts, plan.pushdown, AVG_V, _hours, merges=())
    assert split.rows == ()
    plan = plan_scan(SCHEMA, [PART], "city = 'bj' AND time < 2000000", key="keep")
    assert split_by_stats(SCHEMA, plan.parts, plan.pushdown, AVG_V, _hours, merges=()).pairs == (
        ("a.tsfile", ("bj", "x")),
    )


def test_a_field_predicate_answers_nothing() -> None:
    plan = plan_scan(SCHEMA, [PART], "v > 0", key="keep")
    assert split_by_stats(SCHEMA, plan.parts, plan.pushdown, AVG_V, _hours, merges=()).rows == ()


def test_first_value_later_than_the_first_row_is_null() -> None:
    spec = PartialSpec(
        (), None, (PartialState("first", "v", "f"), PartialState("min", "time", "t"))
    )
    late = DeviceStats(("bj", "x"), 3, 10, 30, {"v": _v(2, 3.0, first_time=20)})
    on_time = DeviceStats(("bj", "y"), 3, 10, 30, {"v": _v(2, 3.0, first_time=10)})
    unknown = DeviceStats(("bj", "z"), 3, 10, 30, {"v": _v(2, 3.0)})
    part = part_of_devices("a.tsfile", late, on_time, unknown)
    split = split_by_stats(
        SCHEMA, [part], plan_scan(SCHEMA, [part], None, key="keep").pushdown, spec, merges=()
    )
    assert split.rows == ((None, 10), (1.0, 10))
    assert [d.tags for d in split.parts[0].devices or ()] == [("bj", "z")]


def test_a_tag_added_later_is_null_for_older_devices() -> None:
    old = DeviceStats(("bj",), 5, 0, 10)  # recorded before 'device' existed
    part = part_of_devices("a.tsfile", old)
    spec = PartialSpec(
        ("device",),
        None,
        (PartialState("count", "device", "c"), PartialState("count_all", None, "n")),
    )
    split = split_by_stats(
        SCHEMA, [part], plan_scan(SCHEMA, [part], None, key="keep").pushdown, spec, merges=()
    )
    assert split.rows == ((None, 0, 5),)


def test_slices_of_a_narrowed_part_name_the_devices_left() -> None:
    other = part_of_devices("b.tsfile", ACROSS_HOUR)
    plan = plan_scan(SCHEMA, [PART, other], None, key="keep")
    split = split_by_stats(SCHEMA, plan.parts, plan.pushdown, AVG_V, _hours, merges=())
    groups = plan_slices(split.parts, plan.pushdown, SCHEMA.tag_names, 1_000_000, merges=())
    narrowed = narrow_slices(groups, split.parts, split.narrowed)
    assert narrowed == [
        [
            FileSlice("a.tsfile", *_bounds(plan), (("bj", "y"), ("sh", "x"), ("sh", "y"))),
            FileSlice("b.tsfile", *_bounds(plan)),
        ]
    ]


def _bounds(plan: ScanPlan) -> tuple[int, int]:
    return plan.pushdown.time_min, plan.pushdown.time_max


def test_sum_true_from_a_booleans_true_count() -> None:
    schema = weather_schema(("b", DataType.BOOLEAN))
    spec = PartialSpec(("device",), None, (PartialState("sum_true", "b", "t"),))
    counted = DeviceStats(("bj", "x"), 5, 0, 9, {"b": SeriesStats(4, sum=3)})
    nulls = DeviceStats(("bj", "y"), 2, 0, 9, {"b": SeriesStats(0)})
    part = part_of_devices("a.tsfile", counted, nulls)
    plan = plan_scan(schema, [part], None, key="keep")
    split = split_by_stats(schema, plan.parts, plan.pushdown, spec, None, merges=())
    assert sorted(split.rows, key=repr) == [("x", 3), ("y", None)]
