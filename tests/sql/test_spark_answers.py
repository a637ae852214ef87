"""``Catalog.sql`` answers a query exactly as ``spark.sql`` does, with and without the catalog
plugin: the same column names, types and rows as ``spark.sql`` over Parquet copies of the same
data, for the query shapes whose text a rewrite could change (set-operation precedence, nested
``WITH``, columns Spark names after their text), or a refusal, never another answer.

Each query runs three ways: through a catalog whose warehouse the plugin serves, through one
it does not serve (the rewriting path: fresh scans behind temporary views), and through
``spark.sql`` over the Parquet copies.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.errors import AnalysisException, ParseException
from pyspark.sql import DataFrame, SparkSession

from tests.factories import sql_values
from tsfile_catalog import Catalog
from tsfile_catalog.exceptions import SqlParseError

pytestmark = pytest.mark.spark

_T1 = [
    (1, "a", 1, 1.5),
    (2, "a", 2, None),
    (3, "b", None, 3.0),
    (4, "b", 4, 4.5),
    (5, "c", 5, 5.0),
    (6, "d", 1, -1.0),
]
_T2 = [(1, "a", 10), (3, "b", 30), (3, "e", 30), (8, "c", 80), (9, "f", None)]
_T1_COLUMNS = "time BIGINT, k STRING, a INT, b DOUBLE"
_T2_COLUMNS = "time BIGINT, k STRING, c INT"
_LEGACY_SETOPS = "spark.sql.legacy.setopsPrecedence.enabled"


_values = sql_values


def _fill(catalog: Catalog) -> None:
    catalog.sql(f"CREATE TABLE t1 ({_T1_COLUMNS}) USING tsfile OPTIONS (tagColumns 'k')")
    catalog.sql(f"INSERT INTO t1 VALUES {_values(_T1)}")
    catalog.sql(f"CREATE TABLE t2 ({_T2_COLUMNS}) USING tsfile OPTIONS (tagColumns 'k')")
    catalog.sql(f"INSERT INTO t2 VALUES {_values(_T2)}")
    catalog.sql(f"CREATE TABLE db.t3 ({_T2_COLUMNS}) USING tsfile OPTIONS (tagColumns 'k')")
    catalog.sql(f"INSERT INTO db.t3 VALUES {_values(_T2[:3])}")


@pytest.fixture(scope="module")
def served(catalog: Catalog, plugin: str) -> Catalog:
    """The module's catalog, its warehouse served by the plugin."""
    _fill(catalog)
    return catalog


@pytest.fixture(scope="module")
def plain(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """A catalog no plugin serves, holding the same tables."""
    catalog = Catalog(spark, str(tmp_path_factory.mktemp("plain")), register_views=False)
    _fill(catalog)
    return catalog


@pytest.fixture(scope="module")
def parquet(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The same rows as Parquet: table name -> its copy's directory."""
    root = tmp_path_factory.mktemp("parquet")
    copies = {}
    for name, rows, columns in (
        ("t1", _T1, _T1_COLUMNS),
        ("t2", _T2, _T2_COLUMNS),
        ("db.t3", _T2[:3], _T2_COLUMNS),
    ):
        copies[name] = str(root / name)
        spark.createDataFrame(rows, columns).write.parquet(copies[name])
    return copies


@pytest.fixture
def views(spark: SparkSession, parquet: dict[str, str]) -> Iterator[dict[str, str]]:
    """The Parquet copies as temporary views pq_t1, pq_t2, pq_t3: table name -> view."""
    names = {name: f"pq_{name.split('.')[-1]}" for name in parquet}
    for name, view in names.items():
        spark.read.parquet(parquet[name]).createOrReplaceTempView(view)
    yield names
    for view in names.values():
        spark.catalog.dropTempView(view)


def _spark_answer(spark: SparkSession, names: dict[str, str], text: str) -> DataFrame:
    for name, view in names.items():
        text = text.replace(name, view)
    return spark.sql(text)


def _rows(df: DataFrame) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def _same(catalog: Catalog, spark: SparkSession, names: dict[str, str], text: str) -> None:
    want = _spark_answer(spark, names, text)
    got = catalog.sql(text)
    assert got.columns == [c.replace("pq_", "") for c in want.columns]
    assert [f.dataType for f in got.schema] == [f.dataType for f in want.schema]
    assert _rows(got) == _rows(want)


# Queries whose answer a regenerated text could change: each names the catalog's tables.
QUERIES = [
    # set operations: precedence, chains, the spellings of each
    "SELECT k FROM t1 UNION SELECT k FROM t2 INTERSECT SELECT k FROM t2 WHERE c > 20",
    "SELECT k FROM t2 INTERSECT SELECT k FROM t1 EXCEPT SELECT k FROM t1 WHERE a > 3",
    "SELECT k FROM t1 UNION ALL SELECT k FROM t2 INTERSECT ALL SELECT k FROM db.t3",
    "(SELECT k FROM t1 EXCEPT SELECT k FROM t2) UNION SELECT 'z'",
    "SELECT k FROM t1 MINUS SELECT k FROM t2 INTERSECT DISTINCT SELECT k FROM t1",
    # nested WITH, WITH inside subqueries
    "WITH x AS (WITH y AS (SELECT * FROM t1) SELECT * FROM y) SELECT count(*) FROM x",
    "WITH x AS (SELECT 1 AS a) SELECT * FROM (WITH x AS (SELECT 2 AS a) SELECT * FROM x)",
    "WITH x AS (SELECT k FROM t1) SELECT * FROM x WHERE k IN (WITH x AS (SELECT k FROM t2) "
    "SELECT k FROM x)",
    "SELECT * FROM t1 WHERE a IN (WITH x AS (SELECT c FROM t2) SELECT c / 10 FROM x)",
    "WITH t1 AS (SELECT * FROM t2) SELECT * FROM t1",
    "WITH x AS (SELECT * FROM t1), y AS (WITH z AS (SELECT * FROM x) SELECT a FROM z) "
    "SELECT sum(a) FROM y",
    # columns Spark names after their text
    "SELECT 1+1, count(*), COUNT(*), Count(1) FROM t1",
    "SELECT nvl(a, 0), ifnull(b, 1), coalesce(a, 2), a || k, k || 'x' FROM t1",
    "SELECT a::string, CAST(a AS BIGINT), int(b), string(a) FROM t1",
    "SELECT a <=> 1, a != 1, a <> 2, NOT a > 1, !(a > 1), a IN (1, 2), a BETWEEN 1 AND 3 FROM t1",
    "SELECT k LIKE 'a%', k RLIKE '^a', if(a > 1, 'x', 'y'), substr(k, 1), substring(k, 1, 1) "
    "FROM t1",
    "SELECT std(b), stddev(b), mean(b), avg(b), sum(b) AS s, max(a) FROM t1",
    "SELECT a div 2, a % 2, mod(a, 2), -a, ~a, a * 1.5 FROM t1",
    "SELECT 1.0, 1e3, 2.5D, DATE'2024-01-01', X'01', array(1, 2)[0], named_struct('x', 1).x",
    "SELECT t1.k, t2.c FROM t1 JOIN t2 ON t1.time = t2.time AND t1.k = t2.k",
    "SELECT db.t3.c, k FROM db.t3 WHERE db.t3.time > 1",
    "SELECT `a`, `k` AS `K2` FROM t1 WHERE time > 2",
    # pipe syntax, which sqlglot reads as nested queries
    "FROM t1 |> WHERE a > 1 |> SELECT k, a",
]


def _cases() -> list[Any]:
    """Every query with the standard set-operation precedence, and those whose answer the
    precedence decides (INTERSECT with another set operation) also under the legacy setting
    (left to right)."""
    cases = []
    for text in QUERIES:
        words = set(_SET_OPERATION.findall(text))
        settings = ["false", "true"] if "INTERSECT" in words and len(words) > 1 else ["false"]
        for legacy in settings:
            shown = "setops-legacy" if legacy == "true" else "setops-standard"
            cases.append(pytest.param(text, legacy, id=f"{shown}-{text}"))
    return cases


_SET_OPERATION = re.compile(r"\b(UNION|INTERSECT|EXCEPT|MINUS)\b")


@pytest.mark.parametrize(("text", "legacy"), _cases())
def test_a_query_answers_as_spark_sql_does_with_and_without_the_plugin(
    served: Catalog,
    plain: Catalog,
    spark: SparkSession,
    views: dict[str, str],
    text: str,
    legacy: str,
) -> None:
    spark.conf.set(_LEGACY_SETOPS, legacy)
    try:
        _same(served, spark, views, text)
        _same(plain, spark, views, text)
    finally:
        spark.conf.unset(_LEGACY_SETOPS)


def test_a_query_only_spark_parses_runs_through_the_plugin_and_is_refused_without(
    served: Catalog, plain: Catalog, spark: SparkSession, views: dict[str, str]
) -> None:
    # sqlglot does not read `TABLE t`: the plugin path hands Spark the text
    _same(served, spark, views, "TABLE t1")
    with pytest.raises(SqlParseError, match="plugin"):
        plain.sql("TABLE t1")


@pytest.mark.parametrize("path", ["served", "plain"])
def test_spark_s_own_errors_come_through_as_spark_s(
    request: pytest.FixtureRequest, path: str, plugin: str
) -> None:
    catalog: Catalog = request.getfixturevalue(path)
    with pytest.raises(ParseException) as syntax:
        catalog.sql("SELECT * FROM t1 WHERE a >")
    assert syntax.value.getCondition() == "PARSE_SYNTAX_ERROR"
    with pytest.raises(AnalysisException) as unresolved:
        catalog.sql("SELECT nope FROM t1")
    assert unresolved.value.getCondition() == "UNRESOLVED_COLUMN.WITH_SUGGESTION"
    # suggestions over every column, and the table named as the query names it: not a view
    # of the rewriting path, not the plugin's
    message = str(unresolved.value)
    assert "[`a`, `b`, `k`, `time`]" in message and "`t1`" in message
    assert "__tsfc_" not in message and plugin not in message
    with pytest.raises(AnalysisException) as mismatch:
        catalog.sql("SELECT k FROM t1 UNION SELECT time, k FROM t2")
    assert mismatch.value.getCondition() == "NUM_COLUMNS_MISMATCH"


def test_the_default_catalog_setting_still_applies_after_a_query(
    served: Catalog, spark: SparkSession, plugin: str
) -> None:
    assert served.sql("SELECT count(*) FROM t1").collect()[0][0] == len(_T1)
    spark.conf.set("spark.sql.defaultCatalog", plugin)
    try:
        # the user never ran USE: the setting decides the current catalog
        assert spark.catalog.currentCatalog() == plugin
        assert spark.sql("SELECT count(*) FROM db.t3").collect()[0][0] == 3
    finally:
        spark.conf.unset("spark.sql.defaultCatalog")
    assert spark.catalog.currentCatalog() == "spark_catalog"
