"""Space VACUUM reclaims after an overwrite: a smoke-size copy of the benchmark table is
written, overwritten with the same rows, then vacuumed with no retention. Every byte of the
first write's parts is garbage once the overwrite commits; before VACUUM learned to delete
removed parts, none of it was ever reclaimed.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from bench.datagen import TABLE, TAG_COLUMNS, Scale, build_frame, write_tsfile

__all__ = ["bench_vacuum"]


def _data_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.glob("*.tsfile"))


def bench_vacuum(spark: SparkSession, data_dir: str) -> dict[str, Any]:
    """Bytes of the table's parts before and after VACUUM, what it reclaimed, how long."""
    from tsfile_catalog.table import open_table, vacuum_table

    path = Path(data_dir) / "vacuum"
    frame = build_frame(spark, Scale.smoke())
    write_tsfile(frame, str(path))
    frame.write.format("tsfile").options(table=TABLE, tagColumns=",".join(TAG_COLUMNS)).mode(
        "overwrite"
    ).save(str(path))
    before = _data_bytes(path)
    started = time.perf_counter()
    vacuumed = vacuum_table(str(path), dry_run=False, retention_ms=0, retention_check=False)
    seconds = time.perf_counter() - started
    table = open_table(str(path))
    return {
        "rows": sum(p.row_count for p in table.parts()),
        "live_parts": len(table.parts()),
        "removed_files": len(vacuumed.removed),
        "bytes_before": before,
        "bytes_reclaimed": vacuumed.bytes,
        "bytes_after": _data_bytes(path),
        "seconds": seconds,
    }
