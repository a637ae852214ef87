"""Row predicates as immutable data, bound to a table schema.

One model serves three consumers: part pruning (stats), the TsFile query (time range and TAG
filter) and the residual filter applied to Arrow batches. Literals are bound to the *raw*
TsFile domain: ``time`` and TIMESTAMP fields as raw longs in the table's precision, DATE as
``datetime.date``; so every consumer compares like with like.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal, TypeAlias

from tsfile_catalog.exceptions import PredicateError
from tsfile_catalog.metadata.schema import TIME_COLUMN, DataType, TableSchema

__all__ = [
    "Scalar",
    "CompareOp",
    "Compare",
    "In",
    "IsNull",
    "And",
    "Or",
    "Not",
    "Expr",
    "TimeUnit",
    "ScanPushdown",
    "bind",
    "conjuncts",
    "conjunction",
    "split_pushdown",
    "columns_of",
    "to_raw_time",
    "parse_iso_datetime",
    "parse_iso_date",
]

Scalar: TypeAlias = bool | int | float | str | bytes | dt.date
CompareOp = Literal["=", "!=", "<", "<=", ">", ">="]
TimeUnit = Literal["ms", "us", "ns"]

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


@dataclass(frozen=True, slots=True)
class Compare:
    column: str
    op: CompareOp
    value: Scalar

    def flipped(self) -> Compare:
        """``value op column`` rewritten as ``column op' value``."""
        return Compare(self.column, _FLIPPED[self.op], self.value)


@dataclass(frozen=True, slots=True)
class In:
    column: str
    values: tuple[Scalar, ...]


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


Expr: TypeAlias = Compare | In | IsNull | And | Or | Not


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
    if isinstance(expr, (Compare, In, IsNull)):
        return {expr.column}
    if isinstance(expr, Not):
        return columns_of(expr.term)
    out: set[str] = set()
    for term in expr.terms:
        out |= columns_of(term)
    return out


_UNIT_PER_SECOND: dict[TimeUnit, int] = {"ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def parse_iso_datetime(text: str) -> dt.datetime:
    """An ISO-8601 timestamp, surrounding blanks ignored and a trailing ``Z`` read as UTC
    (``datetime.fromisoformat`` reads ``Z`` only from Python 3.11 on). The one parser for
    predicates, SQL literals and ``timestampAsOf``, so they all accept the same text.

    Raises:
        ValueError: ``text`` is not ISO-8601; each caller words its own error.
    """
    return dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))


def parse_iso_date(text: str) -> dt.date:
    """An ISO-8601 date (``YYYY-MM-DD``), surrounding blanks ignored.

    Raises:
        ValueError: ``text`` is not an ISO-8601 date.
    """
    return dt.date.fromisoformat(text.strip())


def to_raw_time(value: dt.datetime, unit: TimeUnit) -> int:
    """A datetime (naive = UTC) as a raw TsFile long in ``unit`` since the epoch."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    delta = value - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if unit == "ms":
        return micros // 1_000
    if unit == "us":
        return micros
    return micros * 1_000


def _parse_datetime(text: str, column: str) -> dt.datetime:
    try:
        return parse_iso_datetime(text)
    except ValueError:
        raise PredicateError(
            f"'{text}' compared with column '{column}' is neither a number nor an ISO-8601 "
            "timestamp"
        ) from None


def _bind_scalar(value: Scalar, column: str, type_: DataType | None, unit: TimeUnit) -> Scalar:
    """Coerce one literal to the raw domain of ``column`` (``type_`` None means ``time``)."""
    if type_ is None or type_ is DataType.TIMESTAMP:
        if isinstance(value, bool):
            raise PredicateError(f"cannot compare timestamp column '{column}' with a boolean")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, dt.datetime):
            return to_raw_time(value, unit)
        if isinstance(value, dt.date):
            return to_raw_time(dt.datetime(value.year, value.month, value.day), unit)
        if isinstance(value, str):
            return to_raw_time(_parse_datetime(value, column), unit)
        raise PredicateError(f"cannot compare timestamp column '{column}' with {value!r}")
    if type_.is_string:
        if not isinstance(value, str):
            raise PredicateError(
                f"column '{column}' is a string; compare it with a quoted string, not {value!r}"
            )
        return value
    if type_ is DataType.BOOLEAN:
        if not isinstance(value, bool):
            raise PredicateError(f"column '{column}' is BOOLEAN; compare it with true/false")
        return value
    if type_ in (DataType.INT32, DataType.INT64, DataType.FLOAT, DataType.DOUBLE):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise PredicateError(
                f"column '{column}' is {type_.value}; compare it with a number, not {value!r}"
            )
        return value
    if type_ is DataType.DATE:
        if isinstance(value, dt.datetime):
            return value.date()
        if isinstance(value, dt.date):
            return value
        if isinstance(value, str):
            try:
                return parse_iso_date(value)
            except ValueError:
                pass
        raise PredicateError(f"column '{column}' is DATE; compare it with 'YYYY-MM-DD'")
    if type_ is DataType.BLOB:
        raise PredicateError(f"column '{column}' is BLOB; it cannot be filtered on")
    raise PredicateError(f"column '{column}' of type {type_.value} cannot be filtered on")


def bind(expr: Expr, schema: TableSchema, unit: TimeUnit = "ms") -> Expr:
    """Resolve column names (case-insensitively) and coerce literals to their raw domain.

    Raises:
        PredicateError: unknown column or a literal that does not fit the column's type.
    """

    def column_type(name: str) -> tuple[str, DataType | None]:
        lowered = name.lower()
        if lowered == TIME_COLUMN:
            return lowered, None
        col = schema.column(lowered)
        if col is None:
            raise PredicateError(
                f"unknown column '{name}' in predicate; table '{schema.table}' has columns "
                f"{', '.join(schema.names)}"
            )
        return lowered, col.type

    def go(node: Expr) -> Expr:
        if isinstance(node, Compare):
            name, type_ = column_type(node.column)
            return Compare(name, node.op, _bind_scalar(node.value, name, type_, unit))
        if isinstance(node, In):
            name, type_ = column_type(node.column)
            return In(name, tuple(_bind_scalar(v, name, type_, unit) for v in node.values))
        if isinstance(node, IsNull):
            name, _ = column_type(node.column)
            return IsNull(name, node.negated)
        if isinstance(node, Not):
            return Not(go(node.term))
        if isinstance(node, And):
            return And(tuple(go(t) for t in node.terms))
        return Or(tuple(go(t) for t in node.terms))

    return go(expr)


@dataclass(frozen=True, slots=True)
class ScanPushdown:
    """What a scan hands to TsFile: an inclusive time range and TAG value sets, exactly.

    ``tag_values`` maps a TAG column to the values it may take (an ``=`` is a one-value set).
    ``residual`` is what must still be evaluated on the rows; ``None`` means nothing.
    """

    time_min: int = INT64_MIN
    time_max: int = INT64_MAX
    tag_values: tuple[tuple[str, frozenset[str]], ...] = ()
    residual: Expr | None = None

    @property
    def empty(self) -> bool:
        """True when the pushed part alone already excludes every row."""
        return self.time_min > self.time_max or any(not v for _, v in self.tag_values)

    def tag_dict(self) -> dict[str, frozenset[str]]:
        return dict(self.tag_values)


def split_pushdown(expr: Expr | None, schema: TableSchema) -> ScanPushdown:
    """Split a bound predicate into the exact TsFile pushdown and a residual.

    Only top-level AND terms are considered: ``time`` comparisons (not ``!=``) narrow the
    range, TAG ``=``/``IN`` narrow the TAG sets; everything else stays residual.
    """
    lo, hi = INT64_MIN, INT64_MAX
    tags: dict[str, frozenset[str]] = {}
    residual: list[Expr] = []
    tag_names = set(schema.tag_names)
    for term in conjuncts(expr):
        if isinstance(term, Compare) and term.column == TIME_COLUMN and term.op != "!=":
            value = term.value
            assert isinstance(value, int)
            if term.op == "=":
                lo, hi = max(lo, value), min(hi, value)
            elif term.op == ">":
                lo = max(lo, value + 1)
            elif term.op == ">=":
                lo = max(lo, value)
            elif term.op == "<":
                hi = min(hi, value - 1)
            else:
                hi = min(hi, value)
            continue
        if term.__class__ in (Compare, In) and getattr(term, "column", None) in tag_names:
            if isinstance(term, Compare) and term.op == "=":
                values = frozenset({str(term.value)})
            elif isinstance(term, In):
                values = frozenset(str(v) for v in term.values)
            else:
                residual.append(term)
                continue
            column = term.column
            tags[column] = tags[column] & values if column in tags else values
            continue
        residual.append(term)
    return ScanPushdown(
        time_min=lo,
        time_max=hi,
        tag_values=tuple(sorted(tags.items())),
        residual=conjunction(residual),
    )

