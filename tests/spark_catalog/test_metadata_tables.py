"""Metadata tables through plain ``spark.sql``, as Iceberg serves them: ``<t>.history``,
``<t>.snapshots`` and ``<t>.parts``, with the rows ``Catalog.sql``'s ``DESCRIBE HISTORY`` and
``SHOW PARTS`` give, readable with SELECT, WHERE, JOIN and time travel."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tsfile_catalog import Catalog

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def table(spark: SparkSession, ts: str) -> str:
    name = f"{ts}.db.meta"
    spark.sql(
        f"CREATE TABLE {name} (time BIGINT, dev STRING, v BIGINT) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'dev')"
    )
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a', 1), (2, 'b', 2)")
    spark.sql(f"INSERT INTO {name} VALUES (3, 'a', 3)")
    spark.sql(f"DELETE FROM {name} WHERE dev = 'b'")
    return name


def test_history_is_describe_history(spark: SparkSession, table: str, warehouse: Path) -> None:
    catalog = Catalog(spark, str(warehouse), register_views=False)
    expected = catalog.sql("DESCRIBE HISTORY db.meta")
    history = spark.sql(f"SELECT * FROM {table}.history")
    assert history.columns == expected.columns
    assert history.collect() == expected.collect()
    assert [r.operation for r in history.orderBy("version").collect()] == [
        "CREATE",
        "WRITE",
        "WRITE",
        "DELETE",
    ]
    assert history.schema["operation_parameters"].dataType.simpleString() == "map<string,string>"


def test_parts_is_show_parts_and_takes_version_as_of(
    spark: SparkSession, table: str, warehouse: Path
) -> None:
    catalog = Catalog(spark, str(warehouse), register_views=False)
    expected = catalog.sql("SHOW PARTS db.meta")
    parts = spark.sql(f"SELECT * FROM {table}.parts")
    assert parts.columns == expected.columns
    assert sorted(parts.collect()) == sorted(expected.collect())
    assert {"rows", "min_time", "max_time"} <= set(parts.columns)
    at_two = spark.sql(
        f"SELECT sum(rows), min(min_time), max(max_time) FROM {table}.parts VERSION AS OF 2"
    )
    assert at_two.first() == (3, 1, 3)
    filtered = spark.sql(f"SELECT count(*) FROM {table}.parts WHERE added_version = 2")
    assert filtered.first()[0] == 1


def test_snapshots_join_history(spark: SparkSession, table: str) -> None:
    joined = spark.sql(
        f"SELECT s.version, s.parent_version, h.operation, s.summary['rows-added'] AS added "
        f"FROM {table}.snapshots s JOIN {table}.history h ON s.version = h.version "
        "ORDER BY s.version"
    ).collect()
    assert [tuple(r) for r in joined] == [
        (0, None, "CREATE", "0"),
        (1, 0, "WRITE", "2"),
        (2, 1, "WRITE", "1"),
        (3, 2, "DELETE", "1"),  # the copy-on-write kept (1, a)
    ]


def test_a_missing_table_has_no_metadata_tables(spark: SparkSession, ts: str) -> None:
    with pytest.raises(Exception, match=r"TABLE_OR_VIEW_NOT_FOUND.*`db`.`nope`.`history`"):
        spark.sql(f"SELECT * FROM {ts}.db.nope.history").collect()
