"""Value statistics of a part: per device, per FIELD series, per TAG and per FIELD column.

What a scan and the statistics aggregates know about a file without opening it. Stats come
from TsFile metadata (or from the writer); only devices without a FIELD series, whose rows
TsFile keeps in the time column alone, are counted by a scan of time and the TAG columns
(``formats.tsfile.read.part_and_devices``). Device lists and per-TAG value sets are bounded: above
:data:`MAX_DEVICES` / :data:`MAX_TAG_VALUES` only the TAG min/max survive, which still prunes
ranges and equalities outside them.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from tsfile_catalog.metadata.schema import DataType, TableSchema

__all__ = [
    "MAX_DEVICES",
    "MAX_TAG_VALUES",
    "StatValue",
    "DeviceStats",
    "SeriesStats",
    "TagStats",
    "FieldStats",
    "tag_stats_from_devices",
    "device_fields_json",
    "kept_double_sum",
    "by_column_name",
]

MAX_DEVICES = 1_000
MAX_TAG_VALUES = 1_000

# What FIELD min/max statistics hold, by column type: int (INT32, INT64, TIMESTAMP), float
# (FLOAT, DOUBLE), str (STRING), dt.date (DATE); bool for BOOLEAN where a writer records it.
StatValue: TypeAlias = bool | int | float | str | dt.date


@dataclass(frozen=True, slots=True)
class SeriesStats:
    """One FIELD of one device inside one part: what aggregates need, each value exact.

    ``count`` is the number of non-null values; a BOOLEAN's ``sum`` is its number of true
    values (what TsFile keeps, and ``sum(CAST(b AS INT))`` / ``count_if(b)`` answer). Every
    other statistic is None when it is unknown or would not be exact under Spark's semantics
    (an INT sum TsFile accumulated in a double is kept only while no partial sum can leave the
    2**53 range; a min/max that a NaN may hide), and a reader falls back to the rows then.
    ``first``/``last`` are the values at ``first_time``/``last_time``, the times of the first
    and last non-null values.

    ``sum_double`` is a FLOAT/DOUBLE column's sum as TsFile accumulated it in a double, kept
    only when every value is finite and no partial sum in any order can overflow. It is exact
    up to the order of additions, which Spark's own double sums do not fix either (its result
    depends on partitioning): readers that use it hold the same contract as the partial
    aggregates Spark merges (docs/sql.md).
    """

    count: int
    sum: int | None = None
    min: StatValue | None = None
    max: StatValue | None = None
    first: StatValue | None = None
    first_time: int | None = None
    last: StatValue | None = None
    last_time: int | None = None
    sum_double: float | None = None

    def to_json(self, type_: DataType) -> dict[str, Any]:
        # Compact: a key is written only when its statistic is known.
        out: dict[str, Any] = {"count": self.count}
        for key in ("sum", "min", "max", "first", "first_time", "last", "last_time"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value if key in _PLAIN_SERIES_KEYS else _stat_to_json(value, type_)
        if self.sum_double is not None:
            out["sum_double"] = self.sum_double
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], type_: DataType) -> SeriesStats:
        def plain(key: str) -> int | None:
            value = obj.get(key)
            return None if value is None else int(value)

        return cls(
            count=int(obj["count"]),
            sum=plain("sum"),
            min=_stat_from_json(obj.get("min"), type_),
            max=_stat_from_json(obj.get("max"), type_),
            first=_stat_from_json(obj.get("first"), type_),
            first_time=plain("first_time"),
            last=_stat_from_json(obj.get("last"), type_),
            last_time=plain("last_time"),
            sum_double=None if obj.get("sum_double") is None else float(obj["sum_double"]),
        )


# Keys of SeriesStats that are plain integers whatever the column's type.
_PLAIN_SERIES_KEYS = frozenset({"sum", "first_time", "last_time"})


@dataclass(frozen=True, slots=True)
class DeviceStats:
    """One device (its TAG values, in TAG order; None = null TAG) inside one part.

    ``fields`` holds :class:`SeriesStats` by FIELD name, or is None when the part was recorded
    without them (older commits, external parts); a FIELD missing from it is unknown too.
    """

    tags: tuple[str | None, ...]
    row_count: int
    min_time: int
    max_time: int
    fields: Mapping[str, SeriesStats] | None = None

    def to_json(self) -> list[Any]:
        return [list(self.tags), self.row_count, self.min_time, self.max_time]

    @classmethod
    def from_json(cls, obj: list[Any]) -> DeviceStats:
        tags, rows, lo, hi = obj
        return cls(tuple(tags), int(rows), int(lo), int(hi))


def by_column_name(device: DeviceStats, schema: TableSchema) -> DeviceStats:
    """``device`` with its FIELD statistics keyed by ``schema``'s column names instead of the
    physical names the part records (the same device when the two agree)."""
    fields = device.fields
    if fields is None or not schema.physical_names():
        return device
    named = {c.name: fields[c.physical] for c in schema.fields if c.physical in fields}
    return DeviceStats(device.tags, device.row_count, device.min_time, device.max_time, named)


@dataclass(frozen=True, slots=True)
class TagStats:
    """Values of one TAG column in a part: the exact set when small, else min/max only."""

    values: frozenset[str] | None
    min: str | None
    max: str | None
    has_null: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"min": self.min, "max": self.max, "has_null": self.has_null}
        if self.values is not None:
            out["values"] = sorted(self.values)
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> TagStats:
        values = obj.get("values")
        # TAG values are strings: anything else is a damaged manifest (a TypeError the
        # decoders report as corrupt), never a value a plan would compare or sort.
        if values is not None and not all(isinstance(v, str) for v in values):
            raise TypeError(f"TAG values must be strings, found {values!r}")
        low, high = obj.get("min"), obj.get("max")
        if not all(v is None or isinstance(v, str) for v in (low, high)):
            raise TypeError(f"TAG min/max must be strings, found {low!r}, {high!r}")
        return cls(
            values=frozenset(values) if values is not None else None,
            min=low,
            max=high,
            has_null=bool(obj.get("has_null", False)),
        )


@dataclass(frozen=True, slots=True)
class FieldStats:
    """min/max (None when TsFile keeps none for the type) and null count of a FIELD."""

    min: StatValue | None
    max: StatValue | None
    null_count: int | None

    def to_json(self, type_: DataType) -> dict[str, Any]:
        return {
            "min": _stat_to_json(self.min, type_),
            "max": _stat_to_json(self.max, type_),
            "null_count": self.null_count,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], type_: DataType) -> FieldStats:
        nulls = obj.get("null_count")
        return cls(
            min=_stat_from_json(obj.get("min"), type_),
            max=_stat_from_json(obj.get("max"), type_),
            null_count=int(nulls) if nulls is not None else None,
        )


def _stat_to_json(value: StatValue | None, type_: DataType) -> Any:
    if value is None:
        return None
    if isinstance(value, dt.date):  # only DATE stats hold dates; JSON has no date type
        return value.isoformat()
    if type_ in (DataType.FLOAT, DataType.DOUBLE):
        return float(value)
    return value


def _stat_from_json(value: Any, type_: DataType) -> StatValue | None:
    if value is None:
        return None
    if type_ is DataType.DATE:
        return dt.date.fromisoformat(value)
    if type_ in (DataType.FLOAT, DataType.DOUBLE):
        return float(value)
    if type_ in (DataType.INT32, DataType.INT64, DataType.TIMESTAMP):
        return int(value)
    return value


def tag_stats_from_devices(
    tag_names: Iterable[str], devices: Iterable[tuple[str | None, ...]]
) -> dict[str, TagStats]:
    names = tuple(tag_names)
    columns: list[set[str]] = [set() for _ in names]
    nulls = [False] * len(names)
    for tags in devices:
        for i in range(len(names)):
            value = tags[i] if i < len(tags) else None
            if value is None:
                nulls[i] = True
            else:
                columns[i].add(value)
    out = {}
    for i, name in enumerate(names):
        values = columns[i]
        out[name] = TagStats(
            values=frozenset(values) if len(values) <= MAX_TAG_VALUES else None,
            min=min(values) if values else None,
            max=max(values) if values else None,
            has_null=nulls[i],
        )
    return out


def device_fields_json(
    devices: Sequence[DeviceStats] | None, field_types: Mapping[str, DataType]
) -> dict[str, Any]:
    """The optional ``device_fields`` key: per device (aligned with ``devices``) its
    :class:`SeriesStats` by FIELD, or null. A separate key, not a fifth item of each device's
    list, so a release that does not know it ignores it (no ``format_version`` bump); absent
    when no device has any, so such parts keep their bytes."""
    if devices is None or all(d.fields is None for d in devices):
        return {}
    return {
        "device_fields": [
            None
            if d.fields is None
            else {
                name: stats.to_json(field_types.get(name, DataType.STRING))
                for name, stats in d.fields.items()
            }
            for d in devices
        ]
    }


# No partial sum of values whose count x largest magnitude stays below this can overflow.
_DOUBLE_SUM_BOUND = 1e300


def kept_double_sum(count: int, total: float, low: float, high: float) -> float | None:
    """``total`` as a :attr:`SeriesStats.sum_double` of ``count`` values between ``low`` and
    ``high``, or None when it is not kept: a value (or the sum) is infinite or NaN, or some
    order of additions could overflow. One rule for statistics from TsFile footers and from
    rows read, so both differ from Spark's sum by the order of additions alone."""
    finite = math.isfinite(total) and math.isfinite(low) and math.isfinite(high)
    bounded = finite and count * max(abs(low), abs(high)) < _DOUBLE_SUM_BOUND
    return total if bounded else None
