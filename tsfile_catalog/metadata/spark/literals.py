"""Spark's reading of literal text, and the time-zone arithmetic its casts perform.

Predicates pushed into a scan must mean what Spark means, so every literal is read the way
Spark 4 reads it: ``'2024-1-1 5:00'`` cast to a timestamp is a wall-clock time in the session
time zone, ``'2024-01-01 abc'`` cast to a date is 2024-01-01, ``' 5 '`` cast to a bigint is 5.
Each parser accepts a *subset* of what Spark accepts (checked against Spark by
tests/datasource/test_filter_semantics.py) and raises :class:`PredicateError` for anything
else, so an unusual form fails loudly instead of meaning something else here.

Zones are Python ``tzinfo`` objects (IANA names via ``zoneinfo``, fixed offsets, and Java's
short IDs such as ``PST``, which Spark accepts for ``spark.sql.session.timeZone``).
"""

from __future__ import annotations

import datetime as dt
import math
import re
import zoneinfo
from functools import lru_cache

from tsfile_catalog.exceptions import PredicateError

__all__ = [
    "MICROS_PER_DAY",
    "parse_zone",
    "parse_date",
    "parse_timestamp",
    "parse_long",
    "parse_double",
    "instant_micros",
    "local_date",
    "start_of_day_micros",
    "parse_interval_ns",
]

MICROS_PER_DAY = 86_400_000_000
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_MAX_OFFSET = dt.timedelta(hours=18)  # java.time.ZoneOffset's range, which Spark uses

# Spark trims whitespace around cast input; only plain ASCII whitespace is trimmed here, so
# any other leading or trailing character makes the text unparseable (an error, not a guess).
_BLANKS = " \t\n\r\f\v"

_DATE = re.compile(r"(\d{4})(?:-(\d{1,2})(?:-(\d{1,2})(?:[ T].*)?)?)?", re.DOTALL)
_TIMESTAMP = re.compile(
    r"(\d{4})(?:-(\d{1,2})(?:-(\d{1,2})"
    r"(?:[ T](\d{1,2})(?::(\d{1,2})(?::(\d{1,2})(?:\.(\d{0,6}))?"
    r"(?: ?(Z|[+-]\d{1,2}:\d{2}))?)?)?)?)?)?"
)
_LONG = re.compile(r"[+-]?\d+")
_DOUBLE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_DOUBLE_SPECIALS = {
    "nan": math.nan,
    "inf": math.inf,
    "+inf": math.inf,
    "infinity": math.inf,
    "+infinity": math.inf,
    "-inf": -math.inf,
    "-infinity": -math.inf,
}
_OFFSET_ZONE = re.compile(r"(?:UTC|GMT|UT)?([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?")

# java.time.ZoneId.SHORT_IDS, which Spark accepts as session time zones.
_JAVA_SHORT_IDS = {
    "ACT": "Australia/Darwin",
    "AET": "Australia/Sydney",
    "AGT": "America/Argentina/Buenos_Aires",
    "ART": "Africa/Cairo",
    "AST": "America/Anchorage",
    "BET": "America/Sao_Paulo",
    "BST": "Asia/Dhaka",
    "CAT": "Africa/Harare",
    "CNT": "America/St_Johns",
    "CST": "America/Chicago",
    "CTT": "Asia/Shanghai",
    "EAT": "Africa/Addis_Ababa",
    "ECT": "Europe/Paris",
    "IET": "America/Indiana/Indianapolis",
    "IST": "Asia/Kolkata",
    "JST": "Asia/Tokyo",
    "MIT": "Pacific/Apia",
    "NET": "Asia/Yerevan",
    "NST": "Pacific/Auckland",
    "PLT": "Asia/Karachi",
    "PNT": "America/Phoenix",
    "PRT": "America/Puerto_Rico",
    "PST": "America/Los_Angeles",
    "SST": "Pacific/Guadalcanal",
    "VST": "Asia/Ho_Chi_Minh",
    "EST": "-05:00",
    "MST": "-07:00",
    "HST": "-10:00",
}


@lru_cache(maxsize=64)
def parse_zone(name: str) -> dt.tzinfo:
    """A Spark time zone ID (``America/Los_Angeles``, ``UTC``, ``+08:00``, ``GMT-3``, ``PST``).

    Raises:
        PredicateError: not a zone ID this module can resolve.
    """
    text = name.strip()
    if text in ("Z", "UTC", "GMT", "UT"):
        return dt.timezone.utc
    match = _OFFSET_ZONE.fullmatch(text)
    if match:
        sign, hours, minutes, seconds = match.groups()
        offset = dt.timedelta(
            hours=int(hours), minutes=int(minutes or 0), seconds=int(seconds or 0)
        )
        if offset > _MAX_OFFSET or int(minutes or 0) > 59 or int(seconds or 0) > 59:
            raise PredicateError(f"time zone {name!r} is outside -18:00..+18:00")
        return dt.timezone(-offset if sign == "-" else offset)
    text = _JAVA_SHORT_IDS.get(text, text)
    if text != name.strip():
        return parse_zone(text)
    try:
        return zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise PredicateError(
            f"unknown time zone {name!r}: use a region ID such as 'America/Los_Angeles' or an "
            "offset such as '+08:00'"
        ) from None


def _trim(text: str) -> str:
    return text.strip(_BLANKS)


def parse_date(text: str) -> dt.date:
    """``text`` cast to DATE: ``yyyy``, ``yyyy-m``, ``yyyy-m-d``, optionally followed by a
    space or ``T`` and anything (Spark ignores it)."""
    match = _DATE.fullmatch(_trim(text))
    if match:
        year, month, day = match.groups()
        try:
            return dt.date(int(year), int(month or 1), int(day or 1))
        except ValueError:
            pass
    raise PredicateError(f"{text!r} is not a date this reader accepts (use 'YYYY-MM-DD')")


def parse_timestamp(text: str) -> dt.datetime:
    """``text`` cast to TIMESTAMP: naive (a wall-clock time in the session time zone) unless
    it ends with ``Z`` or ``±hh:mm`` after the seconds; microsecond precision."""
    match = _TIMESTAMP.fullmatch(_trim(text))
    if match:
        year, month, day, hour, minute, second, fraction, zone = match.groups()
        try:
            value = dt.datetime(
                int(year),
                int(month or 1),
                int(day or 1),
                int(hour or 0),
                int(minute or 0),
                int(second or 0),
                int((fraction or "").ljust(6, "0")),
            )
            if zone is not None:
                value = value.replace(tzinfo=parse_zone(zone))
            return value
        except (ValueError, PredicateError):
            pass
    raise PredicateError(
        f"{text!r} is not a timestamp this reader accepts "
        "(use 'YYYY-MM-DD[ HH:MM[:SS[.ffffff][Z|±HH:MM]]]')"
    )


def parse_long(text: str) -> int:
    """``text`` cast to BIGINT (an optionally signed integer, nothing else)."""
    trimmed = _trim(text)
    if _LONG.fullmatch(trimmed):
        value = int(trimmed)
        if -(2**63) <= value < 2**63:
            return value
    raise PredicateError(f"{text!r} is not a bigint")


def parse_double(text: str) -> float:
    """``text`` cast to DOUBLE: a decimal number, or NaN / Infinity in Spark's spellings."""
    trimmed = _trim(text)
    special = _DOUBLE_SPECIALS.get(trimmed.lower())
    if special is not None:
        return special
    if _DOUBLE.fullmatch(trimmed):
        return float(trimmed)
    raise PredicateError(f"{text!r} is not a double this reader accepts")


def instant_micros(value: dt.datetime, zone: dt.tzinfo | None) -> int:
    """Microseconds since the epoch of ``value``; a naive value is a wall-clock time in
    ``zone``. A time skipped by a DST gap moves forward by the gap and an ambiguous one takes
    the earlier offset, as Java's ``ZonedDateTime.of`` (and so Spark) does; that is Python's
    ``fold=0``."""
    if value.tzinfo is None:
        if zone is None:
            raise PredicateError(f"{value.isoformat()} needs a time zone")
        value = value.replace(tzinfo=zone, fold=0)
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def local_date(micros: int, zone: dt.tzinfo) -> dt.date:
    """The calendar date in ``zone`` of the instant ``micros``."""
    return (_EPOCH + dt.timedelta(microseconds=micros)).astimezone(zone).date()


def start_of_day_micros(day: dt.date, zone: dt.tzinfo) -> int:
    """The first instant of ``day`` in ``zone`` (a DATE cast to TIMESTAMP).

    Java's ``LocalDate.atStartOfDay`` returns the end of the gap when midnight is skipped by a
    DST change, which is the first instant whose local date is ``day``; found here by
    bisection between the two readings of the missing midnight.
    """
    midnight = dt.datetime(day.year, day.month, day.day)
    first = instant_micros(midnight, zone)
    before = midnight.replace(tzinfo=zone, fold=0).utcoffset()
    after = midnight.replace(tzinfo=zone, fold=1).utcoffset()
    if before is None or after is None or before >= after:
        return first  # midnight exists (fold=0 is the earlier of two)
    # In a gap, fold=0 reads midnight with the offset before it (a later instant) and fold=1
    # with the one after (an earlier instant); the transition lies between.
    lo = instant_micros(midnight.replace(tzinfo=zone, fold=1), None)
    hi = first
    while lo < hi:  # first instant whose local date is ``day``
        mid = (lo + hi) // 2
        if local_date(mid, zone) >= day:
            hi = mid
        else:
            lo = mid + 1
    return lo


# Spark's interval units as ``withWatermark`` / ``window`` read them ("10 minutes", "1 hour").
_INTERVAL_UNITS_NS = {
    "nanosecond": 1,
    "microsecond": 1_000,
    "millisecond": 1_000_000,
    "second": 1_000_000_000,
    "minute": 60_000_000_000,
    "hour": 3_600_000_000_000,
    "day": 86_400_000_000_000,
    "week": 604_800_000_000_000,
}
_INTERVAL_PART = re.compile(r"(\d+)\s*([a-z]+)\s*", re.IGNORECASE)


def parse_interval_ns(text: str) -> int:
    """A non-negative interval in nanoseconds, written as Spark's ``withWatermark`` delays
    are: ``'10 minutes'``, ``'1 hour 30 minutes'``, an optional ``interval`` prefix.

    Raises:
        PredicateError: anything else (a negative, fractional or month-based interval:
            months have no fixed length).
    """
    body = _trim(text)
    if body.lower().startswith("interval "):
        body = body[len("interval ") :].lstrip()
    total, position, found = 0, 0, False
    while position < len(body):
        match = _INTERVAL_PART.match(body, position)
        if match is None:
            break
        name = match.group(2).lower()
        unit = _INTERVAL_UNITS_NS.get(name[:-1] if name.endswith("s") else name)
        if unit is None:
            break
        total += int(match.group(1)) * unit
        position, found = match.end(), True
    if not found or position != len(body):
        raise PredicateError(
            f"{text!r} is not an interval this reader accepts (use e.g. '10 minutes', "
            f"'1 hour 30 minutes'; units: {', '.join(_INTERVAL_UNITS_NS)})"
        )
    return total
