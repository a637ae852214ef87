"""Errors a new user meets first read well: each says what happened and what to do instead.

Each case comes from the issue 14 walkthrough; the SQL parse errors and TIMESTAMP AS OF in the
session time zone are covered in test_parse.py and test_catalog.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from tsfile_catalog import Catalog, open_table
from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.sql.parse import parse_statement
from tsfile_catalog.sql.statements import CreateTable

COLUMNS = "(time BIGINT, d STRING, v DOUBLE)"


@pytest.mark.parametrize("key", ["where", "table", "path", "columns", "versionAsOf"])
def test_options_named_like_keywords_parse(key: str) -> None:
    statement = parse_statement(
        f"CREATE TABLE t {COLUMNS} USING tsfile OPTIONS (tagColumns 'd', {key} 'v > 1')"
    )
    assert isinstance(statement, CreateTable)
    assert dict(statement.options) == {"tagColumns": "d", key: "v > 1"}


@pytest.mark.spark
@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("where 'v > 1'", "'where' cannot be stored with a table: it is a per-query option"),
        ("table 'other'", "'table' cannot be stored with a table: it is a per-query option"),
        ("compression 'brotli'", "'compression' = 'brotli' is not supported; use one of"),
        ("encoding 'bogus'", "'encoding' = 'bogus' is not a TsFile encoding; use one of"),
    ],
)
def test_create_refuses_options_no_query_could_use(
    catalog: Catalog, warehouse: Path, option: str, message: str
) -> None:
    with pytest.raises(OptionError, match=message):
        catalog.sql(f"CREATE TABLE bad {COLUMNS} USING tsfile OPTIONS (tagColumns 'd', {option})")
    assert "bad" not in catalog.tables()
    assert not (warehouse / "bad").exists()


@pytest.fixture(scope="module")
def location(catalog: Catalog, warehouse: Path) -> str:
    catalog.sql(f"CREATE TABLE base {COLUMNS} USING tsfile OPTIONS (tagColumns 'd')")
    catalog.sql("INSERT INTO base VALUES (1, 'a', 1.0), (2, 'b', 2.0)")
    return str(warehouse / "base")


@pytest.mark.spark
def test_a_spark_catalog_table_points_to_catalog(spark: SparkSession, location: str) -> None:
    # Spark 4.3 hands a Python source its own table properties at CREATE, and neither
    # LOCATION nor OPTIONS when the table is read: refused at CREATE where it can be.
    with pytest.raises(Exception, match="given Spark's table property") as created:
        spark.sql(f"CREATE TABLE spark_inferred USING tsfile LOCATION '{location}'")
    assert "tsfile_catalog.Catalog" in str(created.value) and "docs/sql.md" in str(created.value)
    assert not spark.catalog.tableExists("spark_inferred")
    # With declared columns Spark does not ask the source at CREATE; the first read explains.
    spark.sql(f"CREATE TABLE spark_declared {COLUMNS} USING tsfile LOCATION '{location}'")
    try:
        with pytest.raises(Exception, match="no options at all.*tsfile_catalog.Catalog"):
            spark.sql("SELECT * FROM spark_declared").collect()
        with pytest.raises(Exception, match="no path given.*tsfile_catalog.Catalog"):
            spark.sql("SELECT * FROM spark_declared WITH ('where' = 'v > 0')").collect()
    finally:
        spark.sql("DROP TABLE IF EXISTS spark_declared")
    assert open_table(location).version == 1  # dropping Spark's entry left the table alone


@pytest.mark.spark
def test_a_user_schema_that_is_no_projection_is_refused_before_any_job(
    spark: SparkSession, location: str
) -> None:
    reader = spark.read.format("tsfile")
    # Spark does not consult the source at load() (nor explain()) when a schema is given: the
    # first query is where the source sees it, on the driver before any task runs.
    retyped = reader.schema("time BIGINT, d STRING, v FLOAT").load(location)
    with pytest.raises(Exception, match="column 'v' type float, but table 'base' reads it as"):
        retyped.collect()
    unknown = reader.schema("time BIGINT, nope STRING").load(location)
    with pytest.raises(Exception, match="column 'nope' is not a column of table 'base'"):
        unknown.count()
    strict = reader.schema("time BIGINT, v DOUBLE NOT NULL").load(location)
    with pytest.raises(Exception, match="declares column 'v' NOT NULL"):
        strict.collect()
    assert spark.read.format("tsfile").load(location).count() == 2  # (.schema() sticks to a reader)


@pytest.mark.spark
def test_an_unresolved_column_names_the_table_and_suggests_its_columns(
    catalog: Catalog,
) -> None:
    """Spark's error about a query is Spark's own (``except AnalysisException`` catches it),
    names the user's table, not the catalog's internal view, and suggests from all its
    columns, not only those the view was projected to."""
    catalog.sql(
        "CREATE TABLE unresolved (time BIGINT, city STRING, temperature DOUBLE) "
        "USING tsfile OPTIONS (tagColumns 'city')"
    )
    try:
        catalog.sql("INSERT INTO unresolved VALUES (1, 'bj', 1.5)")
        for query in (
            "SELECT temprature FROM unresolved",
            "SELECT u.temprature FROM unresolved u WHERE time > 0",
        ):
            with pytest.raises(AnalysisException, match="UNRESOLVED_COLUMN") as raised:
                catalog.sql(query)
            message = str(raised.value)
            assert "__tsfc" not in message, message
            assert "`temperature`" in message and "`city`" in message, message
        with pytest.raises(AnalysisException) as raised:
            catalog.sql("SELECT nope FROM default.unresolved")
        assert "__tsfc" not in str(raised.value) and "`unresolved`" in str(raised.value)
    finally:
        catalog.sql("DROP TABLE unresolved")
