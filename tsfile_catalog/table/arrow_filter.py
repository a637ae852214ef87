"""Evaluate a bound predicate on Arrow data (the residual the TsFile query cannot apply).

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

from collections.abc import Mapping

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

__all__ = ["to_arrow_expression", "apply_filter"]

_NULL = pa.scalar(None, pa.bool_())


def _null_where_null(field: pc.Expression, result: pc.Expression) -> pc.Expression:
    return pc.Expression._call("if_else", [field.is_null(), _NULL, result])


def _compare(left: pc.Expression, op: CompareOp, right: pc.Expression | pa.Scalar) -> pc.Expression:
    if op == "=":
        return left == right
    if op == "!=":
        return left != right
    if op == "<":
        return left < right
    if op == "<=":
        return left <= right
    if op == ">":
        return left > right
    return left >= right


def _double_compare(field: pc.Expression, op: CompareOp, value: float) -> pc.Expression:
    """``field op value`` in Spark's total order on doubles; null stays null."""
    number = field.cast(pa.float64(), safe=False)
    is_nan = number.is_nan()
    if value != value:  # against NaN: every number is below it, NaN equals it
        if op in ("=", ">="):
            return is_nan
        if op in ("!=", "<"):
            return ~is_nan
        if op == "<=":
            return is_nan | ~is_nan  # true, but null for null
        return is_nan & ~is_nan  # false, but null for null
    plain = _compare(number, op, pa.scalar(value, pa.float64()))
    return (plain | is_nan) if op in (">", ">=") else plain


def _balanced(terms: list[pc.Expression], conjunction: bool) -> pc.Expression:
    """Combine as a balanced tree: a 5,000-term OR stays shallow for Arrow's binder."""
    while len(terms) > 1:
        paired = []
        for i in range(0, len(terms) - 1, 2):
            a, b = terms[i], terms[i + 1]
            paired.append((a & b) if conjunction else (a | b))
        if len(terms) % 2:
            paired.append(terms[-1])
        terms = paired
    return terms[0]


def to_arrow_expression(expr: Expr, types: Mapping[str, pa.DataType]) -> pc.Expression:
    if isinstance(expr, Compare):
        field = pc.field(expr.column)
        if expr.as_double:
            return _double_compare(field, expr.op, float(expr.value))  # type: ignore[arg-type]
        return _compare(field, expr.op, pa.scalar(expr.value, types[expr.column]))
    if isinstance(expr, In):
        field = pc.field(expr.column)
        if expr.as_double:
            if not expr.values:
                return _null_where_null(field, pc.scalar(False))
            return _balanced(
                [_double_compare(field, "=", float(v)) for v in expr.values],  # type: ignore[arg-type]
                conjunction=False,
            )
        values = pa.array(list(expr.values), type=types[expr.column])
        return _null_where_null(field, field.isin(values))
    if isinstance(expr, IsNull):
        field = pc.field(expr.column)
        return field.is_valid() if expr.negated else field.is_null()
    if isinstance(expr, Not):
        return ~to_arrow_expression(expr.term, types)
    if isinstance(expr, Approx):
        raise PredicateError(
            f"'{expr.text}' needs the session time zone, which this scan does not know: set "
            "spark.sql.session.timeZone or the 'timeZone' read option"
        )
    terms = [to_arrow_expression(t, types) for t in expr.terms]
    return _balanced(terms, conjunction=isinstance(expr, And))


def apply_filter(table: pa.Table, expr: Expr | None) -> pa.Table:
    if expr is None or table.num_rows == 0:
        return table
    types = {f.name: f.type for f in table.schema}
    return table.filter(to_arrow_expression(expr, types))
