"""The instants a Spark ``timestamp`` can hold, in raw TsFile time units.

TsFile times are any int64 in their unit; Spark's TIMESTAMP covers 0001-01-01 to 9999-12-31
(microseconds, UTC). A raw time outside that range has no Spark timestamp: reading it as one
and time travel to it must fail naming the value, not overflow somewhere inside Arrow or
``datetime``.
"""

from __future__ import annotations

import datetime as dt

from tsfile_catalog.metadata.expressions.literals import to_raw_time
from tsfile_catalog.metadata.expressions.model import TimeUnit

__all__ = ["SPARK_TIMESTAMP_RANGE", "spark_timestamp_bounds"]

_MIN = dt.datetime(1, 1, 1, tzinfo=dt.timezone.utc)
_MAX = dt.datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=dt.timezone.utc)

SPARK_TIMESTAMP_RANGE = "0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z"
"""The range in words, for error messages."""


def spark_timestamp_bounds(unit: TimeUnit) -> tuple[int, int]:
    """The smallest and largest raw time in ``unit`` (inclusive) that is a Spark timestamp.

    In ``ns`` every int64 is one (int64 nanoseconds span only 1677..2262).
    """
    return to_raw_time(_MIN, unit), to_raw_time(_MAX, unit)
