"""Parse a SQL boolean predicate (Spark dialect) into the expression model.

Used by the ``where`` read option and ``Table.plan(where=...)``. Only column-vs-literal
predicates combined with AND/OR/NOT are accepted; anything else (functions, arithmetic,
column-vs-column) is refused with the offending text, because guessing would change results.
"""

from __future__ import annotations

import sqlglot
from sqlglot import expressions as exp
from sqlglot.errors import ParseError

from tsfile_catalog.exceptions import PredicateError
from tsfile_catalog.metadata.expressions import (
    And,
    Compare,
    CompareOp,
    Expr,
    In,
    IsNull,
    Not,
    Or,
    Scalar,
    parse_iso_date,
    parse_iso_datetime,
)
from tsfile_catalog.metadata.spark_dialect import SparkDialect

__all__ = ["parse_predicate", "predicate_from_sqlglot"]

_OPS: dict[type[exp.Expr], CompareOp] = {
    exp.EQ: "=",
    exp.NEQ: "!=",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
}


def parse_predicate(text: str) -> Expr:
    """Parse ``text`` (e.g. ``"time >= 10 AND city IN ('a', 'b')"``) into an :data:`Expr`."""
    if not text or not text.strip():
        raise PredicateError("the predicate is empty")
    try:
        tree = sqlglot.parse_one(text, read=SparkDialect)
    except ParseError as e:
        raise PredicateError(f"cannot parse predicate {text!r}: {e}") from e
    return predicate_from_sqlglot(tree)


def predicate_from_sqlglot(node: exp.Expr) -> Expr:
    """Translate a sqlglot boolean expression; raises PredicateError for anything else."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        return And((predicate_from_sqlglot(node.left), predicate_from_sqlglot(node.right)))
    if isinstance(node, exp.Or):
        return Or((predicate_from_sqlglot(node.left), predicate_from_sqlglot(node.right)))
    if isinstance(node, exp.Not):
        inner = node.this
        while isinstance(inner, exp.Paren):
            inner = inner.this
        if isinstance(inner, exp.Is):
            base = predicate_from_sqlglot(inner)
            assert isinstance(base, IsNull)
            return IsNull(base.column, not base.negated)
        return Not(predicate_from_sqlglot(inner))
    op = _OPS.get(type(node))
    if op is not None:
        left, right = node.args["this"], node.args["expression"]
        if _is_column(left) and not _is_column(right):
            return Compare(_column(left), op, _literal(right, node))
        if _is_column(right) and not _is_column(left):
            return Compare(_column(right), op, _literal(left, node)).flipped()
        raise PredicateError(f"unsupported comparison {node.sql('spark')!r}: compare a column "
                             "with a literal")
    if isinstance(node, exp.Between):
        column = _column(node.this, node)
        low = _literal(node.args["low"], node)
        high = _literal(node.args["high"], node)
        return And((Compare(column, ">=", low), Compare(column, "<=", high)))
    if isinstance(node, exp.In):
        if node.args.get("query") or node.args.get("unnest"):
            raise PredicateError(f"unsupported IN {node.sql('spark')!r}: use a literal list")
        return In(_column(node.this, node), tuple(_literal(v, node) for v in node.expressions))
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        return IsNull(_column(node.this, node))
    raise PredicateError(
        f"unsupported predicate {node.sql('spark')!r}: the where option accepts column "
        "comparisons with literals (=, !=, <, <=, >, >=, BETWEEN, IN, IS [NOT] NULL) combined "
        "with AND, OR, NOT; filter the DataFrame for anything else"
    )


def _is_column(node: exp.Expr) -> bool:
    return isinstance(node, exp.Column)


def _column(node: exp.Expr, context: exp.Expr | None = None) -> str:
    if isinstance(node, exp.Column) and isinstance(node.this, exp.Identifier):
        return str(node.name)
    where = (context or node).sql("spark")
    raise PredicateError(f"expected a column name in {where!r}, got {node.sql('spark')!r}")


def _literal(node: exp.Expr, context: exp.Expr) -> Scalar:
    if isinstance(node, exp.Paren):
        return _literal(node.this, context)
    if isinstance(node, exp.Neg):
        value = _literal(node.this, context)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return str(node.this)
        text = str(node.this)
        try:
            return int(text)
        except ValueError:
            try:
                return float(text)
            except ValueError:
                pass
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and node.this.is_string:
        text = str(node.this.this)
        target = node.to.this
        if target in (exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPNTZ,
                      exp.DataType.Type.TIMESTAMPLTZ, exp.DataType.Type.TIMESTAMPTZ,
                      exp.DataType.Type.DATETIME):
            try:
                return parse_iso_datetime(text)
            except ValueError:
                raise PredicateError(f"bad timestamp literal {text!r}") from None
        if target is exp.DataType.Type.DATE:
            try:
                return parse_iso_date(text)
            except ValueError:
                raise PredicateError(f"bad date literal {text!r}") from None
    if isinstance(node, exp.Null):
        raise PredicateError(
            f"comparison with NULL in {context.sql('spark')!r} is never true; use IS NULL"
        )
    raise PredicateError(
        f"expected a literal in {context.sql('spark')!r}, got {node.sql('spark')!r}"
    )
