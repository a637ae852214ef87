"""The ``partialAggregate`` scan: partial aggregates per partition for Spark to merge.

Set by ``Catalog.sql`` (``tsfile_catalog.sql.partial_aggregates``) when a query's aggregation
can start inside the scan: the source then reports the partial schema and each task returns
one row per group of each chunk it reads instead of the rows (see
:mod:`tsfile_catalog.exec.partial_aggregates`).

Planning (:meth:`TsFilePartialReader.partitions`, where the snapshot's statistics are) first
answers the (part, device) pairs whose rows lie wholly inside the WHERE and one time bucket
from their statistics (:mod:`tsfile_catalog.metadata.partial_stats`): their partial rows ride
along the last partition (a partition of their own when nothing is left to read); pairs
whose statistics prove that no row satisfies a FIELD predicate are skipped; only the rest
is sliced and read.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain

import pyarrow as pa
from pyspark.sql import types as T
from pyspark.sql.datasource import InputPartition

from tsfile_catalog.datasource.reader import (
    TsFilePartition,
    TsFileScanReader,
    _coalesce,
    partition_slices,
    prune_scan,
)
from tsfile_catalog.datasource.types import spark_schema, to_output
from tsfile_catalog.exec.partial_aggregates import partial_aggregates
from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.exec.stamps import check_sources
from tsfile_catalog.exec.time_buckets import buckets_of
from tsfile_catalog.metadata.expressions import Expr, TimestampAs
from tsfile_catalog.metadata.partial_aggregates import PartialSpec, PartialState
from tsfile_catalog.metadata.partial_stats import split_by_stats
from tsfile_catalog.metadata.schema import DataType, TableSchema
from tsfile_catalog.metadata.slices import ReadSlice, narrow_slices
from tsfile_catalog.options import ReadOptions

__all__ = ["partial_schema", "TsFilePartialReader", "TsFileStatsPartition"]

_INTEGERS = frozenset({DataType.INT32, DataType.INT64})


def _state_type(state: PartialState, schema: TableSchema, timestamp_as: TimestampAs) -> T.DataType:
    if state.function in ("count_all", "count", "sum_true"):
        return T.LongType()
    assert state.column is not None
    if state.function == "sum_double":
        return T.DoubleType()
    if state.function == "sum":
        col = schema.column(state.column)
        return T.LongType() if col is not None and col.type in _INTEGERS else T.DoubleType()
    return spark_schema(schema, [state.column], timestamp_as).fields[0].dataType


def partial_schema(
    spec: PartialSpec, schema: TableSchema, timestamp_as: TimestampAs
) -> T.StructType:
    """The Spark schema of the partial rows (all nullable: a state may be NULL)."""
    fields = [
        T.StructField(f.name, f.dataType, True)
        for f in spark_schema(schema, spec.keys, timestamp_as).fields
    ]
    if spec.bucket is not None:
        bucket_type: T.DataType = T.LongType() if spec.bucket.kind == "floor" else T.TimestampType()
        fields.append(T.StructField(spec.bucket.name, bucket_type, True))
    for state in spec.states:
        fields.append(T.StructField(state.name, _state_type(state, schema, timestamp_as), True))
    return T.StructType(fields)


def _empty_group(spec: PartialSpec) -> tuple[object, ...]:
    """The partial row of no rows (counts 0, every other state NULL, which Spark's merge
    skips): a global aggregation merged by a plain ``sum`` of the counts (the catalog
    plugin's, where Spark plans the merge) then counts 0 over no rows, not NULL."""
    return tuple(0 if s.function in ("count_all", "count") else None for s in spec.states)


class TsFileStatsPartition(TsFilePartition):
    """The partial rows planning answered from statistics (raw domain, in the spec's output
    order): a few values per answered (part, device) pair, never the statistics; and slices
    to read like any partition (they ride along one, as every task has a fixed cost)."""

    def __init__(
        self, index: int, rows: Sequence[tuple[object, ...]], slices: Sequence[ReadSlice] = ()
    ) -> None:
        super().__init__(index, slices)
        self.rows = tuple(rows)


class TsFilePartialReader(TsFileScanReader):
    """Reads like the plain scan (same partitions, same exact rows), then pre-aggregates."""

    def __init__(
        self,
        scan: ResolvedScan,
        options: ReadOptions,
        spec: PartialSpec,
        schema: T.StructType,
        where: Expr | None,
    ) -> None:
        super().__init__(scan, options, spec.input_columns(scan.schema), schema, where)
        self._spec = spec

    def partitions(self) -> list[InputPartition]:
        scan, options = self._scan, self._options
        plan = prune_scan(scan, self._predicate(None), options)
        bucket, unit = self._spec.bucket, options.precision
        # The very function the read path buckets rows with (session zone and DST included).
        of = buckets_of(bucket, unit) if bucket is not None else None
        split = split_by_stats(
            scan.schema, plan.parts, plan.pushdown, self._spec, of, merges=plan.merges
        )
        # Parts answered wholly from statistics open no file: check them here (the rest are
        # checked when read).
        still_read = {p.path for p in split.parts}
        answered = split.narrowed - still_read
        check_sources(scan.io, (p for p in plan.parts if p.path in answered))
        groups = partition_slices(scan, plan, options, split.parts)
        groups = narrow_slices(groups, split.parts, split.narrowed)
        rows = list(split.rows)
        if not self._spec.keys and self._spec.bucket is None:
            rows.append(_empty_group(self._spec))
        out: list[InputPartition] = [TsFilePartition(i, g) for i, g in enumerate(groups)]
        if rows:
            # With the last (the packing's remainder) group, if any: not a task of its own.
            last = groups.pop() if groups else []
            out[len(groups) :] = [TsFileStatsPartition(len(groups), rows, last)]
        return out

    def read(self, partition: InputPartition | None) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, TsFilePartition):
            return iter(())
        partials = _coalesce(self._partials(partition)) if partition.slices else iter(())
        if isinstance(partition, TsFileStatsPartition):
            return chain(self._stats_rows(partition).to_batches(), partials)
        return partials

    def _stats_rows(self, partition: TsFileStatsPartition) -> pa.Table:
        """The precomputed rows, converted exactly as read rows' partials are: raw times
        (the bucket, time states, TIMESTAMP values) as int64 for :func:`to_output`."""
        columns = list(zip(*partition.rows, strict=True))
        arrays = [
            pa.array(values, pa.int64() if pa.types.is_timestamp(f.type) else f.type)
            for f, values in zip(self._out_schema, columns, strict=True)
        ]
        raw = pa.Table.from_arrays(arrays, names=self._out_schema.names)
        return to_output(raw, self._scan.schema, self._out_schema, self._options.precision)

    def _partials(self, partition: TsFilePartition) -> Iterator[pa.Table]:
        scan, options = self._scan, self._options
        # Chunks of about 64k rows: one group_by each; Spark merges however many rows a
        # group gets.
        chunks = (pa.Table.from_batches([b]) for b in _coalesce(self._read_raw(partition)))
        for table in partial_aggregates(chunks, self._spec, options.precision):
            yield to_output(table, scan.schema, self._out_schema, options.precision)
