"""A new table keeps the order its creator declared its columns in, whichever way it is
created (``CREATE TABLE`` with a column list or ``AS SELECT``, through plain ``spark.sql`` and
``Catalog.sql``; ``writeTo().create()/createOrReplace()``, ``saveAsTable``, the data source's
``save``): ``columns``, ``DESCRIBE``, ``SELECT *`` and a positional ``INSERT … VALUES`` are
Spark's on a Parquet table declared the same way. A table declared ``time``, TAGs, FIELDs keeps
its manifest format; one declared otherwise records the order (``format_version`` 4)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tsfile_catalog import Catalog, open_table

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

# Two BIGINT columns: a positional INSERT in the wrong order would land silently.
DECLARED = ["temp", "time", "city", "rain"]
CANONICAL = ["time", "city", "temp", "rain"]
TYPES = {"temp": "DOUBLE", "time": "BIGINT", "city": "STRING", "rain": "BIGINT"}
INSERT = "VALUES (21.5, 1000, 'x', 7)"
ROWS = [(1.5, 1, "bj", 10), (2.5, 2, "sh", None), (None, 3, "bj", 30)]


def _columns(order: list[str]) -> str:
    return ", ".join(f"{c} {TYPES[c]}" for c in order)


def _rows(spark: SparkSession) -> DataFrame:
    return spark.createDataFrame(ROWS, _columns(DECLARED))


def _parquet(spark: SparkSession, name: str, folder: Path, *, rows: bool) -> None:
    """The expectation: a Parquet table declared in :data:`DECLARED` order."""
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE TABLE {name} ({_columns(DECLARED)}) USING parquet LOCATION '{folder}'")
    if rows:
        _rows(spark).write.insertInto(name)


def _format_version(location: Path) -> int:
    first = sorted((location / "_tsfile_manifest").glob("*.json"))[0]
    return int(json.loads(first.read_text())["format_version"])


def _same_as_parquet(
    sql: Callable[[str], DataFrame], spark: SparkSession, table: str, parquet: str
) -> None:
    """``columns``, DESCRIBE, ``SELECT *`` and a positional INSERT of ``table`` (through
    ``sql``) equal Spark's on ``parquet``."""
    from pyspark.testing import assertDataFrameEqual

    assert sql(f"SELECT * FROM {table}").columns == spark.table(parquet).columns == DECLARED
    described = [r[0] for r in sql(f"DESCRIBE TABLE {table}").collect()[: len(DECLARED)]]
    assert described == [r[0] for r in spark.sql(f"DESCRIBE TABLE {parquet}").collect()[:4]]
    assertDataFrameEqual(sql(f"SELECT * FROM {table}"), spark.table(parquet))
    sql(f"INSERT INTO {table} {INSERT}")
    spark.sql(f"INSERT INTO {parquet} {INSERT}")
    assertDataFrameEqual(sql(f"SELECT * FROM {table}"), spark.table(parquet))


def test_create_table_with_columns_keeps_the_declared_order(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    _parquet(spark, "pq_declared", tmp_path / "pq", rows=False)
    spark.sql(
        f"CREATE TABLE {ts}.db.declared ({_columns(DECLARED)}) USING tsfile "
        "OPTIONS (tagColumns 'city')"
    )
    assert spark.table(f"{ts}.db.declared").columns == DECLARED
    _same_as_parquet(spark.sql, spark, f"{ts}.db.declared", "pq_declared")
    assert _format_version(warehouse / "db.db" / "declared") == 4

    catalog = Catalog(spark, str(warehouse), register_views=False)
    _parquet(spark, "pq_declared_catalog", tmp_path / "pq2", rows=False)
    catalog.sql(
        f"CREATE TABLE db.declared_catalog ({_columns(DECLARED)}) USING tsfile "
        "OPTIONS (tagColumns 'city')"
    )
    _same_as_parquet(catalog.sql, spark, "db.declared_catalog", "pq_declared_catalog")
    assert spark.table(f"{ts}.db.declared_catalog").columns == DECLARED


def test_a_table_declared_canonically_keeps_its_format(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    spark.sql(
        f"CREATE TABLE {ts}.db.canonical ({_columns(CANONICAL)}) USING tsfile "
        "OPTIONS (tagColumns 'city')"
    )
    location = warehouse / "db.db" / "canonical"
    assert spark.table(f"{ts}.db.canonical").columns == CANONICAL
    assert open_table(str(location)).schema.order is None
    assert _format_version(location) == 1
    rows = _rows(spark).select(*CANONICAL)
    rows.write.format("tsfile").option("tagColumns", "city").saveAsTable(f"{ts}.db.canonical_saved")
    assert spark.table(f"{ts}.db.canonical_saved").columns == CANONICAL
    assert _format_version(warehouse / "db.db" / "canonical_saved") == 1


@pytest.mark.slow
def test_create_as_select_and_dataframe_creates_keep_the_query_order(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    _parquet(spark, "pq_source", tmp_path / "src", rows=True)
    query = "SELECT temp, time, city, rain FROM pq_source"
    catalog = Catalog(spark, str(warehouse), register_views=False)
    creates: dict[str, Callable[[str], object]] = {
        "ctas": lambda t: spark.sql(
            f"CREATE TABLE {ts}.db.{t} USING tsfile OPTIONS (tagColumns 'city') AS {query}"
        ),
        "ctas_catalog": lambda t: catalog.sql(
            f"CREATE TABLE db.{t} USING tsfile OPTIONS (tagColumns 'city') AS {query}"
        ),
        "created": lambda t: (
            _rows(spark)
            .writeTo(f"{ts}.db.{t}")
            .using("tsfile")
            .tableProperty("tagColumns", "city")
            .create()
        ),
        "replaced": lambda t: (
            _rows(spark)
            .writeTo(f"{ts}.db.{t}")
            .using("tsfile")
            .tableProperty("tagColumns", "city")
            .createOrReplace()
        ),
        "saved": lambda t: (
            _rows(spark)
            .write.format("tsfile")
            .option("tagColumns", "city")
            .saveAsTable(f"{ts}.db.{t}")
        ),
    }
    for name, create in creates.items():
        create(name)
        _parquet(spark, f"pq_{name}", tmp_path / name, rows=True)
        assert spark.table(f"{ts}.db.{name}").columns == DECLARED, name
        _same_as_parquet(spark.sql, spark, f"{ts}.db.{name}", f"pq_{name}")
        assert _format_version(warehouse / "db.db" / name) == 4, name

    # The data source creating a table at a path: the DataFrame's order, read back and
    # registered.
    path = tmp_path / "saved_path"
    write = _rows(spark).write.format("tsfile").mode("append")
    write.option("table", "t").option("tagColumns", "city").save(str(path))
    assert spark.read.format("tsfile").load(str(path)).columns == DECLARED
    spark.sql(f"CREATE TABLE {ts}.db.saved_path USING tsfile LOCATION '{path}'")
    _parquet(spark, "pq_saved_path", tmp_path / "pq_saved_path", rows=True)
    _same_as_parquet(spark.sql, spark, f"{ts}.db.saved_path", "pq_saved_path")


def test_show_create_table_prints_the_declared_order_and_recreates_the_table(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    spark.sql(
        f"CREATE TABLE {ts}.db.shown ({_columns(DECLARED)}) USING tsfile "
        "OPTIONS (tagColumns 'city')"
    )
    catalog = Catalog(spark, str(warehouse), register_views=False)
    printed = catalog.sql("SHOW CREATE TABLE db.shown").first()[0]
    assert printed.index("temp") < printed.index("time") < printed.index("city"), printed
    spark_printed = spark.sql(f"SHOW CREATE TABLE {ts}.db.shown").first()[0]
    assert spark_printed.index("temp") < spark_printed.index("time"), spark_printed
    # The printed statement, for a new location, makes a table in the same order.
    location = tmp_path / "again"
    again = re.sub(r"^CREATE TABLE \S+", "CREATE TABLE db.shown_again", printed).replace(
        str(warehouse / "db.db" / "shown"), str(location)
    )
    assert str(location) in again and "shown_again" in again, again
    catalog.sql(again)
    assert spark.table(f"{ts}.db.shown_again").columns == DECLARED
    made, shown = open_table(str(location)).schema, open_table(str(warehouse / "db.db" / "shown"))
    assert (made.columns, made.order) == (shown.schema.columns, shown.schema.order)


def test_registering_an_existing_table_keeps_its_order(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    spark.sql(
        f"CREATE TABLE {ts}.db.kept ({_columns(DECLARED)}) USING tsfile OPTIONS (tagColumns 'city')"
    )
    _rows(spark).writeTo(f"{ts}.db.kept").append()
    location = warehouse / "db.db" / "kept"
    spark.sql(f"DROP TABLE {ts}.db.kept")  # the files stay
    # Registered with its columns in another order: the table keeps its own.
    spark.sql(
        f"CREATE TABLE {ts}.db.kept_again ({_columns(CANONICAL)}) USING tsfile "
        f"OPTIONS (tagColumns 'city') LOCATION '{location}'"
    )
    assert spark.table(f"{ts}.db.kept_again").columns == DECLARED
    assert open_table(str(location)).version == 1
    spark.sql(f"DROP TABLE {ts}.db.kept_again")
    spark.sql(f"CREATE TABLE {ts}.db.kept_bare USING tsfile LOCATION '{location}'")
    assert spark.table(f"{ts}.db.kept_bare").columns == DECLARED
