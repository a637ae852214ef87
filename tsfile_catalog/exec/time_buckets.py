"""Time buckets in the raw domain, bucketed exactly as Spark buckets the instants they stand for.

Raw times are int64 counts of the table's unit (ms, us or ns) since the epoch; Spark sees
them as microseconds (``timestampAs=timestamp``, sub-microsecond digits floored) or as the raw
long. Every bucket here is computed on the raw values and returned as a raw value, which the
scan converts to Spark's type like any other time.

``date_trunc`` follows Spark's ``DateTimeUtils.truncTimestamp``: SECOND and finer truncate
the instant (zone offsets are whole seconds); MINUTE, HOUR and DAY truncate the local
date-time in the session zone and map it back keeping the original offset when that offset
is still valid there (``ZonedDateTime.truncatedTo``), else the earlier offset (and a time in a
DST gap moves forward by the gap); WEEK (from Monday), MONTH, QUARTER and YEAR take the start
of the truncated local date (``LocalDate.atStartOfDay``).
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections.abc import Callable, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from tsfile_catalog.metadata.expressions import TimeUnit
from tsfile_catalog.metadata.partial_aggregates import TimeBucket
from tsfile_catalog.metadata.spark.literals import parse_zone

__all__ = ["floor_divide", "bucket_raw", "buckets_of", "RAW_PER_SECOND"]

RAW_PER_SECOND: dict[str, int] = {"ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_MICROS: dict[str, int] = {"MICROSECOND": 1, "MILLISECOND": 1_000, "SECOND": 1_000_000}
_LOCAL_SECONDS: dict[str, int] = {"MINUTE": 60, "HOUR": 3_600, "DAY": 86_400}
_EPOCH = dt.datetime(1970, 1, 1)


def floor_divide(array: pa.Array | pa.ChunkedArray, divisor: int) -> pa.Array:
    """Integer floor division, so a pre-epoch value lands in the unit that contains it
    (Arrow's integer divide truncates toward zero; float division loses int64 precision)."""
    quotient = pc.divide(array, divisor)
    inexact_negative = pc.and_(
        pc.less(array, 0), pc.not_equal(pc.multiply(quotient, divisor), array)
    )
    return pc.if_else(inexact_negative, pc.subtract(quotient, 1), quotient)


def _floor_to(array: pa.Array | pa.ChunkedArray, step: int) -> pa.Array:
    return array if step == 1 else pc.multiply(floor_divide(array, step), step)


def bucket_raw(raw: pa.Array | pa.ChunkedArray, bucket: TimeBucket, unit: TimeUnit) -> pa.Array:
    """The bucket of every raw time in ``raw`` (int64, same unit)."""
    if bucket.kind == "floor":
        # Spark evaluates floor(time / n) * n with a DOUBLE division: so does this.
        width = float(bucket.width or 1)
        quotient = pc.floor(pc.divide(pc.cast(raw, pa.float64()), width))
        return pc.multiply(pc.cast(quotient, pa.int64()), int(width))
    per_second = RAW_PER_SECOND[unit]
    if bucket.kind == "window":
        return _floor_to(raw, _raw_step(bucket.width or 1, per_second))
    level = bucket.unit or ""
    if level in _MICROS:
        return _floor_to(raw, _raw_step(_MICROS[level], per_second))
    zone = parse_zone(bucket.time_zone or "UTC")
    if level in _LOCAL_SECONDS:
        return _truncate_local_time(raw, _LOCAL_SECONDS[level] * per_second, zone, per_second)
    return _truncate_local_date(raw, level, zone, per_second)


def buckets_of(bucket: TimeBucket, unit: TimeUnit) -> Callable[[Sequence[int]], list[int]]:
    """:func:`bucket_raw` over plain ints: what the statistics planner
    (:func:`~tsfile_catalog.metadata.partial_stats.split_by_stats`) buckets devices' first and
    last times with, the very function rows are bucketed with."""

    def of(times: Sequence[int]) -> list[int]:
        return bucket_raw(pa.array(times, pa.int64()), bucket, unit).to_pylist()

    return of


def _raw_step(micros: int, per_second: int) -> int:
    """``micros`` in raw units; finer than the unit it is the identity (step 1). A width that
    is no whole number of raw units is refused where the spec is built."""
    return max(1, micros * per_second // 1_000_000)


def _offsets(raw: pa.Array | pa.ChunkedArray, zone: dt.tzinfo, per_second: int) -> pa.Array:
    """The zone's UTC offset at every instant, in raw units."""
    if isinstance(zone, dt.timezone):
        seconds = int(zone.utcoffset(None).total_seconds())
        return pc.add(pc.multiply(pc.cast(raw, pa.int64()), 0), seconds * per_second)
    assert isinstance(zone, zoneinfo.ZoneInfo)
    arrow_unit = {1_000: "ms", 1_000_000: "us", 1_000_000_000: "ns"}[per_second]
    stamps = pc.cast(raw, pa.int64()).cast(pa.timestamp(arrow_unit, tz=zone.key))
    local = pc.local_timestamp(stamps).cast(pa.int64())
    return pc.subtract(local, pc.cast(raw, pa.int64()))


def _truncate_local_time(
    raw: pa.Array | pa.ChunkedArray, step: int, zone: dt.tzinfo, per_second: int
) -> pa.Array:
    offset = _offsets(raw, zone, per_second)
    local = _floor_to(pc.add(raw, offset), step)
    kept = pc.subtract(local, offset)
    # The original offset still valid at the truncated time: keep it (ZonedDateTime keeps it
    # in an overlap too). Elsewhere (a transition between the two) resolve one by one.
    valid = pc.equal(pc.add(kept, _offsets(kept, zone, per_second)), local)
    if pc.all(valid).as_py():
        return kept
    resolved = _resolve_earlier(pc.filter(local, pc.invert(valid)), zone, per_second)
    return pc.if_else(valid, kept, _lookup(local, resolved))


def _truncate_local_date(
    raw: pa.Array | pa.ChunkedArray, level: str, zone: dt.tzinfo, per_second: int
) -> pa.Array:
    day = 86_400 * per_second
    days = floor_divide(pc.add(raw, _offsets(raw, zone, per_second)), day)
    if level == "WEEK":
        # 1970-01-01 was a Thursday: shift so that weeks start on Monday.
        start_days = pc.subtract(pc.multiply(floor_divide(pc.add(days, 3), 7), 7), 3)
    else:
        dates = pc.cast(pc.cast(days, pa.int32()), pa.date32())
        floored = pc.floor_temporal(dates, unit=level.lower())
        start_days = pc.cast(pc.cast(floored, pa.int32()), pa.int64())
    local = pc.multiply(start_days, day)
    return _lookup(local, _resolve_earlier(local, zone, per_second))


def _resolve_earlier(
    local: pa.Array | pa.ChunkedArray, zone: dt.tzinfo, per_second: int
) -> dict[int, int]:
    """Each distinct local time (whole seconds) as an instant, with the earlier offset in an
    overlap and moved forward by a gap (Python's ``fold=0`` is Java's rule for both)."""
    out: dict[int, int] = {}
    for value in pc.unique(local).to_pylist():
        naive = _EPOCH + dt.timedelta(seconds=value // per_second)
        aware = naive.replace(tzinfo=zone, fold=0)
        utc = aware.astimezone(dt.timezone.utc).replace(tzinfo=None)
        out[value] = (utc - _EPOCH) // dt.timedelta(seconds=1) * per_second
    return out


def _lookup(local: pa.Array | pa.ChunkedArray, resolved: dict[int, int]) -> pa.Array:
    keys = pa.array(list(resolved), pa.int64())
    values = pa.array(list(resolved.values()), pa.int64())
    return pc.take(values, pc.index_in(local, value_set=keys))
