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
    df = spark.createDataFrame(
        [(t, ["bj", "sh"][t % 2], "d", t * 1.0) for t in range(40)],
        "time bigint, city string, device string, temp double",
    ).repartition(2)
    for _ in range(2):
        df.write.format("tsfile").options(
            table="weather", tagColumns="city,device", **fs_options
        ).mode("append").save(url)
    table = tsfile_catalog.open_table(url, storage_options=storage)
    assert table.version == 1 and len(table.parts()) == 4
    reader = spark.read.format("tsfile").options(**fs_options)
    assert reader.load(url).count() == 80
    bj = reader.option("where", "city = 'bj' AND time < 10").load(url)
    assert sorted(r.time for r in bj.collect()) == sorted([0, 2, 4, 6, 8] * 2)
    assert (
        spark.read.format("tsfile").options(versionAsOf="0", **fs_options).load(url).count() == 40
    )
    found = tsfile_catalog.vacuum(
        url, storage_options=storage, retention_ms=0, retention_check=False
    )
    assert found == []
