"""Catalog.sql's INSERT and CTAS hand the writer rows clustered by device (the writer sorts
each task's rows; tsfile_catalog/sql/write_distribution.py), unless
``spark.tsfile.write.clustered`` is off."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession

from tsfile_catalog import Catalog, open_table
from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.sql.write_distribution import CLUSTERED_WRITES, cluster_for_write

pytestmark = pytest.mark.spark

DEVICES = ("a", "b", "c", "d")


@pytest.fixture
def unclustered(spark: SparkSession) -> Iterator[None]:
    spark.conf.set(CLUSTERED_WRITES, "false")
    yield
    spark.conf.unset(CLUSTERED_WRITES)


def _scattered(spark: SparkSession) -> DataFrame:
    """80 rows of four devices in eight partitions, each holding every device, times reversed."""
    rows = [(1000 - i, DEVICES[i % 4], float(i)) for i in range(80)]
    return spark.createDataFrame(rows, "time BIGINT, d STRING, v DOUBLE").repartition(8, "v")


def _devices_per_part(warehouse: Path, name: str) -> list[set[str | None]]:
    out = []
    for part in open_table(str(warehouse / name)).parts():
        assert part.devices is not None
        out.append({d.tags[0] for d in part.devices})
    return out


def _insert_scattered(spark: SparkSession, catalog: Catalog, name: str) -> DataFrame:
    """A new table ``name`` given :func:`_scattered`'s rows by ``INSERT``; those rows."""
    catalog.sql(
        f"CREATE TABLE {name} (time BIGINT, d STRING, v DOUBLE) USING tsfile "
        "OPTIONS (tagColumns 'd')"
    )
    frame = _scattered(spark)
    frame.createOrReplaceTempView("scattered")
    catalog.sql(f"INSERT INTO {name} SELECT * FROM scattered")
    return frame


def _same_rows(catalog: Catalog, name: str, frame: DataFrame) -> None:
    got = sorted(tuple(r) for r in catalog.sql(f"SELECT * FROM {name}").collect())
    assert got == sorted(tuple(r) for r in frame.collect())


def test_insert_writes_each_device_in_one_task(
    spark: SparkSession, catalog: Catalog, warehouse: Path
) -> None:
    frame = _insert_scattered(spark, catalog, "ins")
    _same_rows(catalog, "ins", frame)
    seen = [device for devices in _devices_per_part(warehouse, "ins") for device in devices]
    assert sorted(seen) == list(DEVICES)


def test_create_table_as_select_is_clustered_too(
    spark: SparkSession, catalog: Catalog, warehouse: Path
) -> None:
    _scattered(spark).createOrReplaceTempView("scattered")
    catalog.sql(
        "CREATE TABLE ctas USING tsfile OPTIONS (tagColumns 'd') AS SELECT * FROM scattered"
    )
    _same_rows(catalog, "ctas", _scattered(spark))
    seen = [device for devices in _devices_per_part(warehouse, "ctas") for device in devices]
    assert sorted(seen) == list(DEVICES)


def test_the_conf_off_writes_partitions_as_they_come(
    spark: SparkSession, catalog: Catalog, warehouse: Path, unclustered: None
) -> None:
    frame = _insert_scattered(spark, catalog, "raw")
    _same_rows(catalog, "raw", frame)
    parts = _devices_per_part(warehouse, "raw")
    assert len(parts) > 1 and sum(len(devices) for devices in parts) > len(DEVICES)


def test_kept_order_puts_a_later_duplicate_last(spark: SparkSession) -> None:
    # What onDuplicate=last means: among rows of one key, the frame's order survives.
    rows = [(5, "a", float(i)) for i in range(50)] + [(6, "b", 1.0)]
    frame = spark.createDataFrame(rows, "time BIGINT, d STRING, v DOUBLE").coalesce(3)
    clustered = cluster_for_write(frame, ["d"], keep_order=True)
    got = [r.v for r in clustered.collect() if r.d == "a"]
    assert got == [float(i) for i in range(50)]
    assert clustered.columns == frame.columns


def test_clustering_leaves_the_sort_to_the_writer(spark: SparkSession) -> None:
    # The writer orders each part's rows whatever the input order; Spark's sort would repeat it.
    clustered = cluster_for_write(_scattered(spark), ["d"])
    plan = clustered._jdf.queryExecution().optimizedPlan().toString()
    assert "RepartitionByExpression [d" in plan and "Sort [" not in plan


def test_insert_into_a_last_table_keeps_the_last_row_of_a_key_across_partitions(
    spark: SparkSession, catalog: Catalog
) -> None:
    # onDuplicate=last: among rows of one key, the last in the frame's order wins, wherever
    # the shuffle puts them (the clustering sorts on each row's position for such a table).
    catalog.sql(
        "CREATE TABLE lastwins (time BIGINT, d STRING, v DOUBLE) USING tsfile "
        "OPTIONS (tagColumns 'd', onDuplicate 'last')"
    )
    rows = [(5, DEVICES[i % 2], float(i)) for i in range(60)] + [(6, "c", -1.0)]
    frame = spark.createDataFrame(rows, "time BIGINT, d STRING, v DOUBLE").repartition(4)
    expected = {}
    for row in frame.collect():  # the frame's order, which "last" refers to
        expected[(row.time, row.d)] = row.v
    frame.createOrReplaceTempView("repeats")
    catalog.sql("INSERT INTO lastwins SELECT * FROM repeats")
    got = {(r.time, r.d): r.v for r in catalog.sql("SELECT * FROM lastwins").collect()}
    assert got == expected and len(got) == 3


def test_a_bad_conf_value_is_refused_naming_it(
    spark: SparkSession, catalog: Catalog, warehouse: Path
) -> None:
    catalog.sql(
        "CREATE TABLE badconf (time BIGINT, d STRING, v DOUBLE) USING tsfile "
        "OPTIONS (tagColumns 'd')"
    )
    spark.conf.set(CLUSTERED_WRITES, "maybe")
    try:
        with pytest.raises(OptionError, match=r"spark\.tsfile\.write\.clustered .*'maybe'"):
            catalog.sql("INSERT INTO badconf VALUES (1, 'a', 1.0)")
    finally:
        spark.conf.unset(CLUSTERED_WRITES)
    assert open_table(str(warehouse / "badconf")).version == 0  # nothing committed
