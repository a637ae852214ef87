"""Binding predicates to a table schema with Spark's semantics.

One model serves three consumers: part pruning (stats), the TsFile query (time range and TAG
filter) and the residual filter applied to Arrow batches.
:func:`~tsfile_catalog.metadata.expressions.parser.parse_predicate` yields *literals* as Spark
types them (``5`` an integer, ``1.5`` a decimal, ``1.5e0`` a double,
``TIMESTAMP '…'`` a naive or offset-carrying datetime); :func:`bind` resolves each comparison
the way Spark's type coercion does for the column's Spark type and rewrites it in the *raw*
TsFile domain, so every consumer compares like with like:

* an integer column against a decimal compares exactly (``i > 1.5`` is ``i >= 2``), against a
  literal outside its range becomes a constant (``i < 3000000000`` holds for every non-null
  ``i``);
* FLOAT and DOUBLE columns, and any column against a double literal, compare as doubles in
  Spark's total order: NaN equals NaN and is above every number, -0.0 equals 0.0
  (``as_double=True``);
* ``time`` and TIMESTAMP fields read as timestamps (``timestampAs=timestamp``) compare
  instants at microsecond precision, so literals become raw bounds in the table's unit; naive
  timestamp text is a wall-clock time in the session time zone; a DATE column against a
  timestamp compares the date's first instant in that zone;
* anything Spark refuses, or that this module cannot evaluate exactly, raises
  :class:`PredicateError` rather than meaning something else.

When the session time zone is not known yet (a scan being planned without the ``timeZone``
option), comparisons that need it bind to :class:`Approx`: bounds that prune conservatively,
never a row filter.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from tsfile_catalog.exceptions import PredicateError
from tsfile_catalog.metadata.expressions.model import (
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    And,
    Approx,
    Compare,
    CompareOp,
    Expr,
    In,
    IsNull,
    Not,
    Or,
    Scalar,
    TimestampAs,
    TimeUnit,
)
from tsfile_catalog.metadata.schema import TIME_COLUMN, DataType, TableSchema
from tsfile_catalog.metadata.spark import literals

__all__ = ["BindContext", "bind"]


@dataclass(frozen=True, slots=True)
class BindContext:
    """How Spark sees the table's columns: the raw time unit, whether ``time`` and TIMESTAMP
    fields are bigints or timestamps, and the session time zone (None: not known yet)."""

    unit: TimeUnit = "ms"
    timestamp_as: TimestampAs = "long"
    time_zone: str | None = None


# How far a wall-clock time can be from UTC (java.time's ±18:00) plus a skipped day (DST gaps,
# Samoa 2011): with the zone unknown, an instant is only known to lie within this of UTC.
_UNKNOWN_ZONE_SLACK = 2 * literals.MICROS_PER_DAY


@dataclass(frozen=True, slots=True)
class _Column:
    """A column as Spark sees it: its name and how literals compare with it."""

    name: str
    kind: Literal["string", "boolean", "integer", "floating", "date", "instant", "binary"]
    low: int | None = None  # the raw value range (integer and instant columns)
    high: int | None = None


def _false(column: str) -> Expr:
    return In(column, ())


def _true(column: str) -> Expr:
    return Not(In(column, ()))


def _bounded(col: _Column, op: CompareOp, value: int, to_value: Callable[[int], Scalar]) -> Expr:
    """``col op value`` where ``value`` may lie outside the column's range (then the answer
    is the same for every non-null value)."""
    if col.low is not None and value < col.low:
        return _true(col.name) if op in ("!=", ">", ">=") else _false(col.name)
    if col.high is not None and value > col.high:
        return _true(col.name) if op in ("!=", "<", "<=") else _false(col.name)
    return Compare(col.name, op, to_value(value))


def _monotone(
    col: _Column,
    op: CompareOp,
    lo: int,
    hi: int,
    to_value: Callable[[int], Scalar] = lambda v: v,
) -> Expr:
    """``f(col) op T`` for a non-decreasing ``f`` (a unit conversion, a cast to decimal or to
    a timestamp), given ``lo`` = the least raw value with ``f >= T`` and ``hi`` = the greatest
    with ``f <= T`` (``lo > hi`` when no raw value maps exactly to ``T``)."""
    if op == ">=":
        return _bounded(col, ">=", lo, to_value)
    if op == ">":
        return _bounded(col, ">", hi, to_value)
    if op == "<=":
        return _bounded(col, "<=", hi, to_value)
    if op == "<":
        return _bounded(col, "<", lo, to_value)
    if op == "=":
        if lo > hi:
            return _false(col.name)
        if lo == hi:
            return _bounded(col, "=", lo, to_value)
        return And((_bounded(col, ">=", lo, to_value), _bounded(col, "<=", hi, to_value)))
    if lo > hi:
        return _true(col.name)
    if lo == hi:
        return _bounded(col, "!=", lo, to_value)
    return Or((_bounded(col, "<", lo, to_value), _bounded(col, ">", hi, to_value)))


def _raw_bounds(micros: int, unit: TimeUnit) -> tuple[int, int]:
    """(least, greatest) raw value in ``unit`` whose Spark timestamp is ``micros``: the
    reader shows raw ms as ``raw * 1000`` µs and raw ns as ``floor(raw / 1000)`` µs."""
    if unit == "ms":
        return -((-micros) // 1_000), micros // 1_000
    if unit == "ns":
        return micros * 1_000, micros * 1_000 + 999
    return micros, micros


def _what(value: Scalar) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float, Decimal)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dt.datetime):
        return "a timestamp"
    if isinstance(value, dt.date):
        return "a date"
    return "a binary value"


class _Binder:
    def __init__(self, schema: TableSchema, context: BindContext) -> None:
        self.schema = schema
        self.context = context
        self.zone = (
            literals.parse_zone(context.time_zone) if context.time_zone is not None else None
        )

    def column(self, name: str) -> _Column:
        lowered = name.lower()
        if lowered == TIME_COLUMN:
            type_ = DataType.TIMESTAMP
        else:
            col = self.schema.column(lowered)
            if col is None:
                raise PredicateError(
                    f"unknown column '{name}' in predicate; table '{self.schema.table}' has "
                    f"columns {', '.join(self.schema.names)}"
                )
            type_ = col.type
        if type_ is DataType.TIMESTAMP:
            if self.context.timestamp_as == "timestamp":
                return _Column(lowered, "instant", INT64_MIN, INT64_MAX)
            return _Column(lowered, "integer", INT64_MIN, INT64_MAX)
        if type_ is DataType.INT32:
            return _Column(lowered, "integer", INT32_MIN, INT32_MAX)
        if type_ is DataType.INT64:
            return _Column(lowered, "integer", INT64_MIN, INT64_MAX)
        if type_ in (DataType.FLOAT, DataType.DOUBLE):
            return _Column(lowered, "floating")
        if type_ is DataType.DATE:
            return _Column(lowered, "date", dt.date.min.toordinal(), dt.date.max.toordinal())
        if type_ is DataType.BOOLEAN:
            return _Column(lowered, "boolean")
        if type_.is_string:
            return _Column(lowered, "string")
        return _Column(lowered, "binary")

    def compare(self, col: _Column, op: CompareOp, value: Scalar) -> Expr:
        try:
            return self._compare(col, op, value)
        except OverflowError:
            raise PredicateError(
                f"{value!r} compared with column '{col.name}' is outside the supported range"
            ) from None

    def _mismatch(self, col: _Column, value: Scalar) -> PredicateError:
        hints = {
            "string": "compare it with a quoted string",
            "boolean": "compare it with true or false",
            "integer": "compare it with a number",
            "floating": "compare it with a number",
            "date": "compare it with DATE 'YYYY-MM-DD' or a timestamp",
            "instant": "compare it with TIMESTAMP 'YYYY-MM-DD HH:MM:SS' or a date",
            "binary": "BINARY columns cannot be filtered on here",
        }
        hint = hints[col.kind]
        if col.kind == "integer" and isinstance(value, dt.date) and self._is_time_like(col):
            hint = (
                f"with timestampAs=long it is a bigint of raw {self.context.unit} values; "
                "compare it with a number, or read with timestampAs=timestamp to compare it "
                "with timestamps"
            )
        return PredicateError(
            f"column '{col.name}' cannot be compared with {_what(value)} {value!r}: {hint}"
        )

    def _is_time_like(self, col: _Column) -> bool:
        if col.name == TIME_COLUMN:
            return True
        column = self.schema.column(col.name)
        return column is not None and column.type is DataType.TIMESTAMP

    def _compare(self, col: _Column, op: CompareOp, value: Scalar) -> Expr:
        kind = col.kind
        if kind == "string":
            if isinstance(value, str):
                return Compare(col.name, op, value)
        elif kind == "boolean":
            if isinstance(value, bool):
                return Compare(col.name, op, value)
        elif kind == "integer":
            if isinstance(value, bool):
                raise self._mismatch(col, value)
            if isinstance(value, str):
                value = self._literal(col, literals.parse_long, value)
            if isinstance(value, int):
                return _monotone(col, op, value, value)
            if isinstance(value, Decimal):
                return _monotone(col, op, math.ceil(value), math.floor(value))
            if isinstance(value, float):
                return Compare(col.name, op, value, as_double=True)
        elif kind == "floating":
            return Compare(col.name, op, self.as_double(col, value), as_double=True)
        elif kind == "date":
            if isinstance(value, str):
                value = self._literal(col, literals.parse_date, value)
            if isinstance(value, dt.datetime):
                return self._date_vs_instant(col, op, value)
            if isinstance(value, dt.date):
                return Compare(col.name, op, value)
        elif kind == "instant":
            if isinstance(value, str):
                value = self._literal(col, literals.parse_timestamp, value)
            if isinstance(value, dt.date):
                return self._instant(col, op, value)
        raise self._mismatch(col, value)

    def _literal(self, col: _Column, parse: Callable[[str], Scalar], text: str) -> Scalar:
        try:
            return parse(text)
        except PredicateError as e:
            raise PredicateError(f"column '{col.name}' compared with {text!r}: {e}") from None

    def as_double(self, col: _Column, value: Scalar) -> float:
        if isinstance(value, str):
            value = self._literal(col, literals.parse_double, value)
        if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
            raise self._mismatch(col, value)
        return float(value)

    def _micros(self, value: dt.date) -> int | None:
        """The instant ``value`` denotes (a date: its first instant), None when that needs
        the session time zone and it is not known."""
        if isinstance(value, dt.datetime):
            if value.tzinfo is None and self.zone is None:
                return None
            return literals.instant_micros(value, self.zone)
        if self.zone is None:
            return None
        return literals.start_of_day_micros(value, self.zone)

    def _instant(self, col: _Column, op: CompareOp, value: dt.date) -> Expr:
        unit = self.context.unit
        micros = self._micros(value)
        if micros is not None:
            return _monotone(col, op, *_raw_bounds(micros, unit))
        # Zone unknown: the instant is within the slack of the value read as UTC.
        moment = (
            value
            if isinstance(value, dt.datetime)
            else dt.datetime(value.year, value.month, value.day)
        )
        utc = literals.instant_micros(moment.replace(tzinfo=None), dt.timezone.utc)
        early, late = utc - _UNKNOWN_ZONE_SLACK, utc + _UNKNOWN_ZONE_SLACK

        def at(o: CompareOp, micros: int) -> Expr:
            return _monotone(col, o, *_raw_bounds(micros, unit))

        loose: Expr | None
        tight: Expr | None
        if op in (">", ">="):
            loose, tight = at(op, early), at(op, late)
        elif op in ("<", "<="):
            loose, tight = at(op, late), at(op, early)
        elif op == "=":
            loose, tight = And((at(">=", early), at("<=", late))), None
        else:
            loose, tight = None, Or((at("<", early), at(">", late)))
        return Approx(col.name, loose, tight, f"{col.name} {op} {value!r}")

    def _date_vs_instant(self, col: _Column, op: CompareOp, value: dt.datetime) -> Expr:
        # Spark casts the DATE to a timestamp: its first instant in the session time zone.
        if self.zone is None:
            return Approx(col.name, None, None, f"{col.name} {op} {value!r}")
        micros = literals.instant_micros(value, self.zone)
        day = literals.local_date(micros, self.zone)
        exact = literals.start_of_day_micros(day, self.zone) == micros
        hi = day.toordinal()
        return _monotone(col, op, hi if exact else hi + 1, hi, dt.date.fromordinal)

    def in_list(self, col: _Column, values: tuple[Scalar, ...]) -> Expr:
        kinds = {_what(v) for v in values}
        if len(kinds) > 1:
            raise PredicateError(
                f"the IN list on column '{col.name}' mixes {' and '.join(sorted(kinds))}; "
                "use literals of one type"
            )
        if col.kind == "floating" or (
            col.kind == "integer" and any(isinstance(v, float) for v in values)
        ):
            # One double list, as Spark coerces an IN list to one common type.
            return In(col.name, tuple(self.as_double(col, v) for v in values), as_double=True)
        equal: list[Scalar] = []
        others: list[Expr] = []
        for value in values:
            term = self.compare(col, "=", value)
            if term == _false(col.name):
                continue
            if isinstance(term, Compare) and term.op == "=" and not term.as_double:
                if term.value not in equal:
                    equal.append(term.value)
            else:
                others.append(term)
        if not others:
            return In(col.name, tuple(equal))
        if equal:
            others.insert(0, In(col.name, tuple(equal)))
        return others[0] if len(others) == 1 else Or(tuple(others))

    def bind(self, node: Expr) -> Expr:
        if isinstance(node, Compare):
            return self.compare(self.column(node.column), node.op, node.value)
        if isinstance(node, In):
            return self.in_list(self.column(node.column), node.values)
        if isinstance(node, IsNull):
            return IsNull(self.column(node.column).name, node.negated)
        if isinstance(node, Not):
            return Not(self.bind(node.term))
        if isinstance(node, And):
            return And(tuple(self.bind(t) for t in node.terms))
        if isinstance(node, Or):
            return Or(tuple(self.bind(t) for t in node.terms))
        raise PredicateError(f"{node!r} is already bound")


def bind(expr: Expr, schema: TableSchema, context: BindContext | None = None) -> Expr:
    """Resolve column names (case-insensitively) and rewrite each comparison in the raw
    domain of its column, with Spark's semantics for the column's Spark type (see the module
    docstring).

    Raises:
        PredicateError: unknown column, a literal Spark would refuse for the column, or one
            this module cannot evaluate exactly.
    """
    return _Binder(schema, context or BindContext()).bind(expr)
