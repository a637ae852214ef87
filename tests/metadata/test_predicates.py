"""Predicate parsing (sqlglot), binding to a schema and the pushdown split (pure)."""

from __future__ import annotations

import datetime as dt
import pickle

import pytest

from tsfile_catalog.exceptions import PredicateError
from tsfile_catalog.metadata.expressions import (
    INT64_MAX,
    INT64_MIN,
    And,
    Approx,
    BindContext,
    Compare,
    Expr,
    In,
    IsNull,
    Not,
    Or,
    TimestampAs,
    TimeUnit,
    bind,
    needs_time_zone,
    split_pushdown,
)
from tsfile_catalog.metadata.predicate_sql import parse_predicate
from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema

SCHEMA = TableSchema.of(
    "weather",
    [
        Column("city", DataType.STRING, Category.TAG),
        Column("device", DataType.STRING, Category.TAG),
        Column("temp", DataType.DOUBLE, Category.FIELD),
        Column("day", DataType.DATE, Category.FIELD),
        Column("seen", DataType.TIMESTAMP, Category.FIELD),
        Column("ok", DataType.BOOLEAN, Category.FIELD),
        Column("level", DataType.INT32, Category.FIELD),
        Column("ratio", DataType.FLOAT, Category.FIELD),
    ],
)


def _bound(
    text: str, unit: TimeUnit = "ms", timestamp_as: TimestampAs = "long", zone: str | None = "UTC"
) -> Expr:
    return bind(parse_predicate(text), SCHEMA, BindContext(unit, timestamp_as, zone))


def _ts(text: str, unit: TimeUnit = "ms", zone: str | None = "UTC") -> Expr:
    return _bound(text, unit, "timestamp", zone)


def test_time_and_tag_conjuncts_are_pushed_exactly() -> None:
    pushed = split_pushdown(
        _bound("time >= 10 AND time < 20 AND City = 'bj' AND device IN ('a', 'b') AND temp > 1"),
        SCHEMA,
    )
    assert (pushed.time_min, pushed.time_max) == (10, 19)
    assert pushed.tag_dict() == {"city": frozenset({"bj"}), "device": frozenset({"a", "b"})}
    assert pushed.residual == Compare("temp", ">", 1.0, as_double=True)


def test_between_equality_and_flipped_comparisons() -> None:
    assert split_pushdown(_bound("time BETWEEN 3 AND 7"), SCHEMA).time_min == 3
    assert split_pushdown(_bound("time BETWEEN 3 AND 7"), SCHEMA).time_max == 7
    pushed = split_pushdown(_bound("5 < time AND time = 9"), SCHEMA)
    assert (pushed.time_min, pushed.time_max, pushed.residual) == (9, 9, None)


@pytest.mark.parametrize(
    "text",
    [
        "time = 1 OR city = 'a'",
        "NOT (city = 'a')",
        "city != 'a'",
        "city > 'a'",
        "city IS NULL",
        "time != 4",
        "temp = 1.5",
    ],
)
def test_everything_else_stays_residual(text: str) -> None:
    pushed = split_pushdown(_bound(text), SCHEMA)
    assert (pushed.time_min, pushed.time_max, pushed.tag_values) == (INT64_MIN, INT64_MAX, ())
    assert pushed.residual is not None


def test_contradictions_make_the_pushdown_empty() -> None:
    assert split_pushdown(_bound("city = 'a' AND city = 'b'"), SCHEMA).empty
    assert split_pushdown(_bound("time > 5 AND time < 3"), SCHEMA).empty
    assert not split_pushdown(_bound("city IN ('a', 'b') AND city = 'b'"), SCHEMA).empty


def test_literals_are_bound_to_the_raw_domain() -> None:
    assert _ts("time >= TIMESTAMP '2024-01-01 00:00:00'") == Compare(
        "time", ">=", 1_704_067_200_000
    )
    assert _ts("time >= '2024-01-01 00:00:00Z'", "us") == Compare(
        "time", ">=", 1_704_067_200_000_000
    )
    assert _ts("seen < '1970-01-01T00:00:01'", "ns") == Compare("seen", "<", 1_000_000_000)
    assert _bound("day = DATE '2024-02-03'") == Compare("day", "=", dt.date(2024, 2, 3))
    assert _bound("day = '2024-02-03'") == Compare("day", "=", dt.date(2024, 2, 3))
    assert _bound("temp > -2") == Compare("temp", ">", -2.0, as_double=True)
    assert _bound("ok = true") == Compare("ok", "=", True)


def test_timestamp_literals_use_the_session_time_zone() -> None:
    # 2024-01-01 00:00 in Kolkata (+05:30) is 2023-12-31 18:30 UTC.
    kolkata = 1_704_047_400_000
    assert _ts("time >= TIMESTAMP '2024-01-01 00:00:00'", zone="Asia/Kolkata") == Compare(
        "time", ">=", kolkata
    )
    assert _ts("time >= '2024-01-01'", zone="Asia/Kolkata") == Compare("time", ">=", kolkata)
    # An explicit offset wins over the session's.
    assert _ts("time >= '2024-01-01 00:00:00+00:00'", zone="Asia/Kolkata") == Compare(
        "time", ">=", 1_704_067_200_000
    )
    # Skipped by DST in Los Angeles: moves forward by the gap, as Spark does (03:30 PDT).
    assert _ts("time = TIMESTAMP '2024-03-10 02:30:00'", zone="America/Los_Angeles") == Compare(
        "time", "=", 1_710_066_600_000
    )


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
    assert _ts(text, unit) == expected


def test_integers_against_decimals_and_out_of_range_literals() -> None:
    assert _bound("time > 1.5") == Compare("time", ">", 1)
    assert _bound("time >= 1.5") == Compare("time", ">=", 2)
    assert _bound("time = 1.5") == In("time", ())
    assert _bound("time = 2.0") == Compare("time", "=", 2)
    assert _bound("level < 3000000000") == Not(In("level", ()))
    assert _bound("level = 3000000000") == In("level", ())
    assert _bound("level > -3000000000.5") == Not(In("level", ()))
    assert _bound("level = '7'") == Compare("level", "=", 7)
    assert _bound("level > 1e0") == Compare("level", ">", 1.0, as_double=True)
    assert _bound("level IN (1, 2.5e0)") == In("level", (1.0, 2.5), as_double=True)
    assert _bound("level IN (1, 2.5, 3)") == In("level", (1, 3))


def test_floats_compare_as_doubles() -> None:
    assert _bound("ratio = 1.1") == Compare("ratio", "=", 1.1, as_double=True)
    bound = _bound("ratio > CAST('NaN' AS DOUBLE)")
    assert isinstance(bound, Compare) and bound.as_double and bound.value != bound.value
    assert _bound("temp <= 'Infinity'") == Compare("temp", "<=", float("inf"), as_double=True)


def test_dates_against_timestamps_compare_the_first_instant_of_the_day() -> None:
    # DATE '2024-01-01' is 2024-01-01T00:00 in the session zone, earlier than noon.
    assert _bound("day < TIMESTAMP '2024-01-01 12:00:00'") == Compare(
        "day", "<", dt.date(2024, 1, 2)
    )
    assert _bound("day = TIMESTAMP '2024-01-01 12:00:00'") == In("day", ())
    assert _bound("day = TIMESTAMP '2024-01-01 00:00:00'") == Compare(
        "day", "=", dt.date(2024, 1, 1)
    )
    # 2024-01-01 00:00 UTC is still 2023-12-31 in Los Angeles.
    assert _bound(
        "day >= TIMESTAMP '2024-01-01 00:00:00+00:00'", zone="America/Los_Angeles"
    ) == Compare("day", ">=", dt.date(2024, 1, 1))
    assert _ts("seen >= DATE '1970-01-02'") == Compare("seen", ">=", 86_400_000)


def test_without_the_time_zone_a_comparison_only_prunes() -> None:
    bound = _ts("time > TIMESTAMP '2024-01-01 00:00:00'", zone=None)
    assert isinstance(bound, Approx)
    assert needs_time_zone(And((Compare("city", "=", "a"), bound)))
    pushed = split_pushdown(bound, SCHEMA)
    utc = 1_704_067_200_000
    assert pushed.time_min == utc - 2 * 86_400_000 + 1  # loose: within two days of UTC
    assert pushed.residual == bound
    # an offset-carrying literal needs no zone
    assert not needs_time_zone(_ts("time > TIMESTAMP '2024-01-01 00:00:00Z'", zone=None))


def test_structure_is_preserved() -> None:
    assert _bound("NOT (city = 'a' OR temp IS NOT NULL)") == Not(
        Or((Compare("city", "=", "a"), IsNull("temp", negated=True)))
    )
    assert _bound("device IN ('x')") == In("device", ("x",))
    assert isinstance(_bound("time > 1 AND temp < 2"), And)


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
        _bound(text)


@pytest.mark.parametrize(
    "text",
    [
        "city = 'abc",  # sqlglot's TokenError
        "(" * 5_000 + "time = 1" + ")" * 5_000,  # RecursionError in sqlglot's parser
        "NOT " * 5_000 + "time = 1",
        " AND ".join(f"(time = {i} OR" for i in range(200)) + " time = 1" + ")" * 200,
    ],
)
def test_hostile_predicates_raise_predicate_error(text: str) -> None:
    with pytest.raises(PredicateError):
        _bound(text)


def test_a_long_flat_or_is_accepted() -> None:
    text = " OR ".join(f"time = {i}" for i in range(5_000))
    bound = _bound(text)
    assert isinstance(bound, Or) and len(bound.terms) == 5_000
    assert pickle.loads(pickle.dumps(bound)) == bound  # travels to executors


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("time >", "unexpected end of input after '>' at line 1, column 6"),
        ("temp = = 1", "syntax error at or near '=' at line 1, column 8"),
        ("time > 5 AND", "unexpected end of input after 'AND' at line 1, column 10"),
        ("(time = 1", "expected ')'"),
        ("city = 'abc", "unclosed string literal starting at line 1, column 8"),
        ("time > 5 5", "syntax error at or near '5' at line 1, column 10"),
    ],
)
def test_predicate_syntax_errors_read_like_spark_not_sqlglot(text: str, expected: str) -> None:
    # The where option, `--where` of the CLI and Table.scan() all surface these messages.
    with pytest.raises(PredicateError) as caught:
        _bound(text)
    message = str(caught.value)
    assert expected in message
    assert "sqlglot" not in message and "<class" not in message
    assert "Required keyword" not in message
