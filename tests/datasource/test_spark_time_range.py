"""Raw times outside Spark's timestamp range fail naming the column or the value.

TsFile times are any int64 in their unit; Spark timestamps cover 0001-01-01..9999-12-31.
Reading such a time as a timestamp, or time travel to such an instant, used to overflow
inside Arrow (``ArrowInvalid: overflow``) or ``datetime`` (``year -314918 is out of range``,
``OSError: Value too large``), or time travel to a huge instant quietly meant "latest".
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tsfile_catalog import Catalog, adopt_table
from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema
from tsfile_catalog.metadata.spark.time import spark_timestamp_bounds
from tsfile_catalog.table import create_table, open_table

spark_test = pytest.mark.spark

OUT_OF_RANGE_MS = [
    "-99999999999999999999",
    "-9999999999999999",
    "-62135596800001",
    "253402300800000",
    "99999999999999999999",
    "9" * 5000,
]


def test_spark_timestamp_bounds() -> None:
    assert spark_timestamp_bounds("ms") == (-62_135_596_800_000, 253_402_300_799_999)
    assert spark_timestamp_bounds("us") == (-62_135_596_800_000_000, 253_402_300_799_999_999)
    lo, hi = spark_timestamp_bounds("ns")
    assert lo < -(2**63) and hi > 2**63 - 1, "every int64 nanosecond time is a timestamp"


@pytest.mark.parametrize("value", OUT_OF_RANGE_MS)
def test_time_travel_outside_spark_timestamps_names_the_value(tmp_path: Path, value: str) -> None:
    url = str(tmp_path / "t")
    create_table(url, TableSchema.of("t", [Column("c", DataType.STRING, Category.TAG)]))
    with pytest.raises(OptionError, match="outside the range of Spark timestamps") as info:
        open_table(url, timestamp=value)
    assert repr(value)[:40] in str(info.value)
    with pytest.raises(OptionError, match="outside the range"):
        open_table(url, timestamp=int(value[:20]))
    # The edges themselves are instants: nothing was committed before them / by then.
    lo, hi = spark_timestamp_bounds("ms")
    assert open_table(url, timestamp=str(hi)).version == 0
    assert open_table(url, timestamp="9999-12-31T23:59:59.999").version == 0


@spark_test
def test_raw_times_outside_spark_timestamps_name_the_column(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Files written in ns and read as ms (the classic precision mix-up) hold raw times
    around year 50 million: each timestamp column read must fail naming itself. A table
    records its unit, so the mix-up needs files nothing records a unit for: here adopted."""
    written = dt.datetime(2024, 1, 1, 12, 0, 0)
    spark.createDataFrame(
        [(written, "a", written)], "time timestamp, c string, ts timestamp"
    ).write.format("tsfile").options(table="t", tagColumns="c", timestampPrecision="ns").mode(
        "append"
    ).save(str(tmp_path / "ns"))
    raw = 1_704_110_400_000_000_000
    reader = spark.read.format("tsfile").options(timestampAs="timestamp")
    # The table written in ns refuses being read in another unit.
    with pytest.raises(Exception, match="stores time in nanoseconds"):
        reader.option("timestampPrecision", "ms").load(str(tmp_path / "ns")).collect()
    path = str(tmp_path / "t")
    Path(path).mkdir()
    for part in (tmp_path / "ns").glob("*.tsfile"):
        shutil.copy(part, Path(path) / part.name)
    adopt_table(path)
    with pytest.raises(Exception, match=rf"column 'time' holds the raw time {raw} \(ms since"):
        reader.load(path).collect()
    with pytest.raises(Exception, match=rf"column 'ts' holds the raw time {raw} \(ms since"):
        reader.option("columns", "c,ts").load(path).collect()
    # Read in its own precision, or as raw longs, the same table is fine.
    assert reader.option("timestampPrecision", "ns").load(path).collect()[0].ts == written
    assert spark.read.format("tsfile").load(path).collect()[0].time == raw


@spark_test
def test_catalog_time_travel_outside_spark_timestamps_names_the_value(
    spark: SparkSession, tmp_path: Path
) -> None:
    catalog = Catalog(spark, str(tmp_path / "wh"), register_views=False)
    catalog.sql("CREATE TABLE t (time BIGINT, c STRING) USING tsfile OPTIONS (tagColumns 'c')")
    for value in ("-99999999999999999999", "99999999999999999999"):
        with pytest.raises(OptionError, match=f"timestamp '{value}' is outside the range"):
            catalog.sql(f"SELECT * FROM t TIMESTAMP AS OF '{value}'").collect()
        # catalog.table() hands the clause to the data source: Spark wraps the error.
        with pytest.raises(Exception, match=f"timestamp '{value}' is outside the range"):
            catalog.table("t", timestamp=value)
