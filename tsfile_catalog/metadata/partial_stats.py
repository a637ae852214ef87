"""Partial aggregate rows answered from statistics: the (part, device) pairs a scan need not read.

Pure (no Spark, pyarrow or storage). A ``partialAggregate`` scan
(:mod:`~tsfile_catalog.metadata.partial_aggregates`) emits partial states per group; Spark
merges however many rows a group gets. So a device of a part whose rows

* all satisfy the WHERE: the pushed time range and TAG sets, and a residual (a FIELD
  predicate) that the device's own statistics prove TRUE on every row
  (:meth:`~tsfile_catalog.metadata.expressions.pruning.PartEvaluator.device_verdict`),
* all fall into ONE bucket of the spec (the bucket of its ``min_time`` equals that of its
  ``max_time``; buckets are monotone in time), and
* have statistics holding every state the spec needs (a missing or inexact statistic: read it)
* and are not merged by key (a newer write replaced some of them: see
  :mod:`~tsfile_catalog.metadata.key_reads`)

contributes exactly one partial row, computed here from its
:class:`~tsfile_catalog.metadata.stats.DeviceStats`, and is left out of the slices read. A
device whose statistics prove that no row satisfies the residual contributes nothing and is
left out too (``skipped``).

The rows hold raw-domain values in :attr:`PartialSpec.output_names` order, the values the read
path's partial rows hold for the same device (``table/partial_aggregates.py``): counts, exact
integer sums, ``sum_double`` from :attr:`SeriesStats.sum_double` for FLOAT/DOUBLE (the
project's DOUBLE-sum contract: equal up to the order of additions) or the exact integer sum
as a double while no partial sum can leave +-2**53, extremes, and ``first``/``last`` as the
value at the device's earliest/latest time (NULL when the first/last non-null value is later/
earlier), as :mod:`~tsfile_catalog.metadata.stats_aggregates` reasons for ``min_by``/``max_by``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tsfile_catalog.metadata.expressions.model import INT64_MAX, INT64_MIN
from tsfile_catalog.metadata.expressions.pruning import PartEvaluator
from tsfile_catalog.metadata.expressions.pushdown import ScanPushdown
from tsfile_catalog.metadata.partial_aggregates import PartialSpec, PartialState
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import TIME_COLUMN, Category, DataType, TableSchema
from tsfile_catalog.metadata.slices import (
    MergeRead,
    merged_devices,
    without_devices,
)
from tsfile_catalog.metadata.stats import DeviceStats, SeriesStats, StatValue

__all__ = ["BucketsOf", "StatsSplit", "split_by_stats"]

# The buckets of raw times (the same function the read path applies to rows).
BucketsOf = Callable[[Sequence[int]], Sequence[int]]
Tags = tuple[str | None, ...]

# A double holds every integer up to 2**53: an integer sum as a double equals Spark's double
# sum of the values (in any order) while the sum of their magnitudes stays below it.
_EXACT_DOUBLE_INT = 2**53
_FLOATS = frozenset({DataType.FLOAT, DataType.DOUBLE})
_INTEGERS = frozenset({DataType.INT32, DataType.INT64})


class _Unknown(Exception):
    """The statistics do not hold a state exactly (internal: the device is read instead)."""


@dataclass(frozen=True, slots=True)
class StatsSplit:
    """``rows``: one partial row per answered (part, device) pair, named in ``pairs`` (part
    path, device TAG values as recorded) at the same index; ``skipped``: the pairs no row of
    which satisfies the WHERE (no partial row); ``parts``: what is left to read, the parts
    with their answered and skipped devices removed (parts left with none are dropped)."""

    rows: tuple[tuple[object, ...], ...]
    pairs: tuple[tuple[str, Tags], ...]
    parts: tuple[PartFile, ...]
    skipped: tuple[tuple[str, Tags], ...] = ()

    @property
    def narrowed(self) -> frozenset[str]:
        """The paths of the parts that lost devices: their slices must name the devices they
        still read (see :func:`~tsfile_catalog.metadata.slices.narrow_slices`)."""
        return frozenset(path for path, _ in (*self.pairs, *self.skipped))


def split_by_stats(
    schema: TableSchema,
    parts: Sequence[PartFile],
    pushdown: ScanPushdown,
    spec: PartialSpec,
    buckets_of: BucketsOf | None = None,
    *,
    merges: Sequence[MergeRead],
) -> StatsSplit:
    """Split the planned ``parts`` (already pruned by ``pushdown``) into partial rows answered
    from statistics and the parts still to read. ``buckets_of`` maps raw times to the spec's
    buckets (required when it has one); the devices ``merges`` read are never answered nor
    skipped."""
    if pushdown.empty:
        return StatsSplit((), (), tuple(parts))
    residual = None if pushdown.residual is None else PartEvaluator(pushdown.residual, schema)
    merged = merged_devices(merges)
    index = {name: i for i, name in enumerate(schema.tag_names)}
    tag_count = len(index)
    skipped: list[tuple[str, Tags]] = []
    dropped: dict[str, set[Tags]] = {}  # skipped or answered, by part path
    candidates: list[tuple[PartFile, DeviceStats, Tags, tuple[object, ...]]] = []
    for part in parts:
        taken = merged.get(part.path, frozenset())
        if taken is None:
            continue
        for device in part.devices or ():
            if device.tags in taken:
                continue
            verdict = True if residual is None else residual.device_verdict(part, device)
            if verdict is False:
                skipped.append((part.path, device.tags))
                dropped.setdefault(part.path, set()).add(device.tags)
                continue
            tags = _padded(device.tags, tag_count)
            if not verdict or not device.row_count or not _inside(index, device, tags, pushdown):
                continue
            try:
                states = tuple(_state(schema, s, device, tags) for s in spec.states)
            except _Unknown:
                continue
            candidates.append((part, device, tags, states))
    if not candidates:
        return StatsSplit((), (), tuple(without_devices(parts, dropped)), tuple(skipped))
    bucket_values: Sequence[int | None] = [None] * len(candidates)
    if spec.bucket is not None:
        assert buckets_of is not None, "a bucketed spec needs its bucket function"
        times = [t for _, d, _, _ in candidates for t in (d.min_time, d.max_time)]
        found = list(buckets_of(times))
        bucket_values = [
            found[2 * i] if found[2 * i] == found[2 * i + 1] else None
            for i in range(len(candidates))
        ]
    rows: list[tuple[object, ...]] = []
    pairs: list[tuple[str, Tags]] = []
    for (part, device, tags, states), bucket in zip(candidates, bucket_values, strict=True):
        if spec.bucket is not None and bucket is None:
            continue  # straddles a bucket boundary: its rows are read and bucketed
        keys = tuple(tags[index[k]] for k in spec.keys)
        rows.append((*keys, *(() if spec.bucket is None else (bucket,)), *states))
        pairs.append((part.path, device.tags))
        dropped.setdefault(part.path, set()).add(device.tags)
    return StatsSplit(
        tuple(rows), tuple(pairs), tuple(without_devices(parts, dropped)), tuple(skipped)
    )


def _padded(tags: Tags, count: int) -> Tags:
    # A TAG added after the part was written is null in all its rows.
    return tags + (None,) * (count - len(tags))


def _inside(
    index: Mapping[str, int], device: DeviceStats, tags: Tags, pushdown: ScanPushdown
) -> bool:
    """Every row of ``device`` satisfies the pushed time range and TAG sets."""
    if not pushdown.time_min <= device.min_time <= device.max_time <= pushdown.time_max:
        return False
    return all(tags[index[t]] in values for t, values in pushdown.tag_values)


def _state(schema: TableSchema, state: PartialState, device: DeviceStats, tags: Tags) -> object:
    """``state`` over all rows of ``device``, or :class:`_Unknown`."""
    if state.function == "count_all":
        return device.row_count
    column = state.column
    assert column is not None
    if column == TIME_COLUMN:
        return _time_state(state, device)
    col = schema.column(column)
    if col is None:
        raise _Unknown
    if col.category is Category.TAG:
        return _tag_state(state, device, tags[schema.tag_names.index(column)])
    # Part statistics are keyed by physical name.
    stats = device.fields.get(col.physical) if device.fields is not None else None
    if stats is None or col.type is DataType.BLOB:
        raise _Unknown  # unknown; BLOB values are only counted by statistics
    return _field_state(state, col.type, stats, device)


def _time_state(state: PartialState, device: DeviceStats) -> object:
    if state.function == "count":
        return device.row_count
    if state.function in ("min", "first"):
        return device.min_time
    if state.function in ("max", "last"):
        return device.max_time
    raise _Unknown


def _tag_state(state: PartialState, device: DeviceStats, value: str | None) -> object:
    # Every row of a device holds its TAG values.
    if state.function == "count":
        return device.row_count if value is not None else 0
    if state.function in ("min", "max", "first", "last"):
        return value
    raise _Unknown


def _field_state(
    state: PartialState, type_: DataType, stats: SeriesStats, device: DeviceStats
) -> object:
    function = state.function
    if function == "count":
        return stats.count
    if function in ("first", "last"):
        return _value_at_extreme_time(stats, device, last=function == "last")
    if not stats.count:
        return None  # only nulls: every state but the counts is NULL
    if function == "sum" and type_ in _INTEGERS:
        return _known_int(stats.sum, INT64_MIN, INT64_MAX)
    if function == "sum_true":
        return _known_int(stats.sum, 0, stats.count)  # a BOOLEAN's true values
    if function in ("sum", "sum_double") and type_ in _FLOATS:
        return _known(stats.sum_double)
    if function == "sum_double" and type_ in _INTEGERS:
        magnitude = stats.count * max(abs(_int(stats.min)), abs(_int(stats.max)))
        if magnitude > _EXACT_DOUBLE_INT:
            raise _Unknown  # the read path's double sum may round
        return float(_known_int(stats.sum, -_EXACT_DOUBLE_INT, _EXACT_DOUBLE_INT))
    if function == "min":
        return _known(stats.min)
    if function == "max":
        return _known(stats.max)
    raise _Unknown


def _value_at_extreme_time(stats: SeriesStats, device: DeviceStats, *, last: bool) -> object:
    """The value on the device's earliest/latest row: the first/last non-null value when its
    time is that row's, else NULL (the row exists, its value is null)."""
    if not stats.count:
        return None
    value_time = stats.last_time if last else stats.first_time
    if value_time is None:
        raise _Unknown
    if value_time != (device.max_time if last else device.min_time):
        return None
    return _known(stats.last if last else stats.first)


def _known(value: StatValue | float | None) -> StatValue | float:
    if value is None:
        raise _Unknown
    return value


def _int(value: StatValue | None) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Unknown
    return value


def _known_int(value: int | None, low: int, high: int) -> int:
    if value is None or not low <= value <= high:
        raise _Unknown  # unknown, or a sum the read path refuses (BIGINT overflow)
    return value
