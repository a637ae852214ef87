"""Aggregates Spark pushes into a catalog table's scan: answered from part statistics, or
pre-aggregated by the scan.

Spark offers the plugin an aggregation (``count``, ``sum``, ``avg``, ``min``, ``max``, grouped
by columns or not) only when every filter of the query was taken by the scan, and asks twice:

* **complete** (``supportCompletePushDown``): the answer, one row per group, from the same
  planning as ``Catalog.sql``'s statistics answers
  (:func:`~tsfile_catalog.metadata.stats_aggregates.plan_aggregates`: the manifest's per-device
  statistics, reading only devices that straddle a time bound), and only when it is exact. The
  rows go back to the JVM as a local scan (no Spark job) and Spark keeps no aggregate of its
  own, so ``avg`` is answered as itself.
* **partial** (``pushAggregation`` of what statistics did not answer; Spark has then split
  ``avg`` into ``sum`` and ``count``): a ``partialAggregate`` scan, ``Catalog.sql``'s
  pre-aggregation (:class:`~tsfile_catalog.metadata.partial_aggregates.PartialSpec`), whose
  rows per group and chunk Spark merges (a sum of counts, a max of maxima, ...). The scan still
  answers every device that lies wholly inside the WHERE from its statistics.

An argument is a column or, as ``Catalog.sql`` answers it too, a BOOLEAN column cast to an
integral type: ``sum(CAST(b AS INT))`` is its number of true values, ``avg`` their share,
``count``/``min``/``max`` those of ``b`` as 0 and 1
(:func:`~tsfile_catalog.metadata.stats_aggregates.of_boolean_cast`), from statistics or
pre-aggregated (the ``sum_true`` partial state).

Spark never offers ``max_by``/``min_by``: its V2 aggregate translation
(``V2ExpressionBuilder``) has no such function. The plugin's optimizer rule
(``io.tsfilecatalog.spark.ByTimeAggregates``) finds such an aggregation over a scan that took
the whole WHERE and asks for it here, in complete mode, in the same JSON with an ``ordering``
column: ``max_by(c, time)``/``min_by(c, time)`` are answered from the manifest's last/first
statistics as ``Catalog.sql`` answers them, or not at all (a tie Spark would break by the
order it meets rows in, an ordering other than ``time``).

Anything else (a FIELD or time in GROUP BY, DISTINCT, a type neither answers exactly, an
integer ``avg`` that statistics do not answer) is left to Spark's own aggregation of the
scanned rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import types as T

from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.exec.stamps import check_skipped_sources
from tsfile_catalog.exec.stats_aggregates import read_device_stats
from tsfile_catalog.metadata.partial_aggregates import (
    PartialSpec,
    PartialState,
    StateFunction,
    TimeBucket,
    parse_partial_spec,
)
from tsfile_catalog.metadata.scan import plan_bound
from tsfile_catalog.metadata.schema import TIME_COLUMN, DataType, TableSchema
from tsfile_catalog.metadata.stats_aggregates import (
    Aggregate,
    AggregateFunction,
    finish_aggregates,
    of_boolean_cast,
    plan_aggregates,
)
from tsfile_catalog.spark_catalog.scan_request import ScanRequest
from tsfile_catalog.spark_catalog.scans import plan_scan

__all__ = ["push_aggregation"]

_FUNCTIONS: dict[str, AggregateFunction] = {
    "CountStar": "count",
    "Count": "count",
    "Sum": "sum",
    "Avg": "avg",
    "Min": "min",
    "Max": "max",
    "MaxBy": "max_by",
    "MinBy": "min_by",
}
# The functions that order by a column (``ordering``): answered when it is ``time``.
_BY_TIME = frozenset({"max_by", "min_by"})
# The partial state that pre-aggregates each function (count(*) is count_all).
_STATES: dict[AggregateFunction, StateFunction] = {
    "count": "count",
    "sum": "sum",
    "sum_true": "sum_true",
    "min": "min",
    "max": "max",
}
# The integral types of a V2 cast (their JSON names) and their Spark types.
_INTEGRAL_CASTS: dict[str, T.DataType] = {
    "byte": T.ByteType(),
    "short": T.ShortType(),
    "integer": T.IntegerType(),
    "long": T.LongType(),
}
_INTEGERS = frozenset({DataType.INT32, DataType.INT64})
_BUCKET = "__bucket"  # the partial rows' time bucket column
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


def _aggregates(
    schema: TableSchema, nodes: Sequence[Mapping[str, Any]]
) -> list[tuple[Aggregate, T.DataType | None]] | None:
    """Spark's aggregate functions over plain columns (or ``*``) or over a BOOLEAN column cast
    to an integral type (``sum(CAST(b AS INT))``, as ``Catalog.sql`` answers it:
    :func:`~tsfile_catalog.metadata.stats_aggregates.of_boolean_cast`), each with the cast's
    Spark type (None without a cast), and ``max_by``/``min_by`` ordered by ``time``; None for
    anything else."""
    out: list[tuple[Aggregate, T.DataType | None]] = []
    for node in nodes:
        function = _FUNCTIONS.get(str(node.get("function")))
        if function is None or node.get("distinct"):
            return None
        ordering = node.get("ordering")
        if (function in _BY_TIME) != (ordering is not None):
            return None
        if ordering is not None and _column(ordering) != TIME_COLUMN:
            return None
        argument = node.get("argument")
        if argument is None:
            out.append((Aggregate(function), None))
            continue
        column = _column(argument)
        if column is not None:
            out.append((Aggregate(function, column), None))
            continue
        target = _INTEGRAL_CASTS.get(str(argument.get("cast", "")).strip('"'))
        inner = _column(argument.get("arg"))
        aggregate = (
            None if target is None or inner is None else of_boolean_cast(schema, function, inner)
        )
        if aggregate is None:
            return None
        out.append((aggregate, target))
    return out


def push_aggregation(
    scan: ScanRequest,
    *,
    aggregates: Sequence[Mapping[str, Any]],
    group_by: Sequence[Mapping[str, Any]],
    where: str | None,
    time_zone: str,
    mode: str = "complete",
    offered: Sequence[Mapping[str, Any]] = (),
    parallelism: int | None = None,
    user_options: Mapping[str, str] | None = None,
) -> dict[str, Any] | None:
    """The answer to an aggregation Spark pushes, or None when it is not exact.

    ``mode`` ``complete``: the result rows from statistics (group-by values, then the
    aggregates) and their schema. ``partial``: the plan of a scan that pre-aggregates (as
    :func:`~tsfile_catalog.spark_catalog.scans.plan_scan` returns it); ``offered`` are the
    aggregations Spark offered before, the query's own first.

    Values are Spark's internal ones where they differ from Python's: a timestamp is
    microseconds since the epoch.
    """
    schema = scan.schema
    pushed = _aggregates(schema, aggregates)
    grouping = _grouping(schema, group_by, scan.timestamp_as)
    if pushed is None or grouping is None:
        return None
    wanted = [aggregate for aggregate, _ in pushed]
    if _splits_integer_avg(schema, wanted, offered):
        return None
    keys, bucket = grouping
    if mode == "partial":
        spec = _partial_spec(schema, wanted, keys, bucket)
        if spec is None:
            return None
        return plan_scan(
            scan,
            columns=(),
            where=where,
            time_zone=time_zone,
            parallelism=parallelism,
            user_options=user_options or {},
            partial=spec,
        )
    if bucket is not None:
        return None  # statistics answer no time bucket: the scan pre-aggregates it
    return _from_statistics(scan, pushed, keys, where, time_zone)


def _from_statistics(
    scan: ScanRequest,
    pushed: Sequence[tuple[Aggregate, T.DataType | None]],
    groups: Sequence[str],
    where: str | None,
    time_zone: str,
) -> dict[str, Any] | None:
    schema = scan.schema
    wanted = [aggregate for aggregate, _ in pushed]
    fields = _result_fields(scan, schema, pushed)
    if fields is None:
        return None
    bound = None if where is None else scan.bind(where, time_zone)
    resolved = ResolvedScan.of_table(scan.opened, unit=scan.unit, timestamp_as=scan.timestamp_as)
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
    rows = finish_aggregates(schema, devices, wanted, groups)
    if rows is None:
        return None
    scale = _MICROS[scan.unit] if scan.timestamp_as == "timestamp" else 1
    out: list[list[object]] = []
    for key, values in rows:
        row: list[object] = list(key)
        for (aggregate, cast), value in zip(pushed, values, strict=True):
            if aggregate.column == TIME_COLUMN and aggregate.function != "count":
                # A raw time in the table's unit, as the scan's timestamp (microseconds).
                value = None if value is None else int(str(value)) * (scale or 1)
            elif cast is not None and isinstance(value, bool):
                value = int(value)  # min/max of CAST(b AS <integral>): b's value as 0 or 1
            row.append(value)
        out.append(row)
    group_fields = [T.StructField(g, T.StringType(), True) for g in groups]
    filtered = f", where: {where}" if where else ""
    return {
        "schema": T.StructType(group_fields + fields).json(),
        "rows": out,
        "description": f"{scan.shown} statistics{filtered}",
    }


def _splits_integer_avg(
    schema: TableSchema, wanted: Sequence[Aggregate], offered: Sequence[Mapping[str, Any]]
) -> bool:
    """Whether ``wanted`` sums an integer column that an aggregation offered before (the
    query's own) averaged: Spark splits an ``avg`` it cannot push whole into ``sum``/``count``,
    and that BIGINT ``sum`` fails past 2**63 and rounds differently past 2**53, where the
    query's ``avg`` adds doubles. Spark then evaluates the query's ``avg`` itself."""
    averaged = {
        _column(node.get("argument"))
        for aggregation in offered
        for node in aggregation.get("aggregates") or []
        if node.get("function") == "Avg"
    } - {a.column for a in wanted if a.function == "avg"}
    for aggregate in wanted:
        column = aggregate.column
        typed = schema.column(column) if column is not None and column in averaged else None
        if aggregate.function == "sum" and typed is not None and typed.type in _INTEGERS:
            return True
    return False


def _grouping(
    schema: TableSchema, group_by: Sequence[Mapping[str, Any]], timestamp_as: str
) -> tuple[list[str], TimeBucket | None] | None:
    """Spark's GROUP BY as TAG columns and, last (where the partial rows hold it), at most
    one time bucket; None for anything else."""
    keys: list[str] = []
    bucket: TimeBucket | None = None
    for node in group_by:
        name = _column(node)
        width = _floor_width(node) if timestamp_as == "long" else None
        if bucket is not None:
            return None  # a key after the bucket: the partial rows' order is not Spark's
        if name is not None and name in schema.tag_names:
            keys.append(name)
        elif width is not None:
            bucket = TimeBucket("floor", _BUCKET, width=width)
        else:
            return None
    return keys, bucket


def _floor_width(node: Mapping[str, Any]) -> int | None:
    """``n`` of ``floor(time / n) * n`` over a BIGINT ``time``, as Spark hands it over: the
    division of ``CAST(time AS DOUBLE)`` by the double ``n``, floored, times the long
    ``n`` (the ``floor`` bucket, which divides as doubles too)."""
    product = node.get("args") or []
    if node.get("op") != "*" or len(product) != 2:
        return None
    floor, factor = product
    width = _whole(factor)
    inner = floor.get("args") or []
    if width is None or floor.get("op") != "FLOOR" or len(inner) != 1:
        return None
    division = inner[0].get("args") or []
    if inner[0].get("op") != "/" or len(division) != 2:
        return None
    time, divisor = division
    if time.get("cast", "").strip('"') != "double" or _column(time.get("arg")) != TIME_COLUMN:
        return None
    return width if _whole(divisor) == width else None


def _whole(node: Mapping[str, Any]) -> int | None:
    """A positive whole literal (an integral type, or a double that holds it exactly)."""
    text, kind = node.get("lit"), str(node.get("type", "")).strip('"')
    if text is None or kind not in ("integer", "long", "double"):
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    if not value.is_integer() or not 0 < value < 2**53:
        return None
    return int(value)


def _partial_spec(
    schema: TableSchema,
    wanted: Sequence[Aggregate],
    groups: Sequence[str],
    bucket: TimeBucket | None,
) -> PartialSpec | None:
    """The pre-aggregation of ``wanted`` by the TAG columns ``groups`` and ``bucket``, one
    state per aggregate in Spark's order, or None when a state is not exact."""
    states: list[PartialState] = []
    for index, aggregate in enumerate(wanted):
        column = aggregate.column
        function = _STATES.get(aggregate.function)
        if function is None:
            return None
        if function == "count" and column is None:
            function = "count_all"
        states.append(PartialState(function, column, f"agg{index}"))
    spec = PartialSpec(tuple(groups), bucket, tuple(states))
    try:
        return parse_partial_spec(spec.to_json(), schema)
    except OptionError:
        return None  # a type the scan does not pre-aggregate exactly, a repeated key


def _result_fields(
    scan: ScanRequest,
    schema: Any,
    aggregates: Sequence[tuple[Aggregate, T.DataType | None]],
) -> list[T.StructField] | None:
    """The type of each aggregate's value as Spark types its result: ``count`` a bigint,
    ``sum`` a bigint or double, ``avg`` a double, ``min``, ``max``, ``max_by`` and ``min_by``
    the column's own type (the cast's, over a cast)."""
    fields = []
    for i, (aggregate, cast) in enumerate(aggregates):
        name = f"agg{i}"
        if aggregate.function == "count":
            fields.append(T.StructField(name, T.LongType(), False))
            continue
        if cast is not None:
            by_function = {"sum_true": T.LongType(), "avg_true": T.DoubleType()}
            fields.append(T.StructField(name, by_function.get(aggregate.function, cast), True))
            continue
        if aggregate.column == TIME_COLUMN:
            if scan.timestamp_as == "timestamp":
                if _MICROS[scan.unit] is None:
                    return None  # nanoseconds: the reader's rounding decides, not this
                fields.append(T.StructField(name, T.TimestampType(), True))
            else:
                fields.append(T.StructField(name, T.LongType(), True))
            continue
        column = schema.column(aggregate.column) if aggregate.column else None
        spark_type = None if column is None else _SPARK_TYPES.get(column.type)
        if spark_type is None:
            return None
        if aggregate.function == "avg":
            spark_type = T.DoubleType()
        elif aggregate.function == "sum":
            if isinstance(spark_type, T.IntegerType | T.LongType):
                spark_type = T.LongType()
            elif isinstance(spark_type, T.FloatType | T.DoubleType):
                spark_type = T.DoubleType()
            else:
                return None
        fields.append(T.StructField(name, spark_type, True))
    return fields
