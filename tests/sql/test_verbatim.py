"""``Catalog.sql`` hands queries to ``spark.sql`` as written once the catalog plugin serves
its warehouse: the rule that decides it (pure), and, on real Spark, the same column names and
rows as ``spark.sql`` over Parquet copies of the same data, for Spark sql-tests style queries
and the cases sqlglot's rewriting got wrong."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from sqlglot import exp

from tests.factories import sql_values
from tests.jobs import spark_jobs
from tsfile_catalog import Catalog
from tsfile_catalog.exceptions import VersionNotFoundError
from tsfile_catalog.sql import verbatim
from tsfile_catalog.sql.parse import parse_statement
from tsfile_catalog.sql.small_scan import SMALL_SCAN_CONF
from tsfile_catalog.sql.statements import Insert, Select

spark_test = pytest.mark.spark

# -- pure: the rule ------------------------------------------------------------------------------

_TABLES = {("default", "t"), ("db", "u")}
_VIEWS = {"v", "t2"}
_NAMES = verbatim.Names(
    is_table=lambda n: (n.database or "default", n.name) in _TABLES,
    is_temp_view=lambda n: n in _VIEWS,
)


def _refusal(text: str) -> str | None:
    statement = parse_statement(text)
    assert isinstance(statement, Select)
    return verbatim.refusal(statement.query, _NAMES)


@pytest.mark.parametrize(
    "text",
    [
        "SELECT * FROM t",
        "SELECT * FROM default.t JOIN db.u USING (time)",
        "SELECT * FROM v, (WITH v AS (SELECT 2 AS a) SELECT a AS b FROM v) x",
        "SELECT * FROM (WITH w AS (SELECT * FROM t) SELECT * FROM w)",
        "SELECT * FROM t VERSION AS OF 3",
        "SELECT * FROM t TIMESTAMP AS OF '2024-01-01 00:00:00'",
        "SELECT * FROM spark_catalog.default.p",
        "SELECT * FROM global_temp.g",
        "SELECT * FROM range(10)",
        "SELECT 1",
        # Sliding windows: no bucket path to prefer over the plugin's.
        "SELECT window(time, '1 hour', '10 minutes'), count(*) FROM t GROUP BY 1",
        # max_by/min_by by columns or none: the plugin answers them from statistics.
        "SELECT k, max_by(b, time) FROM t GROUP BY k",
        "SELECT k, max_by(b, time) AS last FROM t GROUP BY 1",
        "SELECT min_by(b, time) FROM (SELECT * FROM t)",
        # The plugin answers casts of a BOOLEAN from statistics as the rewriting path does;
        # count_if of a predicate has a statistics answer on neither.
        "SELECT sum(CAST(b AS INT)), avg(CAST(b AS BIGINT)), max(CAST(b AS INT)) FROM t",
        "SELECT count_if(v > 1) FROM t",
    ],
)
def test_queries_spark_resolves_as_the_catalog_does_run_as_written(text: str) -> None:
    assert _refusal(text) is None


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("SELECT * FROM tsfile('/data/t')", "URL reference"),
        ("SELECT * FROM tsfile.`/data/t`", "URL reference"),
        ("SELECT * FROM t TIMESTAMP AS OF '1704067200000'", "TIMESTAMP AS OF"),
        ("SELECT * FROM v VERSION AS OF 1", "not a catalog table"),
        ("SELECT * FROM t JOIN p USING (time)", "p is neither"),
        ("SELECT * FROM other.t", "other.t is neither"),
        ("SELECT * FROM t WHERE time IN (SELECT time FROM p)", "p is neither"),
        ("SELECT window(time, '1 hour'), count(*) FROM t GROUP BY 1", "window() grouping"),
        (
            "SELECT window.start, count(*) FROM (SELECT * FROM t) GROUP BY window(time, '1 hour')",
            "window() grouping",
        ),
        (
            "SELECT floor(time / 60) * 60 AS b, max_by(v, time) FROM t GROUP BY 1",
            "pre-aggregated only there",
        ),
        (
            "SELECT k, min_by(b, time) FROM t GROUP BY k, date_trunc('DAY', time)",
            "pre-aggregated only there",
        ),
        ("SELECT k, count_if(b) FROM t GROUP BY k", "answered from statistics only there"),
    ],
)
def test_queries_spark_would_resolve_otherwise_keep_the_rewriting_path(text: str, why: str) -> None:
    refusal = _refusal(text)
    assert refusal is not None and why in refusal


def test_time_travel_on_a_table_a_temp_view_shadows_keeps_the_rewriting_path() -> None:
    names = verbatim.Names(is_table=lambda n: True, is_temp_view=lambda n: True)
    statement = parse_statement("SELECT * FROM t VERSION AS OF 1")
    assert isinstance(statement, Select)
    refusal = verbatim.refusal(statement.query, names)
    assert refusal is not None and "temporary view" in refusal


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("INSERT INTO t SELECT * FROM u", "SELECT * FROM u"),
        ("INSERT INTO t (time, c) VALUES (1, 'a'), (2, 'b')", "VALUES (1, 'a'), (2, 'b')"),
        ("INSERT OVERWRITE TABLE t (time, c) (SELECT 1, 'a')", "(SELECT 1, 'a')"),
        (
            "INSERT INTO t REPLACE WHERE c IN (SELECT c FROM u) WITH x AS (SELECT 1) "
            "SELECT * FROM x",
            "WITH x AS (SELECT 1) SELECT * FROM x",
        ),
        (
            "CREATE TABLE n USING tsfile OPTIONS (tagColumns 'c') AS SELECT to_timestamp(s) "
            "AS time, c FROM u",
            "SELECT to_timestamp(s) AS time, c FROM u",
        ),
    ],
)
def test_the_query_inside_a_statement_is_its_own_text(text: str, query: str) -> None:
    statement = parse_statement(text)
    assert isinstance(statement.query, exp.Expr)  # type: ignore[union-attr]
    assert verbatim.source_text(text, statement.query) == query  # type: ignore[union-attr]


def test_a_source_that_is_no_tail_of_the_text_is_not_found() -> None:
    statement = parse_statement("INSERT INTO t TABLE u")
    assert isinstance(statement, Insert)
    assert verbatim.source_text("INSERT INTO t TABLE u", statement.query) is None


# -- Spark: the same answers as spark.sql ------------------------------------------------------

# Two tables in the style of Spark's sql-tests inputs (testData, testData2 with NULLs), plus
# one in a database: written through the catalog, and as Parquet for spark.sql.
_T1 = [
    (1, "a", 1, 1.5, "2024-01-01 00:00:00"),
    (2, "a", 2, None, "2024-01-02 00:00:00"),
    (3, "b", None, 3.0, "2024-01-03 00:00:00"),
    (4, "b", 4, 4.5, None),
    (5, "c", 5, 5.0, "2024-01-05 00:00:00"),
    (6, "c", 5, 6.0, "2024-01-06 00:00:00"),
    (7, "d", 1, -1.0, "2024-01-07 00:00:00"),
]
_T2 = [(1, "a", 10), (3, "b", 30), (3, "e", 30), (8, "c", 80), (9, "f", None)]
_T1_COLUMNS = "time BIGINT, k STRING, a INT, b DOUBLE, s STRING"
_T2_COLUMNS = "time BIGINT, k STRING, c INT"


_values = sql_values


@pytest.fixture(scope="module")
def tables(
    spark: SparkSession, plugin: str, catalog: Catalog, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, DataFrame]:
    """t1, t2 and db.t3 in the catalog; the same rows as Parquet DataFrames by name."""
    catalog.sql(f"CREATE TABLE t1 ({_T1_COLUMNS}) USING tsfile OPTIONS (tagColumns 'k')")
    catalog.sql(f"INSERT INTO t1 VALUES {_values(_T1)}")
    catalog.sql(f"CREATE TABLE t2 ({_T2_COLUMNS}) USING tsfile OPTIONS (tagColumns 'k')")
    catalog.sql(f"INSERT INTO t2 VALUES {_values(_T2)}")
    catalog.sql(f"CREATE TABLE db.t3 ({_T2_COLUMNS}) USING tsfile OPTIONS (tagColumns 'k')")
    catalog.sql(f"INSERT INTO db.t3 VALUES {_values(_T2[:3])}")
    root = tmp_path_factory.mktemp("parquet")
    out = {}
    for name, rows, columns in (
        ("t1", _T1, _T1_COLUMNS),
        ("t2", _T2, _T2_COLUMNS),
        ("t3", _T2[:3], _T2_COLUMNS),
    ):
        spark.createDataFrame(rows, columns).write.parquet(str(root / name))
        out[name] = spark.read.parquet(str(root / name))
    return out


def _spark_answer(spark: SparkSession, tables: dict[str, DataFrame], text: str) -> DataFrame:
    """``text`` by spark.sql over the Parquet copies, registered under the tables' names
    (``db.t3`` as ``t3`` in a database ``db`` of spark_catalog is not needed: the queries
    name it ``db.t3`` only where the copy is swapped in by name)."""
    for name, frame in tables.items():
        frame.createOrReplaceTempView(f"pq_{name}")
    swapped = text.replace("db.t3", "pq_t3").replace("t1", "pq_t1").replace("t2", "pq_t2")
    return spark.sql(swapped)


def _analysed(df: DataFrame) -> str:
    return str(df._jdf.queryExecution().analyzed().toString())


def _same(catalog: Catalog, spark: SparkSession, tables: dict[str, DataFrame], text: str) -> None:
    got = catalog.sql(text)
    want = _spark_answer(spark, tables, text)
    assert got.columns == [c.replace("pq_", "") for c in want.columns]
    assert [f.dataType for f in got.schema] == [f.dataType for f in want.schema]
    ordered = "ORDER BY" in text.upper()
    rows, wanted = [tuple(r) for r in got.collect()], [tuple(r) for r in want.collect()]
    if ordered:
        assert rows == wanted
    else:
        assert sorted(rows, key=repr) == sorted(wanted, key=repr)


# Spark sql-tests style queries (group-by, window, cte, pivot, subquery, intersect-all,
# grouping sets, ...), each naming the catalog's tables as Catalog.sql users do.
QUERIES = [
    # group-by
    "SELECT k, count(*), sum(a), avg(b), min(time), max(time) FROM t1 GROUP BY k",
    "SELECT k, count(a) AS n FROM t1 GROUP BY k HAVING count(a) > 1",
    "SELECT a, count(DISTINCT k) FROM t1 GROUP BY a",
    "SELECT count(*) FROM t1 WHERE b > 2",
    "SELECT k, max_by(b, time), min_by(b, time) FROM t1 GROUP BY k",
    "SELECT a % 2 AS parity, collect_list(k) FROM (SELECT * FROM t1 ORDER BY time) GROUP BY 1",
    "SELECT k, first(b) IGNORE NULLS, last(a) FROM (SELECT * FROM t1 ORDER BY time) GROUP BY k",
    "SELECT count(*), count(b), sum(b) FILTER (WHERE a > 1) FROM t1",
    # grouping sets, rollup, cube
    "SELECT k, a, sum(b), grouping_id() FROM t1 GROUP BY GROUPING SETS ((k), (a), ())",
    "SELECT k, a, count(*) FROM t1 GROUP BY ROLLUP (k, a)",
    "SELECT k, a, count(*), grouping(k) FROM t1 GROUP BY CUBE (k, a)",
    # window
    "SELECT time, k, sum(a) OVER (PARTITION BY k ORDER BY time) FROM t1",
    "SELECT time, rank() OVER (ORDER BY a DESC NULLS LAST), lag(b) OVER (ORDER BY time) FROM t1",
    "SELECT time, avg(b) OVER (ORDER BY time ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM t1",
    "SELECT k, row_number() OVER w, ntile(2) OVER w FROM t1 WINDOW w AS (ORDER BY time)",
    # cte
    "WITH x AS (SELECT k, a FROM t1 WHERE a IS NOT NULL) SELECT k, sum(a) FROM x GROUP BY k",
    "WITH x AS (SELECT * FROM t1), y AS (SELECT * FROM x WHERE a > 1) SELECT count(*) FROM y",
    "SELECT * FROM (WITH x AS (SELECT time, c FROM t2) SELECT * FROM x WHERE c > 10) s",
    "WITH t2 AS (SELECT 1 AS time) SELECT * FROM t2",
    "SELECT (WITH x AS (SELECT max(c) AS m FROM t2) SELECT m FROM x) AS top",
    # subquery
    "SELECT * FROM t1 WHERE k IN (SELECT k FROM t2 WHERE c > 20)",
    "SELECT * FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE t2.k = t1.k AND t2.time = t1.time)",
    "SELECT k, (SELECT max(c) FROM t2 WHERE t2.k = t1.k) AS mc FROM t1",
    "SELECT * FROM t1 WHERE a > (SELECT avg(a) FROM t1)",
    "SELECT * FROM t1 WHERE k NOT IN (SELECT k FROM t2 WHERE k IS NOT NULL)",
    # joins and set operations
    "SELECT t1.time, t1.k, t2.c FROM t1 LEFT JOIN t2 ON t1.k = t2.k AND t1.time = t2.time",
    "SELECT * FROM t1 FULL OUTER JOIN t2 USING (time, k)",
    "SELECT k FROM t1 INTERSECT ALL SELECT k FROM t2",
    "SELECT k FROM t1 EXCEPT ALL SELECT k FROM t2",
    "SELECT k FROM t1 UNION SELECT k FROM t2 EXCEPT SELECT k FROM t2 WHERE c > 20",
    "SELECT time FROM t1 UNION ALL SELECT time FROM db.t3 ORDER BY time",
    # pivot
    "SELECT * FROM (SELECT k, a FROM t1) PIVOT (sum(a) FOR k IN ('a' AS a, 'b' AS b, 'c'))",
    # expressions whose column names Spark derives from the text
    "SELECT to_timestamp(s), 400.00D, 1.5E2, CAST(a AS STRING), a + 1, b * 2 FROM t1",
    "SELECT date_trunc('DAY', to_timestamp(s)) AS d, count(*) FROM t1 GROUP BY 1 ORDER BY d",
    "SELECT k, CASE WHEN a > 2 THEN 'big' ELSE 'small' END, coalesce(b, 0D) FROM t1",
    "SELECT k, explode(array(a, 1)) FROM t1",
    "SELECT time, k FROM t1 ORDER BY time DESC LIMIT 3",
    "SELECT * FROM t1 TABLESAMPLE (100 PERCENT) WHERE time < 3",
    "SELECT t.* FROM t1 AS t WHERE t.time BETWEEN 2 AND 5",
]


@spark_test
@pytest.mark.parametrize("text", QUERIES)
def test_a_query_answers_as_spark_sql_does(
    catalog: Catalog, spark: SparkSession, tables: dict[str, DataFrame], plugin: str, text: str
) -> None:
    _same(catalog, spark, tables, text)
    assert plugin in _analysed(catalog.sql(text)) or "t1" not in text


@spark_test
def test_the_last_value_per_key_runs_no_spark_job(
    catalog: Catalog, spark: SparkSession, tables: dict[str, DataFrame], plugin: str
) -> None:
    """Bench Q8's shape runs as written, where the plugin answers max_by from the manifest's
    statistics (k = 'a' ends on a NULL b): no Spark job, spark.sql's answer."""
    text = "SELECT k, max_by(b, time) AS last, max(time) AS at FROM t1 GROUP BY k"
    got = catalog.sql(text)
    assert plugin in _analysed(got)
    assert spark_jobs(spark, got) == 0
    _same(catalog, spark, tables, text)


@spark_test
def test_legacy_set_operation_precedence_is_spark_s(
    catalog: Catalog, spark: SparkSession, tables: dict[str, DataFrame]
) -> None:
    text = "SELECT k FROM t1 UNION SELECT k FROM t2 INTERSECT SELECT k FROM t2 WHERE c > 20"
    spark.conf.set("spark.sql.legacy.setopsPrecedence.enabled", "true")
    try:
        _same(catalog, spark, tables, text)
    finally:
        spark.conf.unset("spark.sql.legacy.setopsPrecedence.enabled")
    _same(catalog, spark, tables, text)


@spark_test
def test_a_cte_shadowing_a_temp_view_only_in_its_scope(
    catalog: Catalog, spark: SparkSession, tables: dict[str, DataFrame]
) -> None:
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW v AS SELECT 1 AS a")
    try:
        got = catalog.sql("SELECT * FROM v, (WITH v AS (SELECT 2 AS a) SELECT a AS b FROM v) x")
        assert [tuple(r) for r in got.collect()] == [(1, 2)]
        # and a catalog table joined to the view
        joined = catalog.sql("SELECT t1.time, v.a FROM t1 JOIN v ON t1.time = v.a")
        assert [tuple(r) for r in joined.collect()] == [(1, 1)]
    finally:
        spark.catalog.dropTempView("v")


@spark_test
def test_the_session_keeps_its_current_catalog_and_namespace(
    catalog: Catalog, spark: SparkSession, tables: dict[str, DataFrame], plugin: str
) -> None:
    before = (spark.catalog.currentCatalog(), spark.catalog.currentDatabase())
    assert catalog.sql("SELECT count(*) FROM t1").collect()[0][0] == len(_T1)
    assert (spark.catalog.currentCatalog(), spark.catalog.currentDatabase()) == before
    with pytest.raises(AnalysisException, match="nope") as raised:
        catalog.sql("SELECT nope FROM t1")
    # named as the query names it, as on the rewriting path, not as the plugin's table
    assert "`t1`" in str(raised.value) and plugin not in str(raised.value)
    assert (spark.catalog.currentCatalog(), spark.catalog.currentDatabase()) == before
    # A session whose current namespace is the plugin's other database: t is still default.t
    spark.catalog.setCurrentCatalog(plugin)
    spark.catalog.setCurrentDatabase("db")
    try:
        assert catalog.sql("SELECT count(*) FROM t1").collect()[0][0] == len(_T1)
        assert spark.catalog.currentDatabase() == "db"
    finally:
        # setCurrentCatalog would pin the current catalog, so that a later test's
        # spark.sql.defaultCatalog would no longer apply: put the session back as it was, unset
        _reset_current_catalog(spark)
        assert (spark.catalog.currentCatalog(), spark.catalog.currentDatabase()) == before


@spark_test
def test_time_travel_urls_and_errors(
    catalog: Catalog, warehouse: Path, tables: dict[str, DataFrame], plugin: str
) -> None:
    # version 0 is the empty table, 1 holds the rows: through the plugin
    old = catalog.sql("SELECT count(*) FROM t1 VERSION AS OF 0")
    assert old.collect()[0][0] == 0 and plugin in _analysed(old)
    with pytest.raises(VersionNotFoundError):
        catalog.sql("SELECT * FROM t1 VERSION AS OF 99").collect()
    # a URL reference is the catalog's: the rewriting path reads it
    url = catalog.sql(f"SELECT count(*) FROM tsfile('{warehouse / 't1'}')")
    assert url.collect()[0][0] == len(_T1) and plugin not in _analysed(url)
    with pytest.raises(AnalysisException, match="nope"):
        catalog.sql("SELECT * FROM nope")


@spark_test
def test_insert_and_ctas_run_their_query_as_written(
    catalog: Catalog, spark: SparkSession, tables: dict[str, DataFrame]
) -> None:
    # A nested WITH inside a subquery, which the rewriting path hoisted and refused.
    catalog.sql(f"CREATE TABLE ins ({_T2_COLUMNS}) USING tsfile OPTIONS (tagColumns 'k')")
    done = catalog.sql(
        "INSERT INTO ins SELECT * FROM (WITH x AS (SELECT time, k, c FROM t2) "
        "SELECT * FROM x WHERE c >= 30)"
    ).collect()[0]
    assert done.num_inserted_rows == 3
    assert sorted(tuple(r) for r in catalog.sql("SELECT * FROM ins").collect()) == [
        (3, "b", 30),
        (3, "e", 30),
        (8, "c", 80),
    ]
    catalog.sql(
        "CREATE TABLE made USING tsfile OPTIONS (tagColumns 'k') AS "
        "SELECT time, k, 400.00D AS d FROM (WITH y AS (SELECT * FROM t1) SELECT * FROM y)"
    )
    assert catalog.sql("SELECT count(*), sum(d) FROM made").collect()[0] == (len(_T1), 2800.0)


@spark_test
def test_convenience_views_read_the_latest_version_through_the_plugin(
    spark: SparkSession, warehouse: Path, tables: dict[str, DataFrame], plugin: str
) -> None:
    viewed = Catalog(spark, str(warehouse))  # registers views of the default tables
    try:
        assert spark.sql("SELECT count(*) FROM t2").collect()[0][0] == len(_T2)
        viewed.sql("INSERT INTO t2 VALUES (20, 'g', 200)")
        other = Catalog(spark, str(warehouse), register_views=False)
        other.sql("INSERT INTO t2 VALUES (21, 'g', 210)")  # not this catalog's write
        assert spark.sql("SELECT count(*) FROM t2").collect()[0][0] == len(_T2) + 2
        assert viewed.sql("SELECT count(*) FROM t2").collect()[0][0] == len(_T2) + 2
        assert viewed.sql("SELECT count(*) FROM t2 VERSION AS OF 1").collect()[0][0] == len(_T2)
    finally:
        for name in ("t1", "t2", "ins", "made"):
            spark.catalog.dropTempView(name)
        viewed.sql("DELETE FROM t2 WHERE time >= 20")


@spark_test
def test_a_window_grouping_is_pre_aggregated_on_the_rewriting_path(
    catalog: Catalog, spark: SparkSession, tables: dict[str, DataFrame], plugin: str
) -> None:
    # Through the plugin Spark would aggregate every row (it cannot push the window struct
    # into the scan); the rewriting path buckets them in the scan, with Spark's answer.
    catalog.sql(
        "CREATE TABLE tw (time TIMESTAMP, k STRING, b DOUBLE) USING tsfile "
        "OPTIONS (tagColumns 'k', timestampAs 'timestamp')"
    )
    rows = [
        ("2024-01-01 00:10:00", "a", 1.0),
        ("2024-01-01 00:50:00", "a", None),
        ("2024-01-01 01:20:00", "a", 3.0),
        ("2024-01-01 00:30:00", "b", 4.0),
    ]
    catalog.sql(
        "INSERT INTO tw VALUES "
        + ", ".join(f"(TIMESTAMP'{t}', '{k}', {'NULL' if b is None else b})" for t, k, b in rows)
    )
    spark.createDataFrame(
        [(dt.datetime.fromisoformat(t), k, b) for t, k, b in rows],
        "time TIMESTAMP, k STRING, b DOUBLE",
    ).createOrReplaceTempView("pq_tw")
    text = (
        "SELECT k, window(time, '1 hour'), window.end, count(*), avg(b) FROM tw "
        "GROUP BY k, window(time, '1 hour')"
    )
    spark.conf.set(SMALL_SCAN_CONF, "0")  # a tiny table: read by the scan, not the driver
    try:
        got = catalog.sql(text)
        assert "__tsfc_p" in _analysed(got)
        want = spark.sql(text.replace("tw", "pq_tw"))
        assert got.columns == want.columns
        assert [f.dataType for f in got.schema] == [f.dataType for f in want.schema]
        assert sorted(map(tuple, got.collect()), key=repr) == sorted(
            map(tuple, want.collect()), key=repr
        )
    finally:
        spark.conf.unset(SMALL_SCAN_CONF)


def _reset_current_catalog(spark: SparkSession) -> None:
    """Forget the session's current catalog and namespace (Spark's CatalogManager.reset)."""
    spark._jsparkSession.sessionState().catalogManager().reset()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("UPDATE t SET v = 1", "UPDATE `ts`.`default`.`t` SET v = 1"),
        ("update  db . `t` AS x SET v = x.v;", "update  `ts`.`db`.`t` AS x SET v = x.v;"),
        (
            "MERGE INTO t USING t s ON t.time = s.time WHEN MATCHED THEN DELETE",
            "MERGE INTO `ts`.`default`.`t` USING t s ON t.time = s.time WHEN MATCHED THEN DELETE",
        ),
        ("DELETE FROM db.t WHERE t = 't'", "DELETE FROM `ts`.`db`.`t` WHERE t = 't'"),
    ],
)
def test_a_row_level_statement_names_its_target_with_the_plugin_catalog(
    text: str, expected: str
) -> None:
    """Only the target is qualified (a bare ``t`` may also be the catalog's convenience view
    of the table, which Spark finds first and cannot update); the rest stays as written."""
    statement = parse_statement(text)
    tree = verbatim.row_level_tree(text)
    assert verbatim.row_level_text(text, tree, "ts", statement.table) == expected  # type: ignore[union-attr]
