"""Part pruning as a visitor: can a part hold a row matching a bound predicate?

The predicate is compiled once (negations pushed to the leaves, which is exact under SQL's
three-valued logic: ``NOT (x < 5)`` keeps exactly the rows where ``x >= 5``) and evaluated per
part against its statistics. Each leaf answers "might some row make this TRUE?"; unknown stats
answer yes, so a part is only pruned when its stats prove that no row matches.

When a part lists its devices, a predicate that passes the part-level check and mentions a TAG
or ``time`` is re-evaluated per device, with that device's exact TAG values and time range: a
part holding ``(a, x)`` and ``(b, y)`` cannot match ``t1 = 'a' AND t2 = 'y'``.

A scan can go further, one (part, device) pair at a time, with the device's own FIELD
statistics (:class:`~tsfile_catalog.metadata.stats.SeriesStats`):
:meth:`PartEvaluator.device_might_match` tells a device none of whose rows can match (a scan
skips it), :meth:`PartEvaluator.device_verdict` also one all of whose rows match (a
pre-aggregating scan may answer it from statistics). Planning itself stays at part level, so
it decodes no per-device FIELD statistics.

Stats contract (what writers must guarantee): ``TagStats.has_null`` and ``values`` are exact,
``min``/``max`` bound every non-null value, ``FieldStats.null_count`` is exact when present, and
FIELD min/max bound every non-null value (None when unknown) except NaN: no statistic proves a
FLOAT or DOUBLE column free of NaN, so a part holding values may always hold NaN, which Spark
orders above every number (``x > 5`` and ``NOT (x < 5)`` keep it). A device's
``SeriesStats`` are stricter: their min/max are Spark's exact min/max (None, or NaN, when a NaN
is among the values), so a numeric max proves the device free of NaN.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from tsfile_catalog.metadata.expressions.model import (
    And,
    Approx,
    Compare,
    CompareOp,
    Expr,
    In,
    Not,
    Or,
    columns_of,
)
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import TIME_COLUMN, Category, DataType, TableSchema
from tsfile_catalog.metadata.stats import DeviceStats, SeriesStats

__all__ = ["might_match", "prune", "PartEvaluator"]

_NEGATED: dict[CompareOp, CompareOp] = {
    "=": "!=",
    "!=": "=",
    "<": ">=",
    "<=": ">",
    ">": "<=",
    ">=": "<",
}
_OPERATORS: dict[CompareOp, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


class _Stats(NamedTuple):
    """What is known about one column's values in a part (or one device of it).

    A named tuple, not a frozen dataclass: a plan makes two per kept part, and a frozen
    dataclass costs a ``object.__setattr__`` per field.

    ``values`` is the exact set of non-null values when known; ``lo``/``hi`` bound the
    non-null values (None = unknown); the two flags are False only when proven.
    """

    values: frozenset[Any] | None = None
    lo: Any = None
    hi: Any = None
    may_have_value: bool = True
    may_have_null: bool = True
    may_have_nan: bool = False


_UNKNOWN = _Stats()
_UNKNOWN_FLOATING = _Stats(may_have_nan=True)

_Lookup = Callable[[str], _Stats]
_Test = Callable[[_Lookup], bool]


def _bounds(low: Any, high: Any) -> tuple[Any, Any]:
    """A NaN bound compares false with everything and tells nothing about the other: a
    chunk whose first value is NaN keeps NaN as its min and max whatever follows. Both are
    unknown then."""
    # ``x != x`` is NaN's test; spelled out, not as any() over a generator, because a plan
    # calls this for every device of every part it checks.
    if (isinstance(low, float) and low != low) or (isinstance(high, float) and high != high):
        return None, None
    return low, high


def _double_key(value: Any) -> tuple[int, float]:
    """Spark's total order on doubles: NaN above every number, -0.0 equal to 0.0."""
    number = float(value)
    return (1, 0.0) if math.isnan(number) else (0, number + 0.0)


def _compare_double(
    stats: _Stats, op: CompareOp, value: float, key: tuple[int, float] | None = None
) -> bool:
    """Might a value of the column, read as a double, satisfy ``op value``? (``key``:
    ``_double_key(value)``, when the caller computed it once.)"""
    if not stats.may_have_value:
        return False
    test = _OPERATORS[op]
    if key is None:
        key = _double_key(value)
    if stats.may_have_nan and test(_double_key(math.nan), key):
        return True
    # Every non-NaN value lies in [lo, hi] (a bound of None is unknown); the double
    # conversion of an integer column is monotone, so its converted bounds bound it.
    lo = None if stats.lo is None else _double_key(stats.lo)
    hi = None if stats.hi is None else _double_key(stats.hi)
    if lo is not None and lo[0] == 1 or hi is not None and hi[0] == 1:
        return True  # a NaN bound says nothing about the numbers
    if op == "=":
        return not ((lo is not None and key < lo) or (hi is not None and key > hi))
    if op == "!=":
        return not (lo is not None and hi is not None and lo == hi == key)
    if op in ("<", "<="):
        return lo is None or test(lo, key)
    return hi is None or test(hi, key)


def _compare(stats: _Stats, op: CompareOp, value: Any) -> bool:
    if not stats.may_have_value:
        return False
    try:
        if stats.values is not None:
            test = _OPERATORS[op]
            return any(test(v, value) for v in stats.values)
        lo, hi = stats.lo, stats.hi
        if op == "=":
            return not ((lo is not None and value < lo) or (hi is not None and value > hi))
        if op == "!=":
            return not (lo is not None and hi is not None and lo == hi == value)
        if op == "<":
            return lo is None or lo < value
        if op == "<=":
            return lo is None or lo <= value
        if op == ">":
            return hi is None or hi > value
        return hi is None or hi >= value
    except TypeError:
        return True


def _in(stats: _Stats, values: frozenset[Any]) -> bool:
    if not stats.may_have_value:
        return False
    if stats.values is not None:
        return not stats.values.isdisjoint(values)
    return any(_compare(stats, "=", v) for v in values)


def _not_in(stats: _Stats, values: frozenset[Any]) -> bool:
    if not stats.may_have_value:
        return False
    if stats.values is not None:
        return not stats.values <= values
    lo, hi = stats.lo, stats.hi
    try:
        return not (lo is not None and lo == hi and lo in values)
    except TypeError:
        return True


def _always(look: _Lookup) -> bool:
    return True


def _compile(expr: Expr, negate: bool) -> _Test:
    """A closure answering "might a row satisfy ``expr`` (or NOT ``expr``)?"."""
    if isinstance(expr, Not):
        return _compile(expr.term, not negate)
    if isinstance(expr, Approx):
        # A row may satisfy the comparison only if it satisfies ``loose``, and may fail it
        # only if it fails ``tight``; without a bound anything is possible.
        bound = expr.tight if negate else expr.loose
        return _always if bound is None else _compile(bound, negate)
    if isinstance(expr, (And, Or)):
        children = tuple(_compile(t, negate) for t in expr.terms)
        if isinstance(expr, And) != negate:
            return lambda look: all(child(look) for child in children)
        return lambda look: any(child(look) for child in children)
    column = expr.column
    if isinstance(expr, Compare):
        # Negating the operator is exact in Spark's total orders (NaN included).
        op = _NEGATED[expr.op] if negate else expr.op
        value = expr.value
        if expr.as_double:
            number = float(value)  # type: ignore[arg-type]
            key = _double_key(number)
            return lambda look: _compare_double(look(column), op, number, key)
        return lambda look: _compare(look(column), op, value)
    if isinstance(expr, In) and expr.as_double:
        numbers = tuple(float(v) for v in expr.values)  # type: ignore[arg-type]
        if negate:
            return lambda look: all(_compare_double(look(column), "!=", v) for v in numbers)
        return lambda look: any(_compare_double(look(column), "=", v) for v in numbers)
    if isinstance(expr, In):
        values = frozenset(expr.values)
        if negate:
            return lambda look: _not_in(look(column), values)
        return lambda look: _in(look(column), values)
    wants_null = expr.negated == negate
    if wants_null:
        return lambda look: look(column).may_have_null
    return lambda look: look(column).may_have_value


class PartEvaluator:
    """A bound predicate compiled once, evaluated against many parts."""

    def __init__(self, expr: Expr | None, schema: TableSchema) -> None:
        self._expr = expr
        self._test = None if expr is None else _compile(expr, negate=False)
        self._fails: _Test | None = None  # compiled on first use (device_verdict)
        self._columns = columns_of(expr)
        self._tag_index = {name: i for i, name in enumerate(schema.tag_names)}
        self._fields = {c.name for c in schema.columns if c.category is Category.FIELD}
        # Part statistics are keyed by physical name (a renamed column keeps its own).
        self._physical = schema.physical_names()
        self._floating = {
            c.name for c in schema.columns if c.type in (DataType.FLOAT, DataType.DOUBLE)
        }
        device_columns = {TIME_COLUMN, *self._tag_index}
        self._per_device = bool(columns_of(expr) & device_columns)

    def might_match(self, part: PartFile) -> bool:
        test = self._test
        if test is None:
            return True
        if part.row_count <= 0:
            return False
        cache: dict[str, _Stats] = {}

        def part_look(column: str) -> _Stats:
            stats = cache.get(column)
            if stats is None:
                stats = cache[column] = self._part_stats(part, column)
            return stats

        if not test(part_look):
            return False
        if part.devices is None or not self._per_device:
            return True
        return any(
            test(self._device_lookup(device, part_look))
            for device in part.devices
            if device.row_count > 0
        )

    def device_might_match(self, part: PartFile, device: DeviceStats) -> bool:
        """False only when the statistics of ``device`` (one of ``part``'s), its FIELD ones
        included, prove that none of its rows satisfies the predicate."""
        if self._test is None:
            return True
        return device.row_count > 0 and self._test(self._series_lookup(part, device))

    def device_verdict(self, part: PartFile, device: DeviceStats) -> bool | None:
        """What the statistics of ``device`` prove: False, that no row satisfies the
        predicate; True, that it is TRUE on every row (never FALSE, never NULL); None,
        neither.

        No row can be NULL when no column the predicate reads is null in the device (a
        comparison, IN or IS NULL over non-null values is TRUE or FALSE); then every row is
        TRUE when none may satisfy the negated predicate (negation is exact, NaN included).
        """
        if self._expr is None or self._test is None:
            return True
        if device.row_count <= 0:
            return False
        look = self._series_lookup(part, device)
        if not self._test(look):
            return False
        if any(look(column).may_have_null for column in self._columns):
            return None
        if self._fails is None:
            self._fails = _compile(self._expr, negate=True)
        return None if self._fails(look) else True

    def _series_lookup(self, part: PartFile, device: DeviceStats) -> _Lookup:
        """The device's statistics: its time range and TAG values, its own FIELD statistics
        where recorded, else the part's."""
        series = device.fields
        fields = self._fields
        memo: dict[str, _Stats] = {}

        def look(column: str) -> _Stats:
            stats = memo.get(column)
            if stats is None:
                own = (
                    series.get(self._physical.get(column, column))
                    if series is not None and column in fields
                    else None
                )
                if own is not None:
                    stats = self._series_stats(column, own, device.row_count)
                else:
                    stats = self._device_stats(device, column)
                    if stats is None:
                        stats = self._part_stats(part, column)
                memo[column] = stats
            return stats

        return look

    def _series_stats(self, column: str, stats: SeriesStats, rows: int) -> _Stats:
        has_value = stats.count > 0
        lo, hi = _bounds(stats.min, stats.max)
        return _Stats(
            lo=lo,
            hi=hi,
            may_have_value=has_value,
            may_have_null=stats.count < rows,
            # A device's max is Spark's (see the module docstring): a number proves no NaN.
            may_have_nan=column in self._floating and has_value and hi is None,
        )

    def _part_stats(self, part: PartFile, column: str) -> _Stats:
        if column == TIME_COLUMN:
            return _Stats(lo=part.min_time, hi=part.max_time, may_have_null=False)
        if column in self._tag_index:
            tag = part.tags.get(column)
            if tag is None:
                return _UNKNOWN
            may_have_value = bool(tag.values) if tag.values is not None else True
            return _Stats(
                values=tag.values,
                lo=tag.min,
                hi=tag.max,
                may_have_value=may_have_value,
                may_have_null=tag.has_null,
            )
        if column in self._fields:
            stats = part.fields.get(self._physical.get(column, column))
            floating = column in self._floating
            if stats is None:
                return _UNKNOWN_FLOATING if floating else _UNKNOWN
            nulls = stats.null_count
            may_have_value = nulls is None or nulls < part.row_count
            lo, hi = _bounds(stats.min, stats.max)
            return _Stats(
                lo=lo,
                hi=hi,
                may_have_value=may_have_value,
                may_have_null=nulls is None or nulls > 0,
                may_have_nan=floating and may_have_value,
            )
        return _UNKNOWN

    def _device_lookup(self, device: DeviceStats, part_look: _Lookup) -> _Lookup:
        def look(column: str) -> _Stats:
            stats = self._device_stats(device, column)
            return part_look(column) if stats is None else stats

        return look

    def _device_stats(self, device: DeviceStats, column: str) -> _Stats | None:
        """What ``device`` alone tells of ``time`` or a TAG column (None: another column)."""
        if column == TIME_COLUMN:
            return _Stats(lo=device.min_time, hi=device.max_time, may_have_null=False)
        index = self._tag_index.get(column)
        if index is None:
            return None
        value = device.tags[index] if index < len(device.tags) else None
        if value is None:
            return _Stats(values=frozenset(), may_have_value=False, may_have_null=True)
        return _Stats(values=frozenset((value,)), may_have_null=False)


def might_match(expr: Expr | None, part: PartFile, schema: TableSchema) -> bool:
    """False only when ``part``'s stats prove no row satisfies the bound ``expr``.

    ``expr`` must be bound (:func:`tsfile_catalog.metadata.expressions.bind.bind`) so literals are
    in the raw domain of the stats. None matches every part.
    """
    return PartEvaluator(expr, schema).might_match(part)


def prune(
    parts: Iterable[PartFile], expr: Expr | None, schema: TableSchema
) -> tuple[list[PartFile], list[PartFile]]:
    """Split ``parts`` into (kept, pruned) for the bound ``expr``, preserving order."""
    evaluator = PartEvaluator(expr, schema)
    kept: list[PartFile] = []
    pruned: list[PartFile] = []
    for part in parts:
        (kept if evaluator.might_match(part) else pruned).append(part)
    return kept, pruned
