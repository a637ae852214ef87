"""df.write stores every row exactly once, however Spark partitioned the input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.testing import assertDataFrameEqual

import tsfile_catalog

pytestmark = pytest.mark.spark

DDL = "time bigint, city string, temp double"


def _in_partitions(spark: SparkSession, *partitions: list[tuple[object, ...]]) -> DataFrame:
    """A DataFrame whose Spark partition i holds exactly ``partitions[i]``, in order."""
    rows = [row for part in partitions for row in part]
    sizes = [len(part) for part in partitions]
    bounds = [sum(sizes[:i]) for i in range(len(sizes) + 1)]
    rdd = spark.sparkContext.parallelize(range(len(rows)), len(partitions)).mapPartitionsWithIndex(
        lambda i, _: iter(rows[bounds[i] : bounds[i + 1]])
    )
    return spark.createDataFrame(rdd, DDL)


def _save(df: DataFrame, path: Path | str, **options: str) -> None:
    df.write.format("tsfile").options(table="w", tagColumns="city", **options).mode("append").save(
        str(path)
    )


def _rows(spark: SparkSession, path: Path) -> list[tuple[object, ...]]:
    return sorted(tuple(r) for r in spark.read.format("tsfile").load(str(path)).collect())


def test_duplicates_in_different_partitions_or_files_fail_the_write(
    spark: SparkSession, tmp_path: Path
) -> None:
    _save(_in_partitions(spark, [(0, "bj", 0.0)]), tmp_path)
    across_tasks = _in_partitions(
        spark, [(1, "bj", 1.0), (8, "bj", 1.0)], [(8, "bj", 2.0), (9, "sh", 2.0)]
    )
    rolled = _in_partitions(spark, [(8, "bj", 1.0), (9, "bj", 1.0), (8, "bj", 2.0)])
    for df, options in ((across_tasks, {}), (rolled, {"maxRowsPerFile": "2"})):
        with pytest.raises(Exception, match=r"duplicate rows for device \(city='bj'\) at time 8"):
            _save(df, tmp_path, **options)
    assert tsfile_catalog.open_table(str(tmp_path)).version == 0  # nothing committed
    assert len(list(tmp_path.glob("*.tsfile"))) == 1
    assert not list((tmp_path / "_staging").rglob("*.tsfile"))


def test_on_duplicate_last_keeps_the_row_last_in_partition_order(
    spark: SparkSession, tmp_path: Path
) -> None:
    # "last" across parts: the higher Spark partition wins, then the later rolled file.
    df = _in_partitions(
        spark,
        [(1, "bj", 1.0), (8, "bj", 1.0), (9, "bj", 1.0), (8, "bj", 1.5)],
        [(8, "bj", 2.0), (9, "sh", 2.0)],
        [(9, "sh", 3.0), (1, "bj", 3.0)],
    )
    _save(df, tmp_path, onDuplicate="last", maxRowsPerFile="2")
    assert _rows(spark, tmp_path) == [
        (1, "bj", 3.0),
        (8, "bj", 2.0),
        (9, "bj", 1.0),
        (9, "sh", 3.0),
    ]
    table = tsfile_catalog.open_table(str(tmp_path))
    assert sum(p.row_count for p in table.parts()) == 4  # statistics match the rewritten parts
    assert table.history()[0].rows_added == 4


def test_table_without_field_columns_round_trips(spark: SparkSession, tmp_path: Path) -> None:
    rows = [(1, "bj", "d1"), (2, "bj", "d1"), (1, "sh", "d2")]
    df = spark.createDataFrame(rows, "time bigint, city string, device string").repartition(2)
    df.write.format("tsfile").options(table="seen", tagColumns="city,device").mode("append").save(
        str(tmp_path)
    )
    assertDataFrameEqual(spark.read.format("tsfile").load(str(tmp_path)), df)
    table = tsfile_catalog.open_table(str(tmp_path))
    assert sum(p.row_count for p in table.parts()) == 3
    assert (
        min(p.min_time for p in table.parts() if p.min_time is not None),
        max(p.max_time for p in table.parts() if p.max_time is not None),
    ) == (1, 2)


@pytest.mark.s3
def test_duplicates_across_parts_are_resolved_on_s3(
    spark: SparkSession, s3_table: tuple[str, dict[str, Any]]
) -> None:
    # The commit reads and rewrites staged parts through fsspec, not a local path.
    url, storage = s3_table
    fs_options = {f"fs.{k}": str(v) for k, v in storage.items()}
    df = _in_partitions(spark, [(8, "bj", 1.0), (9, "bj", 1.0)], [(8, "bj", 2.0)])
    _save(df, url, onDuplicate="last", **fs_options)
    rows = spark.read.format("tsfile").options(**fs_options).load(url).collect()
    assert sorted(tuple(r) for r in rows) == [(8, "bj", 2.0), (9, "bj", 1.0)]
    found = tsfile_catalog.vacuum(
        url, storage_options=storage, retention_ms=0, retention_check=False
    )
    assert found == []
