"""Row predicates as immutable data: comparisons, IN lists, null tests and their logic.

The expression model every consumer shares (part pruning, the TsFile pushdown, the residual
Arrow filter). Unbound, a comparison holds a literal as Spark types it; bound
(:mod:`~tsfile_catalog.metadata.expressions.bind`), it holds a value in the column's raw
TsFile domain.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal, TypeAlias

__all__ = [
    "Scalar",
    "CompareOp",
    "Compare",
    "In",
    "IsNull",
    "And",
    "Or",
    "Not",
    "Approx",
    "Expr",
    "TimeUnit",
    "TimestampAs",
    "INT64_MIN",
    "INT64_MAX",
    "INT32_MIN",
    "INT32_MAX",
    "conjuncts",
    "conjunction",
    "columns_of",
    "needs_time_zone",
]

# A datetime is a date too: naive = wall-clock time in the session time zone.
Scalar: TypeAlias = bool | int | float | Decimal | str | bytes | dt.date


CompareOp = Literal["=", "!=", "<", "<=", ">", ">="]


TimeUnit = Literal["ms", "us", "ns"]


TimestampAs = Literal["long", "timestamp"]


_FLIPPED: dict[CompareOp, CompareOp] = {
    "=": "=",
    "!=": "!=",
    "<": ">",
    "<=": ">=",
    ">": "<",
    ">=": "<=",
}


INT64_MIN = -(2**63)


INT64_MAX = 2**63 - 1


INT32_MIN = -(2**31)


INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class Compare:
    """``column op value``. Bound: ``value`` is in the column's raw domain and range, or a
    float when ``as_double`` (the column's value is compared as a double, NaN-aware)."""

    column: str
    op: CompareOp
    value: Scalar
    as_double: bool = False

    def flipped(self) -> Compare:
        """``value op column`` rewritten as ``column op' value``."""
        return Compare(self.column, _FLIPPED[self.op], self.value, self.as_double)


@dataclass(frozen=True, slots=True)
class In:
    """``column IN (values)``; an empty list is false for every non-null value (and null for
    a null one, like every comparison)."""

    column: str
    values: tuple[Scalar, ...]
    as_double: bool = False


@dataclass(frozen=True, slots=True)
class IsNull:
    column: str
    negated: bool = False


@dataclass(frozen=True, slots=True)
class And:
    terms: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Or:
    terms: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Not:
    term: Expr


@dataclass(frozen=True, slots=True)
class Approx:
    """A comparison on ``column`` whose exact meaning needs the session time zone, bound
    while it is unknown: ``loose`` holds for every row the comparison may hold for, ``tight``
    only for rows it certainly holds for (None: no usable bound). Prunes; never filters rows.
    """

    column: str
    loose: Expr | None
    tight: Expr | None
    text: str


Expr: TypeAlias = Compare | In | IsNull | And | Or | Not | Approx


def conjuncts(expr: Expr | None) -> Iterator[Expr]:
    """The top-level AND terms of ``expr`` (nested ANDs flattened)."""
    if expr is None:
        return
    if isinstance(expr, And):
        for term in expr.terms:
            yield from conjuncts(term)
    else:
        yield expr


def conjunction(terms: Iterable[Expr]) -> Expr | None:
    items = tuple(terms)
    if not items:
        return None
    return items[0] if len(items) == 1 else And(items)


def columns_of(expr: Expr | None) -> set[str]:
    if expr is None:
        return set()
    if isinstance(expr, (Compare, In, IsNull, Approx)):
        return {expr.column}
    if isinstance(expr, Not):
        return columns_of(expr.term)
    out: set[str] = set()
    for term in expr.terms:
        out |= columns_of(term)
    return out


def needs_time_zone(expr: Expr | None) -> bool:
    """Whether ``expr`` was bound without the session time zone it needs (holds an
    :class:`Approx`), so it can prune but not filter rows."""
    if expr is None or isinstance(expr, (Compare, In, IsNull)):
        return False
    if isinstance(expr, Approx):
        return True
    if isinstance(expr, Not):
        return needs_time_zone(expr.term)
    return any(needs_time_zone(t) for t in expr.terms)
