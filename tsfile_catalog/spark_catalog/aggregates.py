"""Aggregates Spark pushes into a catalog table's scan, answered from part statistics.

Spark offers the plugin an aggregation (``count``, ``sum``, ``min``, ``max``, grouped by
columns or not) only when every filter of the query was taken by the scan. The answer comes
from the same planning as ``Catalog.sql``'s statistics answers
(:func:`~tsfile_catalog.metadata.stats_aggregates.plan_aggregates`: the manifest's per-device
statistics, reading only devices that straddle a time bound), and only when it is exact. The
rows go back to the JVM as a local scan (no Spark job); Spark still merges them per group
(``sum`` of the counts, ``max`` of the maxima, ...), which over one row per group changes
nothing. Anything else (a FIELD or time in GROUP BY, DISTINCT, a type statistics cannot
answer exactly) is left to Spark's own aggregation of the scanned rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import types as T

from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.exec.stamps import check_skipped_sources
from tsfile_catalog.exec.stats_aggregates import read_device_stats
from tsfile_catalog.metadata import expressions as ex
from tsfile_catalog.metadata.expressions.parser import parse_predicate
from tsfile_catalog.metadata.scan import plan_bound
from tsfile_catalog.metadata.schema import TIME_COLUMN, DataType
from tsfile_catalog.metadata.stats_aggregates import (
    Aggregate,
    AggregateFunction,
    finish_aggregates,
    plan_aggregates,
)
from tsfile_catalog.storage_options import storage_options_from
from tsfile_catalog.table.handle import open_table

__all__ = ["push_aggregation"]

_FUNCTIONS: dict[str, AggregateFunction] = {
    "CountStar": "count",
    "Count": "count",
    "Sum": "sum",
    "Min": "min",
    "Max": "max",
}
_MICROS = {"ms": 1000, "us": 1, "ns": None}
# The Spark types whose values the JVM side turns into a row (and their statistics' types).
_SPARK_TYPES: dict[DataType, T.DataType] = {
    DataType.BOOLEAN: T.BooleanType(),
    DataType.INT32: T.IntegerType(),
    DataType.INT64: T.LongType(),
    DataType.FLOAT: T.FloatType(),
    DataType.DOUBLE: T.DoubleType(),
    DataType.STRING: T.StringType(),
    DataType.TEXT: T.StringType(),
}


def _column(node: Mapping[str, Any] | None) -> str | None:
    names = None if node is None else node.get("ref")
    if not isinstance(names, list) or len(names) != 1:
        return None
    return str(names[0]).lower()


def push_aggregation(
    scan: Mapping[str, Any],
    *,
    aggregates: Sequence[Mapping[str, Any]],
    group_by: Sequence[Mapping[str, Any]],
    where: str | None,
    time_zone: str,
) -> dict[str, Any] | None:
    """The result rows (group-by values, then the aggregates) and their schema, or None
    when statistics do not answer the aggregation exactly.

    Values are Spark's internal ones where they differ from Python's: a timestamp is
    microseconds since the epoch.
    """
    table = open_table(
        scan["location"],
        version=int(scan["version"]),
        storage_options=storage_options_from(scan["options"]),
    )
    schema = table.schema
    groups = [_column(node) for node in group_by]
    if any(name is None or name not in schema.tag_names for name in groups):
        return None
    wanted: list[Aggregate] = []
    for node in aggregates:
        function = _FUNCTIONS.get(str(node.get("function")))
        if function is None or node.get("distinct"):
            return None
        argument = node.get("argument")
        column = None if argument is None else _column(argument)
        if argument is not None and column is None:
            return None
        wanted.append(Aggregate(function, column))
    fields = _result_fields(scan, schema, wanted)
    if fields is None:
        return None
    context = ex.BindContext(
        unit=scan["unit"], timestamp_as=scan["timestamp_as"], time_zone=time_zone
    )
    bound = None if where is None else ex.bind(parse_predicate(where), schema, context)
    resolved = ResolvedScan.of_table(table, unit=scan["unit"], timestamp_as=scan["timestamp_as"])
    plan = plan_bound(
        schema, resolved.parts, bound, key=resolved.key, candidates=resolved.candidates
    )
    # Answered from statistics: every external part must still be the file they describe.
    check_skipped_sources(resolved.io, resolved.parts, ())
    planned = plan_aggregates(plan, wanted)
    if planned is None:
        return None
    devices = list(planned.known)
    if planned.reads:
        columns = [c.name for c in schema.fields if c.name in {a.column for a in wanted}]
        devices += read_device_stats(resolved, planned.reads, plan.pushdown, columns)
    rows = finish_aggregates(schema, devices, wanted, [g for g in groups if g is not None])
    if rows is None:
        return None
    scale = _MICROS[scan["unit"]] if scan["timestamp_as"] == "timestamp" else 1
    out: list[list[object]] = []
    for key, values in rows:
        row: list[object] = list(key)
        for aggregate, value in zip(wanted, values, strict=True):
            if aggregate.column == TIME_COLUMN and aggregate.function != "count":
                # A raw time in the table's unit, as the scan's timestamp (microseconds).
                value = None if value is None else int(str(value)) * (scale or 1)
            row.append(value)
        out.append(row)
    group_fields = [T.StructField(g or "", T.StringType(), True) for g in groups]
    pushed = f", where: {where}" if where else ""
    return {
        "schema": T.StructType(group_fields + fields).json(),
        "rows": out,
        "description": f"tsfile {scan['table']} version {scan['version']} statistics{pushed}",
    }


def _result_fields(
    scan: Mapping[str, Any], schema: Any, aggregates: Sequence[Aggregate]
) -> list[T.StructField] | None:
    """The type of each aggregate's value as Spark types its partial result: ``count`` a
    bigint, ``sum`` a bigint or double, ``min``/``max`` the column's own type."""
    fields = []
    for i, aggregate in enumerate(aggregates):
        name = f"agg{i}"
        if aggregate.function == "count":
            fields.append(T.StructField(name, T.LongType(), False))
            continue
        if aggregate.column == TIME_COLUMN:
            if scan["timestamp_as"] == "timestamp":
                if _MICROS[scan["unit"]] is None:
                    return None  # nanoseconds: the reader's rounding decides, not this
                fields.append(T.StructField(name, T.TimestampType(), True))
            else:
                fields.append(T.StructField(name, T.LongType(), True))
            continue
        column = schema.column(aggregate.column) if aggregate.column else None
        spark_type = None if column is None else _SPARK_TYPES.get(column.type)
        if spark_type is None:
            return None
        if aggregate.function == "sum":
            if isinstance(spark_type, T.IntegerType | T.LongType):
                spark_type = T.LongType()
            elif isinstance(spark_type, T.FloatType | T.DoubleType):
                spark_type = T.DoubleType()
            else:
                return None
        fields.append(T.StructField(name, spark_type, True))
    return fields
