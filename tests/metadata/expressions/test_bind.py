"""Binding predicates to a schema with Spark's semantics (pure)."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.metadata.expressions.helpers import SCHEMA, bound_text, bound_timestamps
from tsfile_catalog.exceptions import PredicateError
from tsfile_catalog.metadata.expressions import (
    And,
    Approx,
    Compare,
    Expr,
    In,
    IsNull,
    Not,
    Or,
    TimeUnit,
    needs_time_zone,
    split_pushdown,
)


def test_literals_are_bound_to_the_raw_domain() -> None:
    assert bound_timestamps("time >= TIMESTAMP '2024-01-01 00:00:00'") == Compare(
        "time", ">=", 1_704_067_200_000
    )
    assert bound_timestamps("time >= '2024-01-01 00:00:00Z'", "us") == Compare(
        "time", ">=", 1_704_067_200_000_000
    )
    assert bound_timestamps("seen < '1970-01-01T00:00:01'", "ns") == Compare(
        "seen", "<", 1_000_000_000
    )
    assert bound_text("day = DATE '2024-02-03'") == Compare("day", "=", dt.date(2024, 2, 3))
    assert bound_text("day = '2024-02-03'") == Compare("day", "=", dt.date(2024, 2, 3))
    assert bound_text("temp > -2") == Compare("temp", ">", -2.0, as_double=True)
    assert bound_text("ok = true") == Compare("ok", "=", True)


def test_timestamp_literals_use_the_session_time_zone() -> None:
    # 2024-01-01 00:00 in Kolkata (+05:30) is 2023-12-31 18:30 UTC.
    kolkata = 1_704_047_400_000
    assert bound_timestamps(
        "time >= TIMESTAMP '2024-01-01 00:00:00'", zone="Asia/Kolkata"
    ) == Compare("time", ">=", kolkata)
    assert bound_timestamps("time >= '2024-01-01'", zone="Asia/Kolkata") == Compare(
        "time", ">=", kolkata
    )
    # An explicit offset wins over the session's.
    assert bound_timestamps("time >= '2024-01-01 00:00:00+00:00'", zone="Asia/Kolkata") == Compare(
        "time", ">=", 1_704_067_200_000
    )
    # Skipped by DST in Los Angeles: moves forward by the gap, as Spark does (03:30 PDT).
    assert bound_timestamps(
        "time = TIMESTAMP '2024-03-10 02:30:00'", zone="America/Los_Angeles"
    ) == Compare("time", "=", 1_710_066_600_000)


@pytest.mark.parametrize(
    ("text", "unit", "expected"),
    [
        # raw ms are shown as ms * 1000 µs: a sub-millisecond instant rounds inwards
        ("time > TIMESTAMP '1970-01-01 00:00:00.0015'", "ms", Compare("time", ">", 1)),
        ("time >= TIMESTAMP '1970-01-01 00:00:00.0015'", "ms", Compare("time", ">=", 2)),
        ("time = TIMESTAMP '1970-01-01 00:00:00.0015'", "ms", In("time", ())),
        ("time != TIMESTAMP '1970-01-01 00:00:00.0015'", "ms", Not(In("time", ()))),
        # raw ns are shown floored to µs: one µs covers a thousand raw values
        (
            "time = TIMESTAMP '1970-01-01 00:00:00.000001'",
            "ns",
            And((Compare("time", ">=", 1_000), Compare("time", "<=", 1_999))),
        ),
        ("time > TIMESTAMP '1970-01-01 00:00:00.000001'", "ns", Compare("time", ">", 1_999)),
        ("time < TIMESTAMP '1970-01-01 00:00:00.000001'", "ns", Compare("time", "<", 1_000)),
    ],
)
def test_timestamps_compare_at_spark_precision(text: str, unit: TimeUnit, expected: Expr) -> None:
    assert bound_timestamps(text, unit) == expected


def test_integers_against_decimals_and_out_of_range_literals() -> None:
    assert bound_text("time > 1.5") == Compare("time", ">", 1)
    assert bound_text("time >= 1.5") == Compare("time", ">=", 2)
    assert bound_text("time = 1.5") == In("time", ())
    assert bound_text("time = 2.0") == Compare("time", "=", 2)
    assert bound_text("level < 3000000000") == Not(In("level", ()))
    assert bound_text("level = 3000000000") == In("level", ())
    assert bound_text("level > -3000000000.5") == Not(In("level", ()))
    assert bound_text("level = '7'") == Compare("level", "=", 7)
    assert bound_text("level > 1e0") == Compare("level", ">", 1.0, as_double=True)
    assert bound_text("level IN (1, 2.5e0)") == In("level", (1.0, 2.5), as_double=True)
    assert bound_text("level IN (1, 2.5, 3)") == In("level", (1, 3))


def test_floats_compare_as_doubles() -> None:
    assert bound_text("ratio = 1.1") == Compare("ratio", "=", 1.1, as_double=True)
    bound = bound_text("ratio > CAST('NaN' AS DOUBLE)")
    assert isinstance(bound, Compare) and bound.as_double and bound.value != bound.value
    assert bound_text("temp <= 'Infinity'") == Compare("temp", "<=", float("inf"), as_double=True)


def test_dates_against_timestamps_compare_the_first_instant_of_the_day() -> None:
    # DATE '2024-01-01' is 2024-01-01T00:00 in the session zone, earlier than noon.
    assert bound_text("day < TIMESTAMP '2024-01-01 12:00:00'") == Compare(
        "day", "<", dt.date(2024, 1, 2)
    )
    assert bound_text("day = TIMESTAMP '2024-01-01 12:00:00'") == In("day", ())
    assert bound_text("day = TIMESTAMP '2024-01-01 00:00:00'") == Compare(
        "day", "=", dt.date(2024, 1, 1)
    )
    # 2024-01-01 00:00 UTC is still 2023-12-31 in Los Angeles.
    assert bound_text(
        "day >= TIMESTAMP '2024-01-01 00:00:00+00:00'", zone="America/Los_Angeles"
    ) == Compare("day", ">=", dt.date(2024, 1, 1))
    assert bound_timestamps("seen >= DATE '1970-01-02'") == Compare("seen", ">=", 86_400_000)


def test_without_the_time_zone_a_comparison_only_prunes() -> None:
    bound = bound_timestamps("time > TIMESTAMP '2024-01-01 00:00:00'", zone=None)
    assert isinstance(bound, Approx)
    assert needs_time_zone(And((Compare("city", "=", "a"), bound)))
    pushed = split_pushdown(bound, SCHEMA)
    utc = 1_704_067_200_000
    assert pushed.time_min == utc - 2 * 86_400_000 + 1  # loose: within two days of UTC
    assert pushed.residual == bound
    # an offset-carrying literal needs no zone
    assert not needs_time_zone(
        bound_timestamps("time > TIMESTAMP '2024-01-01 00:00:00Z'", zone=None)
    )


def test_structure_is_preserved() -> None:
    assert bound_text("NOT (city = 'a' OR temp IS NOT NULL)") == Not(
        Or((Compare("city", "=", "a"), IsNull("temp", negated=True)))
    )
    assert bound_text("device IN ('x')") == In("device", ("x",))
    assert isinstance(bound_text("time > 1 AND temp < 2"), And)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nope = 1", "unknown column 'nope'.*time, city, device"),
        ("temp = 'x'", "'temp' compared with 'x'"),
        ("city = 1", "'city' cannot be compared with a number"),
        ("ok = 1", "compare it with true or false"),
        ("day = 5", "DATE"),
        ("time > TIMESTAMP '2024-01-01'", "timestampAs=long it is a bigint of raw ms"),
        ("time > '2024-01-01'", "is not a bigint"),
        ("level IN (1, 'a')", "mixes a number and a string"),
        ("temp > 1.5F", "unsupported literal"),
        ("temp > 1e400", "overflows"),
        ("temp > 1234567890123456789012345678901234567890", "more than 38 digits"),
        ("day = '20240101'", "not a date"),
        ("abs(temp) > 1", "compare a column with a literal"),
        ("temp > day", "compare a column with a literal"),
        ("time >", "cannot parse"),
        ("time = NULL", "IS NULL"),
        (
            "city IN ('a', NULL)",
            r"the NULL in .* matches no row .* write city IN \('a'\), and add OR city IS NULL",
        ),
        ("city IN (NULL)", "matches no row .*: write city IS NULL to select rows whose"),
        (
            "city NOT IN ('a', NULL)",
            r"city NOT IN \('a', NULL\)\" is never true.*write city NOT IN \('a'\)",
        ),
        ("NOT (temp IN (NULL, 1.5))", r"never true.*write temp NOT IN \(1.5\)"),
        ("time > 'yesterday'", "not a bigint"),
        ("city = 'abc", "cannot parse"),
        ("city LIKE 'a%'", "unsupported predicate"),
        ("", "empty"),
    ],
)
def test_bad_predicates_fail_with_the_offending_text(text: str, message: str) -> None:
    with pytest.raises(PredicateError, match=message):
        bound_text(text)
