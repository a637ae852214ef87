"""Reading real TsFiles through Spark: paths, schemas, projection, filters, partitions."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession
from pyspark.testing import assertDataFrameEqual

from tests.datasource.helpers import write_rows
from tests.factories import weather_schema
from tsfile_catalog.metadata.schema import DataType

pytestmark = pytest.mark.spark

SCHEMA = weather_schema(("temp", DataType.DOUBLE), ("hum", DataType.INT32))


def _rows(city: str, device: str, times: range, sparse: bool = False) -> list[dict[str, object]]:
    return [
        {
            "time": t,
            "city": city,
            "device": device,
            "temp": t * 1.5,
            **({} if sparse and t % 2 else {"hum": t}),
        }
        for t in times
    ]


@pytest.fixture(scope="module")
def weather_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("weather")
    write_rows(str(root / "a.tsfile"), SCHEMA, _rows("bj", "d1", range(10)))
    (root / "sub").mkdir()
    write_rows(
        str(root / "sub" / "b.tsfile"),
        SCHEMA,
        _rows("bj", "d2", range(5, 15)) + _rows("sh", "d3", range(10), sparse=True),
    )
    # Never read: hidden, underscore-prefixed and non-tsfile entries.
    (root / "_staging").mkdir()
    write_rows(str(root / "_staging" / "x.tsfile"), SCHEMA, _rows("zz", "zz", range(1)))
    write_rows(str(root / ".hidden.tsfile"), SCHEMA, _rows("zz", "zz", range(1)))
    (root / "notes.txt").write_text("not a tsfile")
    return root


def test_directory_is_read_recursively_skipping_hidden_entries(
    spark: SparkSession, weather_dir: Path
) -> None:
    df = spark.read.format("tsfile").load(str(weather_dir))
    assert df.columns == ["time", "city", "device", "temp", "hum"]
    assert [f.dataType.simpleString() for f in df.schema.fields] == [
        "bigint",
        "string",
        "string",
        "double",
        "int",
    ]
    assert df.count() == 30
    assert {r.city for r in df.select("city").distinct().collect()} == {"bj", "sh"}


def test_single_file_and_glob(spark: SparkSession, weather_dir: Path) -> None:
    single = spark.read.format("tsfile").load(str(weather_dir / "a.tsfile"))
    assert single.count() == 10
    globbed = spark.read.format("tsfile").load(str(weather_dir / "*" / "*.tsfile"))
    assert globbed.count() == 20


def test_sparse_fields_read_as_null(spark: SparkSession, weather_dir: Path) -> None:
    rows = (
        spark.read.format("tsfile")
        .option("where", "device = 'd3'")
        .load(str(weather_dir))
        .orderBy("time")
        .collect()
    )
    assert [r.hum for r in rows] == [t if t % 2 == 0 else None for t in range(10)]
    assert [r.temp for r in rows] == [t * 1.5 for t in range(10)]


def test_columns_option_projects_and_orders(spark: SparkSession, weather_dir: Path) -> None:
    df = (
        spark.read.format("tsfile")
        .option("columns", "HUM, time")
        .option("where", "device = 'd1' AND temp > 6")
        .load(str(weather_dir))
    )
    assert df.columns == ["hum", "time"]
    assert sorted((r.time, r.hum) for r in df.collect()) == [(t, t) for t in range(5, 10)]


def test_a_user_schema_is_a_projection(spark: SparkSession, weather_dir: Path) -> None:
    # .schema() selects and orders columns like the 'columns' option (names case-insensitive,
    # nullability may be looser), with the table's types.
    df = (
        spark.read.format("tsfile")
        .schema("HUM int, time bigint, City string")
        .option("where", "device = 'd1' AND temp > 6")
        .load(str(weather_dir))
    )
    assert df.columns == ["HUM", "time", "City"]
    projected = spark.read.format("tsfile").option("columns", "hum,time,city")
    expected = projected.option("where", "device = 'd1' AND temp > 6").load(str(weather_dir))
    assertDataFrameEqual(df, expected.toDF("HUM", "time", "City"))
    assert sorted(r.time for r in df.collect()) == list(range(5, 10))


def test_time_and_tag_only_projection_has_one_row_per_device_time(
    spark: SparkSession, weather_dir: Path
) -> None:
    df = spark.read.format("tsfile").option("columns", "time,device").load(str(weather_dir))
    rows = sorted((r.device, r.time) for r in df.collect())
    expected = sorted(
        [("d1", t) for t in range(10)]
        + [("d2", t) for t in range(5, 15)]
        + [("d3", t) for t in range(10)]
    )
    assert rows == expected
    tags_only = spark.read.format("tsfile").option("columns", "city").load(str(weather_dir))
    assert tags_only.count() == 30


def test_where_option_matches_spark_filter(spark: SparkSession, weather_dir: Path) -> None:
    predicate = "time BETWEEN 3 AND 8 AND city = 'bj' AND (hum > 4 OR temp < 6)"
    pushed = spark.read.format("tsfile").option("where", predicate).load(str(weather_dir))
    plain = spark.read.format("tsfile").load(str(weather_dir)).where(predicate)
    assertDataFrameEqual(pushed, plain)
    assert pushed.count() > 0


def test_multi_table_file_needs_the_table_option(spark: SparkSession, tmp_path: Path) -> None:
    import tsfile

    path = str(tmp_path / "multi.tsfile")
    writer = tsfile.TsFileWriter(path)
    for name in ("alpha", "beta"):
        writer.register_table(
            tsfile.TableSchema(
                name,
                [
                    tsfile.ColumnSchema("id", tsfile.TSDataType.STRING, tsfile.ColumnCategory.TAG),
                    tsfile.ColumnSchema(
                        f"{name}_v", tsfile.TSDataType.INT64, tsfile.ColumnCategory.FIELD
                    ),
                ],
            )
        )
    for name in ("alpha", "beta"):
        writer.write_arrow_batch(
            name,
            pa.table(
                {
                    "time": pa.array([1, 2], pa.int64()),
                    "id": ["x", "x"],
                    f"{name}_v": pa.array([10, 20], pa.int64()),
                }
            ),
            0,
        )
    writer.close()
    with pytest.raises(Exception, match=r"several tables \(alpha, beta\).*'table' option"):
        spark.read.format("tsfile").load(path)
    beta = spark.read.format("tsfile").option("table", "BETA").load(path)
    assert beta.columns == ["time", "id", "beta_v"]
    assert [r.beta_v for r in beta.orderBy("time").collect()] == [10, 20]


def test_strict_schema_names_both_files_and_merge_unions_fields(
    spark: SparkSession, tmp_path: Path
) -> None:
    write_rows(str(tmp_path / "a.tsfile"), SCHEMA, _rows("bj", "d1", range(3)))
    wider = weather_schema(
        ("temp", DataType.DOUBLE), ("hum", DataType.INT32), ("wind", DataType.DOUBLE)
    )
    write_rows(
        str(tmp_path / "b.tsfile"), wider, [{**r, "wind": 7.0} for r in _rows("bj", "d2", range(3))]
    )
    with pytest.raises(Exception, match=r"column 'wind' is in .*b.tsfile but not in .*a.tsfile"):
        spark.read.format("tsfile").load(str(tmp_path))
    merged = spark.read.format("tsfile").option("mergeSchema", "true").load(str(tmp_path))
    assert merged.columns == ["time", "city", "device", "temp", "hum", "wind"]
    winds = {(r.device, r.wind) for r in merged.collect()}
    assert winds == {("d1", None), ("d2", 7.0)}


def test_merge_schema_refuses_type_changes(spark: SparkSession, tmp_path: Path) -> None:
    write_rows(str(tmp_path / "a.tsfile"), SCHEMA, _rows("bj", "d1", range(3)))
    other = weather_schema(("temp", DataType.INT64), ("hum", DataType.INT32))
    write_rows(
        str(tmp_path / "b.tsfile"), other, [{**r, "temp": 1} for r in _rows("bj", "d2", range(3))]
    )
    with pytest.raises(Exception, match=r"column 'temp' is FIELD DOUBLE in .* but FIELD INT64"):
        spark.read.format("tsfile").option("mergeSchema", "true").load(str(tmp_path))


def test_timestamp_as_timestamp_with_precision(spark: SparkSession, tmp_path: Path) -> None:
    write_rows(
        str(tmp_path / "a.tsfile"),
        SCHEMA,
        [{"time": 1_704_067_200_123, "city": "bj", "device": "d1", "temp": 1.0}],
    )
    row = (
        spark.read.format("tsfile")
        .option("timestampAs", "timestamp")
        .load(str(tmp_path))
        .collect()[0]
    )
    assert row.time.isoformat() == "2024-01-01T00:00:00.123000"
    as_us = (
        spark.read.format("tsfile")
        .option("timestampAs", "timestamp")
        .option("timestampPrecision", "us")
        .load(str(tmp_path))
        .collect()[0]
    )
    assert as_us.time.isoformat() == "1970-01-20T17:21:07.200123"
    filtered = (
        spark.read.format("tsfile")
        .option("timestampAs", "timestamp")
        .option("where", "time >= TIMESTAMP '2024-01-01 00:00:00.1'")
        .load(str(tmp_path))
    )
    assert filtered.count() == 1


@pytest.mark.slow
def test_bad_inputs_fail_at_load_naming_the_culprit(
    spark: SparkSession, weather_dir: Path, tmp_path: Path
) -> None:
    reader = spark.read.format("tsfile")
    with pytest.raises(Exception, match="does not exist"):
        reader.load(str(tmp_path / "missing"))
    with pytest.raises(Exception, match=r"no \*.tsfile files"):
        reader.load(str(tmp_path))
    with pytest.raises(Exception, match="option 'columns' names 'nope'"):
        reader.option("columns", "time,nope").load(str(weather_dir))
    with pytest.raises(Exception, match="unknown column 'wind'"):
        spark.read.format("tsfile").option("where", "wind > 1").load(str(weather_dir))
    with pytest.raises(Exception, match="unknown read option 'colums'"):
        spark.read.format("tsfile").option("colums", "x").load(str(weather_dir))


def test_big_files_split_and_small_files_pack(spark: SparkSession, tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.mkdir()
    write_rows(
        str(big / "a.tsfile"),
        SCHEMA,
        [r for d in range(8) for r in _rows("bj", f"d{d}", range(100))],
    )
    df = spark.read.format("tsfile").option("rowsPerPartition", "200").load(str(big))
    assert df.rdd.getNumPartitions() == 4
    assert df.count() == 800
    small = tmp_path / "small"
    small.mkdir()
    for i in range(6):
        write_rows(str(small / f"p{i}.tsfile"), SCHEMA, _rows("bj", f"d{i}", range(10)))
    packed = spark.read.format("tsfile").option("rowsPerPartition", "25").load(str(small))
    assert packed.rdd.getNumPartitions() == 3
    assert packed.count() == 60


def test_empty_scan_returns_no_rows(spark: SparkSession, weather_dir: Path) -> None:
    df = spark.read.format("tsfile").option("where", "city = 'nowhere'").load(str(weather_dir))
    assert df.collect() == []
    assert (
        spark.read.format("tsfile")
        .option("where", "time > 5 AND time < 2")
        .load(str(weather_dir))
        .count()
        == 0
    )


def test_discovered_without_registration_in_a_new_session(
    spark: SparkSession, weather_dir: Path
) -> None:
    fresh = spark.newSession()
    assert fresh.read.format("tsfile").load(str(weather_dir)).count() == 30
    fresh.sql(f"CREATE TEMPORARY VIEW w USING tsfile OPTIONS (path '{weather_dir}')")
    assert fresh.sql("SELECT count(*) AS n FROM w").collect()[0].n == 30
    assert os.environ.get("PYSPARK_PYTHON")
