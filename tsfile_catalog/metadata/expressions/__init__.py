"""Row predicates as immutable data, bound to a table schema with Spark's semantics.

Shaped like pyiceberg's ``expressions/``: :mod:`.model` holds the expression classes (in
pyiceberg the package ``__init__`` holds them; here ``__init__`` also re-exports the binder
and the pushdown split, as the old module did, so a model in ``__init__`` would make those
modules import the package that imports them: an import circle). :mod:`.bind` binds an
expression to a schema, :mod:`.pushdown` splits off what TsFile evaluates, :mod:`.literals`
reads ISO-8601 times, :mod:`.parser` reads SQL predicate text (sqlglot, so it is not imported
here) and :mod:`.pruning` evaluates a bound predicate against part statistics. Modules of
the package import each other directly, never through this one.
"""

from __future__ import annotations

from tsfile_catalog.metadata.expressions.bind import BindContext, bind
from tsfile_catalog.metadata.expressions.literals import (
    parse_iso_date,
    parse_iso_datetime,
    to_raw_time,
)
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
    columns_of,
    conjunction,
    conjuncts,
    needs_time_zone,
)
from tsfile_catalog.metadata.expressions.pushdown import ScanPushdown, split_pushdown

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
    "BindContext",
    "ScanPushdown",
    "INT64_MIN",
    "INT64_MAX",
    "INT32_MIN",
    "INT32_MAX",
    "bind",
    "conjuncts",
    "conjunction",
    "split_pushdown",
    "columns_of",
    "needs_time_zone",
    "to_raw_time",
    "parse_iso_datetime",
    "parse_iso_date",
]
