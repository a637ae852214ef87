"""Fixtures of the catalog plugin's tests: a catalog of the plugin over a module's own
warehouse, on the one shared session (whose classpath holds the plugin's jar)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.factories import WEATHER_COLUMNS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("warehouse")


@pytest.fixture(scope="module")
def ts(spark: SparkSession, warehouse: Path) -> Iterator[str]:
    """The name of a plugin catalog over ``warehouse``, configured at run time as Spark
    allows for any catalog; the delegate is handed over by ``tsfile_catalog.register``."""
    from py4j.java_gateway import JavaClass

    import tsfile_catalog
    from tsfile_catalog.spark_catalog.session import CATALOG_CLASS

    jvm = spark.sparkContext._jvm
    assert jvm is not None
    if not isinstance(jvm.io.tsfilecatalog.spark.Client, JavaClass):
        pytest.skip("the catalog plugin's jar could not be built here (no JDK's javac)")
    tsfile_catalog.register(spark)
    name = f"ts_{uuid.uuid4().hex[:8]}"
    spark.conf.set(f"spark.sql.catalog.{name}", CATALOG_CLASS)
    spark.conf.set(f"spark.sql.catalog.{name}.warehouse", str(warehouse))
    yield name
    spark.conf.unset(f"spark.sql.catalog.{name}")
    spark.conf.unset(f"spark.sql.catalog.{name}.warehouse")


def create_weather(spark: SparkSession, table: str, **properties: str) -> None:
    """``CREATE TABLE table`` of :data:`WEATHER_COLUMNS` with TAGs city and device, and
    ``properties`` as further table properties."""
    extra = "".join(f", '{k}' = '{v}'" for k, v in properties.items())
    spark.sql(
        f"CREATE TABLE {table} ({WEATHER_COLUMNS}) USING tsfile "
        f"TBLPROPERTIES ('tagColumns' = 'city,device'{extra})"
    )


def weather_rows(spark: SparkSession, start: int = 0, count: int = 40) -> DataFrame:
    """Rows of four devices in two cities, an hour apart, with NULLs among the fields."""
    import datetime as dt

    base = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    rows = []
    for i in range(start, start + count):
        city, device = [("bj", "d1"), ("bj", "d2"), ("sh", "d3"), ("sh", "d4")][i % 4]
        temp = None if i % 7 == 3 else round(10 + (i % 13) * 1.5, 1)
        rain = None if i % 5 == 2 else i % 3
        rows.append((base + dt.timedelta(hours=i), city, device, temp, rain))
    return spark.createDataFrame(rows, WEATHER_COLUMNS)


@pytest.fixture(scope="module")
def weather(spark: SparkSession, ts: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """``<ts>.db.weather`` and a Parquet copy, view ``pq_weather``, of the same 40 rows."""
    spark.sql(
        f"CREATE TABLE {ts}.db.weather (time TIMESTAMP, city STRING, device STRING, "
        "temp DOUBLE, rain INT) USING tsfile TBLPROPERTIES ('tagColumns' = 'city,device')"
    )
    rows = weather_rows(spark)
    rows.writeTo(f"{ts}.db.weather").append()
    parquet = str(tmp_path_factory.mktemp("parquet") / "weather")
    rows.write.parquet(parquet)
    spark.read.parquet(parquet).createOrReplaceTempView("pq_weather")
    return f"{ts}.db.weather"
