"""The Arrow residual filter on doubles against Spark's total order, value by value (no Spark).

Spark orders NaN above every number and equal to itself, and -0.0 equal to 0.0; a comparison
with NULL is NULL. Equality with Spark itself on real parts is the differential test's job
(tests/datasource/test_filter_semantics.py); this pins every operator on the values that
decide it, for DOUBLE, FLOAT and integer columns read as doubles.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from tsfile_catalog.exec.arrow_filter import predicate_mask
from tsfile_catalog.metadata.expressions import Compare, CompareOp

_OPS: dict[CompareOp, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_VALUES = [None, math.nan, math.inf, -math.inf, -0.0, 0.0, 1.5, 29.0, 30.0, -7.0]
_LITERALS = [math.nan, 29.0, 0.0, -0.0, math.inf, -math.inf]


def _key(value: float) -> tuple[int, float]:
    return (1, 0.0) if math.isnan(value) else (0, value + 0.0)


def _spark(value: float | None, op: CompareOp, literal: float) -> bool | None:
    return None if value is None else _OPS[op](_key(value), _key(literal))


@pytest.mark.parametrize("arrow_type", [pa.float64(), pa.float32()])
@pytest.mark.parametrize("op", list(_OPS))
def test_double_comparisons_follow_sparks_order(arrow_type: pa.DataType, op: CompareOp) -> None:
    table = pa.table({"v": pa.array(_VALUES, arrow_type)})
    for literal in _LITERALS:
        mask = predicate_mask(table, Compare("v", op, literal, as_double=True)).to_pylist()
        assert mask == [_spark(v, op, literal) for v in _VALUES], (op, literal)


@pytest.mark.parametrize("op", list(_OPS))
def test_integers_compared_as_doubles(op: CompareOp) -> None:
    values = [None, -3, 0, 29, 30, 2**53 + 1]
    table = pa.table({"n": pa.array(values, pa.int64())})
    for literal in (29.5, 29.0, math.nan, -math.inf):
        mask = predicate_mask(table, Compare("n", op, literal, as_double=True)).to_pylist()
        expected = [None if v is None else _spark(float(v), op, literal) for v in values]
        assert mask == expected, (op, literal)
