"""``ORDER BY time ... LIMIT n`` on a catalog table: Spark pushes the top-N into the scan,
which reads only the parts that may hold the first rows in time order, with exactly the rows
Spark gives over a Parquet copy of the same table."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.factories import hourly_weather
from tests.spark_catalog.conftest import WEATHER_COLUMNS, create_weather

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

BASE = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
# Bounded for CI; TSFILE_PROPERTY_EXAMPLES raises it for a longer search.
EXAMPLES = int(os.environ.get("TSFILE_PROPERTY_EXAMPLES", "15"))


@pytest.fixture(scope="module")
def days(spark: SparkSession, ts: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Two tables of six daily appends (one part per day; days 2 and 4 hold two devices
    only) and their Parquet copies: ``append`` as written, ``last`` with
    ``key.duplicates = last`` and day 3 written again with new values (a key merge)."""
    names: dict[str, str] = {}
    for kind, properties in (("append", {}), ("last", {"key.duplicates": "last"})):
        table = f"{ts}.db.top_{kind}"
        create_weather(spark, table, **properties)
        for day in range(6):
            rows = hourly_weather(day, devices=2 if day in (2, 4) else 4)
            spark.createDataFrame(rows, WEATHER_COLUMNS).writeTo(table).append()
        if kind == "last":
            again = [(t, c, d, 99.5, r) for t, c, d, _, r in hourly_weather(3)]
            spark.createDataFrame(again, WEATHER_COLUMNS).writeTo(table).append()
        parquet = str(tmp_path_factory.mktemp("parquet") / kind)
        spark.table(table).write.parquet(parquet)
        spark.read.parquet(parquet).createOrReplaceTempView(f"pq_top_{kind}")
        names[kind] = table
    return names


def _plan(df: DataFrame) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


WHERE = [
    "",
    "WHERE device = 'd3'",
    "WHERE city = 'bj' AND time < TIMESTAMP '2024-01-05 07:30:00'",
    "WHERE time >= TIMESTAMP '2024-01-02 05:00:00'",
    "WHERE device IN ('d4', 'd9')",
    "WHERE temp > 20",  # a FIELD predicate: no exact counts, every part read
    "WHERE device = 'd1' OR device = 'd4'",
    "WHERE NOT city = 'sh' AND temp IS NOT NULL",
]


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    kind=st.sampled_from(["append", "last"]),
    where=st.sampled_from(WHERE),
    n=st.integers(1, 130),
    descending=st.booleans(),
    columns=st.sampled_from(["*", "device, temp", "time, rain"]),
)
@example(kind="last", where="", n=30, descending=True, columns="*")
@example(kind="append", where="WHERE device = 'd3'", n=5, descending=False, columns="*")
def test_time_ordered_limits_return_sparks_rows(
    spark: SparkSession,
    days: dict[str, str],
    kind: str,
    where: str,
    n: int,
    descending: bool,
    columns: str,
) -> None:
    """The pushed top-N gives Spark's rows, in Spark's order: ties in time are broken by the
    further keys, so the answer is one list."""
    direction = "DESC" if descending else "ASC"
    query = f"SELECT {columns} FROM {{t}} {where} ORDER BY time {direction}, city, device LIMIT {n}"
    pushed = spark.sql(query.format(t=days[kind]))
    assert f"{'latest' if descending else 'earliest'} {n} by time" in _plan(pushed)
    expected = [tuple(r) for r in spark.sql(query.format(t=f"pq_top_{kind}")).collect()]
    assert [tuple(r) for r in pushed.collect()] == expected


def test_ties_at_the_boundary_are_sparks_to_break(
    spark: SparkSession, days: dict[str, str]
) -> None:
    """Ordered by time alone, which of the rows tied at the n-th time Spark keeps is its own
    choice: the times are the same, and every row is one of the table's."""
    for n in (1, 3, 6, 49):
        query = f"SELECT * FROM {{t}} ORDER BY time DESC LIMIT {n}"
        got = [tuple(r) for r in spark.sql(query.format(t=days["append"])).collect()]
        expected = [tuple(r) for r in spark.sql(query.format(t="pq_top_append")).collect()]
        assert [r[0] for r in got] == [r[0] for r in expected]
        everything = {tuple(r) for r in spark.table("pq_top_append").collect()}
        assert set(got) <= everything and len(set(got)) == len(got)


def test_the_latest_rows_are_read_from_the_newest_part_alone(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    """With every file but the newest gone, the latest rows still come back (the scan opens
    no other file), while a query ordered the other way, which needs the oldest, fails."""
    table = f"{ts}.db.top_gone"
    create_weather(spark, table)
    for day in range(4):
        spark.createDataFrame(hourly_weather(day), WEATHER_COLUMNS).writeTo(table).append()
    files = sorted(
        (p for p in warehouse.rglob("*.tsfile") if "top_gone" in str(p)),
        key=lambda p: p.stat().st_mtime_ns,
    )
    assert len(files) == 4
    for path in files[:-1]:
        path.unlink()
    latest = spark.sql(
        f"SELECT time, device FROM {table} WHERE device = 'd2' ORDER BY time DESC LIMIT 3"
    )
    expected = spark.createDataFrame(hourly_weather(3), WEATHER_COLUMNS).where("device = 'd2'")
    assert [r.time for r in latest.collect()] == [
        r.time for r in expected.orderBy("time", ascending=False).limit(3).collect()
    ]
    with pytest.raises(Exception, match="top_gone"):
        spark.sql(f"SELECT * FROM {table} ORDER BY time LIMIT 3").collect()


def test_other_orders_are_not_pushed(spark: SparkSession, days: dict[str, str]) -> None:
    from pyspark.testing import assertDataFrameEqual

    for order in ("temp DESC NULLS LAST, time", "device, time DESC", "time + INTERVAL 1 HOUR"):
        query = f"SELECT * FROM {{t}} ORDER BY {order} LIMIT 5"
        df = spark.sql(query.format(t=days["append"]))
        assert "by time" not in _plan(df)
        assertDataFrameEqual(df, spark.sql(query.format(t="pq_top_append")), checkRowOrder=True)


def test_the_source_options_keep_the_first_rows_of_each_partition(
    spark: SparkSession, days: dict[str, str], warehouse: Path
) -> None:
    """``latest``/``earliest`` on ``spark.read.format("tsfile")``: at least the first n rows
    in time order, every row tied with them, at most about n per partition."""
    from pyspark.sql import functions as F

    path = str(warehouse / "db.db" / "top_append")
    read = spark.read.format("tsfile").option("path", path).option("timestampAs", "timestamp")
    latest = read.option("latest", 5).load()
    rows = latest.collect()
    assert len(rows) <= 5 * latest.rdd.getNumPartitions() + 3 * 4  # ties: four devices an hour
    newest = [r[0] for r in spark.table("pq_top_append").orderBy(F.desc("time")).limit(5).collect()]
    assert sorted((r.time for r in rows), reverse=True)[:5] == newest
    with pytest.raises(Exception, match="'latest' and 'earliest'"):
        read.option("latest", 1).option("earliest", 1).load().collect()
    with pytest.raises(Exception, match="option 'earliest'"):
        read.option("earliest", 0).load().collect()


def test_top_n_query_asks_the_catalog_once_per_step(
    spark: SparkSession, days: dict[str, str]
) -> None:
    """A top-N of one device (bench Q9's shape) costs three catalog calls a run, each once:
    the table's load, the predicate pushdown and the scan's plan; a second run asks again
    (it must see the newest commit) and no more. Through a Spark server every call crosses
    to the catalog process, so a repeated call would cost a Py4J round trip there."""
    import collections

    import tsfile_catalog
    from tsfile_catalog.spark_catalog.delegate import CatalogDelegate
    from tsfile_catalog.spark_catalog.process import serve

    calls: collections.Counter[str] = collections.Counter()

    class Counting(CatalogDelegate):
        def call(self, operation: str, request: str) -> str:
            calls[operation] += 1
            return super().call(operation, request)

    jvm = spark.sparkContext._jvm
    assert jvm is not None
    jvm.io.tsfilecatalog.spark.Client.setDelegate(serve(spark, Counting(spark)))
    query = (
        f"SELECT time, device, temp FROM {days['append']} WHERE device = 'd3' "
        "ORDER BY time DESC LIMIT 10"
    )
    try:
        for _ in range(2):
            calls.clear()
            rows = spark.sql(query).collect()
            assert len(rows) == 10
            assert dict(calls) == {"load_table": 1, "push_predicates": 1, "plan_scan": 1}
    finally:
        tsfile_catalog.register(spark)  # the session's own delegate again
