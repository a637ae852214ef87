"""Writes through the catalog plugin arrive clustered by device
(``RequiresDistributionAndOrdering``; the writer sorts each task's rows), unless
``spark.tsfile.write.clustered`` is off."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.spark_catalog.conftest import create_weather, weather_rows
from tsfile_catalog import open_table
from tsfile_catalog.sql.write_distribution import CLUSTERED_WRITES

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark


@pytest.fixture
def unclustered(spark: SparkSession) -> Iterator[None]:
    spark.conf.set(CLUSTERED_WRITES, "false")
    yield
    spark.conf.unset(CLUSTERED_WRITES)


def _devices_per_part(warehouse: Path, name: str) -> list[set[tuple[str | None, ...]]]:
    table = open_table(str(warehouse / "db.db" / name))
    out = []
    for part in table.parts():
        assert part.devices is not None
        out.append({d.tags for d in part.devices})
    return out


def _write(spark: SparkSession, ts: str, name: str) -> None:
    from pyspark.testing import assertDataFrameEqual

    table = f"{ts}.db.{name}"
    create_weather(spark, table)
    # Eight partitions, each holding rows of all four devices, out of time order.
    rows = weather_rows(spark, count=80).orderBy("rain", "temp").repartition(8)
    rows.writeTo(table).append()
    assertDataFrameEqual(spark.table(table), weather_rows(spark, count=80))


def test_a_device_is_written_by_one_task(spark: SparkSession, ts: str, warehouse: Path) -> None:
    _write(spark, ts, "clustered")
    parts = _devices_per_part(warehouse, "clustered")
    seen = [device for devices in parts for device in devices]
    # Every device in exactly one part: none of the eight input partitions wrote its own slice.
    assert sorted(seen) == [("bj", "d1"), ("bj", "d2"), ("sh", "d3"), ("sh", "d4")]


def test_spark_shuffles_by_device_and_leaves_the_sort_to_the_writer(
    spark: SparkSession, ts: str
) -> None:
    # The writer orders each part's rows itself, whatever the input order: Spark's sort of
    # every row would only repeat it (sql/write_distribution.py).
    table = f"{ts}.db.plan"
    create_weather(spark, table)
    weather_rows(spark, count=8).createOrReplaceTempView("plan_rows")
    plan = spark.sql(f"EXPLAIN INSERT INTO {table} SELECT * FROM plan_rows").collect()[0][0]
    assert "REBALANCE_PARTITIONS_BY_COL" in plan and "hashpartitioning(city" in plan
    assert "Sort [" not in plan


def test_duplicates_meeting_in_a_task_are_still_refused(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    # Unsorted by Spark, the rows of one key still reach one task, whose writer refuses them.
    table = f"{ts}.db.dups"
    create_weather(spark, table)
    rows = weather_rows(spark, count=12)
    with pytest.raises(Exception, match=r"duplicate rows for device"):
        rows.union(rows.limit(1)).repartition(3).writeTo(table).append()
    assert open_table(str(warehouse / "db.db" / "dups")).version == 0  # nothing committed


def test_the_conf_off_writes_partitions_as_they_come(
    spark: SparkSession, ts: str, warehouse: Path, unclustered: None
) -> None:
    _write(spark, ts, "as_handed")
    parts = _devices_per_part(warehouse, "as_handed")
    # One part per input partition, each with its own slice of the devices.
    assert len(parts) == 8 and sum(len(devices) for devices in parts) > 4


def test_on_duplicate_last_keeps_the_input_order(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    # A shuffle would lose which of two rows of a key came last; such writes are not clustered.
    table = f"{ts}.db.dup_last"
    create_weather(spark, table, onDuplicate="last")
    first = weather_rows(spark, count=4)
    second = first.selectExpr("time", "city", "device", "temp + 100 AS temp", "rain")
    first.union(second).coalesce(1).writeTo(table).append()
    temps = sorted(r.temp for r in spark.table(table).collect() if r.temp is not None)
    assert temps and all(t > 100 for t in temps)


def test_a_bad_conf_value_is_refused_naming_it(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    table = f"{ts}.db.bad_conf"
    create_weather(spark, table)
    spark.conf.set(CLUSTERED_WRITES, "maybe")
    try:
        with pytest.raises(
            Exception, match=r"spark\.tsfile\.write\.clustered must be true or false, not 'maybe'"
        ):
            weather_rows(spark, count=4).writeTo(table).append()
    finally:
        spark.conf.unset(CLUSTERED_WRITES)
    assert open_table(str(warehouse / "db.db" / "bad_conf")).version == 0  # nothing committed
