"""Aggregate queries pre-aggregated inside the scan equal Spark's own evaluation.

Each table is also loaded into a plain Spark view (``createDataFrame`` of the same rows), and
the original query over that view is the oracle. Sums and averages of DOUBLE values are
compared with a relative tolerance: Spark's own result for them depends on the order rows
are added in (partitions, shuffles), so no exact answer exists; every other value (counts,
integer sums, min/max, min_by/max_by, buckets, NULL and NaN) must be identical, as must the
column names and types.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tsfile_catalog.sql.write_distribution import CLUSTERED_WRITES

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from tsfile_catalog import Catalog

pytestmark = pytest.mark.spark

_ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "Australia/Lord_Howe"]
# Around the 2024 DST changes of the zones above, so buckets straddle gaps and overlaps.
_ANCHORS_MS = [
    int(dt.datetime(2024, 3, 10, 5, 0, tzinfo=dt.timezone.utc).timestamp() * 1000),
    int(dt.datetime(2024, 3, 31, 0, 0, tzinfo=dt.timezone.utc).timestamp() * 1000),
    int(dt.datetime(2024, 4, 6, 14, 0, tzinfo=dt.timezone.utc).timestamp() * 1000),
    int(dt.datetime(2024, 11, 3, 5, 0, tzinfo=dt.timezone.utc).timestamp() * 1000),
]
_SCHEMA = "time {time}, city string, dev string, v double, n int, s string"
_TOLERANT = ("sum(v)", "avg(v)")


@pytest.fixture(scope="module")
def catalog(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Catalog]:
    from tsfile_catalog import Catalog

    zone = spark.conf.get("spark.sql.session.timeZone")
    # small_scan_rows=0: these tables are tiny, and a small scan is read in the driver
    # instead of being pre-aggregated in the data source (which is what is tested here).
    yield Catalog(
        spark, str(tmp_path_factory.mktemp("wh")), register_views=False, small_scan_rows=0
    )
    spark.conf.set("spark.sql.session.timeZone", str(zone))


_counter = iter(range(1_000_000))


def _load(
    catalog: Catalog, spark: SparkSession, parts: list[list[tuple[Any, ...]]], form: str
) -> str:
    """A catalog table holding ``parts`` (one INSERT each), and the same rows as the plain
    Spark view ``<name>_oracle``; returns the table name."""
    name = f"t{next(_counter)}"
    time_type = "timestamp" if form == "timestamp" else "bigint"
    # rowsPerPartition 5: several partitions, so Spark merges partials from several tasks.
    catalog.sql(
        f"CREATE TABLE {name} ({_SCHEMA.format(time=time_type)}) USING tsfile "
        f"OPTIONS (tagColumns 'city,dev', timestampAs '{form}', rowsPerPartition '5')"
    )
    schema = _SCHEMA.format(time=time_type)
    everything = []
    for rows in parts:
        converted = [(_time(r[0], form), *r[1:]) for r in rows]
        everything.extend(converted)
        spark.createDataFrame(converted, schema).createOrReplaceTempView("partial_source")
        catalog.sql(f"INSERT INTO {name} SELECT * FROM partial_source")
    spark.createDataFrame(everything, schema).createOrReplaceTempView(f"{name}_oracle")
    return name


def _time(ms: int, form: str) -> Any:
    if form == "long":
        return ms
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc)


def _pre_aggregated(df: DataFrame) -> bool:
    return "__tsfc_p" in df._jdf.queryExecution().analyzed().toString()


def _from_metadata(df: DataFrame) -> bool:
    return "tsfile" not in df._jdf.queryExecution().executedPlan().toString()


def _same(query: str, catalog: Catalog, spark: SparkSession, name: str) -> None:
    got = catalog.sql(query.format(t=name))
    # A count(*) the manifest answers exactly never reaches the scan.
    assert _pre_aggregated(got) or _from_metadata(got), query
    _compare(got, spark.sql(query.format(t=f"{name}_oracle")), query)


def _compare(got: DataFrame, want: DataFrame, query: str) -> None:
    assert [(f.name, f.dataType) for f in got.schema] == [
        (f.name, f.dataType) for f in want.schema
    ], query
    tolerant = [f.name in _TOLERANT for f in want.schema]
    got_rows, want_rows = _sorted(got.collect()), _sorted(want.collect())
    assert len(got_rows) == len(want_rows), query
    for g, w in zip(got_rows, want_rows, strict=True):
        for a, b, loose in zip(g, w, tolerant, strict=True):
            assert _equal(a, b, loose), (query, g, w)


def _sorted(rows: list[Any]) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in rows), key=lambda r: repr([_key(v) for v in r]))


def _key(value: Any) -> Any:
    # Sort by the exact columns; a float sum may differ in its last bits.
    return round(value, 6) if isinstance(value, float) and math.isfinite(value) else value


def _equal(a: Any, b: Any, loose: bool) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) if loose else a == b
    return bool(a == b)


_FIXED = [
    [
        (_ANCHORS_MS[0] + 0, "a", "x", 1.5, 1, "q"),
        (_ANCHORS_MS[0] + 3_600_000, "a", "x", None, None, None),
        (_ANCHORS_MS[0] + 7_000_000, "a", "y", float("nan"), 3, "b"),
        (_ANCHORS_MS[0] + 9_000_000, "b", "x", -2.0, -4, "z"),
    ],
    [
        (_ANCHORS_MS[0] + 1_000, "a", "x", 2.5, 5, "c"),
        (_ANCHORS_MS[0] + 90_000_000, "b", "y", 0.25, 7, None),
    ],
]


def test_hourly_average_per_device_and_friends(catalog: Catalog, spark: SparkSession) -> None:
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    name = _load(catalog, spark, _FIXED, "timestamp")
    for query in [
        "SELECT city, dev, date_trunc('HOUR', time) AS hour, avg(v), count(*), count(v), "
        "sum(n), min(v), max(v), min(s), max(s), max_by(v, time), min_by(n, time) "
        "FROM {t} GROUP BY city, dev, date_trunc('HOUR', time)",
        "SELECT city, avg(n) AS a FROM {t} WHERE v > 0 GROUP BY 1 HAVING count(*) > 0 "
        "ORDER BY a DESC LIMIT 5",
        "SELECT date_trunc('DAY', time), count(*), max(time) FROM {t} "
        "WHERE city = 'a' AND time >= TIMESTAMP'2024-03-10 00:00:00' GROUP BY 1",
        "SELECT sum(v), avg(v), count(*) FROM {t} WHERE n > 100",
        "SELECT city, count(*), sum(n) FROM {t} WHERE n > 0 OR NOT v <= 0 GROUP BY city",
    ]:
        _same(query, catalog, spark, name)


def test_long_time_floor_buckets(catalog: Catalog, spark: SparkSession) -> None:
    name = _load(catalog, spark, _FIXED, "long")
    _same(
        "SELECT dev, floor(time / 3600000) * 3600000 AS b, avg(v), max_by(s, time), sum(n) "
        "FROM {t} WHERE time < 1710100000000 GROUP BY dev, floor(time / 3600000) * 3600000",
        catalog,
        spark,
        name,
    )


def test_unsupported_shapes_run_unchanged(catalog: Catalog, spark: SparkSession) -> None:
    name = _load(catalog, spark, _FIXED[:1], "long")
    for query in [
        "SELECT city, count(DISTINCT v) FROM {t} GROUP BY city",
        "SELECT v, count(*) FROM {t} GROUP BY v",
        "SELECT city, sum(n) FILTER (WHERE n > 1) FROM {t} GROUP BY city",
        "SELECT city, count(*) FROM {t} WHERE n > 0 OR upper(s) = 'Q' GROUP BY city",
    ]:
        got = catalog.sql(query.format(t=name))
        assert not _pre_aggregated(got)
        _compare(got, spark.sql(query.format(t=f"{name}_oracle")), query)


@pytest.mark.slow
def test_window_groupings_are_pre_aggregated(catalog: Catalog, spark: SparkSession) -> None:
    # window(time, ...) is bucketed in the scan like date_trunc: the struct, its fields, the
    # column names and the rows are Spark's own, in any session zone (the window is UTC-based;
    # the zone only changes how Spark shows the timestamps).
    name = _load(catalog, spark, _FIXED, "timestamp")
    for zone in ("UTC", "America/New_York", "Asia/Kolkata"):
        spark.conf.set("spark.sql.session.timeZone", zone)
        for query in [
            "SELECT city, window(time, '1 hour') AS w, count(*), avg(v), max_by(n, time) "
            "FROM {t} GROUP BY city, window(time, '1 hour')",
            "SELECT window(time, '90 minutes'), sum(n), min(s) FROM {t} "
            "GROUP BY window(time, '90 minutes')",
            "SELECT window.start, window.end, dev, count(v) FROM {t} "
            "WHERE city = 'a' GROUP BY dev, window(time, '1 day') "
            "HAVING count(*) > 0 ORDER BY window.start",
            "SELECT window(time, '10 minutes').end AS e, count(*) FROM {t} "
            "GROUP BY window(time, '10 minutes')",
            "SELECT window(time, '2 hours') AS w, count(*) FROM {t} GROUP BY w",
        ]:
            _same(query, catalog, spark, name)


def test_sliding_windows_run_in_spark(catalog: Catalog, spark: SparkSession) -> None:
    name = _load(catalog, spark, _FIXED[:1], "timestamp")
    query = (
        "SELECT city, window(time, '1 hour', '30 minutes') AS w, count(*) FROM {t} "
        "GROUP BY city, window(time, '1 hour', '30 minutes')"
    )
    got = catalog.sql(query.format(t=name))
    assert not _pre_aggregated(got)
    _compare(got, spark.sql(query.format(t=f"{name}_oracle")), query)


def test_window_of_nothing_is_no_row(catalog: Catalog, spark: SparkSession) -> None:
    # An empty bucket has no row (no window of its own), as in Spark; a WHERE that keeps
    # nothing leaves no group at all.
    name = _load(catalog, spark, _FIXED, "timestamp")
    for where in ("v > 1e9", "time < TIMESTAMP'2000-01-01 00:00:00'"):
        _same(
            f"SELECT window(time, '1 hour'), count(*), max(v) FROM {{t}} WHERE {where} "
            "GROUP BY window(time, '1 hour')",
            catalog,
            spark,
            name,
        )


# -- partial rows answered from statistics ----------------------------------------------------

# 2024-03-10 in New York: 02:00 EST jumps to 03:00 EDT at _ANCHORS_MS[0] + 7_200_000.
_INSIDE_BUCKETS = [
    [
        (_ANCHORS_MS[0] + 0, "a", "x", 1.5, 1, "q"),
        (_ANCHORS_MS[0] + 60_000, "a", "x", None, 2, None),  # last v: NULL at the latest time
        (_ANCHORS_MS[0] + 120_000, "a", "y", 2.0, None, "b"),
        (_ANCHORS_MS[0] + 3_500_000, "b", "x", -2.0, -4, "z"),  # straddles an hour: read
        (_ANCHORS_MS[0] + 3_700_000, "b", "x", 4.0, 6, "p"),
    ],
    [
        (_ANCHORS_MS[0] + 7_300_000, "a", "x", None, None, "r"),  # first v: NULL, after the gap
        (_ANCHORS_MS[0] + 7_400_000, "a", "x", 3.25, 8, None),
        (_ANCHORS_MS[0] + 7_350_000, "b", "y", float("nan"), 9, "q"),  # NaN: no min/max stats
    ],
]


def test_parts_inside_buckets_equal_spark(catalog: Catalog, spark: SparkSession) -> None:
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    name = _load(catalog, spark, _INSIDE_BUCKETS, "timestamp")
    for query in [
        "SELECT city, dev, date_trunc('HOUR', time) AS hour, avg(v), count(*), count(v), "
        "sum(n), avg(n), min(v), max(v), min(s), max(time), max_by(v, time), min_by(v, time), "
        "min_by(s, time), count(city) FROM {t} GROUP BY city, dev, date_trunc('HOUR', time)",
        "SELECT city, date_trunc('DAY', time), sum(v), count(*), max_by(n, time) FROM {t} "
        "WHERE dev IN ('x', 'y') AND time < TIMESTAMP'2024-03-10 03:05:00' GROUP BY 1, 2",
    ]:
        _same(query, catalog, spark, name)


_HOUR_MS = 3_600_000
_Q7_WHERE = "time >= 1500000 AND time < 5500000"


def test_q7_reads_only_parts_straddling_a_bucket_or_the_where(
    catalog: Catalog, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tsfile_catalog.formats.tsfile as tsfile_format
    from tsfile_catalog.datasource.partial_aggregates import TsFileStatsPartition
    from tsfile_catalog.datasource.source import TsFileDataSource
    from tsfile_catalog.metadata.partial_aggregates import PartialSpec, PartialState, TimeBucket
    from tsfile_catalog.table import open_table

    # Six parts of 15 minutes each (k * 1,000,000 ms on), four devices: part 0 lies before
    # the WHERE, parts 1 and 5 cross its bounds, part 3 crosses the hour at 3,600,000.
    parts = [
        [
            (k * 1_000_000 + i * 100_000, "a", f"d{d}", None if i == d else float(i + d), i, None)
            for d in range(4 if k % 2 else 3)
            for i in range(10)
        ]
        for k in range(6)
    ]
    name = _load(catalog, spark, parts, "long")
    query = (
        "SELECT dev, floor(time / 3600000) * 3600000 AS hour, avg(v) AS avg, count(*) AS n "
        f"FROM {{t}} WHERE {_Q7_WHERE} GROUP BY dev, floor(time / 3600000) * 3600000"
    )
    _same(query, catalog, spark, name)

    location = catalog.sql(f"DESCRIBE DETAIL {name}").first()["location"]
    lo, hi = 1_500_000, 5_500_000 - 1

    def read(part: Any) -> bool:
        """Whether the part holds a device in the WHERE whose rows are not all inside it and
        inside one hour: statistics cannot answer that one."""
        return any(
            not lo <= d.min_time <= d.max_time <= hi
            or d.min_time // _HOUR_MS != d.max_time // _HOUR_MS
            for d in part.devices
            if d.max_time >= lo and d.min_time <= hi
        )

    table_parts = open_table(location).parts()
    expected = {p.path.rsplit("/", 1)[-1] for p in table_parts if read(p)}
    assert 0 < len(expected) < len(table_parts)

    spec = PartialSpec(
        ("dev",),
        TimeBucket("floor", "hour", width=_HOUR_MS),
        (
            PartialState("count_all", None, "n"),
            PartialState("sum_double", "v", "sum_v"),
            PartialState("count", "v", "count_v"),
        ),
    )
    source = TsFileDataSource(
        {"path": location, "partialAggregate": spec.to_json(), "where": _Q7_WHERE}
    )
    reader = source.reader(source.schema())
    opened: list[str] = []
    real = tsfile_format.opened

    def counting(io: Any, url: str, **kwargs: Any) -> Any:
        opened.append(url.rsplit("/", 1)[-1])
        return real(io, url, **kwargs)

    monkeypatch.setattr(tsfile_format, "opened", counting)
    partitions = reader.partitions()
    assert any(isinstance(p, TsFileStatsPartition) for p in partitions)
    merged: dict[tuple[Any, ...], list[Any]] = {}
    for partition in partitions:
        for row in (r for b in reader.read(partition) for r in b.to_pylist()):
            group = merged.setdefault((row["dev"], row["hour"]), [0, 0.0, 0])
            group[0] += row["n"]
            group[1] += row["sum_v"] or 0.0
            group[2] += row["count_v"]
    assert set(opened) == expected
    want = spark.sql(
        f"SELECT dev, floor(time / 3600000) * 3600000, count(*), sum(v), count(v) "
        f"FROM {name}_oracle WHERE {_Q7_WHERE} GROUP BY 1, 2"
    ).collect()
    assert {k: (v[0], v[2]) for k, v in merged.items()} == {
        (r[0], r[1]): (r[2], r[4]) for r in want
    }
    for r in want:
        assert math.isclose(merged[(r[0], r[1])][1], r[3] or 0.0, rel_tol=1e-12)


# -- the differential property test -----------------------------------------------------------

_values = st.one_of(
    st.none(), st.just(float("nan")), st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: x or 0.0)
)
_rows = st.lists(
    st.tuples(
        st.integers(-40_000, 40_000),  # seconds around an anchor (distinct: no max_by ties)
        st.sampled_from(["a", "b"]),
        st.sampled_from(["x", "y", "z"]),
        _values,
        st.one_of(st.none(), st.integers(-1000, 1000)),
        st.one_of(st.none(), st.sampled_from(["p", "q", "r"])),
    ),
    min_size=1,
    max_size=30,
    unique_by=lambda r: r[0],
)
_aggregates = st.lists(
    st.sampled_from(
        [
            "count(*)",
            "count(v)",
            "sum(n)",
            "sum(v)",
            "avg(v)",
            "avg(n)",
            "min(v)",
            "max(v)",
            "max(s)",
            "min(n)",
            "max_by(v, time)",
            "min_by(s, time)",
        ]
    ),
    min_size=1,
    max_size=4,
    unique=True,
)
_UNITS = ["MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "YEAR", "SECOND"]
# Tumbling windows (TIMESTAMP time only; a long time groups by the hourly floor instead).
_WINDOWS = [("window", "1 hour"), ("window", "7 minutes"), ("window", "1 day")]


@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rows=_rows,
    split=st.integers(0, 30),
    anchor=st.sampled_from(_ANCHORS_MS),
    zone=st.sampled_from(_ZONES),
    form=st.sampled_from(["timestamp", "long"]),
    keys=st.sampled_from([(), ("city",), ("city", "dev"), ("dev",)]),
    bucket=st.one_of(
        st.none(),
        st.sampled_from(_UNITS),
        st.sampled_from([60_000, 3_600_000]),
        st.sampled_from(_WINDOWS),
    ),
    aggregates=_aggregates,
    where=st.sampled_from([None, "v > 0", "city = 'a'", "n IS NOT NULL", "s >= 'q'"]),
    step=st.sampled_from([20, 1_000]),
)
def test_rewritten_equals_spark(
    catalog: Catalog,
    spark: SparkSession,
    rows: list[tuple[Any, ...]],
    split: int,
    anchor: int,
    zone: str,
    form: str,
    keys: tuple[str, ...],
    bucket: str | int | tuple[str, str] | None,
    aggregates: list[str],
    where: str | None,
    step: int,
) -> None:
    spark.conf.set("spark.sql.session.timeZone", zone)
    # A step of 20 ms keeps a part's devices within +-800 s: mostly inside one bucket, so
    # their partial rows come from statistics; 1 s spreads them over many buckets (read).
    data = [(anchor + r[0] * step, *r[1:]) for r in rows]
    name = _load(catalog, spark, [p for p in (data[:split], data[split:]) if p], form)
    group = list(keys)
    if bucket is not None:
        if form == "timestamp" and isinstance(bucket, tuple):
            group.append(f"window(time, '{bucket[1]}')")
        elif form == "timestamp":
            unit = bucket if isinstance(bucket, str) else "HOUR"
            group.append(f"date_trunc('{unit}', time)")
        else:
            width = bucket if isinstance(bucket, int) else 3_600_000
            group.append(f"floor(time / {width}) * {width}")
    select = ", ".join([*group, *aggregates])
    query = f"SELECT {select} FROM {{t}}"
    if where is not None:
        query += f" WHERE {where}"
    if group:
        query += " GROUP BY " + ", ".join(group)
    _same(query, catalog, spark, name)


def test_catalog_scans_plan_one_partition_per_core(catalog: Catalog, spark: SparkSession) -> None:
    name = f"t{next(_counter)}"
    catalog.sql(
        f"CREATE TABLE {name} ({_SCHEMA.format(time='bigint')}) USING tsfile "
        "OPTIONS (tagColumns 'city,dev')"
    )
    spark.range(140_000).selectExpr(
        "id * 1000 AS time",
        "'a' AS city",
        "concat('d', CAST(id % 40 AS STRING)) AS dev",
        "CAST(id AS DOUBLE) AS v",
        "CAST(id AS INT) AS n",
        "CAST(NULL AS STRING) AS s",
    ).createOrReplaceTempView("big_src")
    # Parts as the source's partitions make them, each holding every device (a clustered
    # write would make parts of whole devices, of uneven sizes, which the planner splits).
    spark.conf.set(CLUSTERED_WRITES, "false")
    try:
        catalog.sql(f"INSERT INTO {name} SELECT * FROM big_src")
    finally:
        spark.conf.unset(CLUSTERED_WRITES)
    scan = catalog.sql(f"SELECT * FROM {name}")
    # 140,000 rows over defaultParallelism (2) cores: two partitions of about 70,000 rows (the
    # former default, 1,000,000 rows each, packed them into one).
    assert spark.sparkContext.defaultParallelism == 2
    assert scan.rdd.getNumPartitions() == 2


def test_local_session_talks_to_workers_over_tcp(spark: SparkSession) -> None:
    from tsfile_catalog.session import UNIX_SOCKET_CONF

    # Unix domain sockets make PySpark's daemon print BrokenPipeError tracebacks (issue 24):
    # every Spark test of the suite, and the quickstart, run with Spark's default TCP.
    assert spark.conf.get(UNIX_SOCKET_CONF, "false") == "false"


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rows=_rows,
    split=st.integers(0, 30),
    anchor=st.sampled_from(_ANCHORS_MS),
    zone=st.sampled_from(_ZONES),
    keys=st.sampled_from([(), ("city",), ("dev",)]),
    width=st.sampled_from(["1 hour", "7 minutes", "1 day", "90 seconds"]),
    aggregates=_aggregates,
    where=st.sampled_from([None, "city = 'a'", "time >= TIMESTAMP'2024-03-10 06:00:00'"]),
    step=st.sampled_from([20, 1_000]),
)
@pytest.mark.slow
def test_windows_equal_spark(
    catalog: Catalog,
    spark: SparkSession,
    rows: list[tuple[Any, ...]],
    split: int,
    anchor: int,
    zone: str,
    keys: tuple[str, ...],
    width: str,
    aggregates: list[str],
    where: str | None,
    step: int,
) -> None:
    # Parts straddle window boundaries (step 1 s spreads a device over many windows, so its
    # rows are read and bucketed in the scan) or lie inside one (20 ms: from statistics);
    # NULL values and NaN are among the rows.
    spark.conf.set("spark.sql.session.timeZone", zone)
    data = [(anchor + r[0] * step, *r[1:]) for r in rows]
    name = _load(catalog, spark, [p for p in (data[:split], data[split:]) if p], "timestamp")
    window = f"window(time, '{width}')"
    select = ", ".join([*keys, "window.start", f"{window}.end", window, *aggregates])
    query = f"SELECT {select} FROM {{t}}"
    if where is not None:
        query += f" WHERE {where}"
    query += " GROUP BY " + ", ".join([*keys, window])
    _same(query, catalog, spark, name)
