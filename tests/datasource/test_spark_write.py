"""Writing through Spark: round trips, one part per task, save modes, all-or-nothing."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.testing import assertDataFrameEqual

import tsfile_catalog
from tsfile_catalog.metadata.ownership import STAGING_DIR

pytestmark = pytest.mark.spark

DDL = "time bigint, city string, device string, temp double, hum int"


def _weather(spark: SparkSession, n: int = 60, parts: int = 3, start: int = 0) -> DataFrame:
    """``n`` readings from time ``start`` on: a later append of new readings passes a later
    ``start`` (the same times again would replace rows, the table key's rule)."""
    rows = [
        (start + i // 3, ["bj", "sh"][i % 2], f"d{i % 3}", i * 0.5, None if i % 5 == 0 else i)
        for i in range(n)
    ]
    return spark.createDataFrame(rows, DDL).repartition(parts)


def _save(df: DataFrame, path: Path, mode: str = "append", **options: str) -> None:
    writer = df.write.format("tsfile").mode(mode)
    for key, value in {"table": "weather", "tagColumns": "city,device", **options}.items():
        writer = writer.option(key, value)
    writer.save(str(path))


def _parts(path: Path) -> list[str]:
    return sorted(p for p in os.listdir(path) if p.endswith(".tsfile"))


def test_round_trip_one_part_file_per_task(spark: SparkSession, tmp_path: Path) -> None:
    df = _weather(spark)
    _save(df, tmp_path)
    assert len(_parts(tmp_path)) == 3
    assert all(p.startswith("part-") for p in _parts(tmp_path))
    assert not (tmp_path / STAGING_DIR).exists()  # a successful job leaves no staging behind
    back = spark.read.format("tsfile").load(str(tmp_path))
    assert back.columns == ["time", "city", "device", "temp", "hum"]
    assertDataFrameEqual(back, df)
    table = tsfile_catalog.open_table(str(tmp_path))
    assert table.version == 0 and sum(p.row_count for p in table.parts()) == 60


def test_every_supported_type_round_trips(spark: SparkSession, tmp_path: Path) -> None:
    ts = dt.datetime(2024, 1, 2, 3, 4, 5, 678000)
    rows = [
        (
            1_000,
            "a",
            True,
            7,
            8,
            9,
            1.5,
            2.5,
            "s",
            bytearray(b"\x00\x01"),
            dt.date(2024, 2, 29),
            ts,
        ),
        (2_000, "a", None, None, None, None, None, None, None, None, None, None),
    ]
    df = spark.createDataFrame(
        rows,
        "time bigint, id string, b boolean, small smallint, i int, l bigint, f float, "
        "d double, s string, bin binary, day date, at timestamp",
    )
    _save(df, tmp_path, tagColumns="id", table="types")
    back = spark.read.format("tsfile").option("timestampAs", "timestamp").load(str(tmp_path))
    assert [f.dataType.simpleString() for f in back.schema.fields] == [
        "timestamp",
        "string",
        "boolean",
        "int",
        "int",
        "bigint",
        "float",
        "double",
        "string",
        "binary",
        "date",
        "timestamp",
    ]
    got = back.orderBy("time").collect()
    assert got[0].time == dt.datetime(1970, 1, 1, 0, 0, 1)
    assert (got[0].b, got[0].small, got[0].i, got[0].l, got[0].f, got[0].d, got[0].s) == (
        True,
        7,
        8,
        9,
        1.5,
        2.5,
        "s",
    )
    assert (bytes(got[0].bin), got[0].day, got[0].at) == (b"\x00\x01", dt.date(2024, 2, 29), ts)
    assert all(v is None for v in list(got[1])[2:])
    raw = spark.read.format("tsfile").load(str(tmp_path)).orderBy("time").collect()[0]
    assert raw.at == 1_704_164_645_678  # TIMESTAMP fields read as raw longs by default


def test_timestamp_time_column_uses_precision(spark: SparkSession, tmp_path: Path) -> None:
    ts = dt.datetime(2024, 1, 1, 0, 0, 0, 123456)
    df = spark.createDataFrame([(ts, "a", 1.0)], "ts timestamp, id string, v double")
    _save(df, tmp_path, timeColumn="ts", tagColumns="id", timestampPrecision="us")
    raw = spark.read.format("tsfile").option("timestampAs", "long").load(str(tmp_path))
    assert raw.collect()[0].time == 1_704_067_200_123_456
    # the table records that its time was a TIMESTAMP: a plain read gives it back as one
    assert spark.read.format("tsfile").load(str(tmp_path)).collect()[0].time == ts


def test_append_overwrite_and_time_travel(spark: SparkSession, tmp_path: Path) -> None:
    _save(_weather(spark, 30, 1), tmp_path)
    _save(_weather(spark, 30, 2, start=1000), tmp_path.__class__(tmp_path), table="")
    assert spark.read.format("tsfile").load(str(tmp_path)).count() == 60
    _save(_weather(spark, 12, 1), tmp_path, mode="overwrite")
    assert spark.read.format("tsfile").load(str(tmp_path)).count() == 12
    old = spark.read.format("tsfile").option("versionAsOf", "1").load(str(tmp_path))
    assert old.count() == 60  # files of replaced versions stay until vacuum
    ops = [h.operation for h in tsfile_catalog.open_table(str(tmp_path)).history()]
    assert sorted(ops) == ["OVERWRITE", "WRITE", "WRITE"]


def test_loaded_dataframe_is_a_snapshot(spark: SparkSession, tmp_path: Path) -> None:
    _save(_weather(spark, 30, 1), tmp_path)
    loaded = spark.read.format("tsfile").load(str(tmp_path))
    _save(_weather(spark, 30, 1, start=1000), tmp_path)
    assert loaded.count() == 30
    assert spark.read.format("tsfile").load(str(tmp_path)).count() == 60


def test_schema_evolution_needs_merge_schema(spark: SparkSession, tmp_path: Path) -> None:
    _save(_weather(spark, 12, 1), tmp_path)
    wider = _weather(spark, 12, 1, start=1000).selectExpr("*", "temp * 2 AS wind")
    with pytest.raises(Exception, match="wind"):
        _save(wider, tmp_path)
    assert tsfile_catalog.open_table(str(tmp_path)).version == 0
    _save(wider, tmp_path, mergeSchema="true")
    back = spark.read.format("tsfile").load(str(tmp_path))
    assert back.columns[-1] == "wind"
    assert back.where("wind IS NULL").count() == 12 and back.count() == 24


@pytest.mark.parametrize(
    ("mutate", "options", "message"),
    [
        (lambda df: df, {"tagColumns": ""}, "tagColumns"),
        (lambda df: df, {"tagColumns": "city,nope"}, "'tagColumns' names column 'nope'"),
        (lambda df: df, {"table": ""}, "option 'table' is required"),
        (lambda df: df.selectExpr("*", "array(1) AS arr"), {}, "column 'arr' has Spark type"),
        (lambda df: df.selectExpr("*", "CAST(1 AS DECIMAL(5,2)) AS dec"), {}, "'dec'"),
        (lambda df: df.withColumn("city", df.hum), {}, "TAG column 'city' is int"),
        (lambda df: df.selectExpr("*", "temp AS TEMP2", "temp AS temp2"), {}, "collide"),
        (lambda df: df, {"encoding": "TS_2DIFF"}, "'temp' of type DOUBLE"),
        (lambda df: df, {"fieldColumns": "temp"}, "hum are in neither"),
        (lambda df: df, {"compression": "SDT"}, "compression"),
    ],
)
def test_bad_writes_fail_clearly_and_write_nothing(
    spark: SparkSession, tmp_path: Path, mutate: object, options: dict[str, str], message: str
) -> None:
    df = mutate(_weather(spark, 6, 1))  # type: ignore[operator]
    with pytest.raises(Exception, match=message):
        _save(df, tmp_path, **options)
    assert not tmp_path.exists() or _parts(tmp_path) == []
    assert not (tmp_path / "_tsfile_manifest").exists()


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([(1, None, "d", 1.0, 1)], "TAG column 'city' has a null value"),
        ([(None, "bj", "d", 1.0, 1)], "time column 'time' has a null value"),
        ([(1, "bj", "d", 1.0, 1), (1, "bj", "d", 2.0, 2)], "duplicate rows for device"),
    ],
)
def test_bad_rows_fail_the_job_and_leave_nothing(
    spark: SparkSession, tmp_path: Path, rows: list[tuple[object, ...]], message: str
) -> None:
    good = _weather(spark, 6, 1)
    _save(good, tmp_path)
    bad = spark.createDataFrame(rows, DDL).union(good).repartition(2)
    with pytest.raises(Exception, match=message):
        _save(bad, tmp_path)
    assert tsfile_catalog.open_table(str(tmp_path)).version == 0
    assert len(_parts(tmp_path)) == 1
    # The job's abort removes what its tasks staged, but a task Spark is still cancelling
    # can stage after it (seen under load): such files are VACUUM's orphans, and nothing else.
    tsfile_catalog.vacuum(str(tmp_path), dry_run=False, retention_ms=0, retention_check=False)
    assert not (tmp_path / STAGING_DIR).exists()
    assert len(_parts(tmp_path)) == 1
    assert spark.read.format("tsfile").load(str(tmp_path)).count() == 6


def test_on_duplicate_last_and_rolling_files(spark: SparkSession, tmp_path: Path) -> None:
    df = spark.createDataFrame(
        [(1, "bj", "d", 1.0, 1), (1, "bj", "d", 2.0, 2), (2, "bj", "d", 3.0, 3)], DDL
    ).coalesce(1)
    _save(df, tmp_path, onDuplicate="last", maxRowsPerFile="100")
    rows = spark.read.format("tsfile").load(str(tmp_path)).orderBy("time").collect()
    assert [(r.time, r.temp) for r in rows] == [(1, 2.0), (2, 3.0)]
    rolled = tmp_path / "rolled"
    _save(_weather(spark, 30, 1), rolled, maxRowsPerFile="10")
    assert len(_parts(rolled)) == 3


def test_plain_directory_is_adopted_not_hidden(spark: SparkSession, tmp_path: Path) -> None:
    _save(_weather(spark, 6, 1), tmp_path / "t")
    plain = tmp_path / "plain"
    plain.mkdir()
    for name in _parts(tmp_path / "t"):
        os.rename(tmp_path / "t" / name, plain / name)
    with pytest.raises(Exception, match="adopt"):
        _save(_weather(spark, 6, 1), plain)
    table = tsfile_catalog.adopt_table(str(plain))
    assert table.version == 0 and table.history()[0].operation == "ADOPT"
    _save(_weather(spark, 6, 1, start=1000), plain, table="")
    assert spark.read.format("tsfile").load(str(plain)).count() == 12


def test_a_killed_first_commit_does_not_block_writes(spark: SparkSession, tmp_path: Path) -> None:
    # A first commit killed after creating the manifest folder leaves it empty.
    (tmp_path / "t" / "_tsfile_manifest").mkdir(parents=True)
    _save(_weather(spark, 6, 1), tmp_path / "t")
    assert spark.read.format("tsfile").load(str(tmp_path / "t")).count() == 6
    # likewise adopting a folder of TsFiles
    plain = tmp_path / "plain"
    (plain / "_tsfile_manifest").mkdir(parents=True)
    for name in _parts(tmp_path / "t"):
        os.rename(tmp_path / "t" / name, plain / name)
    assert tsfile_catalog.adopt_table(str(plain)).history()[0].operation == "ADOPT"
    assert spark.read.format("tsfile").load(str(plain)).count() == 6


def test_error_if_exists_mode_is_explained(spark: SparkSession, tmp_path: Path) -> None:
    with pytest.raises(Exception, match="(?i)errorifexists|not supported|unsupported"):
        _weather(spark, 6, 1).write.format("tsfile").option("tagColumns", "city,device").option(
            "table", "w"
        ).save(str(tmp_path))


def test_upper_case_columns_keep_their_values(spark: SparkSession, tmp_path: Path) -> None:
    # The native writer silently shifts FIELD values when Arrow names are upper-case.
    df = spark.createDataFrame(
        [(1, "bj", 1.5, 10), (2, "bj", 2.5, 20)], "TIME bigint, City string, Temp double, HUM int"
    )
    df.write.format("tsfile").options(table="W", timeColumn="Time", tagColumns="CITY").mode(
        "append"
    ).save(str(tmp_path))
    back = spark.read.format("tsfile").load(str(tmp_path)).orderBy("time")
    assert back.columns == ["time", "city", "temp", "hum"]
    assert [tuple(r) for r in back.collect()] == [(1, "bj", 1.5, 10), (2, "bj", 2.5, 20)]
    assert tsfile_catalog.open_table(str(tmp_path)).schema.table == "w"


def test_register_is_idempotent(spark: SparkSession, tmp_path: Path) -> None:
    tsfile_catalog.register(spark)
    tsfile_catalog.register(spark)
    _save(_weather(spark, 6, 1), tmp_path)
    assert spark.read.format("tsfile").load(str(tmp_path)).count() == 6
