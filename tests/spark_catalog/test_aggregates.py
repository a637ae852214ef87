"""Aggregates and limits Spark pushes into a catalog table's scan, and the max_by/min_by it
cannot push that the plugin's optimizer rule finds: answered from statistics without a scan
job, or pre-aggregated by the scan, exactly as Spark computes them over a Parquet copy in the
same session."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.jobs import spark_jobs
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
    # count(*) over a scan pruned to no column at all.
    "SELECT count(*) FROM (SELECT * FROM {t} LIMIT 7)",
    "SELECT 1 AS one FROM {t} WHERE city = 'sh'",
]


def _plan(df: DataFrame) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


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
        assert spark_jobs(spark, spark.sql(query.format(t=weather))) == 0, query
    # The oracle of the check: a query the scan pre-aggregates runs jobs.
    assert spark_jobs(spark, spark.sql(f"SELECT count(*) FROM {weather} WHERE temp > 12")) > 0


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


_CONDITIONS = [
    "city = 'bj'",
    "device IN ('d2', 'd3')",
    "temp > 14",
    "rain = 1",
    "temp IS NULL",
    "upper(city) = 'SH'",
]


@st.composite
def _queries(draw: st.DrawFn, functions: list[str], predicates: list[str]) -> str:
    """A random aggregation of ``functions``, grouped by TAGs or not, under time bounds and
    some of ``predicates``."""
    aggregates = draw(st.lists(st.sampled_from(functions), min_size=1, max_size=4, unique=True))
    group = draw(st.sampled_from(_GROUPS))
    conditions = []
    lo, hi = sorted(draw(st.lists(st.integers(-3, 75), min_size=2, max_size=2)))
    if draw(st.booleans()):
        conditions.append(f"time >= TIMESTAMP '{_BASE + dt.timedelta(hours=lo, minutes=30)}'")
    if draw(st.booleans()):
        conditions.append(f"time < TIMESTAMP '{_BASE + dt.timedelta(hours=hi)}'")
    conditions += draw(st.lists(st.sampled_from(predicates), max_size=2, unique=True))
    where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    columns = ", ".join([*filter(None, [group]), *aggregates])
    grouped = f" GROUP BY {group}" if group else ""
    return f"SELECT {columns} FROM {{t}}{where}{grouped}"


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@pytest.mark.slow
@given(query=_queries(_AGGREGATES, _CONDITIONS))
def test_random_aggregations_match_parquet(spark: SparkSession, parts: str, query: str) -> None:
    from pyspark.testing import assertDataFrameEqual

    assertDataFrameEqual(spark.sql(query.format(t=parts)), spark.sql(query.format(t="pq_parts")))


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@pytest.mark.slow
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


# -- max_by/min_by by time: never offered to the scan, answered by the plugin's optimizer rule --

BY_TIME = [
    # bench Q8's shape; d3's temp at its last time is NULL, d2's rain too
    "SELECT device, max_by(temp, time) AS last, max(time) AS at FROM {t} GROUP BY device",
    "SELECT device, max_by(rain, time), min_by(temp, time), min_by(rain, time) FROM {t} "
    "GROUP BY device",
    "SELECT city, max_by(temp, time), min_by(rain, time), count(*) FROM {t} GROUP BY city",
    "SELECT max_by(temp, time), min_by(temp, time), count(*), avg(rain), max(time) FROM {t}",
    # time bounds inside the devices' ranges: the driver reads the rows they cut
    "SELECT device, min_by(rain, time), sum(rain), min(temp) FROM {t} "
    "WHERE time >= TIMESTAMP '2024-01-01 10:30:00' AND time < TIMESTAMP '2024-01-02 01:00:00' "
    "AND city = 'sh' GROUP BY device",
    "SELECT device, max_by(temp, time) FROM {t} WHERE device IN ('d1', 'd3') GROUP BY device",
    "SELECT city, device, max_by(rain, time) + 1 AS next, max(time) FROM {t} "
    "GROUP BY city, device HAVING max(time) > TIMESTAMP '2024-01-02 10:00:00'",
    "SELECT device, max_by(temp, time) FROM {t} WHERE city = 'nowhere' GROUP BY device",
    "SELECT max_by(temp, time), count(*) FROM {t} WHERE city = 'nowhere'",  # one row of NULL
]
BY_TIME_LEFT_TO_SPARK = [
    "SELECT device, max_by(temp, time) FROM {t} WHERE rain = 1 GROUP BY device",  # a FIELD
    "SELECT city, max_by(temp, time) FROM {t} WHERE upper(device) = 'D2' GROUP BY city",
    "SELECT city, max_by(temp, time + INTERVAL 1 HOUR) FROM {t} GROUP BY city",  # not time
    "SELECT city, max_by(device, time), min_by(time, time) FROM {t} GROUP BY city",  # no FIELD
    "SELECT rain, max_by(temp, time) FROM {t} GROUP BY rain",  # a FIELD in GROUP BY
    "SELECT max_by(temp, time) FROM (SELECT * FROM {t} LIMIT 30)",
]


@pytest.mark.parametrize("query", BY_TIME)
def test_max_by_and_min_by_of_time_are_answered_from_statistics(
    spark: SparkSession, weather: str, query: str
) -> None:
    from pyspark.testing import assertDataFrameEqual

    df = spark.sql(query.format(t=weather))
    assert "BatchScan" not in _plan(df)
    assert spark_jobs(spark, df) == 0
    assertDataFrameEqual(df, spark.sql(query.format(t="pq_weather")))


def test_max_by_is_the_value_at_the_last_time_even_when_null(
    spark: SparkSession, weather: str
) -> None:
    query = "SELECT device, max_by(temp, time) AS last, min_by(rain, time) AS first FROM {t} "
    query += "GROUP BY device"
    got = {r.device: (r.last, r.first) for r in spark.sql(query.format(t=weather)).collect()}
    want = {r.device: (r.last, r.first) for r in spark.sql(query.format(t="pq_weather")).collect()}
    assert got == want
    # The oracle holds the NULLs that make the check: a value at an earlier time would differ.
    assert want["d3"][0] is None and want["d3"][1] is None


@pytest.mark.parametrize("query", BY_TIME_LEFT_TO_SPARK)
def test_by_time_aggregates_statistics_cannot_answer_are_sparks(
    spark: SparkSession, weather: str, query: str
) -> None:
    from pyspark.testing import assertDataFrameEqual

    df = spark.sql(query.format(t=weather))
    assert "BatchScan" in _plan(df)
    if "LIMIT" in query:  # which rows the limit keeps is Spark's choice
        assert df.collect()[0][0] in {r.temp for r in spark.table(weather).collect()}
    else:
        assertDataFrameEqual(df, spark.sql(query.format(t="pq_weather")))


def test_a_max_by_tie_across_devices_is_sparks(spark: SparkSession, ts: str) -> None:
    """Two devices of a city at the same last time: Spark keeps whichever row it meets last,
    which statistics cannot tell; each device alone is still answered."""
    table = f"{ts}.db.ties"
    spark.sql(
        f"CREATE TABLE {table} (time TIMESTAMP, city STRING, device STRING, v DOUBLE) "
        "USING tsfile TBLPROPERTIES ('tagColumns' = 'city,device')"
    )
    base = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    rows = [
        (base + dt.timedelta(hours=h), "bj", device, float(h + 10 * i))
        for i, device in enumerate(("d1", "d2"))
        for h in range(3)
    ]
    spark.createDataFrame(rows, "time TIMESTAMP, city STRING, device STRING, v DOUBLE").writeTo(
        table
    ).append()
    tied = spark.sql(f"SELECT city, max_by(v, time) FROM {table} GROUP BY city")
    assert "BatchScan" in _plan(tied)
    assert [tuple(r) for r in tied.collect()] in ([("bj", 2.0)], [("bj", 12.0)])
    alone = spark.sql(f"SELECT device, max_by(v, time), min_by(v, time) FROM {table} GROUP BY 1")
    assert spark_jobs(spark, alone) == 0
    assert sorted(map(tuple, alone.collect())) == [("d1", 2.0, 0.0), ("d2", 12.0, 10.0)]


def test_max_by_over_a_last_table_sees_the_replacing_rows(
    spark: SparkSession, ts: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A ``key.duplicates = last`` table whose second commit re-sends the last times of every
    device with new values: statistics of the first part alone would give the old ones."""
    table = f"{ts}.db.replaced"
    spark.sql(
        f"CREATE TABLE {table} ({WEATHER_COLUMNS}) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city,device', 'key.duplicates' = 'last')"
    )
    first = weather_rows(spark, 0, 40)
    second = weather_rows(spark, 30, 8).selectExpr(
        "time", "city", "device", "temp + 100 AS temp", "CAST(NULL AS INT) AS rain"
    )
    first.writeTo(table).append()
    second.writeTo(table).append()
    merged = first.join(second.select("time", "device"), ["time", "device"], "left_anti")
    parquet = str(tmp_path_factory.mktemp("parquet") / "replaced")
    merged.select(*first.columns).unionByName(second).write.parquet(parquet)
    spark.read.parquet(parquet).createOrReplaceTempView("pq_replaced")
    from pyspark.testing import assertDataFrameEqual

    for query in (
        "SELECT device, max_by(temp, time) AS last, max(time) AS at FROM {t} GROUP BY device",
        "SELECT city, max_by(rain, time), min_by(temp, time), count(*) FROM {t} GROUP BY city",
        "SELECT max_by(temp, time), max_by(rain, time) FROM {t} "
        "WHERE time < TIMESTAMP '2024-01-02 13:30:00'",
    ):
        df = spark.sql(query.format(t=table))
        assert spark_jobs(spark, df) == 0, query
        assertDataFrameEqual(df, spark.sql(query.format(t="pq_replaced")))


BY_TIME_RAW = [
    "SELECT device, max_by(temp, time), min_by(temp, time), max(time), min(time) FROM {t} "
    "GROUP BY device",
    "SELECT max_by(temp, time), min_by(temp, time) FROM {t} WHERE time >= -5000000 "
    "AND time < 40000000 AND city = 'bj'",
]


@pytest.mark.parametrize("query", BY_TIME_RAW)
def test_max_by_over_a_bigint_time(spark: SparkSession, raw_times: str, query: str) -> None:
    from pyspark.testing import assertDataFrameEqual

    df = spark.sql(query.format(t=raw_times))
    assert spark_jobs(spark, df) == 0
    assertDataFrameEqual(df, spark.sql(query.format(t="pq_raw")))


def test_max_by_of_nan_and_infinity(spark: SparkSession, ts: str) -> None:
    """Values JSON has no literal for travel from the delegate as Spark's own doubles."""
    table = f"{ts}.db.specials"
    spark.sql(
        f"CREATE TABLE {table} (time TIMESTAMP, device STRING, v DOUBLE, f FLOAT) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'device')"
    )
    base = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    specials = [math.nan, math.inf, -math.inf, -0.0]
    rows = [
        (base + dt.timedelta(hours=h), f"d{i}", v, v)
        for i, special in enumerate(specials)
        for h, v in enumerate((1.5, special) if i % 2 else (special, 1.5))
    ]
    frame = spark.createDataFrame(rows, "time TIMESTAMP, device STRING, v DOUBLE, f FLOAT")
    frame.writeTo(table).append()
    frame.createOrReplaceTempView("specials_oracle")
    query = "SELECT device, max_by(v, time), min_by(v, time), max_by(f, time), max(v) FROM {t} "
    query += "GROUP BY device"
    got = spark.sql(query.format(t=table))
    assert spark_jobs(spark, got) == 0
    want = spark.sql(query.format(t="specials_oracle"))
    assert sorted(map(repr, got.collect())) == sorted(map(repr, want.collect()))


# -- casts of a BOOLEAN: sum(CAST(b AS INT)) and the like, as Catalog.sql answers them --------

_FLAGS_COLUMNS = "time TIMESTAMP, city STRING, device STRING, ok BOOLEAN, temp DOUBLE, note STRING"
_FLAG_DEVICES = [("bj", "d1"), ("bj", "d2"), ("sh", "d3"), ("sh", "d4")]


def _flag_rows(commit: int, start: int, count: int = 30) -> list[tuple[object, ...]]:
    """Rows an hour apart of four devices; a later commit re-sends some keys (time, device)
    with other values. ``d4``'s ``ok`` is always NULL."""
    base = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    rows: list[tuple[object, ...]] = []
    for i in range(start, start + count):
        city, device = _FLAG_DEVICES[i % 4]
        ok = None if device == "d4" or (i + commit) % 7 == 2 else (i * (commit + 2)) % 3 == 0
        temp = None if i % 6 == 1 else round(10 + ((i + commit) % 11) * 1.5, 1)
        note = None if i % 5 == 3 else f"n{(i + commit) % 3}"
        rows.append((base + dt.timedelta(hours=i), city, device, ok, temp, note))
    return rows


@pytest.fixture(scope="module")
def flags(spark: SparkSession, ts: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """``<ts>.db.flags`` (``key.duplicates = last``, the default) written in three commits
    whose keys overlap, so later rows replace earlier ones; and ``pq_flags``, the Parquet
    copy of the rows that remain (the last write of each key), built here, not read back."""
    spark.sql(
        f"CREATE TABLE {ts}.db.flags ({_FLAGS_COLUMNS}) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city,device', 'key.duplicates' = 'last')"
    )
    latest: dict[tuple[object, ...], tuple[object, ...]] = {}
    for commit, start in enumerate((0, 17, 41)):
        rows = _flag_rows(commit, start)
        spark.createDataFrame(rows, _FLAGS_COLUMNS).writeTo(f"{ts}.db.flags").append()
        latest.update(((row[0], row[2]), row) for row in rows)
    parquet = str(tmp_path_factory.mktemp("parquet") / "flags")
    spark.createDataFrame(list(latest.values()), _FLAGS_COLUMNS).write.parquet(parquet)
    spark.read.parquet(parquet).createOrReplaceTempView("pq_flags")
    return f"{ts}.db.flags"


# Bench Q5's shape: a time window over all devices, a boolean sum among plain aggregates.
Q5_SHAPE = (
    "SELECT count(*) AS n, avg(temp) AS avg, sum(CAST(ok AS INT)) AS n_true, "
    "count(note) AS n_str FROM {t} WHERE time >= TIMESTAMP '2024-01-01 10:30:00' "
    "AND time < TIMESTAMP '2024-01-02 20:00:00'"
)
CASTS_ANSWERED = [
    Q5_SHAPE,
    "SELECT city, device, sum(CAST(ok AS INT)), avg(CAST(ok AS INT)), count(CAST(ok AS BIGINT)) "
    "FROM {t} GROUP BY city, device",
    "SELECT min(CAST(ok AS INT)), max(CAST(ok AS BIGINT)), max(CAST(ok AS TINYINT)), "
    "min(CAST(ok AS SMALLINT)), count(*) FROM {t} WHERE city = 'bj'",
    "SELECT sum(CAST(ok AS INT)), avg(CAST(ok AS INT)), max(CAST(ok AS INT)) FROM {t} "
    "WHERE device = 'd4'",  # only NULLs: NULL, as Spark's
    "SELECT device, sum(CAST(ok AS BIGINT)), avg(CAST(ok AS BIGINT)) FROM {t} "
    "WHERE time < TIMESTAMP '2024-01-02 03:00:00' AND device IN ('d1', 'd4') GROUP BY device",
    "SELECT sum(CAST(ok AS INT)), count(*) FROM {t} WHERE city = 'nowhere'",
]
CASTS_PRE_AGGREGATED = [
    "SELECT city, sum(CAST(ok AS INT)), count(CAST(ok AS INT)), min(CAST(ok AS INT)), "
    "max(CAST(ok AS BIGINT)) FROM {t} WHERE temp > 12 GROUP BY city",
    "SELECT sum(CAST(ok AS INT)), avg(CAST(ok AS INT)), count(*) FROM {t} WHERE note = 'n1'",
    "SELECT device, sum(CAST(ok AS INT)) FROM {t} WHERE temp > 12 AND device IN ('d3', 'd4') "
    "GROUP BY device",  # d4: NULL
    "SELECT device, sum(CAST(ok AS INT)) FROM {t} WHERE temp > 1000 GROUP BY device",
    "SELECT sum(CAST(ok AS SMALLINT)), max(CAST(ok AS TINYINT)) FROM {t} WHERE temp > 1000",
]
CASTS_LEFT_TO_SPARK = [
    "SELECT sum(CAST(temp AS BIGINT)) FROM {t}",  # not a BOOLEAN: the cast may round
    "SELECT sum(CAST(ok AS DOUBLE)), count(*) FROM {t}",  # not an integral type
    "SELECT sum(CAST(ok AS INT) + 1) FROM {t}",
]


@pytest.mark.parametrize("query", CASTS_ANSWERED)
def test_casts_of_a_boolean_are_answered_from_statistics(
    spark: SparkSession, flags: str, query: str
) -> None:
    from pyspark.testing import assertDataFrameEqual

    df = spark.sql(query.format(t=flags))
    assert "LocalTableScan" in _plan(df) and "BatchScan" not in _plan(df)
    want = spark.sql(query.format(t="pq_flags"))
    assert df.schema == want.schema  # sum(CAST(b AS INT)) a BIGINT, min(CAST(b AS TINYINT)) ...
    assertDataFrameEqual(df, want)


def test_bench_q5_shape_runs_no_spark_job(spark: SparkSession, flags: str) -> None:
    assert spark_jobs(spark, spark.sql(Q5_SHAPE.format(t=flags))) == 0
    # The oracle of the check: with a FIELD predicate the scan pre-aggregates, in a job.
    assert spark_jobs(spark, spark.sql(f"{Q5_SHAPE} AND temp > 12".format(t=flags))) > 0


@pytest.mark.parametrize("query", CASTS_PRE_AGGREGATED)
def test_casts_of_a_boolean_are_pre_aggregated_by_the_scan(
    spark: SparkSession, flags: str, query: str
) -> None:
    from pyspark.testing import assertDataFrameEqual

    df = spark.sql(query.format(t=flags))
    assert "pre-aggregated" in _plan(df)
    want = spark.sql(query.format(t="pq_flags"))
    assert df.schema == want.schema
    assertDataFrameEqual(df, want)


@pytest.mark.parametrize("query", CASTS_LEFT_TO_SPARK)
def test_other_casts_are_sparks(spark: SparkSession, flags: str, query: str) -> None:
    from pyspark.testing import assertDataFrameEqual

    df = spark.sql(query.format(t=flags))
    assert "pre-aggregated" not in _plan(df) and "LocalTableScan" not in _plan(df)
    assertDataFrameEqual(df, spark.sql(query.format(t="pq_flags")))


_CAST_AGGREGATES = [
    "count(*)",
    "count(note)",
    "avg(temp)",
    "sum(CAST(ok AS INT))",
    "sum(CAST(ok AS BIGINT))",
    "avg(CAST(ok AS INT))",
    "min(CAST(ok AS INT))",
    "max(CAST(ok AS TINYINT))",
    "count(CAST(ok AS INT))",
]
_FLAG_CONDITIONS = [
    "city = 'bj'",
    "device IN ('d2', 'd4')",
    "temp > 14",
    "ok",
    "ok IS NULL",
    "note = 'n2'",
    "upper(city) = 'SH'",
]


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@pytest.mark.slow
@given(query=_queries(_CAST_AGGREGATES, _FLAG_CONDITIONS))
def test_random_boolean_casts_match_parquet(spark: SparkSession, flags: str, query: str) -> None:
    from pyspark.testing import assertDataFrameEqual

    df = spark.sql(query.format(t=flags))
    want = spark.sql(query.format(t="pq_flags"))
    assert df.schema == want.schema
    assertDataFrameEqual(df, want)


# Every aggregate form Catalog.sql's statistics path answers (sql/stats_aggregates.py).
STATISTICS_FORMS = [
    "count(*)",
    "count(1)",
    "count(time)",
    "count(device)",
    "count(temp)",
    "count(ok)",
    "sum(temp)",
    "avg(temp)",
    "min(temp)",
    "max(note)",
    "max(ok)",
    "min(time)",
    "max(time)",
    "max_by(temp, time)",
    "min_by(note, time)",
    "count_if(ok)",
    "sum(CAST(ok AS INT))",
    "sum(CAST(ok AS BIGINT))",
    "sum(CAST(ok AS TINYINT))",
    "sum(CAST(ok AS SMALLINT))",
]
# Spark offers count_if to no scan in a form the plugin reads: Catalog.sql keeps its own path.
# (max_by/min_by are found by the plugin's optimizer rule, grouped by columns as here.)
REWRITTEN = {"count_if(ok)"}


@pytest.mark.parametrize("form", STATISTICS_FORMS)
def test_catalog_sql_answers_every_statistics_form_without_a_job(
    spark: SparkSession, flags: str, warehouse: Path, form: str
) -> None:
    """Through the plugin (``Catalog.sql`` hands the text to ``spark.sql``) where the plugin
    answers the form from statistics, else on ``Catalog.sql``'s rewriting path: never a
    Spark job either way, and only the forms the plugin cannot answer take that path."""
    from pyspark.testing import assertDataFrameEqual

    from tsfile_catalog import Catalog

    query = (
        f"SELECT city, {form} FROM {{t}} WHERE time >= TIMESTAMP '2024-01-01 10:30:00' "
        "AND device IN ('d1', 'd3', 'd4') GROUP BY city"
    )
    catalog = Catalog(spark, str(warehouse), register_views=False)
    got = catalog.sql(query.format(t="db.flags"))
    plugin = flags.split(".")[0]
    through_plugin = plugin in str(got._jdf.queryExecution().analyzed().toString())
    assert through_plugin == (form not in REWRITTEN)
    assert spark_jobs(spark, got) == 0
    assertDataFrameEqual(got, spark.sql(query.format(t="pq_flags")))
    # The plugin itself: no job exactly for the forms Catalog.sql sends it.
    assert (spark_jobs(spark, spark.sql(query.format(t=flags))) == 0) == through_plugin
