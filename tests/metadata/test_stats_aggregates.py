"""The aggregate planner and merge rules, on hand-built part statistics (no Spark, no files).

Each rule here is one Spark semantic the answer must keep (checked against Spark itself in
tests/sql/test_stats_aggregates.py): result types, empty groups, NULL without values, BIGINT
overflow, the 2**53 limit of avg's double sum, max_by ties, NaN ordering, FLOAT/DOUBLE sums
from ``sum_double`` and ``time``'s min/max/count from device time ranges.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from tests.factories import part_file, part_of_devices, weather_schema
from tsfile_catalog.metadata.expressions import INT64_MAX
from tsfile_catalog.metadata.parts import DeviceStats, PartFile, SeriesStats
from tsfile_catalog.metadata.scan import plan_scan
from tsfile_catalog.metadata.schema import DataType, TableSchema
from tsfile_catalog.metadata.stats_aggregates import (
    Aggregate,
    finish_aggregates,
    of_boolean_cast,
    plan_aggregates,
    supported_aggregate,
)

SCHEMA = weather_schema(("v", DataType.INT64), ("d", DataType.DOUBLE), ("s", DataType.STRING))


def _device(
    city: str, device: str, lo: int, hi: int, rows: int, **fields: SeriesStats
) -> DeviceStats:
    return DeviceStats((city, device), rows, lo, hi, fields=fields or None)


def _ints(values: list[int | None], times: list[int]) -> SeriesStats:
    """The statistics a writer records for an INT64 series with these values at these times."""
    pairs = [(t, v) for t, v in zip(times, values, strict=True) if v is not None]
    if not pairs:
        return SeriesStats(0)
    present = [v for _, v in pairs]
    return SeriesStats(
        len(present),
        sum=sum(present),
        min=min(present),
        max=max(present),
        first=pairs[0][1],
        first_time=pairs[0][0],
        last=pairs[-1][1],
        last_time=pairs[-1][0],
    )


BJ_X = _device("bj", "x", 0, 9, 3, v=_ints([1, None, 5], [0, 4, 9]), s=SeriesStats(0))
BJ_Y = _device("bj", "y", 10, 19, 2, v=_ints([7, 2], [10, 19]))
SH_X = _device("sh", "x", 20, 29, 2, v=_ints([None, None], [20, 29]))
PARTS = [part_of_devices("a.tsfile", BJ_X, BJ_Y), part_of_devices("b.tsfile", SH_X)]


def _answer(
    where: str | None, aggregates: list[Aggregate], group_by: tuple[str, ...] = ()
) -> list[tuple[tuple[str | None, ...], tuple[object, ...]]] | None:
    plan = plan_scan(SCHEMA, PARTS, where, key="keep")
    planned = plan_aggregates(plan, aggregates)
    assert planned is not None and planned.reads == ()
    return finish_aggregates(SCHEMA, planned.known, aggregates, group_by)


def test_whole_table_aggregates() -> None:
    aggregates = [
        Aggregate("count"),
        Aggregate("count", "v"),
        Aggregate("sum", "v"),
        Aggregate("avg", "v"),
        Aggregate("min", "v"),
        Aggregate("max", "v"),
        Aggregate("count", "city"),
    ]
    assert _answer(None, aggregates) == [((), (7, 4, 15, 3.75, 1, 7, 7))]


def test_group_by_tags_and_empty_groups_absent() -> None:
    rows = _answer("device = 'x'", [Aggregate("count"), Aggregate("sum", "v")], ("city",))
    # sh has rows but no value: sum is NULL, the group is there.
    assert sorted(rows or []) == [(("bj",), (3, 6)), (("sh",), (2, None))]


def test_no_row_count_is_zero_without_group_by_and_absent_with_it() -> None:
    assert _answer("city = 'nowhere'", [Aggregate("count"), Aggregate("max", "v")]) == [
        ((), (0, None))
    ]
    assert _answer("city = 'nowhere'", [Aggregate("count")], ("city",)) == []
    assert _answer("time > 100", [Aggregate("count")], ()) == [((), (0,))]


def test_max_by_is_the_value_on_the_last_row_even_if_null() -> None:
    # bj/x: last row at 9 holds 5; bj/y: last row at 19 holds 2; sh/x: all null.
    last = [Aggregate("max_by", "v"), Aggregate("min_by", "v")]
    assert sorted(_answer(None, last, ("city", "device")) or []) == [
        (("bj", "x"), (5, 1)),
        (("bj", "y"), (2, 7)),
        (("sh", "x"), (None, None)),
    ]
    assert _answer(None, last) == [((), (None, 1))]  # the table's last row (29) is null


def test_max_by_null_when_last_row_lacks_the_value() -> None:
    device = _device("bj", "x", 0, 9, 2, v=_ints([3, None], [0, 9]))
    rows = finish_aggregates(SCHEMA, [device], [Aggregate("max_by", "v")], ())
    assert rows == [((), (None,))]


def test_max_by_tie_between_devices_is_refused() -> None:
    one = _device("bj", "x", 0, 9, 1, v=_ints([1], [9]))
    two = _device("bj", "y", 0, 9, 1, v=_ints([2], [9]))
    assert finish_aggregates(SCHEMA, [one, two], [Aggregate("max_by", "v")], ()) is None
    # ... but not when a later row decides it
    three = _device("sh", "x", 10, 10, 1, v=_ints([3], [10]))
    assert finish_aggregates(SCHEMA, [one, two, three], [Aggregate("max_by", "v")], ()) == [
        ((), (3,))
    ]


def test_sum_that_may_overflow_bigint_is_refused() -> None:
    big = 2**62
    one = _device("bj", "x", 0, 1, 2, v=_ints([big, -1], [0, 1]))
    two = _device("bj", "y", 0, 1, 2, v=_ints([big, -big], [0, 1]))
    # The total fits, but Spark may add big + big first: it fails (ANSI) or wraps.
    assert finish_aggregates(SCHEMA, [one, two], [Aggregate("sum", "v")], ()) is None
    fits = _device("bj", "x", 0, 0, 1, v=_ints([INT64_MAX], [0]))
    assert finish_aggregates(SCHEMA, [fits], [Aggregate("sum", "v")], ()) == [((), (INT64_MAX,))]


def test_avg_beyond_exact_doubles_is_refused() -> None:
    device = _device("bj", "x", 0, 1, 2, v=_ints([2**53, 1], [0, 1]))
    assert finish_aggregates(SCHEMA, [device], [Aggregate("avg", "v")], ()) is None
    small = _device("bj", "x", 0, 1, 2, v=_ints([2**52, 1], [0, 1]))
    assert finish_aggregates(SCHEMA, [small], [Aggregate("avg", "v")], ()) == [
        ((), ((2**52 + 1) / 2,))
    ]


def test_nan_is_the_largest_value() -> None:
    # Only rows read carry NaN (statistics keep no min/max a NaN may hide).
    nan = SeriesStats(2, min=1.0, max=math.nan)
    num = SeriesStats(1, min=-1.0, max=5.0)
    rows = finish_aggregates(
        SCHEMA,
        [_device("bj", "x", 0, 1, 2, d=nan), _device("bj", "y", 0, 0, 1, d=num)],
        [Aggregate("min", "d"), Aggregate("max", "d")],
        (),
    )
    assert rows is not None
    low, high = rows[0][1]
    assert low == -1.0 and isinstance(high, float) and math.isnan(high)


def _doubles(values: list[float], lo: int) -> SeriesStats:
    """A DOUBLE series' statistics with its double sum, as a writer keeps it."""
    return SeriesStats(len(values), min=min(values), max=max(values), sum_double=sum(values))


def test_double_sum_and_avg_from_sum_double() -> None:
    one = _device("bj", "x", 0, 9, 3, d=_doubles([0.5, 1.25, -3.0], 0))
    two = _device("bj", "y", 10, 19, 1, d=_doubles([4.0], 10))
    empty = _device("sh", "x", 20, 29, 2, d=SeriesStats(0))
    parts = [part_of_devices("a.tsfile", one, two), part_of_devices("b.tsfile", empty)]
    plan = plan_scan(SCHEMA, parts, None, key="keep")
    aggregates = [Aggregate("sum", "d"), Aggregate("avg", "d"), Aggregate("count", "d")]
    planned = plan_aggregates(plan, aggregates)
    assert planned is not None and planned.reads == ()
    rows = finish_aggregates(SCHEMA, planned.known, aggregates, ("city",))
    # Spark: sum and avg are DOUBLE; NULL for a group with no value (sh).
    assert sorted(rows or []) == [(("bj",), (2.75, 2.75 / 4, 4)), (("sh",), (None, None, 0))]


def test_a_double_sum_without_sum_double_is_read_or_refused() -> None:
    # No sum_double (a NaN or inf, or an overflow possible): the device is read...
    unknown = _device("bj", "x", 0, 9, 2, d=SeriesStats(2, min=1.0, max=2.0))
    planned = plan_aggregates(
        plan_scan(SCHEMA, [part_of_devices("a.tsfile", unknown)], None, key="keep"),
        [Aggregate("sum", "d")],
    )
    assert planned is not None and planned.known == ()
    assert [(r.path, r.devices) for r in planned.reads] == [("a.tsfile", (("bj", "x"),))]
    # ... and when the rows read have none either, Spark evaluates the query.
    nan = _device("bj", "x", 0, 1, 2, d=SeriesStats(2, min=1.0, max=math.nan))
    assert finish_aggregates(SCHEMA, [nan], [Aggregate("avg", "d")], ()) is None


def test_time_min_max_count_from_device_ranges() -> None:
    aggregates = [Aggregate("min", "time"), Aggregate("max", "time"), Aggregate("count", "time")]
    # No FIELD statistics needed: a device recorded without them is not read.
    old = DeviceStats(("sz", "z"), 4, 40, 47)
    plan = plan_scan(SCHEMA, [*PARTS, part_of_devices("c.tsfile", old)], None, key="keep")
    planned = plan_aggregates(plan, aggregates)
    assert planned is not None and planned.reads == ()
    rows = finish_aggregates(SCHEMA, planned.known, aggregates, ("city",))
    assert sorted(rows or []) == [
        (("bj",), (0, 19, 5)),
        (("sh",), (20, 29, 2)),
        (("sz",), (40, 47, 4)),
    ]
    # A bound cutting bj/x (0..9): it is read; nothing matches -> NULL, NULL, 0.
    cut = plan_aggregates(plan_scan(SCHEMA, PARTS, "time >= 5", key="keep"), aggregates)
    assert cut is not None and [r.devices for r in cut.reads] == [(("bj", "x"),)]
    assert _answer("time > 100", aggregates) == [((), (None, None, 0))]


def test_straddling_and_unknown_devices_are_read() -> None:
    old = DeviceStats(("bj", "z"), 1, 0, 0)  # recorded before FIELD statistics existed
    parts = [*PARTS, part_of_devices("c.tsfile", old)]
    plan = plan_scan(SCHEMA, parts, "time >= 5", key="keep")
    planned = plan_aggregates(plan, [Aggregate("sum", "v")])
    assert planned is not None
    # bj/x (0..9) straddles; bj/y and sh/x are inside; bj/z is outside the range.
    assert [d.tags for d in planned.known] == [("bj", "y"), ("sh", "x")]
    assert [(r.path, r.devices) for r in planned.reads] == [("a.tsfile", (("bj", "x"),))]
    unknown = plan_aggregates(plan_scan(SCHEMA, parts, None, key="keep"), [Aggregate("sum", "v")])
    assert unknown is not None
    assert [(r.path, r.devices) for r in unknown.reads] == [("c.tsfile", (("bj", "z"),))]
    # count(*) needs no FIELD statistics
    counted = plan_aggregates(plan_scan(SCHEMA, parts, None, key="keep"), [Aggregate("count")])
    assert counted is not None and counted.reads == ()


def test_parts_without_device_lists_are_read_whole() -> None:
    many = part_file("m.tsfile", row_count=5, min_time=0, max_time=9, devices=None)
    planned = plan_aggregates(
        plan_scan(SCHEMA, [many], "time < 100", key="keep"), [Aggregate("count")]
    )
    assert planned is not None
    assert [(r.path, r.devices, r.time_max) for r in planned.reads] == [("m.tsfile", None, 99)]


@pytest.mark.parametrize(
    ("aggregate", "supported"),
    [
        (Aggregate("count"), True),
        (Aggregate("count", "city"), True),
        (Aggregate("sum", "v"), True),
        (Aggregate("sum", "d"), True),  # from sum_double, up to the order of additions
        (Aggregate("avg", "d"), True),
        (Aggregate("min", "time"), True),  # the devices' time ranges
        (Aggregate("max", "time"), True),
        (Aggregate("count", "time"), True),
        (Aggregate("sum", "time"), False),
        (Aggregate("max_by", "time"), False),
        (Aggregate("min", "d"), True),
        (Aggregate("max", "city"), False),  # TAG min/max: left to Spark
        (Aggregate("max_by", "s"), True),
        (Aggregate("sum", "nope"), False),
    ],
)
def test_supported_aggregates(aggregate: Aggregate, supported: bool) -> None:
    assert supported_aggregate(SCHEMA, aggregate) is supported


def test_residual_predicates_are_not_planned() -> None:
    plan = plan_scan(SCHEMA, PARTS, "v > 1", key="keep")
    assert plan_aggregates(plan, [Aggregate("count")]) is None


def test_series_stats_json_round_trip_and_older_parts() -> None:
    part = part_of_devices("a.tsfile", BJ_X, BJ_Y)
    types = {"v": DataType.INT64, "s": DataType.STRING}
    obj = part.to_json(types)
    assert obj["device_fields"][0]["s"] == {"count": 0}  # compact: unknowns are omitted
    again = PartFile.from_json(obj, types)
    assert again.devices == part.devices
    # A part written before device_fields existed reads with fields=None (unknown).
    del obj["device_fields"]
    older = PartFile.from_json(obj, types)
    assert older.devices is not None and all(d.fields is None for d in older.devices)


FLAGS = weather_schema(("b", DataType.BOOLEAN), ("v", DataType.INT64))


@pytest.mark.parametrize(
    ("function", "column", "expected"),
    [
        ("sum", "b", Aggregate("sum_true", "b")),
        ("avg", "b", Aggregate("avg_true", "b")),
        ("count", "b", Aggregate("count", "b")),
        ("min", "b", Aggregate("min", "b")),
        ("max", "b", Aggregate("max", "b")),
        ("sum", "v", None),  # CAST(v AS TINYINT) may fail; CAST(v AS INT) may too
        ("min", "city", None),  # a TAG
        ("max_by", "b", None),
        ("sum", "nope", None),
    ],
)
def test_an_integral_cast_of_a_boolean_is_an_aggregate_of_the_boolean(
    function: str, column: str, expected: Aggregate | None
) -> None:
    assert of_boolean_cast(FLAGS, function, column) == expected


def test_avg_of_a_booleans_cast_is_the_share_of_true_values() -> None:
    """Spark: the 0/1 values summed as doubles over the non-null count; NULL without one."""
    one = DeviceStats(("bj", "x"), 4, 0, 9, {"b": SeriesStats(3, sum=1)})
    two = DeviceStats(("bj", "y"), 5, 10, 19, {"b": SeriesStats(4, sum=2)})
    empty = DeviceStats(("sh", "z"), 2, 20, 29, {"b": SeriesStats(0)})
    wanted = [Aggregate("avg_true", "b"), Aggregate("sum_true", "b")]
    assert finish_aggregates(FLAGS, [one, two, empty], wanted, ()) == [((), (3 / 7, 3))]
    rows = finish_aggregates(FLAGS, [one, two, empty], wanted, ("city",))
    assert sorted(rows or []) == [(("bj",), (3 / 7, 3)), (("sh",), (None, None))]


def test_a_renamed_columns_statistics_answer_under_its_new_name() -> None:
    # Parts record FIELD statistics under the physical name (v's before RENAME COLUMN v TO w);
    # the aggregate names the column as the table does now.
    renamed = TableSchema(
        table=SCHEMA.table,
        columns=tuple(
            replace(c, name="w", physical_name="v") if c.name == "v" else c for c in SCHEMA.columns
        ),
    )
    aggregates = [Aggregate("sum", "w"), Aggregate("min", "w"), Aggregate("max", "w")]
    plan = plan_scan(renamed, PARTS, None, key="keep")
    planned = plan_aggregates(plan, aggregates)
    assert planned is not None and planned.reads == ()
    assert finish_aggregates(renamed, planned.known, aggregates, ()) == [((), (15, 1, 7))]
