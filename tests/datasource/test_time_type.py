"""A table written with a TIMESTAMP ``time`` reads back as TIMESTAMP through ``load(path)``
and ``open_table().scan()``, as a new user writes those reads: the table records its time
type (``time.type``), and every reader uses it unless ``timestampAs`` says otherwise. A table
from before the property existed reads as it was written."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import types as T

from tsfile_catalog import adopt_table, open_table

pytestmark = pytest.mark.spark

UTC = dt.timezone.utc
JUNE = dt.datetime(2010, 6, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def timestamps(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A table created by ``df.write`` from a frame whose ``time`` is a TIMESTAMP."""
    path = str(tmp_path_factory.mktemp("ts") / "t")
    rows = [(JUNE + dt.timedelta(days=d), f"c{d % 3}", float(d)) for d in range(-5, 5)]
    schema = "time timestamp, city string, temp double"
    df = spark.createDataFrame(rows, schema)
    df.write.format("tsfile").mode("append").options(table="t", tagColumns="city").save(path)
    return path


def test_the_table_records_its_time_type(timestamps: str) -> None:
    assert open_table(timestamps).properties["time.type"] == "TIMESTAMP"


def test_load_reads_time_as_a_timestamp(spark: SparkSession, timestamps: str) -> None:
    df = spark.read.format("tsfile").load(timestamps)
    assert df.schema["time"].dataType == T.TimestampType()
    since = df.where("time >= TIMESTAMP '2010-06-01 00:00:00+00:00'")
    assert since.count() == 5
    first = since.agg({"time": "min"}).collect()[0][0]
    assert first.astimezone(UTC) == JUNE


def test_the_where_option_takes_a_timestamp_literal(spark: SparkSession, timestamps: str) -> None:
    df = (
        spark.read.format("tsfile")
        .option("where", "time >= TIMESTAMP '2010-06-01 00:00:00+00:00'")
        .load(timestamps)
    )
    assert df.count() == 5


def test_an_explicit_timestamp_as_still_wins(spark: SparkSession, timestamps: str) -> None:
    df = spark.read.format("tsfile").option("timestampAs", "long").load(timestamps)
    assert df.schema["time"].dataType == T.LongType()
    millis = int(JUNE.timestamp() * 1000)
    assert df.where(f"time >= {millis}").count() == 5


def test_table_scan_reads_time_as_a_timestamp(timestamps: str) -> None:
    table = open_table(timestamps)
    frame = table.scan().to_pandas()
    assert pd.api.types.is_datetime64_any_dtype(frame["time"])
    since = table.scan(where="time >= '2010-06-01'", time_zone="UTC").to_pandas()
    assert len(since) == 5 and since["time"].min() == pd.Timestamp(JUNE)
    raw = table.scan(timestamp_as="long").to_arrow().column("time")
    assert min(raw.to_pylist()) == int((JUNE - dt.timedelta(days=5)).timestamp() * 1000)


def test_a_table_from_before_reads_as_it_was_written(
    spark: SparkSession, timestamps: str, tmp_path: Path
) -> None:
    # adopt_table makes a manifest over existing files, which records no time type.
    old = tmp_path / "old"
    old.mkdir()
    for part in Path(timestamps).glob("*.tsfile"):
        shutil.copy(part, old / part.name)
    assert adopt_table(str(old)).time is None
    assert spark.read.format("tsfile").load(str(old)).schema["time"].dataType == T.LongType()
    assert pa.types.is_int64(open_table(str(old)).scan().to_arrow().column("time").type)
