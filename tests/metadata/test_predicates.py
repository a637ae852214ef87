"""Predicate parsing (sqlglot), binding to a schema and the pushdown split (pure)."""

from __future__ import annotations

import datetime as dt

import pytest

from tsfile_catalog.exceptions import PredicateError
from tsfile_catalog.metadata.expressions import (
    INT64_MAX,
    INT64_MIN,
    And,
    Compare,
    In,
    IsNull,
    Not,
    Or,
    bind,
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
    ],
)


def _bound(text: str, unit: str = "ms") -> object:
    return bind(parse_predicate(text), SCHEMA, unit)  # type: ignore[arg-type]


def test_time_and_tag_conjuncts_are_pushed_exactly() -> None:
    pushed = split_pushdown(
        _bound("time >= 10 AND time < 20 AND City = 'bj' AND device IN ('a', 'b') AND temp > 1"),
        SCHEMA,
    )
    assert (pushed.time_min, pushed.time_max) == (10, 19)
    assert pushed.tag_dict() == {"city": frozenset({"bj"}), "device": frozenset({"a", "b"})}
    assert pushed.residual == Compare("temp", ">", 1)


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
    assert _bound("time >= TIMESTAMP '2024-01-01 00:00:00'") == Compare(
        "time", ">=", 1_704_067_200_000
    )
    assert _bound("time >= '2024-01-01T00:00:00Z'", "us") == Compare(
        "time", ">=", 1_704_067_200_000_000
    )
    assert _bound("seen < '1970-01-01T00:00:01'", "ns") == Compare("seen", "<", 1_000_000_000)
    assert _bound("day = DATE '2024-02-03'") == Compare("day", "=", dt.date(2024, 2, 3))
    assert _bound("day = '2024-02-03'") == Compare("day", "=", dt.date(2024, 2, 3))
    assert _bound("temp > -2") == Compare("temp", ">", -2)
    assert _bound("ok = true") == Compare("ok", "=", True)


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
        ("temp = 'x'", "'temp' is DOUBLE"),
        ("city = 1", "'city' is a string"),
        ("abs(temp) > 1", "compare a column with a literal"),
        ("temp > day", "compare a column with a literal"),
        ("time >", "cannot parse"),
        ("time = NULL", "IS NULL"),
        ("time > 'yesterday'", "ISO-8601"),
        ("city LIKE 'a%'", "unsupported predicate"),
        ("", "empty"),
    ],
)
def test_bad_predicates_fail_with_the_offending_text(text: str, message: str) -> None:
    with pytest.raises(PredicateError, match=message):
        _bound(text)
