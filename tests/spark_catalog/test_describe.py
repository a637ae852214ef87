"""Spark's own ``DESCRIBE [TABLE] [EXTENDED]`` of a tsfile table marks its TAG columns in the
``comment`` column (the session extensions' ``DescribeTables``), while the table's schema,
every read's and every table written from one, carries no comment."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tests.spark_catalog.conftest import create_weather, weather_rows
from tsfile_catalog import Catalog

pytestmark = pytest.mark.spark

# (col_name, data_type, comment) of the weather table: its TAG columns city and device.
COLUMNS = [
    ("time", "timestamp", None),
    ("city", "string", "TAG"),
    ("device", "string", "TAG"),
    ("temp", "double", None),
    ("rain", "int", None),
]


@pytest.fixture(scope="module")
def table(spark: SparkSession, ts: str) -> str:
    name = f"{ts}.db.described"
    create_weather(spark, name)
    weather_rows(spark, count=8).writeTo(name).append()
    return name


@pytest.mark.parametrize(
    "statement",
    [
        "DESCRIBE {}",
        "DESC {}",
        "DESCRIBE TABLE {}",
        "DESCRIBE EXTENDED {}",
        "DESC TABLE FORMATTED {}",
    ],
)
def test_describe_marks_the_tag_columns(
    spark: SparkSession, warehouse: Path, table: str, statement: str
) -> None:
    described = spark.sql(statement.format(table))
    assert described.columns == ["col_name", "data_type", "comment"]
    rows = [tuple(r) for r in described.collect()]
    assert rows[: len(COLUMNS)] == COLUMNS
    # The same columns Catalog.sql's DESCRIBE gives, its category column saying TAG.
    ours = Catalog(spark, str(warehouse), register_views=False).sql("DESCRIBE db.described")
    assert [(r.col_name, r.data_type, r.category) for r in ours.collect()] == [
        (name, data_type, comment or ("TIME" if name == "time" else "FIELD"))
        for name, data_type, comment in COLUMNS
    ]
    if "EXTENDED" in statement or "FORMATTED" in statement:
        details = {r[0]: r[1] for r in rows[len(COLUMNS) :]}  # Spark's own details follow
        assert "# Detailed Table Information" in details
        assert details["Provider"] == "tsfile"
        assert "tagColumns=city,device" in details["Table Properties"]
    else:
        assert len(rows) == len(COLUMNS)


def test_reads_and_tables_written_from_them_carry_no_comment(
    spark: SparkSession, table: str, tmp_path: Path
) -> None:
    spark.sql(f"DESCRIBE {table}").collect()
    read = spark.table(table)
    assert [f.metadata for f in read.schema.fields] == [{}] * len(COLUMNS)
    assert [f.metadata for f in spark.sql(f"SELECT * FROM {table}").schema.fields] == [{}] * len(
        COLUMNS
    )
    read.write.parquet(str(tmp_path / "copy"))
    assert [f.metadata for f in spark.read.parquet(str(tmp_path / "copy")).schema.fields] == [
        {}
    ] * len(COLUMNS)
    copy = f"pq_copy_{uuid.uuid4().hex[:8]}"
    read.write.format("parquet").saveAsTable(copy)
    try:
        assert [tuple(r) for r in spark.sql(f"DESCRIBE {copy}").collect()] == [
            (name, data_type, None) for name, data_type, _ in COLUMNS
        ]
    finally:
        spark.sql(f"DROP TABLE {copy}")


def test_a_parquet_tables_describe_is_sparks(spark: SparkSession) -> None:
    name = f"pq_described_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {name} (city STRING COMMENT 'where', temp DOUBLE) USING parquet")
    try:
        assert [tuple(r) for r in spark.sql(f"DESCRIBE {name}").collect()] == [
            ("city", "string", "where"),
            ("temp", "double", None),
        ]
    finally:
        spark.sql(f"DROP TABLE {name}")


def test_a_columns_describe_and_describe_detail_stay_as_they_were(
    spark: SparkSession, table: str
) -> None:
    column = {r.info_name: r.info_value for r in spark.sql(f"DESCRIBE {table} city").collect()}
    assert column == {"col_name": "city", "data_type": "string", "comment": "NULL"}
    detail = spark.sql(f"DESCRIBE DETAIL {table}").collect()
    assert len(detail) == 1
    assert detail[0].tag_columns == ["city", "device"]


def test_the_session_catalogs_tsfile_tables_are_marked_too(
    spark: SparkSession, ts: str, tmp_path: Path
) -> None:
    session = spark.newSession()
    session.conf.set(
        "spark.sql.catalog.spark_catalog", "io.tsfilecatalog.spark.TsFileSessionCatalog"
    )
    session.conf.set("spark.sql.catalog.spark_catalog.warehouse", str(tmp_path / "wh"))
    name = f"described_{uuid.uuid4().hex[:8]}"
    create_weather(session, name)
    try:
        for statement in ("DESCRIBE {}", "DESCRIBE TABLE EXTENDED default.{}"):
            rows = [tuple(r) for r in session.sql(statement.format(name)).collect()]
            assert rows[: len(COLUMNS)] == COLUMNS
        assert [f.metadata for f in session.table(name).schema.fields] == [{}] * len(COLUMNS)
    finally:
        session.sql(f"DROP TABLE {name}")
