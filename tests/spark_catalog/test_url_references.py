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


@pytest.fixture(scope="module")
def timestamps(spark: SparkSession, ts: str, warehouse: Path) -> str:
    """A table created with ``time TIMESTAMP`` (its manifest records the time type)."""
    spark.sql(
        f"CREATE TABLE {ts}.db.url_times (time TIMESTAMP, dev STRING, v DOUBLE) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'dev')"
    )
    spark.sql(
        f"INSERT INTO {ts}.db.url_times VALUES (TIMESTAMP '2024-01-01 00:00:00', 'a', 1.5), "
        "(TIMESTAMP '2024-01-02 00:00:00', 'b', 2.5)"
    )
    return str(warehouse / "db.db" / "url_times")


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * FROM {ref}",
        "SELECT dev, v FROM {ref} WHERE time >= TIMESTAMP '2024-01-02 00:00:00'",
        "SELECT max(time) AS t, count(*) AS n FROM {ref}",
    ],
)
def test_a_timestamp_tables_time_reads_as_a_timestamp_through_its_url(
    spark: SparkSession,
    catalog: Catalog,
    ts: str,
    timestamps: str,
    tmp_path: Path,
    query: str,
) -> None:
    """As the table's own name, ``load(path)`` and ``open_table(...).scan()`` read it: through
    ``spark.sql``, ``Catalog.sql`` handing it to ``spark.sql``, and ``Catalog.sql``'s own
    path (a catalog over another warehouse, which no plugin catalog serves)."""
    from pyspark.sql.types import TimestampType

    expected = spark.sql(query.format(ref=f"{ts}.db.url_times"))
    unserved = Catalog(spark, str(tmp_path / "elsewhere"), register_views=False)
    for ref in (f"tsfile('{timestamps}')", f"tsfile.`{timestamps}`"):
        for reader in (spark.sql, catalog.sql, unserved.sql):
            got = reader(query.format(ref=ref))
            assert got.schema == expected.schema, (reader, ref)
            assert sorted(got.collect()) == sorted(expected.collect()), (reader, ref)
    assert spark.read.format("tsfile").load(timestamps).schema["time"].dataType == TimestampType()


def test_a_timestamp_tables_url_is_described_with_its_time_type(
    spark: SparkSession, catalog: Catalog, timestamps: str, tmp_path: Path
) -> None:
    unserved = Catalog(spark, str(tmp_path / "elsewhere"), register_views=False)
    expected = catalog.sql("DESCRIBE db.url_times").collect()
    assert expected[0].data_type == "timestamp"
    detail = catalog.sql("DESCRIBE DETAIL db.url_times").first().schema
    for reader in (spark.sql, catalog.sql, unserved.sql):
        assert reader(f"DESCRIBE tsfile('{timestamps}')").collect() == expected
        assert reader(f"DESCRIBE DETAIL tsfile.`{timestamps}`").first().schema == detail


def test_a_timestamp_table_registered_at_its_location_reads_time_as_a_timestamp(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    """``CREATE TABLE … LOCATION`` of a table created with ``time TIMESTAMP`` registers it as
    it is: its time reads as the table records it, as its URL reference reads it."""
    spark.sql(
        f"CREATE TABLE {ts}.db.dropped_times (time TIMESTAMP, dev STRING, v DOUBLE) "
        "USING tsfile TBLPROPERTIES ('tagColumns' = 'dev')"
    )
    spark.sql(
        f"INSERT INTO {ts}.db.dropped_times VALUES (TIMESTAMP '2024-01-01 00:00:00', 'a', 1.5)"
    )
    expected = spark.table(f"{ts}.db.dropped_times")
    schema, rows = expected.schema, expected.collect()
    spark.sql(f"DROP TABLE {ts}.db.dropped_times")  # the files stay
    location = str(warehouse / "db.db" / "dropped_times")
    spark.sql(f"CREATE TABLE {ts}.db.adopted_times USING tsfile LOCATION '{location}'")
    assert spark.table(f"{ts}.db.adopted_times").schema == schema
    assert spark.table(f"{ts}.db.adopted_times").collect() == rows
    spark.sql(f"DROP TABLE {ts}.db.adopted_times")
    unserved = Catalog(spark, str(tmp_path / "elsewhere"), register_views=False)
    unserved.sql(f"CREATE TABLE adopted USING tsfile LOCATION '{location}'")
    assert unserved.sql("SELECT * FROM adopted").schema == schema
    assert unserved.sql("SELECT * FROM adopted").collect() == rows
    assert unserved.sql("DESCRIBE adopted").first().data_type == "timestamp"


def test_the_sessions_own_tsfile_table_function_is_called_as_spark_calls_it(
    spark: SparkSession, ts: str, location: str
) -> None:
    """A SQL table function of the session named ``tsfile`` is the user's: Spark calls it,
    and the URL reference is back once it is dropped."""
    session = spark.newSession()  # temporary functions of its own
    for key in (f"spark.sql.catalog.{ts}", f"spark.sql.catalog.{ts}.warehouse"):
        session.conf.set(key, spark.conf.get(key))
    session.sql(
        "CREATE TEMPORARY FUNCTION tsfile(p STRING) RETURNS TABLE (x STRING) RETURN SELECT upper(p)"
    )
    assert session.sql(f"SELECT * FROM tsfile('{location}')").collect() == [(location.upper(),)]
    session.sql("DROP TEMPORARY FUNCTION tsfile")
    assert session.sql(f"SELECT count(*) FROM tsfile('{location}')").first()[0] == 4
