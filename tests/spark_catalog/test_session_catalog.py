"""The plugin as Spark's session catalog (``spark.sql.catalog.spark_catalog``): tsfile tables
in the warehouse, Parquet tables, views, functions and namespaces in Spark's built-in catalog,
side by side in ``default`` (docs/spark-catalog.md, "As the session catalog").

Each test runs in a new session of the shared JVM with ``spark_catalog`` set to the plugin:
Spark reads that setting per session, and the built-in catalog behind it is the JVM's one
(so the names here are made unique to the test)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pyspark
import pytest

# Spark 4.2 appends the analysed plan to an error its check rules raise (4.3 does not): the
# refusal is the first line there (docs/spark-catalog.md, "As the session catalog").
_PLAN_APPENDED = pyspark.__version__.startswith("4.2.")

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

SESSION_CLASS = "io.tsfilecatalog.spark.TsFileSessionCatalog"
READINGS = [(1, "bj", 1.5), (2, "sh", 2.5), (3, "bj", -4.0), (4, "gz", None)]
CITIES = [("bj", "cn", 21), ("sh", "cn", 24), ("ny", "us", 8)]


@pytest.fixture()
def session(spark: SparkSession, tmp_path: Path) -> Iterator[SparkSession]:
    from py4j.java_gateway import JavaClass

    import tsfile_catalog

    jvm = spark.sparkContext._jvm
    assert jvm is not None
    if not isinstance(jvm.io.tsfilecatalog.spark.Client, JavaClass):
        pytest.skip("the catalog plugin's jar could not be built here (no JDK's javac)")
    tsfile_catalog.register(spark)
    session = spark.newSession()
    session.conf.set("spark.sql.catalog.spark_catalog", SESSION_CLASS)
    session.conf.set("spark.sql.catalog.spark_catalog.warehouse", str(tmp_path / "wh"))
    yield session


@pytest.fixture()
def names() -> dict[str, str]:
    """Names of this test's own: the built-in catalog behind every session is the JVM's."""
    tag = uuid.uuid4().hex[:8]
    return {k: f"{k}_{tag}" for k in ("readings", "cities", "ref", "v", "tv", "f", "n")}


def _create(session: SparkSession, n: dict[str, str], namespace: str = "default") -> None:
    session.sql(
        f"CREATE TABLE {namespace}.{n['readings']} (time BIGINT, city STRING, temp DOUBLE) "
        "USING tsfile TBLPROPERTIES ('tagColumns' = 'city')"
    )
    session.sql(
        f"CREATE TABLE {namespace}.{n['cities']} (city STRING, country STRING, pop INT) "
        "USING parquet"
    )
    session.sql(f"INSERT INTO {namespace}.{n['readings']} VALUES {_values(READINGS)}")
    session.sql(f"INSERT INTO {namespace}.{n['cities']} VALUES {_values(CITIES)}")


def _values(rows: list[tuple[object, ...]]) -> str:
    def literal(v: object) -> str:
        return "NULL" if v is None else f"'{v}'" if isinstance(v, str) else repr(v)

    return ", ".join("(" + ", ".join(literal(v) for v in row) + ")" for row in rows)


def _rows(session: SparkSession, sql: str) -> list[tuple[object, ...]]:
    return sorted((tuple(r) for r in session.sql(sql).collect()), key=repr)


def _tables(session: SparkSession, namespace: str = "default") -> set[str]:
    return {r.tableName for r in session.sql(f"SHOW TABLES IN {namespace}").collect()}


def _error(session: SparkSession, sql: str) -> str:
    with pytest.raises(Exception) as caught:  # noqa: PT011 - Spark's own exception classes
        session.sql(sql).collect()
    return str(caught.value).strip()


@pytest.mark.slow
def test_a_parquet_and_a_tsfile_table_join_in_default(
    session: SparkSession, names: dict[str, str]
) -> None:
    """The issue's case: CREATE, INSERT, JOIN, views, SHOW TABLES, DESCRIBE, a function and
    DROP over a Parquet and a tsfile table of ``default``, every answer equal to the same
    statements over Parquet alone."""
    n = names
    _create(session, n)
    session.sql(f"CREATE TABLE {n['ref']} (time BIGINT, city STRING, temp DOUBLE) USING parquet")
    session.sql(f"INSERT INTO {n['ref']} VALUES {_values(READINGS)}")
    try:
        join = (
            "SELECT r.time, r.city, c.country, r.temp * c.pop FROM {r} r "
            f"JOIN {n['cities']} c ON r.city = c.city"
        )
        expected = _rows(session, join.format(r=n["ref"]))
        assert len(expected) == 3
        assert _rows(session, join.format(r=n["readings"])) == expected

        assert {n["readings"], n["cities"], n["ref"]} <= _tables(session)
        # The catalog's own statements and metadata tables, with no catalog prefix.
        history = session.sql(f"DESCRIBE HISTORY {n['readings']}").collect()
        assert [r.operation for r in history] == ["WRITE", "CREATE"]
        assert _rows(session, f"SELECT version FROM default.{n['readings']}.history") == [
            (0,),
            (1,),
        ]

        described = {
            t: [(r.col_name, r.data_type) for r in session.sql(f"DESCRIBE {t}").collect()]
            for t in (n["readings"], n["cities"])
        }
        assert described[n["readings"]] == [
            ("time", "bigint"),
            ("city", "string"),
            ("temp", "double"),
        ]
        assert described[n["cities"]] == [("city", "string"), ("country", "string"), ("pop", "int")]
        providers = {
            t: next(
                r.data_type
                for r in session.sql(f"DESCRIBE TABLE EXTENDED {t}").collect()
                if r.col_name == "Provider"
            )
            for t in (n["readings"], n["cities"])
        }
        assert providers == {n["readings"]: "tsfile", n["cities"]: "parquet"}

        over = (
            "SELECT c.country, sum(r.temp) AS total FROM {r} r "
            f"JOIN {n['cities']} c ON r.city = c.city GROUP BY c.country"
        )
        session.sql(f"CREATE TEMPORARY VIEW {n['tv']} AS " + over.format(r=n["readings"]))
        session.sql(f"CREATE VIEW {n['v']} AS " + over.format(r=n["readings"]))
        expected = _rows(session, over.format(r=n["ref"]))
        assert _rows(session, f"SELECT * FROM {n['tv']}") == expected
        assert _rows(session, f"SELECT * FROM {n['v']}") == expected
        assert {n["v"], n["tv"]} <= _tables(session)

        # A SQL function of Spark's catalog, over a tsfile column.
        session.sql(f"CREATE FUNCTION {n['f']}(x DOUBLE) RETURNS DOUBLE RETURN x * 2 + 1")
        applied = "SELECT time, {f}(temp) FROM {r}"
        assert _rows(session, applied.format(f=n["f"], r=n["readings"])) == _rows(
            session, applied.format(f=n["f"], r=n["ref"])
        )
    finally:
        session.sql(f"DROP FUNCTION IF EXISTS {n['f']}")
        session.sql(f"DROP VIEW IF EXISTS {n['v']}")
        session.sql(f"DROP VIEW IF EXISTS {n['tv']}")
        session.sql(f"DROP TABLE IF EXISTS {n['ref']}")

    session.sql(f"DROP TABLE {n['readings']}")
    session.sql(f"DROP TABLE {n['cities']}")
    assert not {n["readings"], n["cities"]} & _tables(session)
    assert "TABLE_OR_VIEW_NOT_FOUND" in _error(session, f"SELECT * FROM {n['readings']}")


def test_a_name_is_one_tables_whichever_catalog_creates_it(
    session: SparkSession, names: dict[str, str]
) -> None:
    """A Parquet table, a CTAS, a view, a DataFrame write with the default source or a rename
    onto a tsfile table's name, and a tsfile table over a Parquet table's, are refused in one
    line naming the table; nothing is created (a write naming tsfile appends)."""
    n = names
    _create(session, n)
    # The warehouse as a plain catalog of the same session: its tsfile tables.
    session.conf.set("spark.sql.catalog.other_ts", "io.tsfilecatalog.spark.TsFileCatalog")
    session.conf.set(
        "spark.sql.catalog.other_ts.warehouse",
        session.conf.get("spark.sql.catalog.spark_catalog.warehouse"),
    )
    try:
        before = _tables(session)
        for sql in (
            f"CREATE TABLE {n['readings']} (x INT) USING parquet",
            f"CREATE TABLE IF NOT EXISTS {n['readings']} (x INT) USING parquet",
            f"CREATE TABLE {n['readings']} USING parquet AS SELECT 1 AS x",
            f"CREATE VIEW {n['readings']} AS SELECT 1 AS x",
        ):
            message = _error(session, sql)
            # The refusal is the first line; Spark appends the analysed plan to an error its
            # analysis checks raise, as to its own analysis errors.
            first, *plan = message.splitlines()
            assert f"default.{n['readings']} is a tsfile table in the warehouse" in first, sql
            assert not [line for line in plan if "is a tsfile table" in line], message
        # The session's own default source decides a CREATE TABLE without USING (not the
        # default of the session the delegate was registered on); a view is never tsfile's.
        session.conf.set("spark.sql.sources.default", "tsfile")
        try:
            message = _error(session, f"CREATE VIEW {n['readings']} AS SELECT 1 AS x")
            session.sql(
                f"CREATE TABLE {n['ref']} (time BIGINT, city STRING, temp DOUBLE) "
                "TBLPROPERTIES ('tagColumns' = 'city')"
            )
        finally:
            session.conf.unset("spark.sql.sources.default")
        assert f"CREATE VIEW default.{n['readings']}: default.{n['readings']} is a" in message
        extended = session.sql(f"DESCRIBE TABLE EXTENDED {n['ref']}").collect()
        assert [r.data_type for r in extended if r.col_name == "Provider"] == ["tsfile"]
        assert _rows(session, "SHOW TABLES IN other_ts.default") == [
            ("default", n["readings"], False),
            ("default", n["ref"], False),
        ]
        # A DataFrame write with the default source, and a rename, are Spark's v1 commands.
        rows = session.createDataFrame([(9, "bj", 0.5)], "time BIGINT, city STRING, temp DOUBLE")
        with pytest.raises(Exception) as caught:  # noqa: PT011 - Spark's own exception class
            rows.write.mode("append").saveAsTable(n["readings"])
        assert "a DataFrame write into it names .format('tsfile')" in str(caught.value)
        rows.write.format("tsfile").mode("append").saveAsTable(n["readings"])
        message = _error(session, f"ALTER TABLE {n['cities']} RENAME TO {n['readings']}")
        assert f"RENAME TO default.{n['readings']}: default.{n['readings']} is a tsfile" in message
        message = _error(
            session,
            f"CREATE TABLE {n['cities']} (time BIGINT, city STRING, v DOUBLE) USING tsfile "
            "TBLPROPERTIES ('tagColumns' = 'city')",
        )
        assert "TABLE_OR_VIEW_ALREADY_EXISTS" in message and n["cities"] in message
        assert _tables(session) == before | {n["ref"]}
        assert _rows(session, f"SELECT count(*) FROM {n['readings']}") == [(5,)]
        assert _rows(session, f"SELECT count(*) FROM {n['cities']}") == [(3,)]
    finally:
        for table in ("readings", "cities", "ref"):
            session.sql(f"DROP TABLE IF EXISTS {n[table]}")


def test_a_name_both_catalogs_hold_is_an_error_until_dropped(
    session: SparkSession, names: dict[str, str], tmp_path: Path
) -> None:
    """A name registered in the warehouse by another client while Spark's catalog holds it
    is read from neither (one line saying so); DROP TABLE drops the tsfile table first,
    then the name is the Parquet table's again."""
    n = names
    _create(session, n)
    # Another catalog over the same warehouse registers the Parquet table's name.
    session.conf.set("spark.sql.catalog.other", "io.tsfilecatalog.spark.TsFileCatalog")
    session.conf.set("spark.sql.catalog.other.warehouse", str(tmp_path / "wh"))
    session.sql(
        f"CREATE TABLE other.default.{n['cities']} (time BIGINT, city STRING, v DOUBLE) "
        "USING tsfile TBLPROPERTIES ('tagColumns' = 'city')"
    )
    try:
        message = _error(session, f"SELECT * FROM {n['cities']}")
        assert (
            f"table default.{n['cities']} is both a tsfile table (warehouse {tmp_path / 'wh'}) "
            "and a table or view of Spark's built-in catalog" in message
        )
        assert len(message.splitlines()) == 1, message
        session.sql(f"DROP TABLE {n['cities']}")
        assert _rows(session, f"SELECT * FROM {n['cities']}") == sorted(CITIES, key=repr)
        assert _rows(session, "SHOW TABLES IN other.default") == [("default", n["readings"], False)]
    finally:
        session.sql(f"DROP TABLE IF EXISTS {n['readings']}")
        session.sql(f"DROP TABLE IF EXISTS {n['cities']}")


def test_namespaces_hold_both_kinds_of_table(session: SparkSession, names: dict[str, str]) -> None:
    """CREATE NAMESPACE serves both kinds of table; DROP NAMESPACE refuses while either
    catalog has a table there (dropping nothing), and CASCADE drops both."""
    n = names
    namespace = n["n"]
    session.sql(f"CREATE NAMESPACE {namespace}")
    assert namespace in {r.namespace for r in session.sql("SHOW NAMESPACES").collect()}
    _create(session, n, namespace)
    assert _tables(session, namespace) == {n["readings"], n["cities"]}
    assert "SCHEMA_NOT_EMPTY" in _error(session, f"DROP NAMESPACE {namespace}")
    assert _rows(session, f"SELECT count(*) FROM {namespace}.{n['readings']}") == [(4,)]
    session.sql(f"DROP NAMESPACE {namespace} CASCADE")
    assert namespace not in {r.namespace for r in session.sql("SHOW NAMESPACES").collect()}
    assert "TABLE_OR_VIEW_NOT_FOUND" in _error(session, f"SELECT * FROM {namespace}.{n['cities']}")


def test_the_plain_catalog_as_spark_catalog_names_the_session_class(
    spark: SparkSession, session: SparkSession, tmp_path: Path
) -> None:
    """``TsFileCatalog`` itself as ``spark_catalog`` serves tsfile tables only: its refusal
    of a Parquet table says which class keeps them in Spark's catalog."""
    plain = spark.newSession()
    plain.conf.set("spark.sql.catalog.spark_catalog", "io.tsfilecatalog.spark.TsFileCatalog")
    plain.conf.set("spark.sql.catalog.spark_catalog.warehouse", str(tmp_path / "plain"))
    message = _error(plain, f"CREATE TABLE p_{uuid.uuid4().hex[:8]} (x INT) USING parquet")
    assert "the tsfile catalog holds tsfile tables only" in message
    assert "as spark_catalog, io.tsfilecatalog.spark.TsFileSessionCatalog keeps" in message
