"""Parse a SQL boolean predicate (Spark dialect) into the expression model.

Used by the ``where`` read option and ``Table.plan(where=...)``. Only column-vs-literal
predicates combined with AND/OR/NOT are accepted; anything else (functions, arithmetic,
column-vs-column) is refused with the offending text, because guessing would change results.

Literals keep the type Spark gives them: ``5`` and ``5L`` are integers, ``1.5`` and ``1.5BD``
decimals (:class:`~decimal.Decimal`), ``1.5e0``/``1.5D`` and ``CAST('NaN' AS DOUBLE)`` doubles,
``TIMESTAMP '…'`` a datetime (naive unless the text carries an offset), ``DATE '…'`` a date.
:func:`~tsfile_catalog.metadata.expressions.bind.bind` compares them with Spark's coercion rules.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

import sqlglot
from sqlglot import expressions as exp
from sqlglot.errors import ParseError, SqlglotError, TokenError

from tsfile_catalog.exceptions import PredicateError
from tsfile_catalog.metadata.expressions.model import (
    And,
    Compare,
    CompareOp,
    Expr,
    In,
    IsNull,
    Not,
    Or,
    Scalar,
)
from tsfile_catalog.metadata.spark import literals
from tsfile_catalog.metadata.spark.dialect import SparkDialect
from tsfile_catalog.metadata.spark.sql_errors import syntax_error_message, token_error_message

__all__ = ["parse_predicate", "predicate_from_sqlglot", "MAX_DEPTH"]

# Nesting beyond this is refused: a chain of one operator (a 5,000-term OR) is flattened and
# does not count, but alternating AND/OR/NOT and parentheses do, and every consumer (pruning,
# the Arrow filter, pickling to executors) walks the tree recursively.
MAX_DEPTH = 100

_OPS: dict[type[exp.Expr], CompareOp] = {
    exp.EQ: "=",
    exp.NEQ: "!=",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
}
_DT = exp.DataType.Type
_TIMESTAMP_TYPES = (_DT.TIMESTAMP, _DT.TIMESTAMPLTZ, _DT.TIMESTAMPTZ, _DT.DATETIME)
_INTEGER_BITS: dict[Any, int] = {
    _DT.BIGINT: 63,
    _DT.INT: 31,
    _DT.SMALLINT: 15,
    _DT.TINYINT: 7,
}
_MAX_DECIMAL_DIGITS = 38
_BLANKS = " \t\n\r\f\v"
_DECIMAL_TEXT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)")


def parse_predicate(text: str) -> Expr:
    """Parse ``text`` (e.g. ``"time >= 10 AND city IN ('a', 'b')"``) into an :data:`Expr`.

    Raises:
        PredicateError: the text does not parse, nests deeper than :data:`MAX_DEPTH`, or is
            not a supported predicate.
    """
    if not text or not text.strip():
        raise PredicateError("the predicate is empty")
    try:
        tree = sqlglot.parse_one(text, read=SparkDialect)
    except TokenError as e:
        raise PredicateError(
            f"cannot parse predicate {_shorten(text)!r}: {token_error_message(text, e)}"
        ) from e
    except ParseError as e:
        raise PredicateError(
            f"cannot parse predicate {_shorten(text)!r}: {syntax_error_message(text, e)}"
        ) from e
    except SqlglotError as e:
        raise PredicateError(f"cannot parse predicate {_shorten(text)!r}: {e}") from e
    except RecursionError:
        raise PredicateError(
            f"predicate {_shorten(text)!r} nests too deeply to parse (at most {MAX_DEPTH} levels)"
        ) from None
    return predicate_from_sqlglot(tree)


def _shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def _unparen(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _chain(node: exp.Expr, kind: type[exp.Expr]) -> list[exp.Expr]:
    """The operands of a chain of ``kind`` (AND or OR), flattened without recursion."""
    out: list[exp.Expr] = []
    stack = [node]
    while stack:
        current = _unparen(stack.pop())
        if isinstance(current, kind):
            stack.append(current.args["expression"])
            stack.append(current.this)
        else:
            out.append(current)
    return out


def predicate_from_sqlglot(node: exp.Expr, depth: int = 0) -> Expr:
    """Translate a sqlglot boolean expression; raises PredicateError for anything else."""
    if depth > MAX_DEPTH:
        raise PredicateError(f"the predicate nests deeper than {MAX_DEPTH} levels")
    node = _unparen(node)
    if isinstance(node, (exp.And, exp.Or)):
        terms = tuple(predicate_from_sqlglot(t, depth + 1) for t in _chain(node, type(node)))
        return And(terms) if isinstance(node, exp.And) else Or(terms)
    if isinstance(node, exp.Not):
        inner = _unparen(node.this)
        if isinstance(inner, exp.Is):
            base = predicate_from_sqlglot(inner, depth + 1)
            assert isinstance(base, IsNull)
            return IsNull(base.column, not base.negated)
        if isinstance(inner, exp.In) and _holds_null(inner):
            raise _null_in_list(inner, negated=True)
        return Not(predicate_from_sqlglot(inner, depth + 1))
    op = _OPS.get(type(node))
    if op is not None:
        left, right = node.args["this"], node.args["expression"]
        if _is_column(left) and not _is_column(right):
            return Compare(_column(left), op, _literal(right, node))
        if _is_column(right) and not _is_column(left):
            return Compare(_column(right), op, _literal(left, node)).flipped()
        raise PredicateError(
            f"unsupported comparison {_sql(node)!r}: compare a column with a literal"
        )
    if isinstance(node, exp.Between):
        column = _column(node.this, node)
        low = _literal(node.args["low"], node)
        high = _literal(node.args["high"], node)
        return And((Compare(column, ">=", low), Compare(column, "<=", high)))
    if isinstance(node, exp.In):
        if node.args.get("query") or node.args.get("unnest") or node.args.get("field"):
            raise PredicateError(f"unsupported IN {_sql(node)!r}: use a literal list")
        if _holds_null(node):
            raise _null_in_list(node, negated=False)
        return In(_column(node.this, node), tuple(_literal(v, node) for v in node.expressions))
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        return IsNull(_column(node.this, node))
    raise PredicateError(
        f"unsupported predicate {_sql(node)!r}: the where option accepts column "
        "comparisons with literals (=, !=, <, <=, >, >=, BETWEEN, IN, IS [NOT] NULL) combined "
        "with AND, OR, NOT; filter the DataFrame for anything else"
    )


def _holds_null(node: exp.In) -> bool:
    return any(isinstance(_unparen(v), exp.Null) for v in node.expressions)


def _null_in_list(node: exp.In, *, negated: bool) -> PredicateError:
    """Why a NULL in an IN list is refused, and what to write instead: a NULL compares as
    unknown with every value, so it never matches, and under NOT IN it makes every row
    unknown."""
    column = _sql(node.this)
    rest = [_sql(v) for v in node.expressions if not isinstance(_unparen(v), exp.Null)]
    listed = f"({', '.join(rest)})" if rest else None
    if negated:
        shown = f"{column} NOT IN ({', '.join(_sql(v) for v in node.expressions)})"
        instead = (
            f"write {column} NOT IN {listed} (rows whose {column} is null are left out either way)"
            if listed
            else f"write {column} IS NOT NULL"
        )
        return PredicateError(
            f"{shown!r} is never true: every value compares unknown with the NULL in the "
            f"list; {instead}"
        )
    nulls = f"{column} IS NULL to select rows whose {column} is null"
    instead = f"write {column} IN {listed}, and add OR {nulls}" if listed else f"write {nulls}"
    return PredicateError(
        f"the NULL in {_sql(node)!r} matches no row (a comparison with NULL is unknown, never "
        f"true): {instead}"
    )


def _sql(node: exp.Expr) -> str:
    try:
        return _shorten(node.sql("spark"))
    except RecursionError:
        return f"<{type(node).__name__} nested too deeply to print>"


def _is_column(node: exp.Expr) -> bool:
    return isinstance(node, exp.Column)


def _column(node: exp.Expr, context: exp.Expr | None = None) -> str:
    if isinstance(node, exp.Column) and isinstance(node.this, exp.Identifier):
        return str(node.name)
    where = _sql(context or node)
    raise PredicateError(f"expected a column name in {where!r}, got {_sql(node)!r}")


def _number(text: str, context: exp.Expr) -> int | Decimal | float:
    """A numeric literal as Spark types it: integer, decimal (has a point) or double (has an
    exponent)."""
    lowered = text.lower()
    if "e" in lowered:
        value = float(text)
        if value in (float("inf"), float("-inf")):
            raise PredicateError(f"{text} in {_sql(context)!r} overflows a double")
        return value
    if not _DECIMAL_TEXT.fullmatch(text):
        raise PredicateError(f"bad number {text!r} in {_sql(context)!r}")
    decimal = Decimal(text)
    digits = decimal.as_tuple()
    exponent = digits.exponent
    assert isinstance(exponent, int)
    scale = max(0, -exponent)
    if max(len(digits.digits) + max(0, exponent), scale) > _MAX_DECIMAL_DIGITS:
        raise PredicateError(
            f"{text} in {_sql(context)!r} has more than {_MAX_DECIMAL_DIGITS} digits"
        )
    return int(decimal) if "." not in text else decimal


def _cast(node: exp.Cast, context: exp.Expr) -> Scalar:
    """``CAST(<literal> AS <type>)`` (also Spark's typed literals and suffixes: ``TIMESTAMP
    '…'``, ``DATE '…'``, ``10L``, ``1.5D``, ``1.5BD``), where the cast is exact."""
    inner = _unparen(node.this)
    target = node.to.this
    try:
        if isinstance(inner, exp.Literal) and inner.is_string:
            value = _cast_string(str(inner.this), target, node, context)
        else:
            value = _cast_number(_literal(inner, context), target, node)
    except PredicateError as e:
        raise PredicateError(f"{_sql(node)} in {_sql(context)!r}: {e}") from None
    if value is None:
        raise PredicateError(
            f"unsupported literal {_sql(node)!r} in {_sql(context)!r}: use a number, a quoted "
            "string, true/false, DATE '…', TIMESTAMP '…' or CAST('NaN' AS DOUBLE)"
        )
    return value


def _cast_string(text: str, target: Any, node: exp.Cast, context: exp.Expr) -> Scalar | None:
    if target in _TIMESTAMP_TYPES:
        return literals.parse_timestamp(text)
    if target is _DT.DATE:
        return literals.parse_date(text)
    if target is _DT.DOUBLE:
        return literals.parse_double(text)
    if target is _DT.FLOAT:
        number = literals.parse_double(text)
        # NaN and ±Infinity are the same float and double; other values would round.
        return number if math.isnan(number) or math.isinf(number) else None
    if target in _INTEGER_BITS:
        return _in_range(literals.parse_long(text), target)
    if target is _DT.DECIMAL:
        return _exact_decimal(_number(text.strip(_BLANKS), context), node)
    return None


def _cast_number(number: Scalar, target: Any, node: exp.Cast) -> Scalar | None:
    if isinstance(number, bool) or not isinstance(number, (int, float, Decimal)):
        return None
    if target is _DT.DOUBLE:
        return float(number)
    if target in _INTEGER_BITS and isinstance(number, int):
        return _in_range(number, target)
    if target is _DT.DECIMAL:
        return _exact_decimal(number, node)
    return None


def _in_range(value: int, target: Any) -> int:
    bits = _INTEGER_BITS[target]
    if not -(2**bits) <= value < 2**bits:
        raise PredicateError(f"{value} does not fit {target.value}")
    return value


def _exact_decimal(number: int | Decimal | float, node: exp.Cast) -> Decimal:
    if isinstance(number, float):
        raise PredicateError("a double cannot be cast to DECIMAL exactly")
    value = Decimal(number)
    params = [p.this for p in node.to.expressions]
    precision = int(params[0].this) if params else 10
    scale = int(params[1].this) if len(params) > 1 else 0
    digits = value.as_tuple()
    exponent = digits.exponent
    assert isinstance(exponent, int)
    if -exponent <= scale and len(digits.digits) + exponent + scale <= precision:
        return value
    raise PredicateError(f"{value} does not fit DECIMAL({precision},{scale}) exactly")


def _literal(node: exp.Expr, context: exp.Expr) -> Scalar:
    node = _unparen(node)
    if isinstance(node, exp.Neg):
        value = _literal(node.this, context)
        if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
            return -value
        raise PredicateError(f"cannot negate {_sql(node.this)!r} in {_sql(context)!r}")
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return str(node.this)
        return _number(str(node.this), context)
    if isinstance(node, exp.Cast):  # TryCast too: sqlglot reads Spark's CAST as TRY_CAST
        return _cast(node, context)
    if isinstance(node, exp.Null):
        raise PredicateError(
            f"comparison with NULL in {_sql(context)!r} is never true; use IS NULL"
        )
    raise PredicateError(f"expected a literal in {_sql(context)!r}, got {_sql(node)!r}")
