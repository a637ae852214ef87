"""Evaluate a bound predicate on Arrow data (the residual the TsFile query cannot apply).

Evaluated eagerly with ``pyarrow.compute`` kernels into a three-valued boolean mask: a
``Table.filter`` with a compute *expression* builds and runs an Acero plan per call, which
costs about three times the kernels themselves on a 64k-row batch.

Literals are in the raw domain (see ``metadata.expressions``), so this runs on normalized
batches, with Spark's semantics:

* SQL's three-valued logic: a comparison with a null is null, AND/OR are Kleene, NOT of null
  is null, and a row is kept only when the predicate is true. Arrow's ``is_in`` says false for
  a null, so every IN (and the constants an out-of-range literal binds to) is made null there
  explicitly; otherwise ``NOT (x IN (…))`` would keep the null rows Spark drops.
* ``as_double`` comparisons read the column as a double and order NaN above every number,
  equal to itself (IEEE comparisons say false for every NaN). Integers are converted as
  Spark converts them (round to nearest), and IN lists compare value by value because hash
  lookups would tell -0.0 from 0.0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from tsfile_catalog.exceptions import PredicateError
from tsfile_catalog.metadata.expressions import (
    And,
    Approx,
    Compare,
    CompareOp,
    Expr,
    In,
    IsNull,
    Not,
)

__all__ = ["predicate_mask", "apply_filter"]

Column: TypeAlias = pa.Array | pa.ChunkedArray
_NULL = pa.scalar(None, pa.bool_())
_KERNELS: dict[CompareOp, Callable[..., Column]] = {
    "=": pc.equal,
    "!=": pc.not_equal,
    "<": pc.less,
    "<=": pc.less_equal,
    ">": pc.greater,
    ">=": pc.greater_equal,
}


def _null_where_null(column: Column, result: Column | pa.Scalar) -> Column:
    return pc.if_else(pc.is_null(column), _NULL, result)


def _double_compare(column: Column, op: CompareOp, value: float) -> Column:
    """``column op value`` in Spark's total order on doubles; null stays null."""
    number = column if column.type == pa.float64() else pc.cast(column, pa.float64(), safe=False)
    if value != value:  # against NaN: every number is below it, NaN equals it
        is_nan = pc.is_nan(number)
        if op in ("=", ">="):
            return is_nan
        if op in ("!=", "<"):
            return pc.invert(is_nan)
        if op == "<=":
            return _null_where_null(number, pa.scalar(True))
        return _null_where_null(number, pa.scalar(False))
    literal = pa.scalar(value, pa.float64())
    if op in (">", ">="):
        # NaN is above every number: ``x > v`` is ``NOT (x <= v)``, whose IEEE comparison is
        # false for NaN (one kernel pass fewer than ``x > v OR isnan(x)``; null stays null).
        return pc.invert(_KERNELS["<=" if op == ">" else "<"](number, literal))
    # Below, equal or unequal to a number, NaN compares as IEEE says.
    return _KERNELS[op](number, literal)


def _combine(terms: list[Column], conjunction: bool) -> Column:
    kernel = pc.and_kleene if conjunction else pc.or_kleene
    result = terms[0]
    for term in terms[1:]:
        result = kernel(result, term)
    return result


def predicate_mask(table: pa.Table, expr: Expr) -> Column:
    """Where the bound ``expr`` is TRUE, FALSE or NULL (SQL's three values) on ``table``."""
    if isinstance(expr, Compare):
        column = table.column(expr.column)
        if expr.as_double:
            return _double_compare(column, expr.op, float(expr.value))  # type: ignore[arg-type]
        return _KERNELS[expr.op](column, pa.scalar(expr.value, column.type))
    if isinstance(expr, In):
        column = table.column(expr.column)
        if expr.as_double:
            if not expr.values:
                return _null_where_null(column, pa.scalar(False))
            return _combine(
                [_double_compare(column, "=", float(v)) for v in expr.values],  # type: ignore[arg-type]
                conjunction=False,
            )
        values = pa.array(list(expr.values), type=column.type)
        return _null_where_null(column, pc.is_in(column, value_set=values))
    if isinstance(expr, IsNull):
        column = table.column(expr.column)
        return pc.is_valid(column) if expr.negated else pc.is_null(column)
    if isinstance(expr, Not):
        return pc.invert(predicate_mask(table, expr.term))
    if isinstance(expr, Approx):
        raise PredicateError(
            f"'{expr.text}' needs the session time zone, which this scan does not know: set "
            "spark.sql.session.timeZone or the 'timeZone' read option"
        )
    terms = [predicate_mask(table, t) for t in expr.terms]
    return _combine(terms, conjunction=isinstance(expr, And))


def apply_filter(table: pa.Table, expr: Expr | None) -> pa.Table:
    """The rows of ``table`` where ``expr`` is TRUE (NULL drops a row, as in Spark)."""
    if expr is None or table.num_rows == 0:
        return table
    return table.filter(predicate_mask(table, expr))
