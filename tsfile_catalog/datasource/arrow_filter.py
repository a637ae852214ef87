"""Evaluate a bound predicate on Arrow data (the residual the TsFile query cannot apply).

Literals are in the raw domain (see ``metadata.expressions``), so this runs on normalized
batches. Arrow's Kleene logic gives SQL's three-valued semantics: a row is kept only when the
predicate is true, never when it is null.
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
import pyarrow.compute as pc

from tsfile_catalog.metadata.expressions import And, Compare, Expr, In, IsNull, Not, Or, Scalar

__all__ = ["to_arrow_expression", "apply_filter"]


def _scalar(value: Scalar, type_: pa.DataType) -> pa.Scalar:
    if pa.types.is_integer(type_) and isinstance(value, float):
        return pa.scalar(value, pa.float64())
    return pa.scalar(value, type_)


def to_arrow_expression(expr: Expr, types: Mapping[str, pa.DataType]) -> pc.Expression:
    if isinstance(expr, Compare):
        left = pc.field(expr.column)
        right = _scalar(expr.value, types[expr.column])
        ops = {
            "=": left == right,
            "!=": left != right,
            "<": left < right,
            "<=": left <= right,
            ">": left > right,
            ">=": left >= right,
        }
        return ops[expr.op]
    if isinstance(expr, In):
        type_ = types[expr.column]
        if pa.types.is_integer(type_) and any(isinstance(v, float) for v in expr.values):
            type_ = pa.float64()
        return pc.field(expr.column).isin(pa.array(list(expr.values), type=type_))
    if isinstance(expr, IsNull):
        field = pc.field(expr.column)
        return field.is_valid() if expr.negated else field.is_null()
    if isinstance(expr, Not):
        return ~to_arrow_expression(expr.term, types)
    terms = [to_arrow_expression(t, types) for t in expr.terms]
    out = terms[0]
    for term in terms[1:]:
        out = (out & term) if isinstance(expr, And) else (out | term)
    assert isinstance(expr, (And, Or))
    return out


def apply_filter(table: pa.Table, expr: Expr | None) -> pa.Table:
    if expr is None or table.num_rows == 0:
        return table
    types = {f.name: f.type for f in table.schema}
    return table.filter(to_arrow_expression(expr, types))
