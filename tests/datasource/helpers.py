"""Build real TsFile files for tests without Spark."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pyarrow as pa

from tsfile_catalog.formats.tsfile import WriteSettings, write_file
from tsfile_catalog.metadata.schema import DataType, TableSchema


def write_rows(path: str, schema: TableSchema, rows: list[dict[str, object]]) -> None:
    """Write dict rows (keys: time, tags, fields; missing field = null) to a new TsFile."""
    arrays = {"time": pa.array([r["time"] for r in rows], pa.int64())}
    for col in schema.columns:
        type_ = {
            DataType.STRING: pa.string(),
            DataType.DOUBLE: pa.float64(),
            DataType.INT32: pa.int32(),
            DataType.INT64: pa.int64(),
            DataType.BOOLEAN: pa.bool_(),
            DataType.FLOAT: pa.float32(),
        }[col.type]
        arrays[col.name] = pa.array([r.get(col.name) for r in rows], type_)
    write_file(path, pa.table(arrays), schema, WriteSettings())


def age(root: Path, days: int = 30) -> None:
    """Make every file and folder under ``root`` ``days`` old (never through a link), as
    vacuum's retention sees them."""
    then = time.time() - days * 24 * 3600
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            os.utime(os.path.join(folder, name), (then, then), follow_symlinks=False)
