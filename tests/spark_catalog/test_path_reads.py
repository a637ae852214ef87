"""``spark.read.format("tsfile").load(path)`` with the plugin's jar and session extensions:
the plugin's scan of the table at the path (the extensions' PathReads rule), exactly as a
catalog table's, against a Parquet copy in the same session; and what keeps the source's own
scan. Each check that the plugin's scan ran has its oracle: the same read with
``spark.tsfile.pathReads.enabled=false`` (what a session without the jar gets)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings

from tests.jobs import spark_jobs
from tests.spark_catalog.conftest import WEATHER_COLUMNS, weather_rows
from tests.spark_catalog.test_aggregates import _AGGREGATES, _CONDITIONS, _queries
from tsfile_catalog import open_table, write_table

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

ENABLED = "spark.tsfile.pathReads.enabled"


@pytest.fixture(autouse=True)
def path_reads(spark: SparkSession) -> Iterator[None]:
    """The rule on (the shared test session turns it off, so the source's own tests read
    through the source)."""
    spark.conf.set(ENABLED, "true")
    yield
    spark.conf.set(ENABLED, "false")


def _count(spark: SparkSession, where: str) -> int:
    """Rows of the Parquet copy matching ``where`` (empty: all)."""
    return spark.sql(f"SELECT * FROM pq_path_parts {where and 'WHERE ' + where}").count()


def _scan_columns(plan: str) -> list[str]:
    """The columns the plan's BatchScan returns (Spark's names, without their ids)."""
    found = re.search(r"BatchScan \S+\[([^\]]*)\]", plan)
    assert found, plan
    return sorted(name.split("#")[0] for name in found.group(1).split(", "))


def _plan(df: DataFrame) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def _without_rule(spark: SparkSession, read: object) -> object:
    spark.conf.set(ENABLED, "false")
    try:
        return read() if callable(read) else read
    finally:
        spark.conf.set(ENABLED, "true")


@pytest.fixture(scope="module")
def parts(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path_factory: pytest.TempPathFactory
) -> str:
    """A table written in three commits whose devices overlap in time, its Parquet copy
    ``pq_path_parts``, and view ``path_parts`` over one ``load(path)``; the table's path."""
    spark.sql(
        f"CREATE TABLE {ts}.db.path_parts ({WEATHER_COLUMNS}) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city,device')"
    )
    for commit, start in enumerate((0, 17, 41)):
        rows = weather_rows(spark, start, 30).selectExpr(
            f"time + INTERVAL {commit} SECOND AS time", "city", "device", "temp", "rain"
        )
        rows.writeTo(f"{ts}.db.path_parts").append()
    path = str(warehouse / "db.db" / "path_parts")
    parquet = str(tmp_path_factory.mktemp("parquet") / "path_parts")
    spark.read.format("tsfile").load(path).write.parquet(parquet)
    spark.read.parquet(parquet).createOrReplaceTempView("pq_path_parts")
    # One DataFrame, queried below with ever different filters.
    spark.read.format("tsfile").load(path).createOrReplaceTempView("path_parts")
    return path


@pytest.mark.parametrize(
    "how", ["load(path)", "option('path')", "option('path') + option('table')"]
)
def test_a_path_read_is_the_plugins_scan(spark: SparkSession, parts: str, how: str) -> None:
    from pyspark.testing import assertDataFrameEqual

    reader = spark.read.format("tsfile")
    if how == "load(path)":
        df = reader.load(parts)
    else:
        reader = reader.option("path", parts)
        df = (reader.option("table", "path_parts") if "table" in how else reader).load()
    assert str(df.schema["time"].dataType) == "TimestampType()"
    query = df.where("city = 'bj' AND temp > 12").select("temp", "device")
    plan = _plan(query)
    # Columns pruned and the filters pushed into the plugin's scan: no Filter left.
    version = open_table(parts).version
    assert f"tsfile {parts} version {version}, where:" in plan and "Filter (" not in plan
    assert _scan_columns(plan) == ["device", "temp"]
    expected = spark.sql("SELECT temp, device FROM pq_path_parts WHERE city = 'bj' AND temp > 12")
    assertDataFrameEqual(query, expected)
    # The oracle: the source's own scan keeps Spark's Filter above it.
    assert "Filter (" in _without_rule(
        spark, lambda: _plan(spark.read.format("tsfile").load(parts).where("city = 'bj'"))
    )


def test_a_metadata_answer_runs_no_spark_job(spark: SparkSession, parts: str) -> None:
    from pyspark.testing import assertDataFrameEqual

    def query() -> DataFrame:
        df = spark.read.format("tsfile").load(parts)
        return df.where("city = 'sh'").groupBy("device").agg({"temp": "max", "*": "count"})

    answered = query()
    assert "LocalTableScan" in _plan(answered)
    assert spark_jobs(spark, answered) == 0
    assert spark.read.format("tsfile").load(parts).count() == _count(spark, "")
    assert spark_jobs(spark, spark.read.format("tsfile").load(parts).agg({"time": "max"})) == 0
    assertDataFrameEqual(
        answered,
        spark.sql(
            "SELECT device, max(temp), count(*) FROM pq_path_parts WHERE city = 'sh' "
            "GROUP BY device"
        ),
    )
    assert _without_rule(spark, lambda: spark_jobs(spark, query())) > 0


@pytest.fixture
def schema_refused(spark: SparkSession) -> Iterator[None]:
    """The session's ``tsfile`` source replaced by one whose ``schema()`` fails when Spark
    asks it (and reads as the source does otherwise, its reader checking the schema it is
    given against its own): a query that succeeds never asked a Python worker for it."""
    from pyspark.sql.datasource import DataSourceReader
    from pyspark.sql.types import StructType

    from tsfile_catalog.datasource.source import TsFileDataSource

    class NoSchema(TsFileDataSource):  # pickled by value: a class local to the fixture
        reading = False

        def reader(self, schema: StructType) -> DataSourceReader:
            self.reading = True
            return super().reader(schema)

        def schema(self) -> StructType:
            if not self.reading:
                raise RuntimeError("the source was asked for its schema")
            return super().schema()

    spark.dataSource.register(NoSchema)
    try:
        yield
    finally:
        spark.dataSource.register(TsFileDataSource)


def test_load_asks_no_python_worker_for_the_schema(
    spark: SparkSession, parts: str, schema_refused: None
) -> None:
    """Spark asks a Python source for its schema at ``load()`` in a Python worker it starts
    (a fifth of a selective query's time); the plugin's table has the schema already."""
    from pyspark.sql.datasource import CaseInsensitiveDict
    from pyspark.testing import assertDataFrameEqual

    from tsfile_catalog.datasource.source import TsFileDataSource

    df = spark.read.format("tsfile").load(parts)
    assert df.schema == TsFileDataSource(CaseInsensitiveDict({"path": parts})).schema()
    query = df.where("city = 'bj' AND temp > 12").select("time", "temp", "device")
    assertDataFrameEqual(
        query,
        spark.sql("SELECT time, temp, device FROM pq_path_parts WHERE city = 'bj' AND temp > 12"),
    )
    assert spark.read.format("tsfile").option("path", parts).load().count() == _count(spark, "")
    # The oracle: the source's own relation asks the registered source.
    with pytest.raises(Exception, match="asked for its schema"):
        _without_rule(spark, lambda: spark.read.format("tsfile").load(parts))


def test_limit_and_top_n_are_pushed(spark: SparkSession, parts: str) -> None:
    df = spark.read.format("tsfile").load(parts)
    assert "limit 3" in _plan(df.where("city = 'bj'").limit(3))
    latest = df.where("device = 'd3'").orderBy(df.time.desc()).limit(4)
    assert "latest 4 by time" in _plan(latest)
    expected = spark.sql(
        "SELECT * FROM pq_path_parts WHERE device = 'd3' ORDER BY time DESC LIMIT 4"
    ).collect()
    assert latest.collect() == expected


@pytest.fixture(scope="module")
def raw(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, str]:
    """A table whose ``time`` is a BIGINT of milliseconds (as the benchmark's), written in
    three commits whose devices overlap in time, and its Parquet copy ``pq_path_raw``: the
    table's catalog name and its path."""
    name = f"{ts}.db.path_raw"
    columns = "time BIGINT, city STRING, device STRING, temp DOUBLE"
    spark.sql(
        f"CREATE TABLE {name} ({columns}) USING tsfile TBLPROPERTIES ('tagColumns' = 'city,device')"
    )
    for commit, start in enumerate((0, 40, 90)):
        rows = [
            (
                i * 600_000 + commit,
                ["bj", "sh"][i % 4 // 2],
                f"d{i % 4}",
                None if i % 7 == 3 else i / 4,
            )
            for i in range(start, start + 70)
        ]
        spark.createDataFrame(rows, columns).writeTo(name).append()
    parquet = str(tmp_path_factory.mktemp("parquet") / "path_raw")
    spark.table(name).write.parquet(parquet)
    spark.read.parquet(parquet).createOrReplaceTempView("pq_path_raw")
    return name, str(warehouse / "db.db" / "path_raw")


# What the plugin's plan of each makes of it: answered from statistics, or the scan's part.
_LOCAL = "LocalTableScan"
_SHAPE_PLANS = {
    "Q7 hourly per device": "pre-aggregated by device, floor(time / 3600000) * 3600000",
    "Q9 latest of a device": "latest 10 by time, where: (`device` = 'd3')",
}


def _bench_shapes() -> dict[str, Callable[[DataFrame], DataFrame]]:
    """The benchmark's queries (bench/queries.py) as a user writes them on a DataFrame."""
    from pyspark.sql import functions as F

    def agg(where: str | None, *aggregates: str) -> Callable[[DataFrame], DataFrame]:
        return lambda df: (df.where(where) if where else df).agg(*map(F.expr, aggregates))

    hour = "floor(time / 3600000) * 3600000"
    window = "time >= 3600000 AND time < 50400000"
    return {
        "Q1 count": agg(None, "count(*) AS n"),
        "Q2 full scan": agg(None, "count(temp) AS n", "avg(temp) AS avg"),
        "Q3 one device, a time range": agg(
            f"device = 'd2' AND {window}", "count(*) AS n", "avg(temp) AS a", "max(time) AS t"
        ),
        "Q5 a time range": agg(window, "count(*) AS n", "avg(temp) AS a", "count(city) AS c"),
        "time range": agg(None, "min(time) AS lo", "max(time) AS hi"),
        "Q7 hourly per device": lambda df: (
            df.where(window)
            .groupBy(F.col("device"), F.expr(hour).alias("hour"))
            .agg(F.expr("avg(temp) AS a"), F.expr("count(*) AS n"))
        ),
        "Q8 last per device": lambda df: df.groupBy("device").agg(
            F.expr("max_by(temp, time) AS last"), F.expr("max(time) AS at")
        ),
        "Q9 latest of a device": lambda df: (
            df.where("device = 'd3'")
            .select("time", "device", "temp")
            .orderBy(F.desc("time"))
            .limit(10)
        ),
    }


def _normalized(plan: str) -> str:
    """``plan`` without what differs between two analyses of one query: expression ids and the
    scanned table's name."""
    plan = re.sub(r"#\d+L?|plan_id=\d+", "", plan)
    return re.sub(r"BatchScan \S+\[|tsfile \S+ version", "<scan>", plan)


@pytest.mark.parametrize("shape", list(_bench_shapes()))
def test_the_benchmark_queries_plan_as_on_the_catalog_table(
    spark: SparkSession, raw: tuple[str, str], shape: str
) -> None:
    """``load(path)`` of a table plans each benchmark query exactly as the table's catalog
    name does (statistics answers, pre-aggregation by time bucket, top-N), runs as many Spark
    jobs (none for an answer from statistics) and answers as Spark does on Parquet."""
    from pyspark.testing import assertDataFrameEqual

    name, path = raw
    query = _bench_shapes()[shape]
    by_path = query(spark.read.format("tsfile").load(path))
    by_name = query(spark.table(name))
    plan = _plan(by_path)
    assert _normalized(plan) == _normalized(_plan(by_name))
    assert _SHAPE_PLANS.get(shape, _LOCAL) in plan
    jobs = spark_jobs(spark, by_path)
    assert jobs == spark_jobs(spark, by_name)
    assert (jobs == 0) == (_LOCAL in plan)
    assertDataFrameEqual(by_path, query(spark.table("pq_path_raw")))


def test_pruned_columns_are_never_decoded(spark: SparkSession, tmp_path: Path) -> None:
    """Column ``at`` holds an instant past Spark's timestamps (year 20000): decoding it for
    Spark fails the query naming it, so a query that reads without it proves it was left
    out of the read."""
    path = str(tmp_path / "far")
    write_table(
        path,
        pa.table(
            {
                "time": pa.array([1_000, 2_000], pa.timestamp("ms")),
                "dev": ["a", "b"],
                "temp": [1.5, 2.5],
                "at": pa.array([600_000_000_000_000, 1_000], pa.timestamp("ms")),
            }
        ),
        table="far",
        tag_columns=["dev"],
    )
    df = spark.read.format("tsfile").load(path)
    assert sorted(r.temp for r in df.select("temp").collect()) == [1.5, 2.5]
    assert df.where("dev = 'b'").select("at").count() == 1
    with pytest.raises(Exception, match="'at'"):
        df.select("at").collect()
    # The oracle: the source's own scan decodes every column for Spark.
    with pytest.raises(Exception, match="'at'"):
        _without_rule(
            spark, lambda: spark.read.format("tsfile").load(path).select("temp").collect()
        )


def test_a_reused_dataframe_stays_exact_under_different_filters(
    spark: SparkSession, parts: str
) -> None:
    df = spark.read.format("tsfile").load(parts)
    assert df.where("city = 'bj'").count() == _count(spark, "city = 'bj'")
    assert df.count() == _count(spark, "")
    assert df.where("city = 'sh' AND temp > 12").count() == _count(
        spark, "city = 'sh' AND temp > 12"
    )
    both = spark.sql(
        "SELECT count(*) FROM (SELECT * FROM path_parts WHERE device = 'd1' "
        "UNION ALL SELECT * FROM path_parts WHERE device = 'd4')"
    ).collect()[0][0]
    assert (
        both
        == spark.sql("SELECT count(*) FROM pq_path_parts WHERE device IN ('d1', 'd4')").collect()[
            0
        ][0]
    )


@pytest.mark.parametrize(
    "options",
    [{}, {"timestampAs": "long"}, {"columns": "temp,time,city"}, {"versionAsOf": "1"}],
)
def test_the_schema_is_the_sources(
    spark: SparkSession, parts: str, options: dict[str, str]
) -> None:
    """The plugin's table, described before Spark asks the source, has the schema the
    source's own relation has (names, order, types, nullability, metadata)."""
    got = spark.read.format("tsfile").options(**options).load(parts)
    assert "version" in _plan(got)  # the plugin's scan
    source = _without_rule(
        spark, lambda: spark.read.format("tsfile").options(**options).load(parts)
    )
    assert got.schema.jsonValue() == source.schema.jsonValue()


def test_options_keep_their_meaning(spark: SparkSession, parts: str) -> None:
    first_version = open_table(parts).version - 2  # the first of the three appends
    first = spark.read.format("tsfile").option("versionAsOf", str(first_version)).load(parts)
    assert first.count() == 30
    assert f"version {first_version}" in _plan(first.where("city = 'bj'"))
    raw = spark.read.format("tsfile").option("timestampAs", "long").load(parts)
    assert str(raw.schema["time"].dataType) == "LongType()"
    start = int(dt.datetime(2024, 1, 1, 10, tzinfo=dt.timezone.utc).timestamp() * 1000)
    assert raw.where(f"time >= {start}").count() == _count(
        spark, "time >= TIMESTAMP '2024-01-01 10:00:00+00:00'"
    )
    bj = _count(spark, "city = 'bj'")
    narrow = spark.read.format("tsfile").option("columns", "time,city").load(parts)
    assert narrow.columns == ["time", "city"] and narrow.where("city = 'bj'").count() == bj
    # The source's own scan plans these options itself.
    where = spark.read.format("tsfile").option("where", "city = 'bj'").load(parts)
    assert where.count() == bj and "version" not in _plan(where)
    with pytest.raises(Exception, match="unknown read option 'nonsense'"):
        spark.read.format("tsfile").option("nonsense", "1").load(parts)


@pytest.mark.parametrize(
    ("options", "where"),
    [
        ({"versionAsOf": "999"}, None),
        ({"columns": "time,nope"}, None),
        ({"timestampAs": "nonsense"}, None),
        ({}, "nowhere"),
    ],
)
def test_a_read_the_source_refuses_fails_load_with_its_error(
    spark: SparkSession, parts: str, tmp_path: Path, options: dict[str, str], where: str | None
) -> None:
    """The rule asks before Spark does: what the source refuses, ``load()`` still refuses with
    the source's own one-line error, as without the rule."""

    def load() -> object:
        path = str(tmp_path / where) if where else parts
        return spark.read.format("tsfile").options(**options).load(path)

    errors = []
    for read in (load, lambda: _without_rule(spark, load)):
        with pytest.raises(Exception, match="tsfile_catalog.exceptions") as refused:
            read()
        errors.append(str(refused.value).splitlines()[0])
    assert errors[0] == errors[1]


def test_plain_files_keep_the_source_scan(spark: SparkSession, tmp_path: Path) -> None:
    write_table(
        str(tmp_path / "t"),
        pa.table({"time": pa.array([1, 2], pa.int64()), "dev": ["a", "b"], "v": [1.0, 2.0]}),
        table="t",
        tag_columns=["dev"],
    )
    plain = tmp_path / "plain"
    plain.mkdir()
    for part in (tmp_path / "t").glob("*.tsfile"):
        part.rename(plain / part.name)
    df = spark.read.format("tsfile").load(str(plain))
    assert df.where("dev = 'a'").count() == 1 and "version" not in _plan(df)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(query=_queries(_AGGREGATES, _CONDITIONS))
def test_random_aggregations_over_one_loaded_frame_match_parquet(
    spark: SparkSession, parts: str, query: str
) -> None:
    from pyspark.testing import assertDataFrameEqual

    assertDataFrameEqual(
        spark.sql(query.format(t="path_parts")), spark.sql(query.format(t="pq_path_parts"))
    )


def test_a_write_into_a_view_over_a_path_read_appends_to_the_table(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A temporary view over ``load(path)`` takes writes as the source's relation did: the
    read's options are the write's."""
    path = str(tmp_path / "w")
    first = pa.table({"time": pa.array([1, 2], pa.int64()), "dev": ["a", "b"], "v": [1.0, 2.0]})
    write_table(path, first, table="w", tag_columns=["dev"])
    spark.read.format("tsfile").load(path).createOrReplaceTempView("path_w")
    spark.sql("INSERT INTO path_w VALUES (3, 'c', 3.0)")
    assert sorted(open_table(path).scan().to_arrow().column("dev").to_pylist()) == ["a", "b", "c"]


def test_a_given_schema_keeps_the_source_scan(spark: SparkSession, parts: str) -> None:
    """A schema the user gives is a projection the source checks itself (at planning)."""
    df = spark.read.format("tsfile").schema("time timestamp, city string").load(parts)
    assert df.columns == ["time", "city"] and "version" not in _plan(df)
    assert df.where("city = 'bj'").count() == _count(spark, "city = 'bj'")
