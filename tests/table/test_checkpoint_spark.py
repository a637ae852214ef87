"""Spark reads a table whose snapshot comes from a Parquet checkpoint."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession
from pyspark.testing import assertDataFrameEqual

from tests.table.helpers import SCHEMA, append_rows, log_file
from tsfile_catalog.table import clear_cache

pytestmark = pytest.mark.spark


def test_spark_reads_a_table_planned_from_a_parquet_checkpoint(
    spark: SparkSession, tmp_path: Path
) -> None:
    # Real TsFile parts, 12 commits: the cold load below plans from checkpoint 10 (device
    # lists decoded lazily, then pickled to the Python workers) plus commit 11.
    url = str(tmp_path / "t")
    for i in range(12):
        rows = pa.table(
            {
                "time": pa.array([i * 10 + k for k in range(10)], pa.int64()),
                "city": pa.array(["paris" if i % 2 else "oslo"] * 10, pa.string()),
                "temp": pa.array([float(i * 10 + k) for k in range(10)], pa.float32()),
            }
        )
        append_rows(url, rows, SCHEMA)
    assert log_file(tmp_path / "t", 10, ".checkpoint.parquet").exists()
    clear_cache()
    where = "city = 'paris' AND time >= 30 AND time < 75"
    df = spark.read.format("tsfile").option("where", where).load(url)
    expected = spark.read.format("tsfile").option("useMetadataCache", "false").load(url)
    assertDataFrameEqual(df, expected.where(where))
    assert sorted(r.time for r in df.collect()) == [*range(30, 40), *range(50, 60), *range(70, 75)]
