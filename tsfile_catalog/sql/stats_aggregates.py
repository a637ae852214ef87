"""Aggregate queries answered from part statistics, reading only the rows they cannot tell.

``Catalog.sql`` hands every SELECT to :func:`recognize` first. A query over one catalog table
(or URL reference, with optional time travel) whose SELECT list holds only aggregates
(``count(*)``, ``count(c)``, ``sum``, ``avg``, ``min``, ``max``, ``max_by(c, time)``,
``min_by(c, time)``, optionally aliased) and the ``GROUP BY`` TAG columns, and whose WHERE is
time ranges and TAG predicates, is answered by :func:`answer` (``count``/``min``/``max`` of
``time`` too, from the devices' time ranges, as ``bigint`` or ``timestamp`` per
``timestampAs``): the planner
(:func:`~tsfile_catalog.metadata.stats_aggregates.plan_aggregates`) takes every (part, device)
entirely inside the WHERE from the manifest; the devices straddling a time bound are read
through the shared read path and summarised in the driver
(:func:`~tsfile_catalog.exec.stats_aggregates.read_device_stats`); the result is a local DataFrame
with the schema Spark itself gives the query (names such as ``count(1)``, ``sum(v)``; types
such as BIGINT for a sum of INT). Whatever is not provably exact returns None and Spark
evaluates the query as usual: HAVING, ORDER BY, LIMIT, DISTINCT, FIELD predicates, a NaN or
infinity under a float sum, possible BIGINT overflow, max_by ties... A FLOAT/DOUBLE sum or avg
equals Spark's up to the order of additions, which Spark's own does not fix either (the
partial-aggregation contract, docs/sql.md).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T
from sqlglot import exp

from tsfile_catalog.datasource.types import (
    TimestampAs,
    local_relation,
    spark_schema,
    to_output,
)
from tsfile_catalog.exceptions import DataError
from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.exec.stamps import check_sources
from tsfile_catalog.exec.stats_aggregates import read_device_stats
from tsfile_catalog.metadata.expressions import TimeUnit
from tsfile_catalog.metadata.scan import ScanPlan
from tsfile_catalog.metadata.schema import TIME_COLUMN, TableSchema
from tsfile_catalog.metadata.stats_aggregates import (
    Aggregate,
    AggregateFunction,
    finish_aggregates,
    plan_aggregates,
)
from tsfile_catalog.sql.analysis import TableRef, single_table_ref
from tsfile_catalog.sql.ref_rewrite import rewrite_table_refs

__all__ = ["AggregateQuery", "recognize", "answer"]

_CLAUSES = frozenset({"expressions", "from_", "where", "group"})


@dataclass(frozen=True, slots=True)
class AggregateQuery:
    """A recognised query: its table reference, the aggregates and GROUP BY columns (lower
    case), and for each SELECT item, the index of its aggregate or (negative: ``-1 - i``) of
    its GROUP BY column."""

    ref: TableRef
    aggregates: tuple[Aggregate, ...]
    group_by: tuple[str, ...]
    items: tuple[int, ...]


def recognize(query: exp.Expr) -> AggregateQuery | None:
    """The aggregate query ``query`` is, when statistics may answer it; else None."""
    ref = single_table_ref(query, _CLAUSES)
    if ref is None:
        return None
    assert isinstance(query, exp.Select)
    group_by: list[str] = []
    group = query.args.get("group")
    if group is not None:
        if any(value for key, value in group.args.items() if key != "expressions"):
            return None  # ROLLUP, CUBE, GROUPING SETS, ALL
        for node in group.expressions:
            name = _column(node, ref)
            if name is None or name in group_by:
                return None
            group_by.append(name)
    aggregates: list[Aggregate] = []
    items: list[int] = []
    for projection in query.expressions:
        node = projection.unalias()
        name = _column(node, ref)
        if name is not None:
            if name not in group_by:
                return None
            items.append(-1 - group_by.index(name))
            continue
        aggregate = _aggregate(node, ref)
        if aggregate is None:
            return None
        items.append(len(aggregates))
        aggregates.append(aggregate)
    if not aggregates:
        return None
    return AggregateQuery(ref, tuple(aggregates), tuple(group_by), tuple(items))


def _column(node: exp.Expr, ref: TableRef) -> str | None:
    """The lower-case name of a column reference to ``ref`` (unqualified or qualified by its
    name in the query), else None."""
    if not isinstance(node, exp.Column) or not isinstance(node.this, exp.Identifier):
        return None
    if node.args.get("db") or node.args.get("catalog"):
        return None
    qualifier = node.table
    if qualifier and qualifier.lower() != ref.name_in_query:
        return None
    return node.name.lower()


_INTEGRAL = frozenset(
    {
        exp.DataType.Type.TINYINT,
        exp.DataType.Type.SMALLINT,
        exp.DataType.Type.INT,
        exp.DataType.Type.BIGINT,
    }
)


def _aggregate(node: exp.Expr, ref: TableRef) -> Aggregate | None:
    if isinstance(node, exp.Count):
        inner = node.this
        if node.expressions:
            return None
        if (isinstance(inner, exp.Star) and not any(inner.args.values())) or (
            isinstance(inner, exp.Literal) and not inner.is_string
        ):
            return Aggregate("count")  # count(*), count(1): every row
        column = _column(inner, ref) if inner is not None else None
        return Aggregate("count", column) if column is not None else None
    if type(node) is exp.CountIf:
        column = _column(node.this, ref)
        return Aggregate("count_if", column) if column is not None else None
    if type(node) is exp.Sum and isinstance(node.this, exp.Cast) and not node.expressions:
        # sum(CAST(b AS INT)): the number of true values of a BOOLEAN b (supported_aggregate
        # checks the type; a cast of anything else falls back). The Spark dialect reads CAST as
        # TryCast, the same for a BOOLEAN, which every integral type holds.
        cast = node.this
        if cast.to.this not in _INTEGRAL:
            return None
        column = _column(cast.this, ref)
        return Aggregate("sum_true", column) if column is not None else None
    simple: dict[type[exp.Expr], AggregateFunction] = {
        exp.Sum: "sum",
        exp.Avg: "avg",
        exp.Min: "min",
        exp.Max: "max",
    }
    for kind, function in simple.items():
        if type(node) is kind:
            if node.expressions:
                return None  # min/max with several arguments is not the aggregate
            column = _column(node.this, ref)
            return Aggregate(function, column) if column is not None else None
    if isinstance(node, exp.ArgMax | exp.ArgMin):
        if _column(node.expression, ref) != TIME_COLUMN or node.args.get("count"):
            return None
        column = _column(node.this, ref)
        if column is None:
            return None
        return Aggregate("max_by" if isinstance(node, exp.ArgMax) else "min_by", column)
    return None


def answer(
    spark: SparkSession,
    query: exp.Expr,
    found: AggregateQuery,
    scan: ResolvedScan,
    plan: ScanPlan,
) -> DataFrame | None:
    """The query's result from statistics and the straddling rows, or None (not exact).
    ``scan.unit`` is the table's ``timestampPrecision``: raw ``min``/``max(time)`` become
    Spark timestamps with it under ``scan.timestamp_as = timestamp``."""
    schema, timestamp_as = plan.schema, scan.timestamp_as
    if any(schema.column(name) is None or name not in schema.tag_names for name in found.group_by):
        return None  # GROUP BY a FIELD or time: not what device statistics group by
    planned = plan_aggregates(plan, found.aggregates)
    if planned is None:
        return None
    # The parts read are checked by their read; the others answer from statistics alone.
    read = {path for piece in planned.reads for path in piece.paths}
    check_sources(scan.io, (p for p in plan.parts if p.path not in read))
    devices = list(planned.known)
    if planned.reads:
        wanted = {a.column for a in found.aggregates}
        columns = [c.name for c in schema.fields if c.name in wanted]
        devices += read_device_stats(scan, planned.reads, plan.pushdown, columns)
    rows = finish_aggregates(schema, devices, found.aggregates, found.group_by)
    if rows is None:
        return None
    result_schema = _result_schema(spark, query, schema, timestamp_as)
    if result_schema is None:
        return None
    out = [tuple(key[-1 - i] if i < 0 else values[i] for i in found.items) for key, values in rows]
    for position, (i, field) in enumerate(zip(found.items, result_schema.fields, strict=True)):
        if i >= 0 and found.aggregates[i].column == TIME_COLUMN and _is_timestamp(field):
            converted = _timestamps([row[position] for row in out], schema, scan.unit)
            if converted is None:
                return None
            out = [
                (*r[:position], v, *r[position + 1 :]) for r, v in zip(out, converted, strict=True)
            ]
    return local_relation(spark, out, result_schema)


def _is_timestamp(field: T.StructField) -> bool:
    return isinstance(field.dataType, T.TimestampType)


def _timestamps(raw: Sequence[object], schema: TableSchema, unit: TimeUnit) -> list[object] | None:
    """Raw times as the Spark timestamps a scan returns (the reader's own conversion), or
    None when one lies outside Spark's range (the usual path then reports it)."""
    arrow = pa.table({TIME_COLUMN: pa.array(raw, pa.int64())})
    out_schema = pa.schema([pa.field(TIME_COLUMN, pa.timestamp("us", tz="UTC"))])
    try:
        return to_output(arrow, schema, out_schema, unit).column(0).to_pylist()
    except DataError:
        return None


def _result_schema(
    spark: SparkSession, query: exp.Expr, schema: TableSchema, timestamp_as: TimestampAs
) -> T.StructType | None:
    """The schema Spark gives ``query`` (column names, types, nullability), from analysing it
    over an empty relation of the table's columns: no job runs. None when Spark rejects it
    (then the usual path reports Spark's own error)."""
    empty = spark.createDataFrame([], spark_schema(schema, schema.display_names, timestamp_as))
    view = f"__tsfc_stats_{uuid.uuid4().hex}"
    empty.createOrReplaceTempView(view)
    try:
        return spark.sql(rewrite_table_refs(query, lambda ref: view)).schema
    except AnalysisException:
        return None
    finally:
        spark.catalog.dropTempView(view)
