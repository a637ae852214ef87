"""Time literals: ISO-8601 text, and datetimes as raw TsFile times in a table's unit.

The one ISO parser for predicates, SQL literals, ``timestampAsOf`` and completeness
declarations, so they all accept the same text. Spark's own reading of literal text (casts,
time zones) is :mod:`tsfile_catalog.metadata.spark.literals`.
"""

from __future__ import annotations

import datetime as dt

from tsfile_catalog.metadata.expressions.model import TimeUnit

__all__ = ["parse_iso_datetime", "parse_iso_date", "to_raw_time"]


def parse_iso_datetime(text: str) -> dt.datetime:
    """An ISO-8601 timestamp, surrounding blanks ignored and a trailing ``Z`` read as UTC
    (``datetime.fromisoformat`` reads ``Z`` only from Python 3.11 on). The one parser for
    predicates, SQL literals and ``timestampAsOf``, so they all accept the same text.

    Raises:
        ValueError: ``text`` is not ISO-8601; each caller words its own error.
    """
    return dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))


def parse_iso_date(text: str) -> dt.date:
    """An ISO-8601 date (``YYYY-MM-DD``), surrounding blanks ignored.

    Raises:
        ValueError: ``text`` is not an ISO-8601 date.
    """
    return dt.date.fromisoformat(text.strip())


def to_raw_time(value: dt.datetime, unit: TimeUnit) -> int:
    """A datetime (naive = UTC) as a raw TsFile long in ``unit`` since the epoch."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    delta = value - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if unit == "ms":
        return micros // 1_000
    if unit == "us":
        return micros
    return micros * 1_000
