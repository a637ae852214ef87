"""Predicate text parsed with sqlglot: hostile input, long inputs, Spark-like errors."""

from __future__ import annotations

import pickle

import pytest

from tests.metadata.expressions.helpers import bound_text
from tsfile_catalog.exceptions import PredicateError
from tsfile_catalog.metadata.expressions import Or


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
        bound_text(text)


def test_a_long_flat_or_is_accepted() -> None:
    text = " OR ".join(f"time = {i}" for i in range(5_000))
    bound = bound_text(text)
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
        bound_text(text)
    message = str(caught.value)
    assert expected in message
    assert "sqlglot" not in message and "<class" not in message
    assert "Required keyword" not in message
