"""A stream over a table whose columns are renamed or dropped while it runs: each part is read
by the physical names its columns have, so the stream never reads another column's data."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from tests.datasource.test_spark_stream import _run
from tsfile_catalog import write_table
from tsfile_catalog.table import open_table

pytestmark = pytest.mark.spark


def _rows(start: int, n: int, name: str = "temp") -> pa.Table:
    return pa.table(
        {
            "time": pa.array([start + i for i in range(n)], pa.int64()),
            "city": ["paris"] * n,
            name: [float(start + i) for i in range(n)],
            "rain": [start + i for i in range(n)],
        }
    )


def test_a_stream_reads_parts_written_after_a_rename_and_a_drop(
    spark: SparkSession, tmp_path: Path
) -> None:
    url = str(tmp_path / "t")
    write_table(url, _rows(0, 3), table="t", tag_columns=["city"])
    ck = tmp_path / "ck"
    first = _run(spark.readStream.format("tsfile").load(url), ck)
    assert [r[2] for b in first for r in b] == [0.0, 1.0, 2.0]
    alter = open_table(url).alter
    alter.rename_column("temp", "temperature")
    alter.drop_columns(["rain"])
    write_table(url, _rows(100, 2, name="temperature").drop_columns(["rain"]))
    # Restarted from its checkpoint: the new part's values, under the table's names now.
    stream = spark.readStream.format("tsfile").load(url)
    assert stream.columns == ["time", "city", "temperature"]
    second = _run(stream, ck)
    assert second == [[(100, "paris", 100.0), (101, "paris", 101.0)]]
