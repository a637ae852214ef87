"""In-process read throughput: the native reader alone, and the data source's own read path.

Neither involves Spark: ``native`` is ``tsfile.TsFileReader.query_table`` + ``read_arrow_batch``
over every part, in native blocks of the size every scan uses (the floor the Spark path can
approach); ``datasource`` runs exactly what a Spark Python worker runs
(``TsFileScanReader.read`` on each planned partition) but keeps the Arrow batches in this
process, so Spark-path time minus this is the cost of Spark's Python worker hand-off. Both are
single-threaded; Spark uses every core.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from bench.datagen import TABLE

__all__ = ["native_scan", "datasource_scan"]


def native_scan(path: str, columns: Sequence[str]) -> dict[str, Any]:
    """Rows/s of the raw reader over every part of the table at ``path``."""
    import tsfile

    from tsfile_catalog.formats.tsfile.scan import NATIVE_BLOCK_ROWS
    from tsfile_catalog.table import open_table

    table = open_table(path)
    rows = 0
    started = time.perf_counter()
    for part in table.parts():
        reader = tsfile.TsFileReader(os.path.join(table.location, part.path))
        try:
            result = reader.query_table(
                TABLE,
                list(columns),
                start_time=part.min_time,
                end_time=part.max_time,
                batch_size=NATIVE_BLOCK_ROWS,
            )
            try:
                while (batch := result.read_arrow_batch()) is not None:
                    rows += batch.num_rows
            finally:
                result.close()
        finally:
            reader.close()
    seconds = time.perf_counter() - started
    return {
        "columns": list(columns),
        "rows": rows,
        "seconds": seconds,
        "rows_per_s": rows / seconds,
    }


def datasource_scan(path: str, options: dict[str, str]) -> dict[str, Any]:
    """Rows/s of the tsfile data source's reader run in this process, partition by partition."""
    from tsfile_catalog.datasource.source import TsFileDataSource

    started = time.perf_counter()
    source = TsFileDataSource({"path": path, **options})
    reader = source.reader(source.schema())
    partitions = reader.partitions()
    planned = time.perf_counter() - started
    rows = 0
    for partition in partitions:
        for batch in reader.read(partition):
            rows += batch.num_rows
    seconds = time.perf_counter() - started
    return {
        "options": options,
        "partitions": len(partitions),
        "rows": rows,
        "plan_seconds": planned,
        "seconds": seconds,
        "rows_per_s": rows / seconds if seconds else 0.0,
    }
