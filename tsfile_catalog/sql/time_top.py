"""Spotting ``SELECT ... FROM t [WHERE ...] ORDER BY time [DESC] ... LIMIT n`` in Catalog.sql.

Such a query needs only the first ``n`` rows in time order, so its scan may read just the
parts that can hold them (:mod:`tsfile_catalog.metadata.time_top`); Spark still sorts and
limits. That holds only when the scan returns exactly the rows Spark would sort: one table,
every WHERE conjunct taken by its scan, no aggregation, grouping, DISTINCT, window or OFFSET,
and ``time`` in ORDER BY being the table's column, not a select alias of something else.
"""

from __future__ import annotations

from sqlglot import exp

from tsfile_catalog.metadata.schema import TIME_COLUMN
from tsfile_catalog.metadata.time_top import TimeTop
from tsfile_catalog.sql.analysis import TableRef, single_table_ref
from tsfile_catalog.sql.statements import TableName

__all__ = ["as_time_top"]

# The SELECT clauses such a query may use (sqlglot argument names).
_CLAUSES = frozenset({"expressions", "from_", "where", "order", "limit"})


def as_time_top(query: exp.Expr) -> tuple[TableRef, TimeTop] | None:
    """The reference and the top-N of a query ordered first by its table's ``time`` with a
    literal LIMIT, whose scan evaluates its every WHERE conjunct; else None."""
    ref = single_table_ref(query, _CLAUSES)
    if ref is None or not isinstance(query, exp.Select):
        return None
    order, limit = query.args.get("order"), query.args.get("limit")
    if order is None or limit is None or not order.expressions:
        return None
    n = limit.expression
    if not isinstance(n, exp.Literal) or not n.is_int or int(n.this) < 1:
        return None
    first = order.expressions[0]
    column = first.this if isinstance(first, exp.Ordered) else first
    if not isinstance(column, exp.Column) or column.name.lower() != TIME_COLUMN:
        return None
    if column.table and column.table.lower() not in _names_of(ref):
        return None
    for item in query.expressions:
        if item.find(exp.AggFunc, exp.Window):
            return None  # an aggregate without GROUP BY is one row; a window sees every row
        if (
            isinstance(item, exp.Alias)
            and item.alias.lower() == TIME_COLUMN
            and not (isinstance(item.this, exp.Column) and item.this.name.lower() == TIME_COLUMN)
        ):
            return None  # ORDER BY time would sort by this alias, not the table's time
    descending = bool(first.args.get("desc")) if isinstance(first, exp.Ordered) else False
    return ref, TimeTop(int(n.this), descending)


def _names_of(ref: TableRef) -> set[str]:
    """The names a column of ``ref`` may be qualified with (a qualifier naming anything
    else, such as a struct column's field ``s.time``, is not the table's time)."""
    if ref.alias:
        return {ref.alias.lower()}
    return {ref.table.name} if isinstance(ref.table, TableName) else set()
