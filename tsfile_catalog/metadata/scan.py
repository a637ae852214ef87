"""Scan planning: one pure function from (schema, parts, predicate) to the parts to read.

``Table.plan`` and the Spark DataSource both call :func:`plan_scan`, so a manifest table and a
plain directory of TsFiles are pruned by exactly the same rules.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tsfile_catalog.metadata.expressions import (
    BindContext,
    Expr,
    ScanPushdown,
    bind,
    split_pushdown,
)
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.pruning import prune
from tsfile_catalog.metadata.schema import TableSchema

__all__ = ["ScanPlan", "plan_scan", "plan_bound"]


@dataclass(frozen=True)
class ScanPlan:
    """The parts a scan must read, the parts it skips, and what to push into TsFile.

    ``filter`` is the bound predicate (None when there is none); ``pushdown.residual`` is the
    part of it that must still be applied to the rows read.
    """

    parts: tuple[PartFile, ...]
    pruned: tuple[PartFile, ...]
    pushdown: ScanPushdown
    schema: TableSchema
    filter: Expr | None


def plan_scan(
    schema: TableSchema,
    parts: Iterable[PartFile],
    where: str | Expr | None,
    context: BindContext | None = None,
) -> ScanPlan:
    """Parse (if SQL text), bind, split and prune.

    Args:
        schema: the table schema the predicate is bound to.
        parts: candidate parts with their stats.
        where: a Spark SQL predicate, an unbound expression, or None.
        context: how Spark sees the columns (raw time unit, ``timestampAs``, session time
            zone); the default is raw ``ms`` longs with the time zone unknown.

    Raises:
        PredicateError: the predicate cannot be parsed or does not fit the schema.
    """
    expr: Expr | None
    if isinstance(where, str):
        # sqlglot is imported only when there is SQL text to parse: opening a table and
        # planning without a predicate (the CLI's history, detail, parts) must not pay for it.
        from tsfile_catalog.metadata.predicate_sql import parse_predicate

        expr = parse_predicate(where)
    else:
        expr = where
    bound = None if expr is None else bind(expr, schema, context)
    return plan_bound(schema, parts, bound)


def plan_bound(schema: TableSchema, parts: Iterable[PartFile], bound: Expr | None) -> ScanPlan:
    """Split and prune for an already bound predicate."""
    pushdown = split_pushdown(bound, schema)
    if pushdown.empty:
        return ScanPlan((), tuple(parts), pushdown, schema, bound)
    kept, pruned = prune(parts, bound, schema)
    return ScanPlan(tuple(kept), tuple(pruned), pushdown, schema, bound)
