"""The Spark Python-data-source floors: a source that reads nothing and yields ready Arrow
batches, and a sink whose writer drops the batches it is handed.

Timing ``count``/``avg`` over the source measures what Spark itself charges to move rows from
a Python ``DataSourceReader.read()`` into the JVM (worker hand-off, Arrow IPC, row
conversion), with zero storage cost. No TsFile reader can make the Spark path faster than
this; the gap between it and the tsfile query is the reader's own cost. Writing a DataFrame
to the sink measures the other direction: rows into a Python ``DataSourceArrowWriter.write()``
and its commit message back, with nothing encoded or stored; the gap between it and the tsfile
write is the writer's own cost.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceWriter,
    InputPartition,
    WriterCommitMessage,
)

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["ArrowFloorSource", "DiscardSink", "bench_floor", "write_floor"]

_BATCH = 65_536


class _Slice(InputPartition):
    def __init__(self, index: int, rows: int) -> None:
        super().__init__(index)
        self.rows = rows


class _FloorReader(DataSourceReader):
    def __init__(self, rows: int, partitions: int) -> None:
        self._rows, self._partitions = rows, partitions

    def partitions(self) -> list[InputPartition]:
        share, extra = divmod(self._rows, self._partitions)
        return [_Slice(i, share + (i < extra)) for i in range(self._partitions)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        assert isinstance(partition, _Slice)
        full = pa.RecordBatch.from_arrays(
            [pa.array([float(i % 97) for i in range(_BATCH)], pa.float64())], names=["f_double"]
        )
        left = partition.rows
        while left > 0:
            yield full if left >= _BATCH else full.slice(0, left)
            left -= _BATCH


class ArrowFloorSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "bench_arrow_floor"

    def schema(self) -> str:
        return "f_double double"

    def reader(self, schema: Any) -> DataSourceReader:
        return _FloorReader(int(self.options["rows"]), int(self.options["partitions"]))


def bench_floor(
    spark: SparkSession, rows: int, partitions: int, repetitions: int, *, warmup: bool = True
) -> dict[str, Any]:
    """Median seconds of ``count(*), avg(f_double)`` over ``rows`` rows from the floor source."""
    from pyspark.sql import functions as F

    spark.dataSource.register(ArrowFloorSource)

    def once() -> float:
        started = time.perf_counter()
        (
            spark.read.format("bench_arrow_floor")
            .option("rows", str(rows))
            .option("partitions", str(partitions))
            .load()
            .agg(F.count("*"), F.avg("f_double"))
            .collect()
        )
        return time.perf_counter() - started

    if warmup:
        once()
    times = [once() for _ in range(repetitions)]
    median = statistics.median(times)
    return {
        "rows": rows,
        "partitions": partitions,
        "times": times,
        "median_s": median,
        "rows_per_s": rows / median,
    }


class _DiscardWriter(DataSourceArrowWriter):
    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        for _ in iterator:  # every batch crosses from the JVM, and is dropped
            pass
        return WriterCommitMessage()


class DiscardSink(DataSource):
    @classmethod
    def name(cls) -> str:
        return "bench_discard_sink"

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        return _DiscardWriter()


def write_floor(frame: DataFrame) -> None:
    """Write ``frame`` to the discarding sink (one task per partition, as any write)."""
    frame.sparkSession.dataSource.register(DiscardSink)
    frame.write.format(DiscardSink.name()).mode("append").save()
