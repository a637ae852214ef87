"""A plugin catalog whose warehouse is on an S3 API (moto on loopback): its fsspec settings
come from the catalog's own options and reach every table, scan and write."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from tests.spark_catalog.conftest import WEATHER_COLUMNS, weather_rows
from tsfile_catalog import open_table

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.s3]


@pytest.fixture
def s3_catalog(
    spark: SparkSession, ts: str, s3_table: tuple[str, dict[str, Any]]
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """A second plugin catalog over ``s3://<bucket>/table`` as the warehouse."""
    from tsfile_catalog.spark_catalog.session import CATALOG_CLASS

    url, storage = s3_table
    name = f"{ts}_s3"
    spark.conf.set(f"spark.sql.catalog.{name}", CATALOG_CLASS)
    spark.conf.set(f"spark.sql.catalog.{name}.warehouse", url)
    # Only the endpoint: the credentials come from the environment, never a table's entry.
    spark.conf.set(f"spark.sql.catalog.{name}.fs.endpoint_url", storage["endpoint_url"])
    yield name, url, storage
    for key in ("", ".warehouse", ".fs.endpoint_url"):
        spark.conf.unset(f"spark.sql.catalog.{name}{key}")


def test_tables_reads_and_writes_on_s3(
    spark: SparkSession, s3_catalog: tuple[str, str, dict[str, Any]]
) -> None:
    from pyspark.testing import assertDataFrameEqual

    name, url, storage = s3_catalog
    spark.sql(
        f"CREATE TABLE {name}.db.weather ({WEATHER_COLUMNS}) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city,device')"
    )
    rows = weather_rows(spark)
    rows.writeTo(f"{name}.db.weather").append()
    # New readings (a month later): the same keys again would replace rows (key.duplicates
    # = last, a new table's default), which is not what this test is about.
    later = "time + INTERVAL 30 DAYS AS time, city, device, temp, rain"
    spark.sql(f"INSERT INTO {name}.db.weather SELECT {later} FROM {name}.db.weather WHERE rain = 0")
    table = open_table(f"{url}/db.db/weather", storage_options=storage)
    assert table.version == 2
    expected = rows.unionByName(rows.where("rain = 0").selectExpr(*later.split(", ")))
    assertDataFrameEqual(spark.table(f"{name}.db.weather"), expected)
    query = (
        f"SELECT city, count(*) AS count FROM {name}.db.weather WHERE device = 'd1' GROUP BY city"
    )
    assertDataFrameEqual(spark.sql(query), expected.where("device = 'd1'").groupBy("city").count())
    assert spark.sql(f"SELECT count(*) FROM {name}.db.weather VERSION AS OF 1").first()[0] == 40
