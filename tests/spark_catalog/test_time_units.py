"""A table's own time unit through ``spark.sql`` with the catalog plugin, ``Catalog.sql`` and
the ``tsfile`` source, on real Spark and TsFile: ms, us and ns tables whose rows hold times
that do not fall on a microsecond (or millisecond) boundary.

Spark's TIMESTAMP holds microseconds. What passes through it exactly (ms and us times, any
unit read as raw longs) is rewritten exactly; an ns table read as timestamps refuses every
statement that would carry its rows through Spark, before anything is written.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pytest

from tsfile_catalog import Catalog, open_table

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

# 1.5 us, 2 s + 1 ns, 2024-01-01T00:00:00.000001500 (nanoseconds).
INSTANTS_NS = [1_500, 2_000_000_001, 1_704_067_200_000_001_500]
DIVISOR = {"ms": 1_000_000, "us": 1_000, "ns": 1}


def create(spark: SparkSession, ts: str, warehouse: Path, name: str, unit: str, time: str) -> str:
    """``<ts>.db.<name>`` (``time <time>``, TAG ``dev``, ``v``) in ``unit``, holding
    :data:`INSTANTS_NS` as appended without options by the Spark-free API; its location."""
    spark.sql(
        f"CREATE TABLE {ts}.db.{name} (time {time}, dev STRING, v BIGINT) USING tsfile "
        f"TBLPROPERTIES ('tagColumns' = 'dev', 'timestampPrecision' = '{unit}')"
    )
    location = str(warehouse / "db.db" / name)
    open_table(location).append(
        pa.table(
            {
                "time": pa.array(INSTANTS_NS, pa.timestamp("ns")),
                "dev": ["a", "b", "a"],
                "v": pa.array([1, 2, 3], pa.int64()),
            }
        )
    )
    return location


def raw(location: str) -> list[tuple[int, str, int]]:
    rows = open_table(location).scan(timestamp_as="long").to_arrow().to_pylist()  # raw times
    return sorted((r["time"], r["dev"], r["v"]) for r in rows)


def stored(unit: str) -> list[tuple[int, str, int]]:
    """What :func:`create` stores: the instants floored once into ``unit``."""
    first, second, third = (t // DIVISOR[unit] for t in INSTANTS_NS)
    return [(first, "a", 1), (second, "b", 2), (third, "a", 3)]


def test_an_ns_table_appended_without_options_reads_its_instants(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    location = create(spark, ts, warehouse, "ns_read", "ns", "TIMESTAMP")
    table = open_table(location)
    assert (table.properties["time.unit"], table.properties["time.type"]) == ("ns", "TIMESTAMP")
    assert raw(location) == stored("ns")
    # Spark floors nanoseconds to its microseconds on read: the instants, not 1970 + ms.
    times = sorted(r.time for r in spark.sql(f"SELECT time FROM {ts}.db.ns_read").collect())
    epoch = dt.datetime(1970, 1, 1)
    assert times == [
        epoch + dt.timedelta(microseconds=1),
        epoch + dt.timedelta(seconds=2),
        dt.datetime(2024, 1, 1, 0, 0, 0, 1),
    ]
    # The tsfile source reads the table's own unit; an option naming another is refused.
    loaded = spark.read.format("tsfile").option("timestampAs", "timestamp").load(location)
    assert sorted(r.time for r in loaded.select("time").collect()) == times
    with pytest.raises(Exception, match="stores time in nanoseconds"):
        spark.read.format("tsfile").option("timestampPrecision", "ms").load(location).collect()


def test_spark_sql_rewrites_of_an_ns_table_are_refused_before_anything_is_written(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    location = create(spark, ts, warehouse, "ns_rewrite", "ns", "TIMESTAMP")
    name = f"{ts}.db.ns_rewrite"
    version = open_table(location).version
    for statement in (
        f"UPDATE {name} SET v = v + 100 WHERE dev = 'b'",
        f"MERGE INTO {name} t USING (SELECT 'b' AS dev) s ON t.dev = s.dev "
        "WHEN MATCHED THEN DELETE",
        # A condition the scan cannot take whole: Spark's copy-on-write.
        f"DELETE FROM {name} WHERE v + 1 = 3",
    ):
        with pytest.raises(Exception) as refused:
            spark.sql(statement)
        message = str(refused.value)
        assert "spark.sql" in message and "db.ns_rewrite" in message, message
        assert "stores time in nanoseconds ('ns')" in message
        assert "truncated to microseconds" in message
    assert open_table(location).version == version
    assert raw(location) == stored("ns")
    # A DELETE the table runs itself rewrites the stored times: exact.
    spark.sql(f"DELETE FROM {name} WHERE dev = 'b'")
    assert raw(location) == [r for r in stored("ns") if r[1] != "b"]
    # An INSERT's microsecond timestamp is exact in nanoseconds.
    spark.sql(f"INSERT INTO {name} VALUES (TIMESTAMP '2024-01-01 00:00:00.000002', 'c', 9)")
    assert (1_704_067_200_000_002_000, "c", 9) in raw(location)


@pytest.mark.parametrize(
    ("unit", "time"), [("ms", "TIMESTAMP"), ("us", "TIMESTAMP"), ("ns", "BIGINT")]
)
def test_spark_sql_update_keeps_every_stored_time_exactly(
    spark: SparkSession, ts: str, warehouse: Path, unit: str, time: str
) -> None:
    """What Spark carries exactly (ms and us timestamps, raw ns longs) is rewritten exactly:
    the rows the UPDATE did not match keep their stored times, and so does the one it did."""
    name = f"upd_{unit}"
    location = create(spark, ts, warehouse, name, unit, time)
    spark.sql(f"UPDATE {ts}.db.{name} SET v = v + 100 WHERE dev = 'b'")
    assert raw(location) == [(t, d, v + 100 if d == "b" else v) for t, d, v in stored(unit)]


def test_catalog_sql_update_replaces_the_row_or_refuses(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    catalog = Catalog(spark, str(warehouse), register_views=False)
    us = create(spark, ts, warehouse, "cat_us", "us", "TIMESTAMP")
    catalog.sql("UPDATE db.cat_us SET v = 0 WHERE v = 2")
    # The row is replaced at its own key: no second row at a truncated time.
    assert raw(us) == [(t, d, 0 if v == 2 else v) for t, d, v in stored("us")]
    # The recorded unit cannot be altered, through either SQL.
    with pytest.raises(Exception, match="'time.unit' = 'ns', but the catalog reads"):
        catalog.sql("ALTER TABLE db.cat_us SET TBLPROPERTIES ('time.unit' = 'ns')")
    with pytest.raises(Exception, match="cannot be unset"):
        spark.sql(f"ALTER TABLE {ts}.db.cat_us UNSET TBLPROPERTIES ('time.type')")
    ns = create(spark, ts, warehouse, "cat_ns", "ns", "TIMESTAMP")
    version = open_table(ns).version
    for statement in (
        "UPDATE db.cat_ns SET v = 0 WHERE v = 2",
        "MERGE INTO db.cat_ns t USING (SELECT dev, time FROM db.cat_ns) s "
        "ON t.dev = s.dev AND t.time = s.time WHEN MATCHED THEN UPDATE SET v = 0",
    ):
        with pytest.raises(Exception, match=r"stores time in nanoseconds \('ns'\)"):
            catalog.sql(statement)
    assert open_table(ns).version == version
    assert raw(ns) == stored("ns")


def test_spark_writes_store_their_microseconds_in_each_tables_unit(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    """Spark's microsecond timestamps, one of which is not a whole millisecond, written by
    the catalog's writer and by the tsfile source given a path and no unit."""
    micros = [1_500, 1_704_067_200_000_001]  # 1.5 ms; 2024-01-01T00:00:00.000001
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    frame = spark.createDataFrame(
        [(epoch + dt.timedelta(microseconds=m), "w", i) for i, m in enumerate(micros)],
        "time timestamp, dev string, v bigint",
    )
    for unit in ("ms", "us", "ns"):
        spark.sql(
            f"CREATE TABLE {ts}.db.w_{unit} (time TIMESTAMP, dev STRING, v BIGINT) USING tsfile "
            f"TBLPROPERTIES ('tagColumns' = 'dev', 'timestampPrecision' = '{unit}')"
        )
        frame.writeTo(f"{ts}.db.w_{unit}").append()
        location = str(warehouse / "db.db" / f"w_{unit}")
        frame.selectExpr("time", "'p' AS dev", "v").write.format("tsfile").mode("append").save(
            location
        )
        per_unit = {"ms": 1_000, "us": 1}.get(unit)
        expected = [m // per_unit if per_unit else m * 1_000 for m in micros]
        for dev in ("p", "w"):
            assert [t for t, d, _ in raw(location) if d == dev] == expected, (unit, dev)
