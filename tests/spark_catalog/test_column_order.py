"""``ALTER COLUMN … FIRST | AFTER`` of any column (``time`` and TAGs too) through plain
``spark.sql`` and ``Catalog.sql``: every read, ``DESCRIBE`` and a positional ``INSERT …
VALUES`` follow the new order exactly as Spark does on a Parquet table declared in that order;
older versions (``VERSION AS OF``, ``tsfile('<url>', version => n)``) keep theirs, and no part
is rewritten."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.spark_catalog.conftest import create_weather, weather_rows
from tsfile_catalog import Catalog, open_table

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

ORIGINAL = ["time", "city", "device", "temp", "rain"]
# After rain FIRST, time AFTER device, city AFTER temp.
MOVED = ["rain", "device", "time", "temp", "city"]
TYPES = {"time": "TIMESTAMP", "city": "STRING", "device": "STRING", "temp": "DOUBLE", "rain": "INT"}
INSERT = "VALUES (7, 'd9', TIMESTAMP '2024-03-01 00:00:00', 31.5, 'bj')"
QUERIES = (
    "SELECT * FROM {t}",
    "SELECT * FROM {t} WHERE temp > 20 OR rain IS NULL",
    "SELECT city, count(*), min(temp), sum(rain) FROM {t} GROUP BY city",
)


def _parquet_table(spark: SparkSession, rows: DataFrame, name: str, folder: Path) -> None:
    """A Parquet table of ``rows`` declared in :data:`MOVED` order, the expectation."""
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    columns = ", ".join(f"{c} {TYPES[c]}" for c in MOVED)
    spark.sql(f"CREATE TABLE {name} ({columns}) USING parquet LOCATION '{folder}'")
    rows.select(*MOVED).write.insertInto(name)


def _same(spark: SparkSession, table: str, expected: str) -> None:
    from pyspark.testing import assertDataFrameEqual

    for query in QUERIES:
        got = spark.sql(query.format(t=table))
        want = spark.sql(query.format(t=expected))
        assert got.columns == want.columns, query
        assertDataFrameEqual(got, want)


@pytest.mark.slow
def test_first_and_after_of_any_column_read_and_insert_as_spark_on_parquet(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    table = f"{ts}.db.ordered"
    create_weather(spark, table)
    rows = weather_rows(spark, count=12)
    rows.writeTo(table).append()  # version 1
    location = warehouse / "db.db" / "ordered"
    parts = sorted(p.name for p in location.glob("*.tsfile"))
    spark.sql(f"ALTER TABLE {table} ALTER COLUMN rain FIRST")  # 2
    spark.sql(f"ALTER TABLE {table} ALTER COLUMN time AFTER device")  # 3
    spark.sql(f"ALTER TABLE {table} ALTER COLUMN city AFTER temp")  # 4
    assert spark.table(table).columns == MOVED
    described = spark.sql(f"DESCRIBE TABLE {table}").collect()
    assert [r.col_name for r in described[: len(MOVED)]] == MOVED
    _parquet_table(spark, rows, "pq_ordered", tmp_path / "pq")
    _same(spark, table, "pq_ordered")

    # By position, in the order shown: the same row as Spark's on the Parquet table.
    spark.sql(f"INSERT INTO {table} {INSERT}")  # 5
    spark.sql(f"INSERT INTO pq_ordered {INSERT}")
    _same(spark, table, "pq_ordered")
    assert set(parts) <= {p.name for p in location.glob("*.tsfile")}, "none rewritten"
    assert open_table(str(location)).version == 5
    assert open_table(str(location)).scan().to_arrow().column_names == MOVED

    # The data source, a stream and the change feed read in that order too.
    from pyspark.testing import assertDataFrameEqual

    assert spark.read.format("tsfile").load(str(location)).columns == MOVED
    assert spark.readStream.format("tsfile").load(str(location)).columns == MOVED
    changes = spark.sql(f"SELECT * FROM table_changes('{table}', 5, 5)")
    assert changes.columns[: len(MOVED)] == MOVED
    assertDataFrameEqual(
        changes.select(*MOVED), spark.sql("SELECT * FROM pq_ordered WHERE device = 'd9'")
    )
    # writeTo matches by name, whatever the order.
    more = weather_rows(spark, start=20, count=4)
    more.writeTo(table).append()  # 6
    more.select(*MOVED).write.insertInto("pq_ordered")
    _same(spark, table, "pq_ordered")

    # Spark's copy-on-write UPDATE and DELETE read and write the moved columns by name.
    spark.sql(f"UPDATE {table} SET temp = temp + 100 WHERE device = 'd1'")
    spark.sql(f"DELETE FROM {table} WHERE rain = 0")
    spark.sql(
        "SELECT rain, device, time, IF(device = 'd1', temp + 100, temp) AS temp, city "
        "FROM pq_ordered WHERE NOT coalesce(rain = 0, false)"
    ).createOrReplaceTempView("pq_changed")
    _same(spark, table, "pq_changed")

    # Each version reads in its own order.
    first = spark.sql(f"SELECT * FROM {table} VERSION AS OF 1")
    assert first.columns == ORIGINAL
    assertDataFrameEqual(first, rows)
    assert spark.sql(f"SELECT * FROM {table} VERSION AS OF 2").columns == [
        "rain",
        "time",
        "city",
        "device",
        "temp",
    ]


def test_catalog_sql_moves_inserts_by_position_and_url_references_keep_each_version(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    from pyspark.testing import assertDataFrameEqual

    catalog = Catalog(spark, str(warehouse), register_views=False)
    create_weather(spark, f"{ts}.db.ordered_catalog")
    rows = weather_rows(spark, count=12)
    rows.writeTo(f"{ts}.db.ordered_catalog").append()  # version 1
    catalog.sql("ALTER TABLE db.ordered_catalog ALTER COLUMN rain FIRST")  # 2
    catalog.sql("ALTER TABLE db.ordered_catalog ALTER COLUMN time AFTER device")  # 3
    catalog.sql("ALTER TABLE db.ordered_catalog ALTER COLUMN city AFTER temp")  # 4
    described = catalog.sql("DESCRIBE TABLE db.ordered_catalog").collect()
    assert [r.col_name for r in described[: len(MOVED)]] == MOVED
    catalog.sql(f"INSERT INTO db.ordered_catalog {INSERT}")  # 5
    _parquet_table(spark, rows, "pq_ordered_catalog", tmp_path / "pq")
    spark.sql(f"INSERT INTO pq_ordered_catalog {INSERT}")
    for query in QUERIES:
        got = catalog.sql(query.format(t="db.ordered_catalog"))
        want = spark.sql(query.format(t="pq_ordered_catalog"))
        assert got.columns == want.columns, query
        assertDataFrameEqual(got, want)
    url = (warehouse / "db.db" / "ordered_catalog").as_uri()
    old = catalog.sql(f"SELECT * FROM tsfile('{url}', version => 1)")
    assert old.columns == ORIGINAL
    assertDataFrameEqual(old, rows)
    latest = catalog.sql(f"SELECT * FROM tsfile('{url}')")
    assert latest.columns == MOVED
    assertDataFrameEqual(latest, spark.table("pq_ordered_catalog"))
