"""Small scans in ``Catalog.sql`` are read in the driver and run without a Spark job for the
scan, with exactly the rows and types the ``tsfile`` source gives the same query."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.testing import assertDataFrameEqual

from tsfile_catalog import Catalog
from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.sql.small_scan import SMALL_SCAN_CONF

pytestmark = pytest.mark.spark

# Every Spark type a table column can have; NaN, infinities, nulls and extremes included.
CREATE = (
    "CREATE TABLE everything (time TIMESTAMP, city STRING, b BOOLEAN, i INT, l BIGINT, "
    "f FLOAT, d DOUBLE, s STRING, day DATE, at TIMESTAMP, bin BINARY) USING tsfile "
    "OPTIONS (tagColumns 'city', timestampAs 'timestamp')"
)
FIRST = (
    "INSERT INTO everything VALUES "
    "(TIMESTAMP '2024-01-01 00:00:01Z', 'bj', true, 1, 10, 1.5, CAST('NaN' AS DOUBLE), 'a', "
    "DATE '2024-01-01', TIMESTAMP '2023-12-31 23:00:00Z', X'00ff'), "
    "(TIMESTAMP '2024-01-01 00:00:02Z', 'bj', NULL, NULL, NULL, CAST('NaN' AS FLOAT), NULL, "
    "NULL, NULL, NULL, NULL), "
    "(TIMESTAMP '1969-12-31 23:59:59Z', 'sh', false, -2147483648, -9223372036854775808, "
    "CAST('-Infinity' AS FLOAT), CAST('Infinity' AS DOUBLE), '', DATE '1960-02-29', "
    "TIMESTAMP '1900-01-01 00:00:00Z', X'')"
)
SECOND = (
    "INSERT INTO everything VALUES "
    "(TIMESTAMP '2024-01-02 00:00:00Z', 'gz', true, 7, 70, 7.25, -0.0, 'z', DATE '2024-01-02', "
    "TIMESTAMP '2024-01-02 12:00:00Z', X'07')"
)
QUERIES = (
    "SELECT * FROM everything",
    "SELECT * FROM everything VERSION AS OF 1",
    # Pushed: a TAG set and a time range; also a FIELD residual the scan applies exactly.
    "SELECT time, d, bin, at FROM everything "
    "WHERE city IN ('bj', 'gz') AND time >= TIMESTAMP '2024-01-01 00:00:02Z'",
    "SELECT city, l, day FROM everything WHERE i > 0 AND d IS NOT NULL",
    # OR and NOT over comparisons: the scan takes them too.
    "SELECT city, l, day FROM everything WHERE (i > 0 OR d IS NULL) AND NOT city IN ('sh')",
    # count(DISTINCT): no statistic answers it, so the source path does read.
    "SELECT count(DISTINCT f), max(f), min(day) FROM everything VERSION AS OF 1 WHERE city = 'bj'",
)


@pytest.fixture(scope="module")
def warehouse(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = str(tmp_path_factory.mktemp("small-scan"))
    catalog = Catalog(spark, root, register_views=False, small_scan_rows=0)
    for statement in (CREATE, FIRST, SECOND):
        catalog.sql(statement)
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    yield root
    spark.conf.unset("spark.sql.session.timeZone")


def _jobs(spark: SparkSession, df: DataFrame) -> tuple[list[object], int]:
    """The rows of ``df`` and how many Spark jobs collecting them ran."""
    group = f"small-scan-{uuid.uuid4().hex}"
    context = spark.sparkContext
    context.setJobGroup(group, "small scan test")
    try:
        rows = df.collect()
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    return list(rows), len(context.statusTracker().getJobIdsForGroup(group))


@pytest.mark.parametrize("query", QUERIES)
def test_small_scan_gives_the_sources_rows_and_types_without_a_job(
    spark: SparkSession, warehouse: str, query: str
) -> None:
    local = Catalog(spark, warehouse, register_views=False, small_scan_rows=1_000)
    source = Catalog(spark, warehouse, register_views=False, small_scan_rows=0)

    fast, slow = local.sql(query), source.sql(query)

    assert fast.schema == slow.schema
    assertDataFrameEqual(fast, slow, checkRowOrder=False)
    # The point of the fast path: the scan itself starts no Spark job (an aggregate over
    # the local relation may still run one, but never the Python source's).
    rows, jobs = _jobs(spark, fast)
    assert rows
    if "count(" not in query:
        assert jobs == 0
    assert _jobs(spark, slow)[1] > 0


# Filters the scan does not take (Spark evaluates them, in its own order), the last of which
# fails under ANSI as the same query over the data source does. Over an empty local relation
# Spark drops the WHERE before it folds its constants; over a local relation it evaluates the
# WHERE, in the order written, while it plans.
@pytest.mark.parametrize(
    "query",
    [
        "SELECT city, l, day FROM everything WHERE i > 0 OR upper(s) = 'Z'",
        "SELECT * FROM everything WHERE NOT (city != 'gz') AND upper(s) = 'Z'",
        "SELECT * FROM everything WHERE (s > DATE '2024-01-01') AND NOT (city != 'nowhere')",
        "SELECT * FROM everything WHERE (s IN ('a', DATE '2024-01-01') OR city = 'x') "
        "AND city = 'nowhere'",
    ],
)
def test_a_filter_the_scan_does_not_take_reads_through_the_source(
    spark: SparkSession, warehouse: str, query: str
) -> None:
    local = Catalog(spark, warehouse, register_views=False, small_scan_rows=1_000)
    source = Catalog(spark, warehouse, register_views=False, small_scan_rows=0)

    def outcome(catalog: Catalog) -> list[object] | str:
        try:
            return sorted(map(repr, catalog.sql(query).collect()))
        except Exception as e:  # noqa: BLE001 - the outcome is compared
            return type(e).__name__

    assert outcome(local) == outcome(source)
    if not isinstance(outcome(source), str):
        assert _jobs(spark, local.sql(query))[1] > 0


def test_a_scan_over_the_threshold_uses_the_source(spark: SparkSession, warehouse: str) -> None:
    # 4 rows in the table: a threshold of 3 sends the full scan to the data source, while a
    # pruned scan of fewer rows stays local.
    catalog = Catalog(spark, warehouse, register_views=False, small_scan_rows=3)
    assert _jobs(spark, catalog.sql("SELECT * FROM everything"))[1] > 0
    assert _jobs(spark, catalog.sql("SELECT * FROM everything WHERE city = 'bj'"))[1] == 0


def test_the_session_setting_tunes_and_disables_it(spark: SparkSession, warehouse: str) -> None:
    catalog = Catalog(spark, warehouse, register_views=False)
    query = "SELECT * FROM everything WHERE city = 'gz'"
    assert _jobs(spark, catalog.sql(query))[1] == 0  # the default threshold
    try:
        spark.conf.set(SMALL_SCAN_CONF, "0")
        assert _jobs(spark, catalog.sql(query))[1] > 0
        spark.conf.set(SMALL_SCAN_CONF, "many")
        with pytest.raises(OptionError, match=r"spark\.tsfile\.smallScanRows = 'many'"):
            catalog.sql(query)
    finally:
        spark.conf.unset(SMALL_SCAN_CONF)


def test_a_negative_threshold_is_refused(spark: SparkSession, tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="small_scan_rows = -1"):
        Catalog(spark, str(tmp_path), register_views=False, small_scan_rows=-1)
