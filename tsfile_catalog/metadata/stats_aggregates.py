"""Exact answers to aggregate queries from part statistics, reading only what they cannot tell.

Pure: takes a :class:`~tsfile_catalog.metadata.scan.ScanPlan` (the pushed predicate and the
parts it keeps) and answers only when statistics make the answer exact under Spark's semantics,
else None (the caller then lets Spark evaluate the query).

:func:`metadata_count` counts rows. :func:`plan_aggregates` splits a scan into the (part,
device) pairs whose statistics answer an aggregate list (every row of the device inside the
WHERE) and the slices that must be read (a device straddling a time bound, or whose statistics
lack what an aggregate needs); :func:`finish_aggregates` merges per-device statistics, from the
manifest and from the rows read alike (:class:`~tsfile_catalog.metadata.parts.DeviceStats`),
into Spark's result rows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from tsfile_catalog.metadata.expressions import INT64_MAX, INT64_MIN
from tsfile_catalog.metadata.parts import DeviceStats, SeriesStats, StatValue
from tsfile_catalog.metadata.scan import ScanPlan
from tsfile_catalog.metadata.schema import TIME_COLUMN, Category, DataType, TableSchema
from tsfile_catalog.metadata.slices import FileSlice, ReadSlice, merge_slices, merged_devices
from tsfile_catalog.metadata.stats import by_column_name

__all__ = [
    "AggregateFunction",
    "Aggregate",
    "AggregatePlan",
    "metadata_count",
    "supported_aggregate",
    "of_boolean_cast",
    "plan_aggregates",
    "finish_aggregates",
]

AggregateFunction = Literal[
    "count", "sum", "avg", "min", "max", "max_by", "min_by", "sum_true", "avg_true", "count_if"
]

# Spark's avg of INT/BIGINT adds the values as doubles, in an order that depends on the plan:
# the result is exact (order-free) only while every partial sum stays within +-2**53.
_EXACT_DOUBLE_INT = 2**53

# The FIELD types each function is answered for. sum/avg of FLOAT/DOUBLE use the double sum
# (SeriesStats.sum_double): Spark's own result depends on the order of additions (partitions,
# shuffles), so it equals Spark's up to that rounding, the contract of partial aggregation
# (docs/sql.md). TIMESTAMP and BLOB values are only counted. ``time`` itself: count, min and max
# from the devices' time ranges (supported_aggregate).
_FLOATS = frozenset({DataType.FLOAT, DataType.DOUBLE})
_ORDERED = frozenset(
    {
        DataType.BOOLEAN,
        DataType.INT32,
        DataType.INT64,
        DataType.FLOAT,
        DataType.DOUBLE,
        DataType.STRING,
        DataType.TEXT,
        DataType.DATE,
    }
)
_SUPPORTED: Mapping[str, frozenset[DataType]] = {
    "sum": frozenset({DataType.INT32, DataType.INT64, DataType.FLOAT, DataType.DOUBLE}),
    "avg": frozenset({DataType.INT32, DataType.INT64, DataType.FLOAT, DataType.DOUBLE}),
    "min": _ORDERED,
    "max": _ORDERED,
    "max_by": _ORDERED,
    "min_by": _ORDERED,
    # sum(CAST(b AS <integral>)) (NULL without a value) and count_if(b) (0 without one): the
    # number of true values, which a BOOLEAN's statistics keep exactly.
    "sum_true": frozenset({DataType.BOOLEAN}),
    "count_if": frozenset({DataType.BOOLEAN}),
    # avg(CAST(b AS <integral>)): the share of true values among the non-null ones.
    "avg_true": frozenset({DataType.BOOLEAN}),
}
# function(CAST(b AS <integral>)) of a BOOLEAN b is an aggregate of b itself: the cast makes
# true 1 and false 0, never fails and keeps NULL. min/max are b's own (false < true as 0 < 1),
# which the caller gives the cast's type.
_OF_BOOLEAN_CAST: Mapping[str, AggregateFunction] = {
    "count": "count",
    "sum": "sum_true",
    "avg": "avg_true",
    "min": "min",
    "max": "max",
}


@dataclass(frozen=True, slots=True)
class Aggregate:
    """One aggregate of a SELECT list: ``count`` with ``column`` None is ``count(*)``;
    ``max_by``/``min_by`` order by ``time`` (the last/first value)."""

    function: AggregateFunction
    column: str | None = None


@dataclass(frozen=True, slots=True)
class AggregatePlan:
    """``known``: the devices (one entry per part and device) whose statistics answer every
    aggregate; ``reads``: the slices whose rows must be read and summarised per part and
    device (into the same :class:`DeviceStats`) before :func:`finish_aggregates`; a device a
    key merge reads (a newer write replaced some of its rows) is always among them, merged."""

    known: tuple[DeviceStats, ...]
    reads: tuple[ReadSlice, ...]


def metadata_count(plan: ScanPlan) -> int | None:
    """The exact number of rows a scan with ``plan``'s predicate returns, from statistics
    alone, or None when statistics cannot tell (then the caller must scan).

    Exact when nothing is left for row-level evaluation (no residual), no rows are merged by
    key (a replaced row is in the statistics of the part holding it) and, for each part the
    plan keeps, the pushed time range and TAG sets either hold for every row of the part or,
    device by device, hold for all or none of a device's rows.
    """
    pushdown = plan.pushdown
    if pushdown.residual is not None or plan.merges:
        return None
    if pushdown.empty:
        return 0
    lo, hi = pushdown.time_min, pushdown.time_max
    unbounded = lo == INT64_MIN and hi == INT64_MAX
    tag_sets = pushdown.tag_dict()
    tag_index = {name: i for i, name in enumerate(plan.schema.tag_names)}
    total = 0
    for part in plan.parts:
        if not part.row_count:
            continue
        if not tag_sets and (unbounded or _inside(part.min_time, part.max_time, lo, hi)):
            total += part.row_count
            continue
        if part.devices is None:
            return None
        for device in part.devices:
            if any(device.tags[tag_index[t]] not in values for t, values in tag_sets.items()):
                continue
            if device.max_time < lo or device.min_time > hi:
                continue
            if lo <= device.min_time and device.max_time <= hi:
                total += device.row_count
                continue
            return None
    return total


def _inside(part_min: int | None, part_max: int | None, lo: int, hi: int) -> bool:
    return part_min is not None and part_max is not None and lo <= part_min and part_max <= hi


def supported_aggregate(schema: TableSchema, aggregate: Aggregate) -> bool:
    """Whether :func:`finish_aggregates` answers ``aggregate`` over ``schema`` exactly:
    ``count`` of anything; ``min``/``max`` of ``time`` (the devices' time ranges); the others
    of a FIELD whose type they are exact for."""
    if aggregate.function == "count":
        name = aggregate.column
        return name is None or name == TIME_COLUMN or schema.column(name) is not None
    if aggregate.column == TIME_COLUMN:
        return aggregate.function in ("min", "max")
    column = schema.column(aggregate.column) if aggregate.column is not None else None
    return (
        column is not None
        and column.category is Category.FIELD
        and column.type in _SUPPORTED[aggregate.function]
    )


def of_boolean_cast(schema: TableSchema, function: str, column: str) -> Aggregate | None:
    """The aggregate of ``column`` that answers ``function(CAST(column AS <integral>))``
    (``function`` one of count, sum, avg, min, max), or None when ``column`` is no BOOLEAN
    FIELD (the cast of anything else may fail, round or reorder). A ``min``/``max`` answer is
    the BOOLEAN value, which the caller turns into the cast's integer."""
    typed = schema.column(column)
    aggregate = _OF_BOOLEAN_CAST.get(function)
    if (
        aggregate is None
        or typed is None
        or typed.category is not Category.FIELD
        or typed.type is not DataType.BOOLEAN
    ):
        return None
    return Aggregate(aggregate, column)


def plan_aggregates(plan: ScanPlan, aggregates: Sequence[Aggregate]) -> AggregatePlan | None:
    """Which (part, device) pairs statistics answer and which slices must be read.

    None when the plan leaves a residual (a predicate only rows can evaluate) or an aggregate
    is not :func:`supported_aggregate`.
    """
    pushdown = plan.pushdown
    if pushdown.residual is not None:
        return None
    if not all(supported_aggregate(plan.schema, a) for a in aggregates):
        return None
    if pushdown.empty:
        return AggregatePlan((), ())
    lo, hi = pushdown.time_min, pushdown.time_max
    tag_sets = pushdown.tag_dict()
    tag_names = plan.schema.tag_names
    index = {name: i for i, name in enumerate(tag_names)}
    known: list[DeviceStats] = []
    reads: list[ReadSlice] = []
    merged = merged_devices(plan.merges)
    # Asked once, not per (part, device): most tables rename no column.
    renamed = bool(plan.schema.physical_names())
    for part in sorted(plan.parts, key=lambda p: p.path):
        if not part.row_count:
            continue
        taken = merged.get(part.path, frozenset())
        if taken is None:
            continue  # read whole by a merge
        if part.devices is None:
            reads.append(FileSlice.of(part, lo, hi))
            continue
        straddling: list[tuple[str | None, ...]] = []
        for device in part.devices:
            if device.tags in taken:
                continue
            if renamed:  # FIELD statistics by column name, as the aggregates name them
                device = by_column_name(device, plan.schema)
            tags = device.tags + (None,) * (len(tag_names) - len(device.tags))
            if any(tags[index[t]] not in values for t, values in tag_sets.items()):
                continue
            if device.max_time < lo or device.min_time > hi:
                continue
            inside = lo <= device.min_time and device.max_time <= hi
            if inside and _answers(device, aggregates, index):
                known.append(device if tags == device.tags else _with_tags(device, tags))
            else:
                straddling.append(device.tags)
        if straddling:
            reads.append(FileSlice.of(part, lo, hi, tuple(straddling)))
    for merge in plan.merges:
        # One merged read per merge: its rows summarise into one entry per device.
        reads.extend(piece for piece, _ in merge_slices(merge, pushdown, tag_names))
    return AggregatePlan(tuple(known), tuple(reads))


def _with_tags(device: DeviceStats, tags: tuple[str | None, ...]) -> DeviceStats:
    return DeviceStats(tags, device.row_count, device.min_time, device.max_time, device.fields)


def _answers(
    device: DeviceStats, aggregates: Sequence[Aggregate], tag_index: Mapping[str, int]
) -> bool:
    """Whether ``device``'s statistics hold everything ``aggregates`` need."""
    for aggregate in aggregates:
        column = aggregate.column
        if aggregate.function == "count" and (
            column is None or column == TIME_COLUMN or column in tag_index
        ):
            continue  # rows, or rows whose TAG value (the device's) is not null
        if column == TIME_COLUMN:
            continue  # min/max: the device's time range
        stats = device.fields.get(column) if device.fields is not None and column else None
        if stats is None:
            return False
        if stats.count == 0 or aggregate.function == "count":
            continue
        if aggregate.function in ("sum", "avg") and stats.sum_double is not None:
            continue  # a FLOAT/DOUBLE sum; an INT column never has one
        if aggregate.function in ("sum_true", "avg_true", "count_if"):
            needed: tuple[object, ...] = (stats.sum,)
        elif aggregate.function in ("sum", "avg"):
            needed = (stats.sum, stats.min, stats.max)
        elif aggregate.function in ("min", "max"):
            needed = (stats.min, stats.max)
        elif aggregate.function == "max_by":
            needed = (stats.last_time,)
        else:
            needed = (stats.first_time,)
        if any(value is None for value in needed):
            return False
    return True


class _Ambiguous(Exception):
    """Spark's answer depends on the order it meets rows in (a max_by/min_by tie)."""


def finish_aggregates(
    schema: TableSchema,
    devices: Iterable[DeviceStats],
    aggregates: Sequence[Aggregate],
    group_by: Sequence[str],
) -> list[tuple[tuple[str | None, ...], tuple[object, ...]]] | None:
    """Spark's result rows: per group (the ``group_by`` TAG values) the aggregate values.

    ``devices`` are per part and device, each complete inside the WHERE. Without
    ``group_by`` there is exactly one row (``count`` 0 and NULLs when nothing matches); with
    it, one row per group that has a row, in no particular order. None when the answer is
    not exact: an INT sum could overflow BIGINT (Spark fails or wraps), an avg's double sum
    could round, or a max_by/min_by tie (equal times in two devices of a group).
    """
    tag_index = {name: i for i, name in enumerate(schema.tag_names)}
    groups: dict[tuple[str | None, ...], list[DeviceStats]] = {}
    for device in devices:
        if device.row_count:
            key = tuple(device.tags[tag_index[t]] for t in group_by)
            groups.setdefault(key, []).append(device)
    if not group_by and not groups:
        groups[()] = []
    rows = []
    try:
        for key, members in groups.items():
            values = tuple(_aggregate(schema, a, members, tag_index) for a in aggregates)
            rows.append((key, values))
    except _Ambiguous:
        return None
    return rows


def _aggregate(
    schema: TableSchema,
    aggregate: Aggregate,
    devices: Sequence[DeviceStats],
    tag_index: Mapping[str, int],
) -> object:
    column = aggregate.column
    if aggregate.function == "count":
        if column is None or column == TIME_COLUMN:
            return sum(d.row_count for d in devices)
        if column in tag_index:
            return sum(d.row_count for d in devices if d.tags[tag_index[column]] is not None)
    assert column is not None
    if column == TIME_COLUMN:
        # min/max (supported_aggregate): every device here has a row; none -> NULL.
        if not devices:
            return None
        if aggregate.function == "max":
            return max(d.max_time for d in devices)
        return min(d.min_time for d in devices)
    series = [_series(d, column) for d in devices]
    if aggregate.function == "count":
        return sum(s.count for s in series)
    if aggregate.function in ("max_by", "min_by"):
        return _value_at_extreme_time(devices, series, last=aggregate.function == "max_by")
    present = [s for s in series if s.count]
    if aggregate.function == "count_if":
        return sum(_int(s.sum) for s in present)
    if not present:
        return None
    if aggregate.function == "sum_true":
        return sum(_int(s.sum) for s in present)
    if aggregate.function == "avg_true":
        # Spark adds the 0/1 values as doubles (exact: fewer than 2**53 rows) and divides by
        # the count: one correctly rounded division, as here.
        return sum(_int(s.sum) for s in present) / sum(s.count for s in present)
    if aggregate.function in ("min", "max"):
        largest = aggregate.function == "max"
        return _spark_extreme([s.max if largest else s.min for s in present], largest=largest)
    average = aggregate.function == "avg"
    typed = schema.column(column)
    if typed is not None and typed.type in _FLOATS:
        return _double_sum_or_avg(present, average=average)
    return _sum_or_avg(present, average=average)


def _series(device: DeviceStats, column: str) -> SeriesStats:
    stats = device.fields.get(column) if device.fields is not None else None
    assert stats is not None, "planned devices carry the statistics their aggregates need"
    return stats


def _sum_or_avg(present: Sequence[SeriesStats], *, average: bool) -> object:
    # No partial sum Spark may form, in whatever order, can exceed the sum of the positive
    # values (or go below that of the negative ones).
    high = sum(s.count * max(_int(s.max), 0) for s in present)
    low = sum(s.count * min(_int(s.min), 0) for s in present)
    total = sum(_int(s.sum) for s in present)
    if average:
        if max(high, -low) > _EXACT_DOUBLE_INT:
            raise _Ambiguous
        return float(total) / sum(s.count for s in present)
    if high > INT64_MAX or low < INT64_MIN:
        raise _Ambiguous  # Spark fails (ANSI, the default) or wraps: let it say which
    return total


def _double_sum_or_avg(present: Sequence[SeriesStats], *, average: bool) -> float:
    """Spark's sum/avg of FLOAT/DOUBLE (both DOUBLE) up to the order of additions."""
    sums = [s.sum_double for s in present]
    if any(value is None for value in sums):
        raise _Ambiguous  # a NaN/inf or an overflow possible among the rows read: Spark says
    total = math.fsum(value for value in sums if value is not None)
    return total / sum(s.count for s in present) if average else total


def _int(value: StatValue | None) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Ambiguous  # statistics missing: never happens for planned devices
    return value


def _spark_extreme(values: Sequence[StatValue | None], *, largest: bool) -> StatValue | None:
    """Spark's min/max: NaN is larger than every number (only rows read can hold NaN)."""

    def key(value: StatValue | None) -> tuple[bool, StatValue]:
        assert value is not None
        nan = isinstance(value, float) and math.isnan(value)
        return (nan, 0.0 if nan else value)

    return (max if largest else min)(values, key=key)


def _value_at_extreme_time(
    devices: Sequence[DeviceStats], series: Sequence[SeriesStats], *, last: bool
) -> object:
    """max_by(c, time) / min_by(c, time): c on the row with the largest / smallest time,
    NULL when that row's c is null. A device's last row is at ``max_time``; its c there is the
    last non-null value only if that value's time is ``max_time``."""
    best_time: int | None = None
    best: object = None
    tied = False
    for device, stats in zip(devices, series, strict=True):
        time = device.max_time if last else device.min_time
        value_time = stats.last_time if last else stats.first_time
        value = (stats.last if last else stats.first) if stats.count else None
        at_time = value if stats.count and value_time == time else None
        if best_time is None or (time > best_time if last else time < best_time):
            best_time, best, tied = time, at_time, False
        elif time == best_time:
            tied = True
    if tied:
        raise _Ambiguous  # Spark keeps whichever row it meets first
    return best
