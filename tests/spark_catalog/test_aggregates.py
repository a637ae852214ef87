"""Aggregates and limits Spark pushes into a catalog table's scan: answered from statistics
without a scan job, or pre-aggregated by the scan, exactly as Spark computes them over a
Parquet copy in the same session."""

from __future__ import annotations

import datetime as dt
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.spark_catalog.conftest import WEATHER_COLUMNS, weather_rows

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

ANSWERED = [
    "SELECT count(*) FROM {t}",
    "SELECT count(*) FROM {t} WHERE city = 'bj'",
    "SELECT city, count(*), sum(rain), min(temp), max(temp), count(temp) FROM {t} GROUP BY city",
    "SELECT device, max(rain), min(time), max(time) FROM {t} GROUP BY device",
    "SELECT min(time), max(time), count(*) FROM {t} WHERE time >= TIMESTAMP '2024-01-01 10:30:00'",
    "SELECT count(*) FROM {t} WHERE city = 'nowhere'",
    "SELECT city, avg(temp), avg(rain) FROM {t} GROUP BY city",
    "SELECT avg(temp), count(*) FROM {t} WHERE time < TIMESTAMP '2024-01-01 20:30:00'",
    "SELECT avg(rain) FROM {t} WHERE device = 'nowhere'",
]
# Statistics cannot answer a FIELD predicate: the scan pre-aggregates the rows it keeps.
PRE_AGGREGATED = [
    "SELECT city, count(*), sum(rain), min(temp), max(temp), count(temp) FROM {t} "
    "WHERE temp > 12 GROUP BY city",
    "SELECT count(*), avg(temp), max(time) FROM {t} WHERE rain = 1",
    "SELECT device, city, sum(temp), count(rain) FROM {t} WHERE rain IS NULL GROUP BY device, city",
    "SELECT count(*), count(temp), min(rain) FROM {t} WHERE temp > 1000",  # no row at all
]
LEFT_TO_SPARK = [
    "SELECT rain, count(*) FROM {t} GROUP BY rain",  # a FIELD in GROUP BY
    "SELECT count(DISTINCT device) FROM {t}",
    "SELECT count(*) FROM {t} WHERE upper(city) = 'BJ'",  # a filter the scan cannot take
    "SELECT avg(rain) FROM {t} WHERE temp > 12",  # an integer avg statistics do not answer
    # Spark's V2 aggregate translation has no max_by/min_by: never offered to the scan.
    "SELECT city, max_by(temp, time), min_by(rain, time) FROM {t} GROUP BY city",
    # count(*) over a scan pruned to no column at all.
    "SELECT count(*) FROM (SELECT * FROM {t} LIMIT 7)",
    "SELECT 1 AS one FROM {t} WHERE city = 'sh'",
]


def _plan(df: DataFrame) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def _jobs(spark: SparkSession, df: DataFrame) -> int:
    """How many Spark jobs collecting ``df`` ran."""
    group = f"aggregates-{uuid.uuid4().hex}"
    context = spark.sparkContext
    context.setJobGroup(group, "aggregate pushdown test")
    try:
        df.collect()
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    return len(context.statusTracker().getJobIdsForGroup(group))


@pytest.mark.parametrize("query", ANSWERED)
def test_answered_from_statistics(spark: SparkSession, weather: str, query: str) -> None:
    from pyspark.testing import assertDataFrameEqual

    df = spark.sql(query.format(t=weather))
    assert "LocalTableScan" in _plan(df) and "BatchScan" not in _plan(df)
    # Complete: Spark keeps no aggregate of its own over the statistics' rows.
    assert "HashAggregate" not in _plan(df)
    assertDataFrameEqual(df, spark.sql(query.format(t="pq_weather")))


def test_a_statistics_answer_runs_no_spark_job(spark: SparkSession, weather: str) -> None:
    for query in (
        "SELECT city, count(*), avg(temp) FROM {t} GROUP BY city",
        "SELECT count(*) + 1 AS n FROM {t} WHERE time < TIMESTAMP '2024-01-01 12:30:00'",
        "SELECT device, max(rain) FROM {t} GROUP BY device HAVING max(rain) > 1",
    ):
        assert _jobs(spark, spark.sql(query.format(t=weather))) == 0, query
    # The oracle of the check: a query the scan pre-aggregates runs jobs.
    assert _jobs(spark, spark.sql(f"SELECT count(*) FROM {weather} WHERE temp > 12")) > 0


def test_a_statistics_answer_reads_no_file(spark: SparkSession, ts: str, warehouse: Path) -> None:
    """With its data files gone, a table still answers from its statistics, while anything
    that reads rows fails."""
    from pyspark.testing import assertDataFrameEqual

    spark.sql(
        f"CREATE TABLE {ts}.db.gone ({WEATHER_COLUMNS}) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city,device')"
    )
    weather_rows(spark).writeTo(f"{ts}.db.gone").append()
    files = [p for p in warehouse.rglob("*.tsfile") if "gone" in str(p)]
    assert files
    for path in files:
        path.unlink()
    for query in (
        "SELECT city, count(*), avg(temp), min(time) FROM {t} GROUP BY city",
        "SELECT count(*), max(rain) FROM {t} WHERE device IN ('d1', 'd4')",
    ):
        answered = spark.sql(query.format(t=f"{ts}.db.gone"))
        assert "BatchScan" not in _plan(answered)
        assertDataFrameEqual(answered, spark.sql(query.format(t="pq_weather")))
    with pytest.raises(Exception, match="gone"):
        spark.sql(f"SELECT count(*) FROM {ts}.db.gone WHERE temp > 12").collect()


@pytest.mark.parametrize("query", PRE_AGGREGATED)
def test_pre_aggregated_by_the_scan(spark: SparkSession, weather: str, query: str) -> None:
    from pyspark.testing import assertDataFrameEqual

    df = spark.sql(query.format(t=weather))
    assert "pre-aggregated" in _plan(df)
    assertDataFrameEqual(df, spark.sql(query.format(t="pq_weather")))


@pytest.mark.parametrize("query", LEFT_TO_SPARK)
def test_the_rest_is_aggregated_by_spark(spark: SparkSession, weather: str, query: str) -> None:
    from pyspark.testing import assertDataFrameEqual

    df = spark.sql(query.format(t=weather))
    assert "pre-aggregated" not in _plan(df)
    assertDataFrameEqual(df, spark.sql(query.format(t="pq_weather")))


def test_limit_stops_the_scan(spark: SparkSession, weather: str) -> None:
    everything = {tuple(r) for r in spark.sql("SELECT * FROM pq_weather").collect()}
    limited = spark.sql(f"SELECT * FROM {weather} WHERE city = 'bj' LIMIT 3")
    assert "limit 3" in _plan(limited)
    rows = [tuple(r) for r in limited.collect()]
    assert len(rows) == 3 and set(rows) <= everything and {r[1] for r in rows} == {"bj"}
    # A filter Spark keeps: no limit in the scan, which must feed Spark every row.
    kept = spark.sql(f"SELECT * FROM {weather} WHERE upper(device) = 'D4' LIMIT 6")
    assert "limit" not in _plan(kept).split("BatchScan")[-1]
    rows = [tuple(r) for r in kept.collect()]
    assert len(rows) == 6 and set(rows) <= everything and {r[2] for r in rows} == {"d4"}
    assert spark.table(weather).limit(100).count() == 40


# -- differential: random aggregations over a table of several overlapping parts -------------

_AGGREGATES = [
    "count(*)",
    "count(temp)",
    "count(device)",
    "sum(rain)",
    "sum(temp)",
    "avg(temp)",
    "avg(rain)",
    "min(temp)",
    "max(rain)",
    "min(time)",
    "max(time)",
    "max_by(temp, time)",
    "min_by(rain, time)",
]
_GROUPS = ["", "city", "device", "city, device"]
_BASE = dt.datetime(2024, 1, 1)


@pytest.fixture(scope="module")
def parts(spark: SparkSession, ts: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """``<ts>.db.parts``, written in three commits whose devices overlap in time, and its
    Parquet copy ``pq_parts``."""
    spark.sql(
        f"CREATE TABLE {ts}.db.parts ({WEATHER_COLUMNS}) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city,device')"
    )
    for commit, start in enumerate((0, 17, 41)):
        # A second of offset per commit: no two rows of a device share a time (a max_by
        # tie is Spark's own arbitrary choice).
        rows = weather_rows(spark, start, 30).selectExpr(
            f"time + INTERVAL {commit} SECOND AS time", "city", "device", "temp", "rain"
        )
        rows.writeTo(f"{ts}.db.parts").append()
    parquet = str(tmp_path_factory.mktemp("parquet") / "parts")
    spark.table(f"{ts}.db.parts").write.parquet(parquet)
    spark.read.parquet(parquet).createOrReplaceTempView("pq_parts")
    return f"{ts}.db.parts"


@st.composite
def _queries(draw: st.DrawFn) -> str:
    aggregates = draw(st.lists(st.sampled_from(_AGGREGATES), min_size=1, max_size=4, unique=True))
    group = draw(st.sampled_from(_GROUPS))
    conditions = []
    lo, hi = sorted(draw(st.lists(st.integers(-3, 75), min_size=2, max_size=2)))
    if draw(st.booleans()):
        conditions.append(f"time >= TIMESTAMP '{_BASE + dt.timedelta(hours=lo, minutes=30)}'")
    if draw(st.booleans()):
        conditions.append(f"time < TIMESTAMP '{_BASE + dt.timedelta(hours=hi)}'")
    conditions += draw(
        st.lists(
            st.sampled_from(
                [
                    "city = 'bj'",
                    "device IN ('d2', 'd3')",
                    "temp > 14",
                    "rain = 1",
                    "temp IS NULL",
                    "upper(city) = 'SH'",
                ]
            ),
            max_size=2,
            unique=True,
        )
    )
    where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    columns = ", ".join([*filter(None, [group]), *aggregates])
    grouped = f" GROUP BY {group}" if group else ""
    return f"SELECT {columns} FROM {{t}}{where}{grouped}"


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(query=_queries())
def test_random_aggregations_match_parquet(spark: SparkSession, parts: str, query: str) -> None:
    from pyspark.testing import assertDataFrameEqual

    assertDataFrameEqual(spark.sql(query.format(t=parts)), spark.sql(query.format(t="pq_parts")))


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(n=st.integers(0, 100), device=st.sampled_from(["d1", "d3"]))
def test_random_limits_return_the_tables_rows(
    spark: SparkSession, parts: str, n: int, device: str
) -> None:
    query = f"SELECT * FROM {{t}} WHERE device = '{device}'"
    everything = {tuple(r) for r in spark.sql(query.format(t="pq_parts")).collect()}
    rows = [tuple(r) for r in spark.sql(f"{query} LIMIT {n}".format(t=parts)).collect()]
    assert len(rows) == min(n, len(everything)) and set(rows) <= everything


def test_an_integer_avg_past_bigint_sums_is_sparks_own(spark: SparkSession, ts: str) -> None:
    """Spark splits an avg it cannot push whole into sum/count: over BIGINT values whose sum
    leaves BIGINT, that sum would fail where the avg (added as doubles) does not."""
    from pyspark.testing import assertDataFrameEqual

    spark.sql(
        f"CREATE TABLE {ts}.db.big (time TIMESTAMP, device STRING, v BIGINT) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'device')"
    )
    base = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    rows = [(base + dt.timedelta(hours=i), f"d{i % 2}", 2**60 + i) for i in range(10)]
    frame = spark.createDataFrame(rows, "time TIMESTAMP, device STRING, v BIGINT")
    frame.writeTo(f"{ts}.db.big").append()
    frame.createOrReplaceTempView("big_oracle")
    for query in (
        "SELECT avg(v), count(*) FROM {t}",
        "SELECT device, avg(v) FROM {t} WHERE v > 0 GROUP BY device",
    ):
        assertDataFrameEqual(
            spark.sql(query.format(t=f"{ts}.db.big")), spark.sql(query.format(t="big_oracle"))
        )


@pytest.fixture(scope="module")
def raw_times(spark: SparkSession, ts: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """``<ts>.db.raw``, a table whose ``time`` is a BIGINT (milliseconds, some before the
    epoch), in two commits, and its Parquet copy ``pq_raw``."""
    spark.sql(
        f"CREATE TABLE {ts}.db.raw (time BIGINT, city STRING, device STRING, temp DOUBLE) "
        "USING tsfile TBLPROPERTIES ('tagColumns' = 'city,device')"
    )
    columns = "time BIGINT, city STRING, device STRING, temp DOUBLE"
    for commit in range(2):
        rows = [
            (i * 1_234_567 + commit, ["bj", "sh"][i % 2], f"d{i % 3}", None if i % 5 else i / 4)
            for i in range(-30, 50)
        ]
        spark.createDataFrame(rows, columns).writeTo(f"{ts}.db.raw").append()
    parquet = str(tmp_path_factory.mktemp("parquet") / "raw")
    spark.table(f"{ts}.db.raw").write.parquet(parquet)
    spark.read.parquet(parquet).createOrReplaceTempView("pq_raw")
    return f"{ts}.db.raw"


BUCKETED = [
    "SELECT city, floor(time / 3600000) * 3600000 AS b, count(*), sum(temp), max(temp), "
    "avg(temp) FROM {t} GROUP BY city, floor(time / 3600000) * 3600000",
    "SELECT floor(time / 7000000) * 7000000, count(temp), min(temp), max(time) FROM {t} "
    "WHERE time >= -5000000 AND device <> 'd1' GROUP BY 1",
]
BUCKETS_LEFT_TO_SPARK = [
    # The bucket before a TAG: Spark's group order is not the partial rows'.
    "SELECT floor(time / 3600000) * 3600000 AS b, city, count(*) FROM {t} GROUP BY 1, 2",
    "SELECT floor(time / 1000) * 2000 AS b, count(*) FROM {t} GROUP BY 1",  # not a bucket
]


@pytest.mark.parametrize("query", BUCKETED)
def test_floor_buckets_of_a_bigint_time_are_pre_aggregated(
    spark: SparkSession, raw_times: str, query: str
) -> None:
    from pyspark.testing import assertDataFrameEqual

    df = spark.sql(query.format(t=raw_times))
    assert "pre-aggregated by" in _plan(df) and "floor(time / " in _plan(df)
    assertDataFrameEqual(df, spark.sql(query.format(t="pq_raw")))


@pytest.mark.parametrize("query", BUCKETS_LEFT_TO_SPARK)
def test_other_time_groupings_are_sparks(spark: SparkSession, raw_times: str, query: str) -> None:
    from pyspark.testing import assertDataFrameEqual

    df = spark.sql(query.format(t=raw_times))
    assert "pre-aggregated" not in _plan(df)
    assertDataFrameEqual(df, spark.sql(query.format(t="pq_raw")))
