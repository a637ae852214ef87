"""Recognise aggregate queries whose aggregation can start inside the scan, and rewrite them.

A query over ONE catalog table whose SELECT list (and HAVING, ORDER BY) is built from group
keys and aggregates — ``count(*)``, ``count(c)``, ``sum``, ``avg``, ``min``, ``max``,
``max_by(c, time)``, ``min_by(c, time)`` over plain columns — grouped by TAG columns and/or one
time bucket (``date_trunc('<unit>', time)`` or a tumbling ``window(time, '<width>')`` on a
TIMESTAMP ``time``, ``floor(time / n) * n`` on a long one), with a WHERE the scan evaluates
entirely (see :func:`~tsfile_catalog.sql.analysis.as_single_table_scan`), becomes:

* a scan with the ``partialAggregate`` option (:class:`PartialSpec`): one row per group and
  chunk, with the partial states; and
* an outer query over that scan that merges them — counts by ``sum`` (0 for no rows), sums by
  ``sum``, ``min``/``max`` of the partial extremes, ``avg`` as the sum of the DOUBLE partial
  sums over the sum of the counts (Spark's own ``avg`` arithmetic), ``max_by``/``min_by`` of
  the partial last/first values by their time. HAVING, ORDER BY and LIMIT stay as they were.
  A ``window`` bucket is grouped by its start; ``window(time, ...)`` itself becomes Spark's
  ``struct<start, end>`` of it, and ``window.start`` / ``window.end`` (the column Spark's
  window grouping adds) its fields.

Anything else returns None and runs unchanged. Pure (sqlglot only): the executor builds the
scan and checks the result's types against Spark's analysis of the original query.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from tsfile_catalog.exceptions import PredicateError
from tsfile_catalog.metadata.expressions import TimestampAs
from tsfile_catalog.metadata.partial_aggregates import (
    PartialSpec,
    PartialState,
    StateFunction,
    TimeBucket,
)
from tsfile_catalog.metadata.schema import TIME_COLUMN, Category, TableSchema
from tsfile_catalog.metadata.spark.literals import parse_interval_ns
from tsfile_catalog.sql.analysis import TableRef

__all__ = ["PartialRewrite", "plan_partial_aggregate", "BUCKET_COLUMN"]

BUCKET_COLUMN = "__tsfc_bucket"
_STATE_PREFIX = "__tsfc_p"
# The column Spark's window grouping adds (``window.start``, ``window.end``), and its fields.
_WINDOW = "window"
_WINDOW_FIELDS = ("start", "end")
# A window width must be a whole number of the coarsest raw unit (ms), so every table's raw
# times floor to it exactly (the bucket is computed in the raw domain).
_NS_PER_MS = 1_000_000

# Spark's date_trunc level names and their aliases.
_TRUNC_ALIASES = {
    "YEAR": "YEAR",
    "YYYY": "YEAR",
    "YY": "YEAR",
    "QUARTER": "QUARTER",
    "MONTH": "MONTH",
    "MON": "MONTH",
    "MM": "MONTH",
    "WEEK": "WEEK",
    "DAY": "DAY",
    "DD": "DAY",
    "HOUR": "HOUR",
    "MINUTE": "MINUTE",
    "SECOND": "SECOND",
    "MILLISECOND": "MILLISECOND",
    "MICROSECOND": "MICROSECOND",
}
_SELECT_ARGS = frozenset({"expressions", "from_", "where", "group", "having", "order", "limit"})
_TABLE_ARGS = frozenset({"this", "db", "alias", "version"})
# Constructs that change what an aggregate sees, or read rows outside the grouping.
_REFUSED = (exp.Filter, exp.Window, exp.Query, exp.IgnoreNulls, exp.RespectNulls, exp.Star)


@dataclass(frozen=True)
class PartialRewrite:
    """The scan's spec and the outer query (its table reference still the original one)."""

    spec: PartialSpec
    outer: exp.Select


class _Unsupported(Exception):
    """The query is not of a pre-aggregatable shape (internal: caught, never raised out)."""


def plan_partial_aggregate(
    query: exp.Expr,
    ref: TableRef,
    schema: TableSchema,
    *,
    timestamp_as: TimestampAs,
    time_zone: str | None,
) -> PartialRewrite | None:
    """The rewrite of ``query`` (which reads only ``ref``, its WHERE fully pushed into the
    scan), or None when it is not a supported aggregate query."""
    if not isinstance(query, exp.Select):
        return None
    if any(value for key, value in query.args.items() if key not in _SELECT_ARGS):
        return None
    from_ = query.args.get("from_")
    if from_ is None or not isinstance(from_.this, exp.Table):
        return None
    if any(value for key, value in from_.this.args.items() if key not in _TABLE_ARGS):
        return None
    try:
        return _Planner(query, ref, schema, timestamp_as, time_zone).plan()
    except _Unsupported:
        return None


class _Planner:
    def __init__(
        self,
        query: exp.Select,
        ref: TableRef,
        schema: TableSchema,
        timestamp_as: TimestampAs,
        time_zone: str | None,
    ) -> None:
        self._query = query
        self._ref = ref
        self._schema = schema
        self._timestamp_as = timestamp_as
        self._time_zone = time_zone
        self._keys: list[str] = []
        self._bucket: TimeBucket | None = None
        self._states: dict[tuple[StateFunction, str | None], PartialState] = {}
        self._aliases = {p.alias.lower() for p in query.expressions if isinstance(p, exp.Alias)}

    def plan(self) -> PartialRewrite:
        query = self._query
        group = query.args.get("group")
        if group is not None:
            if any(value for key, value in group.args.items() if key != "expressions"):
                raise _Unsupported  # ROLLUP, CUBE, GROUPING SETS, ALL
            for key in group.expressions:
                self._group_key(self._resolve_group_expr(key))
        outer = query.copy()
        outer.set("where", None)
        outer.set("expressions", [self._merge(p) for p in query.expressions])
        if group is not None:
            outer.set(
                "group", exp.Group(expressions=[self._merge_key(k) for k in group.expressions])
            )
        for clause in ("having", "order"):
            node = query.args.get(clause)
            if node is not None:
                outer.set(clause, self._merge(node))
        if not self._states:
            raise _Unsupported  # no aggregate: a DISTINCT in disguise, not worth a partial scan
        self._check_columns(outer)
        spec = PartialSpec(tuple(self._keys), self._bucket, tuple(self._states.values()))
        return PartialRewrite(spec, outer)

    # -- group keys ---------------------------------------------------------------------------

    def _resolve_group_expr(self, key: exp.Expr) -> exp.Expr:
        """A GROUP BY item as the expression it groups by: an ordinal or a select alias names a
        projection (Spark's groupByOrdinal / groupByAliases)."""
        projections = self._query.expressions
        if isinstance(key, exp.Literal) and not key.is_string:
            position = int(key.name) if key.name.isdigit() else 0
            if not 1 <= position <= len(projections):
                raise _Unsupported
            return projections[position - 1].unalias()
        if isinstance(key, exp.Column) and not key.table and self._column(key) is None:
            for projection in projections:
                if (
                    isinstance(projection, exp.Alias)
                    and projection.alias.lower() == key.name.lower()
                ):
                    return projection.unalias()
        return key

    def _group_key(self, key: exp.Expr) -> None:
        name = self._column(key) if isinstance(key, exp.Column) else None
        if name is not None:
            col = self._schema.column(name)
            if col is None or col.category is not Category.TAG:
                raise _Unsupported  # grouping by a FIELD or by time itself
            if name not in self._keys:
                self._keys.append(name)
            return
        bucket = self._as_bucket(key)
        if bucket is None or (self._bucket is not None and bucket != self._bucket):
            raise _Unsupported
        self._bucket = bucket

    def _as_bucket(self, node: exp.Expr) -> TimeBucket | None:
        if isinstance(node, exp.Anonymous) and node.name.lower() == _WINDOW:
            return self._as_window(node)
        if isinstance(node, exp.TimestampTrunc):
            unit = node.args.get("unit")
            level = _TRUNC_ALIASES.get(unit.name.upper()) if unit is not None else None
            if (
                level is None
                or not self._is_time(node.this)
                or self._timestamp_as != "timestamp"
                or self._time_zone is None
                or any(v for k, v in node.args.items() if k not in ("this", "unit"))
            ):
                return None
            return TimeBucket("date_trunc", BUCKET_COLUMN, unit=level, time_zone=self._time_zone)
        if isinstance(node, exp.Mul) and self._timestamp_as == "long":
            floor, width = _unparen(node.this), _unparen(node.expression)
            if not isinstance(floor, exp.Floor) or floor.args.get("decimals") is not None:
                return None
            div = _unparen(floor.this)
            if not isinstance(div, exp.Div) or not self._is_time(div.this):
                return None
            n = _positive_int(width)
            if n is None or n != _positive_int(div.expression):
                return None
            return TimeBucket("floor", BUCKET_COLUMN, width=n)
        return None

    def _as_window(self, node: exp.Anonymous) -> TimeBucket | None:
        """A tumbling ``window(time, '<width>')`` (no slide, no start offset): Spark floors
        the instant's microseconds since the epoch to the width, whatever the session zone."""
        if len(node.expressions) != 2 or self._timestamp_as != "timestamp":
            return None
        time, width = node.expressions
        if not self._is_time(time) or not isinstance(width, exp.Literal) or not width.is_string:
            return None
        try:
            nanos = parse_interval_ns(width.name)
        except PredicateError:
            return None  # Spark says whether it is an interval at all
        if nanos <= 0 or nanos % _NS_PER_MS:
            return None
        return TimeBucket("window", BUCKET_COLUMN, width=nanos // 1_000)

    # -- the outer query ----------------------------------------------------------------------

    def _merge_key(self, key: exp.Expr) -> exp.Expr:
        """A GROUP BY item of the outer query. A window (by ordinal, alias or expression)
        groups by its partial column: ``window.start`` reads that column, which Spark allows
        only under a GROUP BY of the column itself, not of the struct built from it."""
        bucket = self._bucket
        if bucket is not None and bucket.kind == "window":
            if self._as_bucket(self._resolve_group_expr(key)) == bucket:
                return exp.column(BUCKET_COLUMN)
        return self._merge(key)

    def _bucket_value(self) -> exp.Expr:
        """The bucket expression as the query sees it: the partial column, or for a window
        Spark's ``struct<start: timestamp, end: timestamp>`` of the start."""
        bucket = self._bucket
        assert bucket is not None
        start = exp.column(BUCKET_COLUMN)
        if bucket.kind != "window":
            return start
        return exp.func("named_struct", *self._window_fields(bucket))

    def _window_fields(self, bucket: TimeBucket) -> list[exp.Expr]:
        assert bucket.width is not None
        start = exp.column(BUCKET_COLUMN)
        end = exp.func(
            "timestamp_micros",
            exp.Add(
                this=exp.func("unix_micros", start.copy()),
                expression=exp.Literal.number(bucket.width),
            ),
        )
        return [exp.Literal.string("start"), start, exp.Literal.string("end"), end]

    def _window_field(self, node: exp.Column) -> exp.Expr | None:
        """``window.start`` / ``window.end`` under a window bucket, else None."""
        bucket = self._bucket
        if bucket is None or bucket.kind != "window" or len(node.parts) != 2:
            return None
        table, field = (p.name.lower() for p in node.parts)
        if table != _WINDOW or field not in _WINDOW_FIELDS:
            return None
        if _WINDOW in self._schema.names or self._ref.name_in_query == _WINDOW:
            raise _Unsupported  # a real column or table called window: leave it to Spark
        return self._window_fields(bucket)[2 * _WINDOW_FIELDS.index(field) + 1]

    def _merge(self, node: exp.Expr) -> exp.Expr:
        """``node`` with buckets read from the partial column and aggregates merged."""
        if isinstance(node, _REFUSED):
            raise _Unsupported
        if isinstance(node, exp.Column):
            field = self._window_field(node)
            if field is not None:
                return field
        elif self._bucket is not None and self._as_bucket(node) == self._bucket:
            return self._bucket_value()
        if isinstance(node, exp.AggFunc):
            return self._merge_aggregate(node)
        out = node.copy()
        for key, value in node.args.items():
            if isinstance(value, exp.Expr):
                out.set(key, self._merge(value))
            elif isinstance(value, list):
                out.set(key, [self._merge(v) if isinstance(v, exp.Expr) else v for v in value])
        return out

    def _merge_aggregate(self, node: exp.AggFunc) -> exp.Expr:
        if _is_count_star(node):
            return _coalesce_zero(exp.Sum(this=self._state("count_all", None)))
        kind = type(node)
        extra = {k for k, v in node.args.items() if v and k not in ("this", "big_int")}
        if kind in (exp.ArgMax, exp.ArgMin):
            if extra != {"expression"} or not self._is_time(node.expression):
                raise _Unsupported
            column = self._plain_column(node.this)
            if kind is exp.ArgMax:
                value, time = self._state("last", column), self._state("max", TIME_COLUMN)
                return exp.func("max_by", value, time)
            value, time = self._state("first", column), self._state("min", TIME_COLUMN)
            return exp.func("min_by", value, time)
        if extra:
            raise _Unsupported
        column = self._plain_column(node.this)
        if kind is exp.Count:
            return _coalesce_zero(exp.Sum(this=self._state("count", column)))
        if kind is exp.Sum:
            return exp.Sum(this=self._state("sum", column))
        if kind is exp.Avg:
            total = exp.Sum(this=self._state("sum_double", column))
            count = exp.Sum(this=self._state("count", column))
            return exp.Div(this=total, expression=count, typed=False, safe=False)
        if kind is exp.Min:
            return exp.Min(this=self._state("min", column))
        if kind is exp.Max:
            return exp.Max(this=self._state("max", column))
        raise _Unsupported

    def _state(self, function: StateFunction, column: str | None) -> exp.Column:
        key = (function, column)
        if key not in self._states:
            self._states[key] = PartialState(
                function, column, f"{_STATE_PREFIX}{len(self._states)}"
            )
        return exp.column(self._states[key].name)

    def _check_columns(self, outer: exp.Select) -> None:
        """Every column the outer query reads must be a partial column or a select alias:
        anything else (``time``, a FIELD outside an aggregate, a TAG not grouped by) is a
        query Spark refuses or reads differently — leave it to Spark as written."""
        available = {*self._keys, BUCKET_COLUMN, *(s.name for s in self._states.values())}
        for column in outer.find_all(exp.Column):
            name = column.name.lower()
            if name in available and (not column.table or self._qualifies(column)):
                continue
            if not column.table and name in self._aliases:
                continue
            raise _Unsupported

    # -- columns ------------------------------------------------------------------------------

    def _qualifies(self, column: exp.Column) -> bool:
        parts = [p.name.lower() for p in column.parts][:-1]
        return parts == [self._ref.name_in_query] if parts else True

    def _column(self, node: exp.Column) -> str | None:
        """The table column ``node`` names, or None."""
        if not self._qualifies(node) or isinstance(node.this, exp.Star):
            return None
        name = node.name.lower()
        return name if name in self._schema.names else None

    def _plain_column(self, node: exp.Expr | None) -> str:
        node = _unparen(node) if node is not None else None
        name = self._column(node) if isinstance(node, exp.Column) else None
        if name is None:
            raise _Unsupported  # an expression, DISTINCT, a literal ...
        return name

    def _is_time(self, node: exp.Expr | None) -> bool:
        node = _unparen(node) if node is not None else None
        return isinstance(node, exp.Column) and self._column(node) == TIME_COLUMN


def _unparen(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _positive_int(node: exp.Expr | None) -> int | None:
    node = _unparen(node) if node is not None else None
    if isinstance(node, exp.Literal) and not node.is_string and node.name.isdigit():
        value = int(node.name)
        return value if 0 < value < 2**63 else None
    return None


def _is_count_star(node: exp.Expr) -> bool:
    return (
        isinstance(node, exp.Count)
        and isinstance(node.this, exp.Star)
        and not any(v for k, v in node.args.items() if k not in ("this", "big_int"))
    )


def _coalesce_zero(total: exp.Expr) -> exp.Expr:
    # count is 0, not NULL, over no rows (a global aggregate of an empty scan).
    return exp.Coalesce(this=total, expressions=[exp.Literal.number(0)])
