"""The catalog plugin on a two-executor cluster: a table created and written through
``writeTo`` and read through ``spark.sql``, with every write and read task in an executor JVM
of its own (started without storage credentials), tables on local disk and on S3. Answers
are compared with the same queries over a Parquet copy written by the same cluster."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.functions import col
from pyspark.testing import assertDataFrameEqual

import tsfile_catalog
from tests.cluster.helpers import CLUSTER_TESTS, EXECUTORS, ClusterTable
from tsfile_catalog import Catalog, open_table

pytestmark = CLUSTER_TESTS


@pytest.fixture
def cluster_catalog(cluster_spark: SparkSession, cluster_table: ClusterTable) -> Iterator[str]:
    """A plugin catalog over a warehouse under the test's root; its ``fs.*`` options are how
    the executors reach S3."""
    from py4j.java_gateway import JavaClass

    from tsfile_catalog.spark_catalog.session import CATALOG_CLASS

    jvm = cluster_spark.sparkContext._jvm
    assert jvm is not None
    if not isinstance(jvm.io.tsfilecatalog.spark.Client, JavaClass):
        pytest.skip("the catalog plugin's jar could not be built here (no JDK's javac)")
    tsfile_catalog.register(cluster_spark)
    name = f"ts_{uuid.uuid4().hex[:8]}"
    settings = {"": CATALOG_CLASS, ".warehouse": cluster_table.url("warehouse")}
    settings.update({f".{k}": v for k, v in cluster_table.fs_options.items()})
    for key, value in settings.items():
        cluster_spark.conf.set(f"spark.sql.catalog.{name}{key}", value)
    yield name
    for key in settings:
        cluster_spark.conf.unset(f"spark.sql.catalog.{name}{key}")


def _rows(spark: SparkSession) -> DataFrame:
    """60 rows of three devices in two cities, in one partition per executor."""
    return spark.range(0, 60, numPartitions=EXECUTORS).selectExpr(
        "timestamp_seconds(id * 60) AS time",
        "IF(id % 2 = 0, 'bj', 'sh') AS city",
        "concat('d', id % 3) AS device",
        "CAST(id * 0.5 AS DOUBLE) AS temp",
    )


def test_write_to_and_spark_sql_on_executors(
    cluster_spark: SparkSession, cluster_catalog: str, cluster_table: ClusterTable, tmp_path: Path
) -> None:
    ts = cluster_catalog
    cluster_spark.sql(
        f"CREATE TABLE {ts}.db.weather (time TIMESTAMP, city STRING, device STRING, "
        "temp DOUBLE) USING tsfile TBLPROPERTIES ('tagColumns' = 'city,device')"
    )
    rows = _rows(cluster_spark)
    rows.writeTo(f"{ts}.db.weather").append()
    # The copy on local disk, which the executors share (Spark's Parquet has no s3://).
    rows.write.parquet(str(tmp_path / "parquet"))
    copy = cluster_spark.read.parquet(str(tmp_path / "parquet"))
    location = cluster_table.url("warehouse/db.db/weather")
    table = open_table(location, storage_options=cluster_table.storage_options)
    # The write's tasks staged the parts, clustered by device (each device's rows in one
    # part, not a slice of each in every input partition); the driver committed them once.
    assert table.version == 1
    devices = [d.tags for p in table.parts() for d in (p.devices or ())]
    assert sorted(devices) == sorted(
        {("bj", "d0"), ("sh", "d0"), ("bj", "d1"), ("sh", "d1"), ("bj", "d2"), ("sh", "d2")}
    )

    assertDataFrameEqual(cluster_spark.sql(f"SELECT * FROM {ts}.db.weather"), copy)
    where = "device = 'd1' AND temp > 10"
    assertDataFrameEqual(
        cluster_spark.sql(f"SELECT time, city, temp FROM {ts}.db.weather WHERE {where}"),
        copy.where(where).select("time", "city", "temp"),
    )
    grouped = "SELECT city, count(*) AS n, max(temp) AS hottest FROM {} GROUP BY city"
    copy.createOrReplaceTempView("cluster_weather_copy")
    assertDataFrameEqual(
        cluster_spark.sql(grouped.format(f"{ts}.db.weather")),
        cluster_spark.sql(grouped.format("cluster_weather_copy")),
    )
    # The same table through the Catalog, after one more writeTo from the executors: it
    # re-sends the 'sh' rows corrected (+100), which replace them (a new table's key is last).
    corrected = _rows(cluster_spark).where("city = 'sh'").withColumn("temp", col("temp") + 100)
    corrected.writeTo(f"{ts}.db.weather").append()
    catalog = Catalog(
        cluster_spark,
        cluster_table.url("warehouse"),
        storage_options=cluster_table.storage_options,
        register_views=False,
    )
    totals = "SELECT count(*), sum(temp) FROM {}"
    expected = (60, sum(i * 0.5 for i in range(60)) + 100 * 30)
    assert tuple(catalog.sql(totals.format("db.weather")).first()) == expected
    assert tuple(cluster_spark.sql(totals.format(f"{ts}.db.weather")).first()) == expected


def test_procedures_rewrite_on_executors(
    cluster_spark: SparkSession, cluster_catalog: str, cluster_table: ClusterTable
) -> None:
    """``CALL <catalog>.system.optimize`` and ``.delete`` (the Catalog's OPTIMIZE and DELETE,
    run from the JVM through the delegate) rewrite their parts in one Spark job of the
    commit's job group, as Catalog.sql does, and change no answer but the deleted rows."""
    from tsfile_catalog.datasource.rewrite_tasks import job_group

    ts = cluster_catalog
    table = f"{ts}.db.maintained"
    cluster_spark.sql(
        f"CREATE TABLE {table} (time TIMESTAMP, city STRING, device STRING, temp DOUBLE) "
        "USING tsfile TBLPROPERTIES ('tagColumns' = 'city,device')"
    )
    rows = _rows(cluster_spark)
    for start in range(0, 60, 10):  # six appends: six commits of small parts
        rows.where(f"temp >= {start / 2} AND temp < {(start + 10) / 2}").writeTo(table).append()
    location = cluster_table.url("warehouse/db.db/maintained")
    options = cluster_table.storage_options
    before = open_table(location, storage_options=options)
    tracker = cluster_spark.sparkContext.statusTracker()

    def jobs_of_last_commit() -> int:
        job = open_table(location, storage_options=options).history(limit=1)[0]
        return len(tracker.getJobIdsForGroup(job_group(job.operation_parameters["job"])))

    done = cluster_spark.sql(f"CALL {ts}.system.optimize(table => 'db.maintained')").first()
    assert done is not None and done.num_files_removed == len(before.parts())
    assert jobs_of_last_commit() == 1
    assertDataFrameEqual(cluster_spark.table(table), rows)

    # The compacted parts hold temps on both sides of 20: they are rewritten without the rows.
    cluster_spark.sql(f"CALL {ts}.system.delete(table => 'db.maintained', where => 'temp > 20')")
    assert jobs_of_last_commit() == 1
    assertDataFrameEqual(cluster_spark.table(table), rows.where("temp <= 20"))
