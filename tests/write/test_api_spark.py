"""What the Spark-free writer stores is what ``df.write.format("tsfile")`` stores."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.testing import assertDataFrameEqual

from tsfile_catalog import open_table, write_table

pytestmark = pytest.mark.spark

DDL = (
    "time bigint, id string, b boolean, small smallint, i int, l bigint, f float, d double, "
    "s string, bin binary, day date, at timestamp"
)


def _rows(spark: SparkSession, ids: tuple[str, ...], start: int) -> DataFrame:
    at = dt.datetime(2024, 1, 2, 3, 4, 5, 678000)
    rows = [
        (
            start + i * 1_000,
            ids[i % len(ids)],
            i % 2 == 0,
            i,
            i * 10,
            i * 100,
            i * 0.5,
            i * 0.25,
            f"s{i}",
            bytearray([i]),
            dt.date(2024, 2, 1 + i),
            at + dt.timedelta(seconds=i),
        )
        for i in range(6)
    ]
    rows.append((start + 9_000, ids[0], None, None, None, None, None, None, None, None, None, None))
    return spark.createDataFrame(rows, DDL)


def _read(spark: SparkSession, path: Path, timestamp_as: str) -> DataFrame:
    return spark.read.format("tsfile").option("timestampAs", timestamp_as).load(str(path))


def test_spark_reads_what_write_table_wrote_as_what_spark_wrote(
    spark: SparkSession, tmp_path: Path
) -> None:
    by_spark, by_arrow = tmp_path / "spark", tmp_path / "arrow"
    first = _rows(spark, ("a", "b"), 0)
    options = {"table": "types", "tagColumns": "id"}
    first.write.format("tsfile").mode("append").options(**options).save(str(by_spark))
    write_table(str(by_arrow), first.toArrow(), table="types", tag_columns=["id"])
    # then the same replaceWhere overwrite both ways: rows of 'a' replaced, 'b' kept
    second = _rows(spark, ("a",), 50_000)
    second.write.format("tsfile").mode("overwrite").option("replaceWhere", "id = 'a'").save(
        str(by_spark)
    )
    open_table(str(by_arrow)).overwrite(second.toArrow(), where="id = 'a'")

    assert open_table(str(by_arrow)).schema == open_table(str(by_spark)).schema
    for timestamp_as in ("long", "timestamp"):
        spark_wrote = _read(spark, by_spark, timestamp_as)
        arrow_wrote = _read(spark, by_arrow, timestamp_as)
        assert arrow_wrote.schema == spark_wrote.schema
        assertDataFrameEqual(arrow_wrote, spark_wrote)
    assert _read(spark, by_arrow, "long").count() == 3 + 7
    assert [h.operation for h in open_table(str(by_arrow)).history()] == [
        h.operation for h in open_table(str(by_spark)).history()
    ]
