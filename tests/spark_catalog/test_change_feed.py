"""The change data feed of a catalog table through plain spark.sql: readChangeFeed on
spark.read.table, table_changes(...) and Spark 4.3's CHANGES FROM VERSION, all equal to
each other and to the Spark-free Table.changes, and each commit's changes what Spark finds
between its versions (VERSION AS OF, EXCEPT ALL)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from tsfile_catalog import Catalog, open_table
from tsfile_catalog.exceptions import SqlError

pytestmark = pytest.mark.spark

CHANGE_COLUMNS = ["_change_type", "_commit_version", "_commit_timestamp"]


@pytest.fixture(scope="module")
def table(spark: SparkSession, ts: str) -> str:
    name = f"{ts}.db.cdf"
    spark.sql(
        f"CREATE TABLE {name} (time BIGINT, dev STRING, v DOUBLE) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'dev')"
    )
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a', 1.0), (2, 'a', 2.0), (1, 'b', 3.0)")  # 1
    spark.sql(f"INSERT INTO {name} VALUES (2, 'a', 20.0), (3, 'a', 3.0)")  # 2: replaces (2, a)
    spark.sql(f"UPDATE {name} SET v = v + 100 WHERE dev = 'b'")  # 3
    spark.sql(
        f"MERGE INTO {name} t USING (SELECT 3L AS time, 'a' AS dev, 30.0 AS v UNION ALL "
        "SELECT 9L, 'c', 9.0) s ON t.time = s.time AND t.dev = s.dev "
        "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *"
    )  # 4
    spark.sql(f"DELETE FROM {name} WHERE time = 1")  # 5
    return name


def _rows(df: DataFrame) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in df.drop("_commit_timestamp").collect())


def test_every_way_in_gives_the_same_rows(spark: SparkSession, table: str) -> None:
    option = (
        spark.read.option("readChangeFeed", "true")
        .option("startingVersion", 1)
        .option("endingVersion", 5)
        .table(table)
    )
    assert option.columns == ["time", "dev", "v", *CHANGE_COLUMNS]
    function = spark.sql(f"SELECT * FROM table_changes('{table}', 1, 5)")
    assert _rows(option) == _rows(function)
    location = spark.sql(f"DESCRIBE DETAIL {table}").first()["location"]
    spark_free = open_table(location).changes(1, 5).drop_columns(["_commit_timestamp"])
    assert _rows(option) == sorted(tuple(r.values()) for r in spark_free.to_pylist())
    changes = spark.sql(f"SELECT * FROM {table} CHANGES FROM VERSION 1 TO VERSION 5")
    assert _rows(changes) == _rows(option)


def test_each_commit_is_what_spark_finds_between_its_versions(
    spark: SparkSession, table: str
) -> None:
    rows = spark.sql(f"SELECT * FROM table_changes('{table}', 1)").collect()
    lost = ("delete", "update_preimage")
    for version in range(1, 6):
        before = spark.sql(f"SELECT * FROM {table} VERSION AS OF {version - 1}")
        after = spark.sql(f"SELECT * FROM {table} VERSION AS OF {version}")
        mine = [r for r in rows if r["_commit_version"] == version]
        assert sorted(tuple(r)[:3] for r in mine if r["_change_type"] in lost) == sorted(
            tuple(r) for r in before.exceptAll(after).collect()
        )
        assert sorted(tuple(r)[:3] for r in mine if r["_change_type"] not in lost) == sorted(
            tuple(r) for r in after.exceptAll(before).collect()
        )
    kinds = {(r["_commit_version"], r["time"], r["dev"], r["_change_type"]) for r in rows}
    assert {(2, 2, "a", "update_preimage"), (2, 2, "a", "update_postimage")} <= kinds
    assert {(4, 3, "a", "update_postimage"), (4, 9, "c", "insert")} <= kinds


def test_filters_and_aggregates_run_over_the_changes(spark: SparkSession, table: str) -> None:
    counts = spark.sql(
        f"SELECT _change_type, count(*) AS n FROM table_changes('{table}', 2, 5) "
        "WHERE dev = 'a' GROUP BY _change_type"
    )
    assert dict(tuple(r) for r in counts.collect()) == {
        "insert": 1,  # (3, a) by version 2
        "update_preimage": 2,  # (2, a) by version 2, (3, a) by the MERGE
        "update_postimage": 2,
        "delete": 1,  # (1, a) by the DELETE
    }


def test_bad_ranges_and_tables_are_refused_by_name(spark: SparkSession, table: str) -> None:
    with pytest.raises(Exception, match="startingVersion 7 is after the latest version, 5"):
        spark.sql(f"SELECT * FROM table_changes('{table}', 7)").collect()
    with pytest.raises(Exception, match="which is no tsfile catalog"):
        spark.sql("SELECT * FROM table_changes('spark_catalog.default.nothing', 0)").collect()


def test_catalog_sql_reads_the_feed_through_the_plugin_only(
    spark: SparkSession, table: str, warehouse: Path, tmp_path: Path
) -> None:
    served = Catalog(spark, str(warehouse), register_views=False)
    assert _rows(served.sql("SELECT * FROM table_changes('db.cdf', 1, 5)")) == _rows(
        spark.sql(f"SELECT * FROM table_changes('{table}', 1, 5)")
    )
    alone = Catalog(spark, str(tmp_path / "other"), register_views=False)
    with pytest.raises(SqlError, match="through the catalog plugin, which does not serve"):
        alone.sql("SELECT * FROM table_changes('db.cdf', 1)")


def test_read_change_feed_without_the_extensions_is_refused_by_name(tmp_path: Path) -> None:
    import pyarrow as pa

    from tsfile_catalog import write_table
    from tsfile_catalog.exceptions import OptionError
    from tsfile_catalog.spark_catalog.scan_request import ScanRequest
    from tsfile_catalog.spark_catalog.scans import plan_scan

    url = str(tmp_path / "t")
    write_table(
        url, pa.table({"time": [1], "dev": ["a"], "v": [1.0]}), table="t", tag_columns=["dev"]
    )
    scan = ScanRequest.parse(
        {
            "table": "db.t",
            "location": url,
            "version": 0,
            "unit": "ms",
            "timestamp_as": "long",
            "options": {"path": url, "versionAsOf": "0"},
        }
    )
    with pytest.raises(OptionError, match="'readChangeFeed' on catalog table 'db.t' needs"):
        plan_scan(
            scan,
            columns=["time"],
            where=None,
            time_zone="UTC",
            parallelism=None,
            user_options={"readChangeFeed": "true", "startingVersion": "0"},
        )


def test_a_stream_of_a_catalog_table_reads_its_changes(
    spark: SparkSession, table: str, tmp_path: Path
) -> None:
    rows: list[Any] = []
    query = (
        spark.readStream.option("readChangeFeed", "true")
        .option("startingVersion", 2)
        .table(table)
        .writeStream.foreachBatch(lambda batch, _: rows.extend(batch.collect()))
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    expected = spark.sql(f"SELECT * FROM table_changes('{table}', 2, 5)")
    assert sorted(tuple(r)[:-1] for r in rows) == _rows(expected)


def test_changes_from_a_timestamp_and_net_changes(spark: SparkSession, table: str) -> None:
    history = {
        r["version"]: r["timestamp"]
        for r in spark.sql(f"SELECT version, timestamp FROM {table}.history").collect()
    }
    since = history[2].isoformat(sep=" ")
    by_time = spark.sql(f"SELECT * FROM {table} CHANGES FROM TIMESTAMP '{since}'")
    by_version = spark.sql(f"SELECT * FROM table_changes('{table}', 2)")
    assert _rows(by_time) == _rows(by_version)
    net = spark.sql(
        f"SELECT * FROM {table} CHANGES FROM VERSION 1 TO VERSION 5 "
        "WITH (deduplicationMode = 'netChanges')"
    )
    before = spark.sql(f"SELECT * FROM {table} VERSION AS OF 0")
    after = spark.sql(f"SELECT * FROM {table} VERSION AS OF 5")
    lost = ("delete", "update_preimage")
    rows = net.collect()
    assert sorted(tuple(r)[:3] for r in rows if r["_change_type"] in lost) == sorted(
        tuple(r) for r in before.exceptAll(after).collect()
    )
    assert sorted(tuple(r)[:3] for r in rows if r["_change_type"] not in lost) == sorted(
        tuple(r) for r in after.exceptAll(before).collect()
    )
