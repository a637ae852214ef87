"""df.write stores every row exactly once, however Spark partitioned the input."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.testing import assertDataFrameEqual

import tsfile_catalog

pytestmark = pytest.mark.spark


def test_table_without_field_columns_round_trips(spark: SparkSession, tmp_path: Path) -> None:
    rows = [(1, "bj", "d1"), (2, "bj", "d1"), (1, "sh", "d2")]
    df = spark.createDataFrame(rows, "time bigint, city string, device string").repartition(2)
    df.write.format("tsfile").options(table="seen", tagColumns="city,device").mode(
        "append").save(str(tmp_path))
    assertDataFrameEqual(spark.read.format("tsfile").load(str(tmp_path)), df)
    table = tsfile_catalog.open_table(str(tmp_path))
    assert sum(p.row_count for p in table.parts()) == 3
    assert (min(p.min_time for p in table.parts() if p.min_time is not None),
            max(p.max_time for p in table.parts() if p.max_time is not None)) == (1, 2)
