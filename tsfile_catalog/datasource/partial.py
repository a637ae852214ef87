"""The ``partialAggregate`` scan: partial aggregates per partition for Spark to merge.

Set by ``Catalog.sql`` (``tsfile_catalog.sql.partial_aggregates``) when a query's aggregation
can start inside the scan: the source then reports the partial schema and each task returns
one row per group of each chunk it reads instead of the rows (see
:mod:`tsfile_catalog.table.partial_aggregates`).
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import types as T
from pyspark.sql.datasource import InputPartition

from tsfile_catalog.datasource.options import ReadOptions
from tsfile_catalog.datasource.reader import TsFilePartition, TsFileScanReader, _coalesce
from tsfile_catalog.datasource.types import spark_schema, to_output
from tsfile_catalog.discovery import ResolvedScan
from tsfile_catalog.metadata.expressions import Expr, TimestampAs
from tsfile_catalog.metadata.partial_aggregates import PartialSpec, PartialState
from tsfile_catalog.metadata.schema import DataType, TableSchema
from tsfile_catalog.table.partial_aggregates import partial_aggregates

__all__ = ["partial_schema", "TsFilePartialReader"]

_INTEGERS = frozenset({DataType.INT32, DataType.INT64})


def _state_type(state: PartialState, schema: TableSchema, timestamp_as: TimestampAs) -> T.DataType:
    if state.function in ("count_all", "count"):
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

    def read(self, partition: InputPartition | None) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, TsFilePartition):
            return iter(())
        return _coalesce(self._partials(partition))

    def _partials(self, partition: TsFilePartition) -> Iterator[pa.Table]:
        scan, options = self._scan, self._options
        # Chunks of about 64k rows: one group_by each; Spark merges however many rows a
        # group gets.
        chunks = (pa.Table.from_batches([b]) for b in _coalesce(self._read_raw(partition)))
        for table in partial_aggregates(chunks, self._spec, options.precision):
            yield to_output(table, scan.schema, self._out_schema, options.precision)
