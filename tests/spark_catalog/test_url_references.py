"""``tsfile('<url>', ...)`` and ``tsfile.`<url>` `` in plain ``spark.sql`` (the session
extensions' rule): read through the plugin's own table and scan, with the rows, columns and
messages ``Catalog.sql`` gives for the same statement."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tsfile_catalog import Catalog

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def location(spark: SparkSession, ts: str, warehouse: Path) -> str:
    name = f"{ts}.db.urls"
    spark.sql(
        f"CREATE TABLE {name} (time BIGINT, dev STRING, v DOUBLE) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'dev')"
    )
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a', 1.5), (2, 'b', 2.5)")
    spark.sql(f"INSERT INTO {name} VALUES (3, 'a', 3.5), (4, 'c', 4.5)")
    return str(warehouse / "db.db" / "urls")


@pytest.fixture(scope="module")
def catalog(spark: SparkSession, warehouse: Path) -> Catalog:
    return Catalog(spark, str(warehouse), register_views=False)


QUERIES = [
    "SELECT * FROM tsfile.`{loc}`",
    "SELECT * FROM tsfile('{loc}')",
    "SELECT * FROM tsfile('{loc}', version => 1)",
    "SELECT * FROM tsfile.`{loc}` VERSION AS OF 1",
    "SELECT * FROM tsfile.`{loc}` TIMESTAMP AS OF '2999-01-01 00:00:00'",
    "SELECT * FROM tsfile('{loc}', timestamp => '2999-01-01 00:00:00')",
    "SELECT dev, count(*) AS n, max(v) AS top FROM tsfile('{loc}') WHERE time >= 2 GROUP BY dev",
    "SELECT a.time, b.v FROM tsfile.`{loc}` a JOIN tsfile('{loc}', version => 1) b "
    "ON a.time = b.time",
    "SELECT time FROM tsfile('{loc}') WHERE time IN (SELECT time FROM tsfile.`{loc}` "
    "VERSION AS OF 1 WHERE dev = 'a')",
    "WITH w AS (SELECT * FROM tsfile.`{loc}` WHERE dev = 'a') SELECT sum(v) FROM w",
]


@pytest.mark.parametrize("query", QUERIES)
def test_a_url_reference_reads_as_in_catalog_sql(
    spark: SparkSession, catalog: Catalog, location: str, query: str
) -> None:
    text = query.format(loc=location)
    ours = spark.sql(text)
    theirs = catalog.sql(text)
    assert ours.columns == theirs.columns
    assert sorted(ours.collect()) == sorted(theirs.collect())


def test_it_is_read_through_the_plugins_scan(spark: SparkSession, ts: str, location: str) -> None:
    filtered = spark.sql(f"SELECT v FROM tsfile('{location}') WHERE dev = 'a'")
    plan = filtered._jdf.queryExecution().executedPlan().toString()
    # The plugin's scan, pinned to the version it loaded, with the predicate pushed.
    assert f"tsfile tsfile('{location}') version 2" in plan
    assert "where: (`dev` = 'a')" in plan
    assert sorted(r.v for r in filtered.collect()) == [1.5, 3.5]
    # A count answered from statistics: no scan at all.
    counted = spark.sql(f"SELECT count(*) FROM tsfile.`{location}`")
    assert "LocalTableScan" in counted._jdf.queryExecution().executedPlan().toString()
    assert counted.first()[0] == 4


@pytest.mark.parametrize(
    "statement",
    [
        "DESCRIBE tsfile('{loc}')",
        "DESCRIBE TABLE tsfile.`{loc}`",
        "DESCRIBE HISTORY tsfile('{loc}')",
        "SHOW PARTS tsfile.`{loc}`",
        "SHOW PARTS tsfile('{loc}') VERSION AS OF 1",
        "EXPLAIN PARTS SELECT v FROM tsfile('{loc}') WHERE dev = 'a'",
    ],
)
def test_describe_and_show_parts_answer_as_catalog_sql(
    spark: SparkSession, catalog: Catalog, location: str, statement: str
) -> None:
    text = statement.format(loc=location)
    ours = spark.sql(text)
    theirs = catalog.sql(text)
    assert ours.columns == theirs.columns
    assert ours.collect() == theirs.collect()


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO tsfile.`{loc}` VALUES (9, 'z', 1.0)",
        "SELECT * FROM tsfile('{loc}', versio => 1)",
        "SELECT * FROM tsfile('{loc}', version => 1, timestamp => '2024-01-01')",
    ],
)
def test_errors_are_catalog_sqls(
    spark: SparkSession, catalog: Catalog, location: str, statement: str
) -> None:
    text = statement.format(loc=location)
    with pytest.raises(Exception) as theirs:
        catalog.sql(text)
    with pytest.raises(Exception) as ours:
        spark.sql(text).collect()
    assert str(theirs.value).split(": ", 1)[-1] in str(ours.value)


def test_writes_through_a_url_reference_are_refused(spark: SparkSession, location: str) -> None:
    for statement in (
        f"DELETE FROM tsfile.`{location}` WHERE dev = 'a'",
        f"UPDATE tsfile.`{location}` SET v = 0",
    ):
        with pytest.raises(Exception, match=r"URL references are for reading"):
            spark.sql(statement).collect()
    assert spark.sql(f"SELECT count(*) FROM tsfile.`{location}`").first()[0] == 4


def test_a_plain_name_under_tsfile_stays_sparks(spark: SparkSession, ts: str) -> None:
    spark.sql("CREATE DATABASE IF NOT EXISTS spark_catalog.tsfile")
    try:
        spark.sql("CREATE OR REPLACE VIEW spark_catalog.tsfile.answer AS SELECT 42 AS x")
        assert spark.sql("SELECT x FROM tsfile.answer").first()[0] == 42
    finally:
        spark.sql("DROP DATABASE spark_catalog.tsfile CASCADE")
