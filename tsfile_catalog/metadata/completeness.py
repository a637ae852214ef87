"""Part-watermark completeness: which rows a table declares committed (pure, no I/O).

Flink's partition watermark (FLINK-21871) closes the window [10:00, 11:00) as soon as the
partition of hour 10 is complete. A table learns that from its writers, in two ways, both
recorded as a commit's ``complete_until`` (raw time units; ``CommitInfo.complete_until``):

* the table property ``watermark.interval`` (``'1 hour'``, Flink's ``partition.time-interval``):
  a commit whose rows all fall into one interval (epoch-aligned) completes that interval and
  every interval before it, as sorted partitions do;
* the write option ``completeUntil``: every row with time < that value is committed.

The table's completeness as of a version is the largest declaration of any commit up to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.metadata.expressions.literals import parse_iso_datetime, to_raw_time
from tsfile_catalog.metadata.expressions.model import TimeUnit
from tsfile_catalog.metadata.key import check_key_property
from tsfile_catalog.metadata.manifest.model import CommitInfo
from tsfile_catalog.metadata.retention import duration_ms
from tsfile_catalog.metadata.spark.literals import parse_zone
from tsfile_catalog.metadata.table_time import check_time_properties

__all__ = [
    "WATERMARK_INTERVAL",
    "check_table_properties",
    "completeness",
    "interval_complete_until",
    "ms_to_raw",
    "parse_complete_until",
    "watermark_interval",
]

WATERMARK_INTERVAL = "watermark.interval"
"""Table property: the writers' interval (``'1 hour'``); see the module docstring."""

_RAW_PER_MS: dict[TimeUnit, int] = {"ms": 1, "us": 1_000, "ns": 1_000_000}


def ms_to_raw(ms: int, unit: TimeUnit) -> int:
    """A duration or instant in milliseconds as raw time in ``unit``."""
    return ms * _RAW_PER_MS[unit]


def watermark_interval(properties: Mapping[str, str], unit: TimeUnit) -> int | None:
    """The ``watermark.interval`` property in raw units of ``unit`` (None: not set).

    Raises:
        OptionError: naming the property, when it is not a positive duration.
    """
    text = properties.get(WATERMARK_INTERVAL)
    if text is None:
        return None
    ms = duration_ms(text, what=f"table property '{WATERMARK_INTERVAL}' =")
    if ms <= 0:
        raise OptionError(
            f"table property '{WATERMARK_INTERVAL}' = {text!r} must be a positive duration, "
            "such as '1 hour'"
        )
    return ms_to_raw(ms, unit)


def check_table_properties(properties: Mapping[str, str]) -> None:
    """Refuse table properties this module would later fail to read, when they are set.

    Raises:
        OptionError: naming the property and its value.
    """
    watermark_interval(properties, "ms")
    check_key_property(properties)
    check_time_properties(properties)


def interval_complete_until(time_min: int, time_max: int, interval: int) -> int | None:
    """What a commit of rows spanning ``time_min..time_max`` declares under an epoch-aligned
    ``interval``: the end of their interval when they all fall into one, else nothing (a
    commit spanning two intervals may hold only the start of the later one)."""
    first, last = time_min // interval, time_max // interval
    return (first + 1) * interval if first == last else None


def completeness(infos: Iterable[CommitInfo]) -> int | None:
    """Every row with time < the result is committed, as of the newest of ``infos`` (the
    commits up to a version, in any order); None when no commit declared anything."""
    declared = [i.complete_until for i in infos if i.complete_until is not None]
    return max(declared) if declared else None


def parse_complete_until(text: str, unit: TimeUnit, time_zone: str | None) -> int:
    """The write option ``completeUntil`` as raw time in ``unit``: an integer is raw time
    already; an ISO-8601 timestamp without an offset is a wall-clock time in ``time_zone``
    (the session's, as Spark reads timestamps).

    Raises:
        OptionError: naming the option, when the text is neither, or it needs a time zone
            that is unknown.
    """
    value = text.strip()
    try:
        return int(value)
    except ValueError:
        pass
    try:
        parsed = parse_iso_datetime(value)
    except ValueError:
        raise OptionError(
            f"option 'completeUntil' = {text!r} is neither raw time (an integer) nor an "
            "ISO-8601 timestamp"
        ) from None
    if parsed.tzinfo is None:
        if time_zone is None:
            raise OptionError(
                f"option 'completeUntil' = {text!r} has no offset and the session time zone is "
                "unknown here; set the 'timeZone' write option or spark.sql.session.timeZone"
            )
        parsed = parsed.replace(tzinfo=parse_zone(time_zone), fold=0)
    return to_raw_time(parsed, unit)
