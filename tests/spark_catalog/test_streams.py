"""``readStream.table`` and ``writeStream.toTable`` on catalog tables: the ``tsfile`` source's
stream and sink semantics (each micro-batch one commit, new commits read once)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.spark_catalog.conftest import WEATHER_COLUMNS, weather_rows

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark


@pytest.mark.slow
def test_a_stream_from_one_catalog_table_into_another(
    spark: SparkSession, ts: str, tmp_path: Path
) -> None:
    from pyspark.testing import assertDataFrameEqual

    for name in ("source", "sink"):
        spark.sql(
            f"CREATE TABLE {ts}.db.{name} ({WEATHER_COLUMNS}) USING tsfile "
            "TBLPROPERTIES ('tagColumns' = 'city,device')"
        )
    checkpoint = str(tmp_path / "checkpoint")

    def run() -> None:
        query = (
            spark.readStream.table(f"{ts}.db.source")
            .where("city = 'bj'")
            .writeStream.option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .toTable(f"{ts}.db.sink")
        )
        query.awaitTermination()

    weather_rows(spark, count=20).writeTo(f"{ts}.db.source").append()
    run()
    expected = spark.table(f"{ts}.db.source").where("city = 'bj'")
    assertDataFrameEqual(spark.table(f"{ts}.db.sink"), expected)
    # Only the new commit is read by the restarted stream: no row twice.
    weather_rows(spark, start=20, count=20).writeTo(f"{ts}.db.source").append()
    run()
    expected = spark.table(f"{ts}.db.source").where("city = 'bj'")
    assertDataFrameEqual(spark.table(f"{ts}.db.sink"), expected)
    assert spark.table(f"{ts}.db.sink").count() == 20
