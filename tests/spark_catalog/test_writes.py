"""Writes into catalog tables through Spark's own APIs, each one commit, compared with the
same writes into a Parquet copy in the same session."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.spark_catalog.conftest import WEATHER_COLUMNS, create_weather, weather_rows
from tsfile_catalog import Catalog, open_table
from tsfile_catalog.table import STAGING_DIR

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark


class Copy:
    """A Parquet table taking the same writes as a catalog table."""

    def __init__(self, spark: SparkSession, path: Path) -> None:
        self.spark = spark
        self.path = str(path)
        spark.createDataFrame([], WEATHER_COLUMNS).write.parquet(self.path)

    def append(self, rows: DataFrame) -> None:
        rows.write.mode("append").parquet(self.path)

    def overwrite(self, rows: DataFrame, keep: str | None = None) -> None:
        kept = self.read().where(keep) if keep else self.spark.createDataFrame([], WEATHER_COLUMNS)
        # Materialized first: Spark cannot overwrite the files it is reading.
        merged = self.spark.createDataFrame(kept.unionByName(rows).collect(), WEATHER_COLUMNS)
        merged.write.mode("overwrite").parquet(self.path)

    def read(self) -> DataFrame:
        return self.spark.read.parquet(self.path)


def _same(spark: SparkSession, table: str, copy: Copy) -> None:
    from pyspark.testing import assertDataFrameEqual

    assertDataFrameEqual(spark.table(table), copy.read())


def _version(warehouse: Path, name: str) -> int:
    return open_table(str(warehouse / "db.db" / name)).version


def test_sql_inserts(spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path) -> None:
    table = f"{ts}.db.inserted"
    spark.sql(
        f"CREATE TABLE {table} ({WEATHER_COLUMNS}) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city,device')"
    )
    copy = Copy(spark, tmp_path / "copy")
    spark.sql(
        f"INSERT INTO {table} VALUES (TIMESTAMP '2024-01-01 00:00:00', 'bj', 'd1', 1.5, NULL)"
    )
    copy.append(
        spark.sql(
            "SELECT TIMESTAMP '2024-01-01 00:00:00', 'bj', 'd1', 1.5D, CAST(NULL AS INT)"
        ).toDF(*(c.split()[0] for c in WEATHER_COLUMNS.split(", ")))
    )
    _same(spark, table, copy)
    rows = weather_rows(spark, start=1, count=20)
    rows.createOrReplaceTempView("incoming")
    spark.sql(f"INSERT INTO {table} SELECT * FROM incoming")
    copy.append(rows)
    _same(spark, table, copy)
    assert _version(warehouse, "inserted") == 2  # created, then one commit per INSERT
    spark.sql(f"INSERT OVERWRITE {table} SELECT * FROM incoming WHERE city = 'sh'")
    copy.overwrite(rows.where("city = 'sh'"))
    _same(spark, table, copy)
    assert _version(warehouse, "inserted") == 3


def test_dataframe_writes(spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    table = f"{ts}.db.framed"
    copy = Copy(spark, tmp_path / "copy")
    first = weather_rows(spark, count=8)
    # writeTo(...).create(): the rows are the table's first commit (version 0).
    first.writeTo(table).tableProperty("tagColumns", "city,device").create()
    copy.append(first)
    _same(spark, table, copy)
    assert _version(warehouse, "framed") == 0
    second = weather_rows(spark, start=8, count=8)
    second.writeTo(table).append()
    copy.append(second)
    third = weather_rows(spark, start=16, count=8)
    third.write.insertInto(table)
    copy.append(third)
    fourth = weather_rows(spark, start=24, count=8)
    fourth.write.mode("append").saveAsTable(table)
    copy.append(fourth)
    _same(spark, table, copy)
    assert _version(warehouse, "framed") == 3
    # overwrite(condition): the rows matching it are replaced, in one commit.
    fresh = weather_rows(spark, start=100, count=8).where("city = 'bj'")
    fresh.writeTo(table).overwrite(F.col("city") == "bj")
    copy.overwrite(fresh, keep="NOT (city = 'bj')")
    _same(spark, table, copy)
    assert _version(warehouse, "framed") == 4
    # A condition the writer cannot take is refused naming it, and nothing is committed.
    for condition in (F.upper("city") == "BJ", F.col("temp") > F.col("rain")):
        with pytest.raises(Exception, match=r"the overwrite condition \[.*\] cannot be eval"):
            fresh.writeTo(table).overwrite(condition)
    with pytest.raises(Exception, match=r"the overwrite condition \[UPPER\(city\) = 'BJ'\]"):
        spark.sql(f"INSERT INTO {table} REPLACE WHERE upper(city) = 'BJ' SELECT * FROM {table}")
    _same(spark, table, copy)
    assert _version(warehouse, "framed") == 4
    # overwritePartitions(): refused saying what replaces rows instead; nothing committed.
    with pytest.raises(
        Exception,
        match=r"overwritePartitions\(\) is not supported .* "
        r"writeTo\(t\)\.overwrite\(condition\)",
    ):
        fresh.writeTo(table).overwritePartitions()
    _same(spark, table, copy)
    assert _version(warehouse, "framed") == 4


def test_save_as_table_creates_with_the_writes_options(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    rows = weather_rows(spark, count=12)
    rows.write.format("tsfile").option("tagColumns", "city,device").saveAsTable(f"{ts}.db.saved")
    assert spark.table(f"{ts}.db.saved").count() == 12
    table = open_table(str(warehouse / "db.db" / "saved"))
    assert (table.version, table.schema.tag_names) == (0, ("city", "device"))
    # Registered with its options, as CREATE TABLE would have: the Catalog reads it too.
    catalog = Catalog(spark, str(warehouse), register_views=False)
    assert catalog.sql("SELECT count(*) FROM db.saved").first()[0] == 12
    # A refused write leaves no table and no name behind.
    with pytest.raises(Exception, match="tagColumns"):
        rows.writeTo(f"{ts}.db.untagged").create()
    assert not spark.catalog.tableExists(f"{ts}.db.untagged")
    assert not (warehouse / "db.db" / "untagged" / "_tsfile_manifest").exists()
    # saveAsTable without .format asks for spark.sql.sources.default: the refusal says so,
    # for a new table and for an overwrite of this one, and writes nothing.
    unformatted = rows.write.option("tagColumns", "city,device")
    hint = r"not parquet; parquet is the session's default source .* \.format\('tsfile'\)"
    with pytest.raises(Exception, match=hint):
        unformatted.saveAsTable(f"{ts}.db.unformatted")
    assert not (warehouse / "db.db" / "unformatted").exists()
    with pytest.raises(Exception, match=hint):
        unformatted.mode("overwrite").saveAsTable(f"{ts}.db.saved")
    assert open_table(str(warehouse / "db.db" / "saved")).version == 0
    with pytest.raises(Exception, match="tsfile tables only") as refused:
        spark.sql(f"CREATE TABLE {ts}.db.orc (time BIGINT, city STRING) USING orc")
    assert "not orc" in str(refused.value) and "saveAsTable" not in str(refused.value)


def test_create_table_as_select(spark: SparkSession, ts: str, warehouse: Path) -> None:
    weather_rows(spark).createOrReplaceTempView("source_rows")
    spark.sql(
        f"CREATE TABLE {ts}.db.selected TBLPROPERTIES ('tagColumns' = 'city,device') "
        "AS SELECT * FROM source_rows WHERE temp > 15"
    )
    expected = spark.sql("SELECT * FROM source_rows WHERE temp > 15")
    from pyspark.testing import assertDataFrameEqual

    assertDataFrameEqual(spark.table(f"{ts}.db.selected"), expected)
    assert _version(warehouse, "selected") == 0
    # The time column keeps its type: the table records it, not the registry.
    assert dict(spark.table(f"{ts}.db.selected").dtypes)["time"] == "timestamp"
    assert open_table(str(warehouse / "db.db" / "selected")).scan().to_arrow().num_rows == (
        expected.count()
    )


def test_an_overwrite_by_condition_rewrites_straddling_parts_in_spark_tasks(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    """writeTo(t).overwrite(c) and INSERT INTO t REPLACE WHERE c through spark.sql: the parts
    the condition straddles are rewritten as Spark tasks when the write runs (the commit
    names their job, rewriteJob), with the same rows as a Parquet copy, and no staging left.
    An EXPLAIN stages nothing. (With distributed rewrites off the write's commit rewrites
    them, as a df.write's does: tests/sql/test_catalog_rewrite.py.)"""
    from pyspark.sql import functions as F

    from tsfile_catalog.datasource.rewrite_tasks import job_group

    name = "straddled"
    table = f"{ts}.db.{name}"
    create_weather(spark, table)
    copy = Copy(spark, tmp_path / "copy")
    for start in range(0, 40, 10):  # parts of 10 hours each
        rows = weather_rows(spark, start=start, count=10)
        rows.writeTo(table).append()
        copy.append(rows)
    location = warehouse / "db.db" / name
    hours = "time >= TIMESTAMP '2024-01-01 05:00:00' AND time < TIMESTAMP '2024-01-02 01:00:00'"
    fresh = weather_rows(spark, start=6, count=12)
    spark.sql(f"EXPLAIN INSERT INTO {table} REPLACE WHERE {hours} SELECT * FROM VALUES 1")
    assert not (location / STAGING_DIR).exists() and _version(warehouse, name) == 4

    condition = (F.col("time") >= F.lit("2024-01-01 05:00:00").cast("timestamp")) & (
        F.col("time") < F.lit("2024-01-02 01:00:00").cast("timestamp")
    )
    fresh.writeTo(table).overwrite(condition)
    copy.overwrite(fresh, keep=f"NOT ({hours})")
    _same(spark, table, copy)
    # Hours 27 to 35: straddles the parts of hours 20-29 and 30-39.
    later = "time >= TIMESTAMP '2024-01-02 03:00:00' AND time < TIMESTAMP '2024-01-02 12:00:00'"
    again = weather_rows(spark, start=28, count=6)
    again.createOrReplaceTempView("fresh_hours")
    spark.sql(f"INSERT INTO {table} REPLACE WHERE {later} SELECT * FROM fresh_hours")
    copy.overwrite(again, keep=f"NOT ({later})")
    _same(spark, table, copy)

    history = open_table(str(location)).history(limit=2)
    assert [h.operation for h in history] == ["OVERWRITE", "OVERWRITE"]
    assert int(history[1].operation_parameters["numDeletedRows"]) == 20
    tracker = spark.sparkContext.statusTracker()
    for commit in history:
        job = commit.operation_parameters.get("rewriteJob")
        assert job is not None
        spark_jobs = tracker.getJobIdsForGroup(job_group(job))
        assert spark_jobs
        assert all(tracker.getJobInfo(j).status == "SUCCEEDED" for j in spark_jobs)
    assert not (location / STAGING_DIR).exists()


def test_the_tables_time_unit_wins_over_read_and_write_options(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    table = f"{ts}.db.unit"
    create_weather(spark, table)  # TIMESTAMP time, milliseconds
    copy = Copy(spark, tmp_path / "copy")
    for start, options in enumerate(
        ({}, {"timestampPrecision": "us"}, {"TIMESTAMPPRECISION": "ns"}, {"tagcolumns": "x"})
    ):
        rows = weather_rows(spark, start=start * 4, count=4)
        rows.writeTo(table).options(**options).append()
        copy.append(rows)
    _same(spark, table, copy)
    # The raw longs are the table's milliseconds, whatever a write said.
    raw = open_table(str(warehouse / "db.db" / "unit")).scan(timestamp_as="long").to_arrow()
    assert max(raw.column("time").to_pylist()) < 2**41
    from pyspark.testing import assertDataFrameEqual

    for options in ({"timestampPrecision": "us"}, {"timestampas": "long"}):
        assertDataFrameEqual(spark.read.options(**options).table(table), copy.read())
