"""Partial aggregation of scanned rows (pyarrow ``group_by``), in the raw domain, no Spark.

Input is what :func:`~tsfile_catalog.exec.read.read_slices` returns for
``spec.input_columns(schema)`` — exact, filtered rows. Output is one row per group of the
chunk with the spec's columns (:attr:`PartialSpec.output_names`): TAG values, the raw bucket,
and the partial states, each meaning what Spark's own partial aggregate would hold, so that
merging them in Spark (sum of counts and sums, min of mins, max_by of lasts by their time)
equals aggregating the rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from tsfile_catalog.exec.time_buckets import bucket_raw
from tsfile_catalog.metadata.expressions import TimeUnit
from tsfile_catalog.metadata.partial_aggregates import PartialSpec, PartialState
from tsfile_catalog.metadata.schema import TIME_COLUMN

__all__ = ["partial_aggregate", "partial_aggregates"]

# Arrow's hash aggregate for each state; sum_double is a sum over the values cast to DOUBLE,
# sum_true one over a BOOLEAN's values cast to BIGINT (1 for true).
_ARROW_FUNCTION = {
    "count": "count",
    "sum": "sum",
    "sum_double": "sum",
    "sum_true": "sum",
    "min": "min",
    "max": "max",
    "first": "first",
    "last": "last",
}
# first/last keep a NULL value at the earliest/latest time, as min_by/max_by do.
_KEEP_NULLS = pc.ScalarAggregateOptions(skip_nulls=False)
_ONE_GROUP = "__one_group"


def partial_aggregates(
    tables: Iterable[pa.Table], spec: PartialSpec, unit: TimeUnit
) -> Iterator[pa.Table]:
    """One partial table per non-empty input table."""
    for table in tables:
        if table.num_rows:
            yield partial_aggregate(table, spec, unit)


def partial_aggregate(table: pa.Table, spec: PartialSpec, unit: TimeUnit) -> pa.Table:
    """Group ``table`` (raw rows) by the spec's keys and compute its partial states."""
    if spec.time_ordered:
        table = table.sort_by([(TIME_COLUMN, "ascending")])
    keys = list(spec.keys)
    # time always rides along: without keys or input columns (count(*)) the table to group
    # would otherwise have no column, hence no rows.
    columns: dict[str, Any] = {TIME_COLUMN: table.column(TIME_COLUMN)}
    columns.update((key, table.column(key)) for key in keys)
    if spec.bucket is not None:
        columns[spec.bucket.name] = bucket_raw(table.column(TIME_COLUMN), spec.bucket, unit)
        keys.append(spec.bucket.name)
    aggregations: list[tuple[Any, ...]] = []
    outputs: dict[str, str] = {}
    nan_flags: dict[str, str] = {}
    overflow_checks: dict[str, tuple[str, str]] = {}
    for index, state in enumerate(spec.states):
        if state.function == "count_all":
            aggregations.append(([], "count_all"))
            outputs[state.name] = "count_all"
            continue
        assert state.column is not None
        values = table.column(state.column)
        if state.function == "sum_double":
            values = pc.cast(values, pa.float64(), safe=False)  # Spark rounds too
        elif state.function == "sum_true":
            values = pc.cast(values, pa.int64())
        source = f"__in{index}"
        columns[source] = values
        function = _ARROW_FUNCTION[state.function]
        options = _KEEP_NULLS if state.function in ("first", "last") else None
        aggregations.append((source, function, options) if options else (source, function))
        outputs[state.name] = f"{source}_{function}"
        if state.function == "sum" and pa.types.is_integer(values.type):
            # Arrow's integer sum wraps on overflow where Spark (ANSI, 4.x's default) fails:
            # the same sum in doubles tells a group whose exact sum leaves BIGINT.
            check = f"__ovf{index}"
            columns[check] = pc.cast(values, pa.float64(), safe=False)
            aggregations.append((check, "sum"))
            overflow_checks[state.name] = (f"{check}_sum", state.column)
        if state.function == "max" and pa.types.is_floating(values.type):
            # Spark orders NaN above every number, so one NaN makes the max NaN; Arrow's max
            # skips NaN (its min already agrees: NaN only when every value is NaN).
            flag = f"__nan{index}"
            columns[flag] = pc.is_nan(values)
            aggregations.append((flag, "any"))
            nan_flags[state.name] = f"{flag}_any"
    if not keys and not spec.time_ordered:
        result = _one_group(columns, aggregations, table.num_rows)
    else:
        group_keys = keys
        if not keys:
            # pyarrow (26) ignores skip_nulls=False in a keyless group_by's first/last, so a
            # NULL at the latest time would become the last non-NULL value: group by one
            # constant key.
            columns[_ONE_GROUP] = pa.nulls(table.num_rows, pa.int8())
            group_keys = [_ONE_GROUP]
        grouped = pa.table(columns).group_by(group_keys, use_threads=not spec.time_ordered)
        result = grouped.aggregate(aggregations)
    for check, column in overflow_checks.values():
        _check_bigint_sum(result.column(check), column)
    arrays = [result.column(key) for key in keys]
    for state in spec.states:
        array = result.column(outputs[state.name])
        if state.name in nan_flags:
            has_nan = pc.fill_null(result.column(nan_flags[state.name]), False)
            array = pc.if_else(has_nan, pa.scalar(float("nan"), array.type), array)
        arrays.append(array)
    return pa.Table.from_arrays(arrays, names=list(spec.output_names))


def _one_group(columns: dict[str, Any], aggregations: list[tuple[Any, ...]], rows: int) -> pa.Table:
    """The one row a group_by without keys would give, from the scalar kernels of the same
    names (no first/last here), which agree with the hash kernels on nulls and NaN; a
    group_by plans and runs an Acero graph per call, most of the Arrow time of a global
    aggregate over a filtered scan (Q6)."""
    out: dict[str, pa.Array] = {}
    for source, function, *_ in aggregations:
        if function == "count_all":
            out["count_all"] = pa.array([rows], pa.int64())
        else:
            out[f"{source}_{function}"] = pa.array([getattr(pc, function)(columns[source])])
    return pa.table(out)


# Below 2**63 by more than a double sum's rounding over any realistic row count: a partial
# sum past it overflows BIGINT (a sum just under the limit is refused too, which Spark may
# still have computed; that edge fails loudly rather than wrapping).
_BIGINT_SUM_LIMIT = float(2**63) * (1 - 1e-9)


def _check_bigint_sum(sums: pa.ChunkedArray, column: str) -> None:
    largest = pc.max(pc.abs(sums)).as_py()
    if largest is not None and largest >= _BIGINT_SUM_LIMIT:
        raise ArithmeticError(
            f"[ARITHMETIC_OVERFLOW] sum({column}) overflows BIGINT (as Spark's ANSI sum "
            "fails); cast the column to DECIMAL to sum it"
        )


def state_type(state: PartialState, input_type: pa.DataType) -> pa.DataType:
    """The Arrow type of a state over a column of ``input_type`` (raw domain)."""
    if state.function in ("count_all", "count"):
        return pa.int64()
    if state.function == "sum_double":
        return pa.float64()
    if state.function == "sum_true":
        return pa.int64()
    if state.function == "sum":
        return pa.float64() if pa.types.is_floating(input_type) else pa.int64()
    return input_type
