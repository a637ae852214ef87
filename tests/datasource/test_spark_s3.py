"""Tables on an S3 API (moto on loopback): Spark writes and reads through fsspec, no copies."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import SparkSession

import tsfile_catalog

pytestmark = [pytest.mark.spark, pytest.mark.s3]


def test_write_append_read_and_time_travel_on_s3(
    spark: SparkSession, s3_table: tuple[str, dict[str, Any]]
) -> None:
    url, storage = s3_table
    fs_options = {f"fs.{k}": str(v) for k, v in storage.items()}
    # The second write re-sends every key with a corrected value: a new table's key
    # (key.duplicates = last) replaces the first write's rows, merged on read from S3.
    for correction in (0.0, 0.5):
        spark.createDataFrame(
            [(t, ["bj", "sh"][t % 2], "d", t + correction) for t in range(40)],
            "time bigint, city string, device string, temp double",
        ).repartition(2).write.format("tsfile").options(
            table="weather", tagColumns="city,device", **fs_options
        ).mode("append").save(url)
    table = tsfile_catalog.open_table(url, storage_options=storage)
    assert table.version == 1 and len(table.parts()) == 4
    reader = spark.read.format("tsfile").options(**fs_options)
    assert reader.load(url).count() == 40
    bj = reader.option("where", "city = 'bj' AND time < 10").load(url)
    assert sorted((r.time, r.temp) for r in bj.collect()) == [(t, t + 0.5) for t in range(0, 10, 2)]
    first = spark.read.format("tsfile").options(versionAsOf="0", **fs_options).load(url)
    assert sorted(r.temp for r in first.collect()) == [float(t) for t in range(40)]
    found = tsfile_catalog.vacuum(
        url, storage_options=storage, retention_ms=0, retention_check=False
    )
    assert found == []
