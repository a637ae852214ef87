"""The table's own time: the unit its raw times count and whether ``time`` is a TIMESTAMP
or a BIGINT, recorded as table properties (pure, no I/O).

A raw TsFile time is a bare long: nothing in a part says whether ``1_500`` is 1.5 s in
milliseconds or 1.5 us in nanoseconds. Before these properties a table's unit lived only in
the options each reader and writer was given (``timestampPrecision``, ``ms`` unless said),
so a writer that was not told wrote another unit into the same table. A table created now
records both when it is created (``CREATE TABLE``, the write that creates it), they never
change, and every reader and writer takes the unit from the table: an option naming another
unit is refused. Tables created before record nothing and are read and written as before,
with the unit the options give.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from tsfile_catalog.exceptions import CommitConflictError, OptionError
from tsfile_catalog.metadata.expressions import TimestampAs, TimeUnit

__all__ = [
    "TIME_UNIT_PROPERTY",
    "TIME_TYPE_PROPERTY",
    "TIME_PROPERTIES",
    "TimeType",
    "TableTime",
    "table_time",
    "time_properties",
    "table_unit",
    "check_time_properties",
    "check_time_change",
    "kept_time",
    "written_properties",
    "UNIT_NAMES",
    "spark_rewrite_refusal",
]

TIME_UNIT_PROPERTY = "time.unit"
"""Table property: ``ms``, ``us`` or ``ns``, the unit of every raw time the table stores."""
TIME_TYPE_PROPERTY = "time.type"
"""Table property: ``TIMESTAMP`` (``time`` reads as an instant) or ``BIGINT`` (a raw long)."""
TIME_PROPERTIES = (TIME_UNIT_PROPERTY, TIME_TYPE_PROPERTY)

TimeType = Literal["TIMESTAMP", "BIGINT"]
_UNITS: tuple[TimeUnit, ...] = ("ms", "us", "ns")
UNIT_NAMES: Mapping[str, str] = {"ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}


@dataclass(frozen=True)
class TableTime:
    """What a table records about its time column."""

    unit: TimeUnit
    type: TimeType

    @property
    def timestamp_as(self) -> TimestampAs:
        """How the table's ``time`` reads (the ``timestampAs`` it was created with)."""
        return "timestamp" if self.type == "TIMESTAMP" else "long"


def time_properties(unit: TimeUnit, timestamp_as: TimestampAs) -> dict[str, str]:
    """The properties a new table records for ``unit`` and ``time`` read as ``timestamp_as``."""
    return {
        TIME_UNIT_PROPERTY: unit,
        TIME_TYPE_PROPERTY: "TIMESTAMP" if timestamp_as == "timestamp" else "BIGINT",
    }


def table_time(properties: Mapping[str, str]) -> TableTime | None:
    """The time the table records, or None for a table created before it was recorded.

    Raises:
        OptionError: naming the property, when one is missing or holds another value.
    """
    unit = properties.get(TIME_UNIT_PROPERTY)
    type_ = properties.get(TIME_TYPE_PROPERTY)
    if unit is None and type_ is None:
        return None
    if unit is None or type_ is None:
        given, missing = (
            (TIME_UNIT_PROPERTY, TIME_TYPE_PROPERTY)
            if type_ is None
            else (TIME_TYPE_PROPERTY, TIME_UNIT_PROPERTY)
        )
        raise OptionError(
            f"table property '{given}' is set but '{missing}' is not: a table records both "
            "or neither"
        )
    if unit not in _UNITS:
        raise OptionError(
            f"table property '{TIME_UNIT_PROPERTY}' = {unit!r} must be one of {', '.join(_UNITS)}"
        )
    if type_ not in ("TIMESTAMP", "BIGINT"):
        raise OptionError(
            f"table property '{TIME_TYPE_PROPERTY}' = {type_!r} must be TIMESTAMP or BIGINT"
        )
    return TableTime(unit, type_)  # type: ignore[arg-type]


def table_unit(
    properties: Mapping[str, str], given: TimeUnit | None, *, table: str, option: str
) -> TimeUnit:
    """The unit a reader or writer of the table uses: the table's own, else ``given``, else
    ``ms`` (what tables that record nothing were always read and written with).

    Raises:
        OptionError: ``given`` names another unit than the table records (naming
            ``option``, the table and both units).
    """
    recorded = table_time(properties)
    if recorded is None:
        return given or "ms"
    if given is not None and given != recorded.unit:
        raise OptionError(
            f"{option} = '{given}' contradicts table {table}, which stores time in "
            f"{UNIT_NAMES[recorded.unit]} ('{recorded.unit}'); leave it out to use the "
            "table's own unit"
        )
    return recorded.unit


def check_time_properties(properties: Mapping[str, str]) -> None:
    """Refuse a time property value :func:`table_time` would fail to read (whether both are
    there is the table's to show, :func:`table_time`; a change is refused by
    :func:`check_time_change`).

    Raises:
        OptionError: naming the property.
    """
    unit = properties.get(TIME_UNIT_PROPERTY, "ms")
    type_ = properties.get(TIME_TYPE_PROPERTY, "BIGINT")
    table_time({TIME_UNIT_PROPERTY: unit, TIME_TYPE_PROPERTY: type_})


def check_time_change(
    current: Mapping[str, str],
    changed: Mapping[str, str],
    removed: Iterable[str] = (),
    *,
    table: str,
) -> None:
    """Refuse a commit that would change or remove the time a table records: every raw
    time it holds would then be read in another unit. A table that records none (created
    before the properties) may be given both at once: its owner declares the unit its rows
    were written in.

    Raises:
        OptionError: naming the property and the table.
    """
    if table_time(current) is None:
        declared = {k: changed[k] for k in TIME_PROPERTIES if k in changed}
        if len(declared) == len(TIME_PROPERTIES):
            table_time(declared)
            return
        if declared:
            (key,) = declared
            raise OptionError(
                f"table property '{key}' of table {table} cannot be set alone: the table "
                f"records no time yet, so set '{TIME_UNIT_PROPERTY}' (the unit its rows were "
                f"written in) and '{TIME_TYPE_PROPERTY}' together"
            )
        return
    for key in TIME_PROPERTIES:
        old = current.get(key)
        if key in changed and changed[key] != old:
            raise OptionError(
                f"table property '{key}' of table {table} cannot be set to "
                f"{changed[key]!r} (the table has {old!r}): it says how every raw time the "
                "table holds reads, so it is fixed when the table is created"
            )
        if key in removed:
            raise OptionError(
                f"table property '{key}' of table {table} cannot be unset: it says how "
                "every raw time the table holds reads, so it is fixed when the table is created"
            )


def spark_rewrite_refusal(
    unit: TimeUnit, timestamp_as: TimestampAs, *, statement: str, instead: str
) -> str | None:
    """Why ``statement`` may not rewrite rows through Spark, or None when it may.

    Spark's TIMESTAMP holds microseconds: a table of nanosecond times read as timestamps
    hands Spark every time floored to the microsecond, and a statement that writes the rows
    it read back (a copy-on-write, a key change) would store them so, rows it did not match
    included, and miss the keys it meant to replace. Milliseconds and microseconds go
    through exactly, and so does any unit read as raw longs."""
    if unit != "ns" or timestamp_as != "timestamp":
        return None
    return (
        f"{statement}: the table stores time in nanoseconds ('ns') and reads it as Spark "
        "TIMESTAMPs, which hold microseconds, so the rows the statement rewrites would have "
        f"their times truncated to microseconds; nothing was changed: {instead}"
    )


def kept_time(
    current: Mapping[str, str], properties: Mapping[str, str], *, table: str
) -> dict[str, str]:
    """The ``properties`` a write's commit sets on the table it finds, ``current``: those
    that change it, less the time the write planned for a new table (the table found keeps
    its own: created concurrently, or before times were recorded).

    Raises:
        CommitConflictError: the table found records another unit than the write's raw
            times are in.
    """
    recorded = table_time(current)
    planned = table_time({k: v for k, v in properties.items() if k in TIME_PROPERTIES})
    if recorded is not None and planned is not None and recorded.unit != planned.unit:
        raise CommitConflictError(
            f"commit to table {table} refused: the write's times are in "
            f"{UNIT_NAMES[planned.unit]}, but a table storing {UNIT_NAMES[recorded.unit]} was "
            "created there while it ran; nothing was committed: retry the write"
        )
    return {k: v for k, v in properties.items() if k not in TIME_PROPERTIES and current.get(k) != v}


def written_properties(
    current: Mapping[str, str] | None,
    planned: Mapping[str, str],
    stated: Mapping[str, str],
    *,
    table: str,
) -> dict[str, str]:
    """The properties a write's commit sets: on a new table (``current`` None) the time it
    was planned with (``planned``) and the statement's own (``stated``: a CREATE or REPLACE
    TABLE ... AS SELECT's TBLPROPERTIES); on the table ``current`` found, those that change
    it (:func:`kept_time` for the planned time). The statement's may repeat the time the
    rows were written in, never change it.

    Raises:
        OptionError: a stated time property changes the rows' time (naming it).
        CommitConflictError: the table found records another unit than the rows'.
    """
    if current is None:
        check_time_change(planned, stated, table=table)
        return {**stated, **planned}
    setting = {k: v for k, v in stated.items() if current.get(k) != v}
    check_time_change(current, setting, table=table)
    return {**kept_time(current, planned, table=table), **setting}
