"""``ORDER BY time ... LIMIT n`` through ``Catalog.sql`` (without the plugin): the scan reads
only the parts that may hold the first rows, in the driver when they are few, with exactly the
rows Spark gives over a Parquet copy."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession

from tests.factories import WEATHER_COLUMNS, hourly_weather
from tsfile_catalog import Catalog

pytestmark = pytest.mark.spark

EXAMPLES = int(os.environ.get("TSFILE_PROPERTY_EXAMPLES", "10"))
COLUMNS = WEATHER_COLUMNS


@pytest.fixture(scope="module")
def catalogs(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Catalog]]:
    """One warehouse of table ``days`` (five daily appends: one part a day) seen by two
    catalogs, one reading small scans in the driver and one never, and ``pq_days``, a
    Parquet copy of the same rows."""
    root = str(tmp_path_factory.mktemp("time-top"))
    source = Catalog(spark, root, register_views=False, small_scan_rows=0)
    source.sql(f"CREATE TABLE days ({COLUMNS}) USING tsfile OPTIONS (tagColumns 'city,device')")
    everything = []
    for day in range(5):
        rows = hourly_weather(day, 2 if day == 2 else 4)
        everything += rows
        spark.createDataFrame(rows, COLUMNS).createOrReplaceTempView("top_new_day")
        source.sql("INSERT INTO days SELECT * FROM top_new_day")
    parquet = str(tmp_path_factory.mktemp("parquet") / "days")
    spark.createDataFrame(everything, COLUMNS).write.parquet(parquet)
    spark.read.parquet(parquet).createOrReplaceTempView("pq_days")
    # 96 rows a day: the whole table (432 rows) is no small scan, one or two days are.
    local = Catalog(spark, root, register_views=False, small_scan_rows=200)
    yield {"source": source, "local": local}


WHERE = [
    "",
    "WHERE device = 'd3'",
    "WHERE city = 'bj' AND time < TIMESTAMP '2024-01-04 07:30:00Z'",
    "WHERE temp > 20",
    "WHERE device = 'd1' OR device = 'd4'",
]


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    path=st.sampled_from(["source", "local"]),
    where=st.sampled_from(WHERE),
    n=st.integers(1, 120),
    descending=st.booleans(),
)
@example(path="local", where="", n=5, descending=True)
@example(path="source", where="WHERE device = 'd3'", n=30, descending=False)
def test_time_ordered_limits_return_sparks_rows(
    spark: SparkSession,
    catalogs: dict[str, Catalog],
    path: str,
    where: str,
    n: int,
    descending: bool,
) -> None:
    order = "DESC" if descending else "ASC"
    query = f"SELECT * FROM {{t}} {where} ORDER BY time {order}, city, device LIMIT {n}"
    got = [tuple(r) for r in catalogs[path].sql(query.format(t="days")).collect()]
    assert got == [tuple(r) for r in spark.sql(query.format(t="pq_days")).collect()]


def test_the_latest_rows_of_a_large_table_are_read_in_the_driver(
    spark: SparkSession, catalogs: dict[str, Catalog]
) -> None:
    """The table is no small scan, but its newest part alone holds the latest rows: they are
    read in the driver (Spark sorts a local relation). Ordered by something else, the query
    reads every part through the source."""
    local = catalogs["local"]
    query = "SELECT time, temp FROM {t} ORDER BY time DESC, device LIMIT 3"
    latest = local.sql(query.format(t="days"))
    assert "LocalTableScan" in _plan(latest) and "BatchScan" not in _plan(latest)
    assert latest.collect() == spark.sql(query.format(t="pq_days")).collect()
    assert "BatchScan" in _plan(local.sql("SELECT * FROM days ORDER BY temp LIMIT 3"))


def test_explain_parts_shows_the_parts_a_time_top_skips(catalogs: dict[str, Catalog]) -> None:
    source = catalogs["source"]
    shown = source.sql("EXPLAIN PARTS SELECT * FROM days ORDER BY time DESC LIMIT 3").collect()
    assert sorted(r.status for r in shown) == ["opened"] + ["pruned"] * 4
    opened = next(r for r in shown if r.status == "opened")
    assert opened.max_time == max(r.max_time for r in shown)
    # Two days of d1 (day 2 holds d1 too): the newest two parts.
    shown = source.sql(
        "EXPLAIN PARTS SELECT * FROM days WHERE device = 'd1' ORDER BY time DESC LIMIT 30"
    ).collect()
    assert sorted(r.status for r in shown) == ["opened"] * 2 + ["pruned"] * 3
    # A filter only the rows can tell: every part is opened.
    shown = source.sql("EXPLAIN PARTS SELECT * FROM days WHERE temp > 1 ORDER BY time LIMIT 3")
    assert {r.status for r in shown.collect()} == {"opened"}


def _plan(df: DataFrame) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def test_parts_before_the_latest_rows_are_not_opened(spark: SparkSession, tmp_path: Path) -> None:
    catalog = Catalog(spark, str(tmp_path), register_views=False, small_scan_rows=0)
    catalog.sql(f"CREATE TABLE gone ({COLUMNS}) USING tsfile OPTIONS (tagColumns 'city,device')")
    for day in range(3):
        spark.createDataFrame(
            hourly_weather(day, 2 if day == 2 else 4), COLUMNS
        ).createOrReplaceTempView("top_new_day")
        catalog.sql("INSERT INTO gone SELECT * FROM top_new_day")
    files = sorted(tmp_path.rglob("*.tsfile"), key=lambda p: p.stat().st_mtime_ns)
    assert len(files) == 3
    for path in files[:-1]:
        path.unlink()
    latest = catalog.sql("SELECT device, rain FROM gone ORDER BY time DESC, device LIMIT 2")
    newest = sorted(hourly_weather(2, 2), key=lambda r: (-r[0].timestamp(), r[2]))[:2]
    assert [tuple(r) for r in latest.collect()] == [(r[2], r[4]) for r in newest]
    with pytest.raises(Exception, match="gone|No such file|not found"):
        catalog.sql("SELECT device FROM gone ORDER BY time LIMIT 2").collect()
