"""The pushdown split: exact time ranges and TAG sets, the rest residual (pure)."""

from __future__ import annotations

import pytest

from tests.metadata.expressions.helpers import SCHEMA, bound_text
from tsfile_catalog.metadata.expressions import INT64_MAX, INT64_MIN, Compare, split_pushdown


def test_time_and_tag_conjuncts_are_pushed_exactly() -> None:
    pushed = split_pushdown(
        bound_text(
            "time >= 10 AND time < 20 AND City = 'bj' AND device IN ('a', 'b') AND temp > 1"
        ),
        SCHEMA,
    )
    assert (pushed.time_min, pushed.time_max) == (10, 19)
    assert pushed.tag_dict() == {"city": frozenset({"bj"}), "device": frozenset({"a", "b"})}
    assert pushed.residual == Compare("temp", ">", 1.0, as_double=True)


def test_between_equality_and_flipped_comparisons() -> None:
    assert split_pushdown(bound_text("time BETWEEN 3 AND 7"), SCHEMA).time_min == 3
    assert split_pushdown(bound_text("time BETWEEN 3 AND 7"), SCHEMA).time_max == 7
    pushed = split_pushdown(bound_text("5 < time AND time = 9"), SCHEMA)
    assert (pushed.time_min, pushed.time_max, pushed.residual) == (9, 9, None)


def test_an_or_of_one_tags_values_is_a_tag_set() -> None:
    pushed = split_pushdown(
        bound_text("(city = 'bj' OR city IN ('sh', 'gz') OR 'x' = city) AND city != 'gz'"), SCHEMA
    )
    assert pushed.tag_dict() == {"city": frozenset({"bj", "sh", "gz", "x"})}
    assert pushed.residual == bound_text("city != 'gz'")
    narrowed = split_pushdown(
        bound_text("(device = 'a' OR device = 'b') AND device IN ('b')"), SCHEMA
    )
    assert (narrowed.tag_dict(), narrowed.residual) == ({"device": frozenset({"b"})}, None)


@pytest.mark.parametrize(
    "text",
    [
        "time = 1 OR city = 'a'",
        "city = 'a' OR device = 'b'",
        "city = 'a' OR city > 'b'",
        "city = 'a' OR city IS NULL",
        "NOT (city = 'a')",
        "city != 'a'",
        "city > 'a'",
        "city IS NULL",
        "time != 4",
        "temp = 1.5",
    ],
)
def test_everything_else_stays_residual(text: str) -> None:
    pushed = split_pushdown(bound_text(text), SCHEMA)
    assert (pushed.time_min, pushed.time_max, pushed.tag_values) == (INT64_MIN, INT64_MAX, ())
    assert pushed.residual is not None


def test_contradictions_make_the_pushdown_empty() -> None:
    assert split_pushdown(bound_text("city = 'a' AND city = 'b'"), SCHEMA).empty
    assert split_pushdown(bound_text("time > 5 AND time < 3"), SCHEMA).empty
    assert not split_pushdown(bound_text("city IN ('a', 'b') AND city = 'b'"), SCHEMA).empty
