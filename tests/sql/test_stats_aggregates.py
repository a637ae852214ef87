"""Aggregates answered from statistics: ``Catalog.sql`` against Spark's own evaluation.

The differential property test draws aggregate queries (count/sum/avg/min/max/max_by/min_by,
GROUP BY TAG columns, time bounds, TAG predicates) over small multi-part tables with NULLs,
NaN, several devices, a device repeated across parts and INT64 values near the limits, and
requires ``Catalog.sql`` (statistics plus the straddling rows) to return exactly the rows and
schema Spark computes over a plain load of the same files without pushdown. Separate tests
count the files opened, so the claim "nothing is read when the WHERE covers whole devices" is
checked, not timed.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession

import tsfile_catalog.formats.tsfile as tsfile_format
from tests.factories import weather_schema
from tests.table.helpers import append_rows
from tsfile_catalog import Catalog
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.sql import stats_aggregates
from tsfile_catalog.table import open_table

pytestmark = pytest.mark.spark

EXAMPLES = int(os.environ.get("TSFILE_PROPERTY_EXAMPLES", "12"))

FIELDS = {
    "i": DataType.INT32,
    "l": DataType.INT64,
    "d": DataType.DOUBLE,
    "f": DataType.FLOAT,
    "s": DataType.STRING,
    "txt": DataType.TEXT,
    "b": DataType.BOOLEAN,
    "day": DataType.DATE,
}
SCHEMA = weather_schema(*FIELDS.items())
_ARROW = {
    DataType.INT32: pa.int32(),
    DataType.INT64: pa.int64(),
    DataType.DOUBLE: pa.float64(),
    DataType.FLOAT: pa.float32(),
    DataType.STRING: pa.string(),
    DataType.TEXT: pa.string(),
    DataType.BOOLEAN: pa.bool_(),
    DataType.DATE: pa.date32(),
}
DEVICES = [("bj", "x"), ("bj", "y"), ("sh", "x"), ("sz", "z")]


def _value(rng: random.Random, type_: DataType, big: bool) -> Any:
    if rng.random() < 0.2:
        return None
    if type_ is DataType.INT32:
        return rng.choice([-(2**31), 2**31 - 1]) if big else rng.randint(-50, 50)
    if type_ is DataType.INT64:
        return rng.choice([2**62, -(2**62), 2**63 - 1]) if big else rng.randint(-(10**6), 10**6)
    if type_ in (DataType.DOUBLE, DataType.FLOAT):
        return math.nan if rng.random() < 0.1 else float(rng.randint(-40, 40)) / 4
    if type_ in (DataType.STRING, DataType.TEXT):
        return rng.choice(["a", "b", "zz", "é", ""])
    if type_ is DataType.BOOLEAN:
        return rng.random() < 0.5
    return dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(0, 30))


def _part(rng: random.Random, start: int, big: bool) -> pa.Table:
    rows: dict[str, list[Any]] = {"time": [], "city": [], "device": []}
    rows.update({name: [] for name in FIELDS})
    for city, device in rng.sample(DEVICES, rng.randint(1, len(DEVICES))):
        times = sorted(rng.sample(range(start, start + 40), rng.randint(1, 8)))
        for time in times:
            rows["time"].append(time)
            rows["city"].append(city)
            rows["device"].append(device)
            for name, type_ in FIELDS.items():
                rows[name].append(_value(rng, type_, big and name in ("i", "l")))
    return pa.table(
        {
            "time": pa.array(rows["time"], pa.int64()),
            "city": pa.array(rows["city"]),
            "device": pa.array(rows["device"]),
            **{name: pa.array(rows[name], _ARROW[t]) for name, t in FIELDS.items()},
        }
    )


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Three tables of four parts each; parts overlap in time, so a device may have the same
    time in two parts (a max_by tie); ``big`` holds INT values near the limits."""
    out = {}
    for name, seed, big in (("small", 1, False), ("other", 2, False), ("big", 3, True)):
        root = tmp_path_factory.mktemp(name)
        rng = random.Random(seed)
        for start in (0, 30, 60, 65):
            append_rows(str(root), _part(rng, start, big), SCHEMA)
        out[name] = str(root)
    return out


@pytest.fixture(scope="module")
def oracle(spark: SparkSession, tables: dict[str, str]) -> Iterator[dict[str, str]]:
    """Spark's own view of each table: a plain load without pushdown."""
    views = {}
    for name, root in tables.items():
        view = f"oracle_{name}"
        spark.read.format("tsfile").option("pushdown", "false").load(root).createOrReplaceTempView(
            view
        )
        views[name] = view
    yield views
    for view in views.values():
        spark.catalog.dropTempView(view)


@pytest.fixture(scope="module")
def stats_catalog(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return Catalog(spark, str(tmp_path_factory.mktemp("wh")), register_views=False)


@pytest.fixture
def answered(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """For each query Catalog.sql tried to answer from statistics, whether it did (False:
    Spark evaluated it as usual)."""
    outcomes: list[bool] = []
    real = stats_aggregates.answer

    def recording(*args: Any, **kwargs: Any) -> DataFrame | None:
        result = real(*args, **kwargs)
        outcomes.append(result is not None)
        return result

    monkeypatch.setattr(stats_aggregates, "answer", recording)
    return outcomes


def _normalized(rows: list[Any]) -> list[tuple[Any, ...]]:
    def norm(value: Any) -> Any:
        if isinstance(value, float) and math.isnan(value):
            return "NaN"
        return value

    return sorted((tuple(norm(v) for v in row) for row in rows), key=repr)


def _same(actual: DataFrame, expected: DataFrame) -> None:
    assert actual.schema.simpleString() == expected.schema.simpleString()
    assert actual.columns == expected.columns
    assert _normalized(actual.collect()) == _normalized(expected.collect())


_AGGREGATES = [
    "count(*)",
    "count(1)",
    "count(time)",
    "count(city)",
    *[f"count({c})" for c in FIELDS],
    "sum(i)",
    "sum(l)",
    "avg(i)",
    "avg(l)",
    *[f"min({c})" for c in FIELDS],
    *[f"max({c})" for c in FIELDS],
    *[f"max_by({c}, time)" for c in FIELDS],
    *[f"min_by({c}, time)" for c in FIELDS],
    "sum(d)",  # never from statistics: Spark's double sum depends on the order
]

_query = st.fixed_dictionaries(
    {
        "table": st.sampled_from(["small", "other", "big"]),
        "aggregates": st.lists(st.sampled_from(_AGGREGATES), min_size=1, max_size=3, unique=True),
        "group": st.sampled_from([(), ("city",), ("device",), ("city", "device")]),
        "show_group": st.booleans(),
        "low": st.one_of(st.none(), st.integers(-5, 110)),
        "high": st.one_of(st.none(), st.integers(-5, 110)),
        "tag": st.sampled_from([None, "city = 'bj'", "device IN ('x', 'z')", "city = 'nowhere'"]),
        "alias": st.booleans(),
    }
)


def _sql(q: dict[str, Any], table: str) -> str:
    items = [f"{a} AS a{i}" if q["alias"] else a for i, a in enumerate(q["aggregates"])]
    if q["show_group"]:
        items = [*q["group"], *items]
    where = []
    if q["low"] is not None:
        where.append(f"time >= {q['low']}")
    if q["high"] is not None:
        where.append(f"time < {q['high']}")
    if q["tag"] is not None:
        where.append(q["tag"])
    text = f"SELECT {', '.join(items)} FROM {table}"
    if where:
        text += " WHERE " + " AND ".join(where)
    if q["group"]:
        text += " GROUP BY " + ", ".join(q["group"])
    return text


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(q=_query)
def test_results_equal_sparks(
    answered: list[bool],
    spark: SparkSession,
    stats_catalog: Catalog,
    tables: dict[str, str],
    oracle: dict[str, str],
    q: dict[str, Any],
) -> None:
    answered.clear()  # the fixture outlives hypothesis' examples
    actual = stats_catalog.sql(_sql(q, f"tsfile.`{tables[q['table']]}`"))
    expected = spark.sql(_sql(q, oracle[q["table"]]))
    _same(actual, expected)
    # Only a double sum, a max_by/min_by tie or a sum/avg near the INT limits (the big
    # table) may fall back; everything else must come from statistics and the rows read.
    aggregates = q["aggregates"]
    may_fall_back = (
        "sum(d)" in aggregates
        or any(a.startswith(("max_by", "min_by")) for a in aggregates)
        or (q["table"] == "big" and any(a.startswith(("sum", "avg")) for a in aggregates))
    )
    # A lone count(*) may be answered by the row-count rule before (answered stays empty).
    lone_count = aggregates in (["count(*)"], ["count(1)"]) and not q["group"]
    if "sum(d)" in aggregates:
        assert answered == [False]
    elif not may_fall_back:
        assert answered == [True] or (lone_count and answered == [])


# Hand-picked: each answered from statistics (checked), and equal to Spark's.
ANSWERED = [
    "SELECT count(*), count(i), sum(i), sum(l), avg(l), min(s), max(day), min(b) FROM {t}",
    "SELECT city, max_by(d, time) AS last_d, min_by(txt, time) FROM {t} GROUP BY city",
    "SELECT device, city, count(*) AS n, max(f) FROM {t} WHERE city IN ('bj', 'sz') "
    "GROUP BY city, device",
    "SELECT count(*), sum(i), max_by(l, time) FROM {t} WHERE time >= 31 AND time < 61",
    "SELECT count(*), max(i) FROM {t} WHERE city = 'nowhere'",
    "SELECT city, count(*) FROM {t} WHERE city = 'nowhere' GROUP BY city",
]


@pytest.mark.parametrize("sql", ANSWERED)
def test_answered_from_statistics(
    answered: list[bool],
    spark: SparkSession,
    stats_catalog: Catalog,
    tables: dict[str, str],
    oracle: dict[str, str],
    sql: str,
) -> None:
    actual = stats_catalog.sql(sql.format(t=f"tsfile.`{tables['small']}`"))
    assert answered == [True]
    _same(actual, spark.sql(sql.format(t=oracle["small"])))


# Spark evaluates these (what statistics cannot answer exactly), with the same results.
FALLBACK = [
    "SELECT sum(d) FROM {t}",  # double sum: order-dependent
    "SELECT count(*) FROM {t} WHERE i > 0",  # a FIELD predicate
    "SELECT city, count(*) AS n FROM {t} GROUP BY city HAVING count(*) > 1 ORDER BY n LIMIT 1",
    "SELECT i, count(*) FROM {t} GROUP BY i",  # GROUP BY a FIELD
]


@pytest.mark.parametrize("sql", FALLBACK)
def test_falls_back_to_spark(
    answered: list[bool],
    spark: SparkSession,
    stats_catalog: Catalog,
    tables: dict[str, str],
    oracle: dict[str, str],
    sql: str,
) -> None:
    actual = stats_catalog.sql(sql.format(t=f"tsfile.`{tables['small']}`"))
    assert True not in answered
    _same(actual, spark.sql(sql.format(t=oracle["small"])))


def test_a_possible_bigint_overflow_is_left_to_spark(
    answered: list[bool], stats_catalog: Catalog, tables: dict[str, str]
) -> None:
    # Values near 2**62 overflow a BIGINT sum: Spark (ANSI, the default) fails, and so does
    # Catalog.sql, because statistics do not answer a sum that may overflow.
    df = stats_catalog.sql(f"SELECT sum(l) FROM tsfile.`{tables['big']}`")
    assert answered == [False]
    with pytest.raises(Exception, match="(?i)overflow"):
        df.collect()


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URLs of the TsFiles the driver opens (Spark's workers never run: a scan would be
    a Spark job, which ``answered`` rules out)."""
    urls: list[str] = []
    real = tsfile_format.opened

    def counting(io: Any, url: str) -> Any:
        urls.append(url)
        return real(io, url)

    monkeypatch.setattr(tsfile_format, "opened", counting)
    return urls


def test_whole_devices_open_no_file(
    answered: list[bool],
    spark: SparkSession,
    stats_catalog: Catalog,
    tables: dict[str, str],
    oracle: dict[str, str],
    opened: list[str],
) -> None:
    sql = "SELECT city, count(*), sum(i), max(s), max_by(l, time) FROM {t} GROUP BY city"
    df = stats_catalog.sql(sql.format(t=f"tsfile.`{tables['other']}`"))
    assert answered == [True]
    assert opened == []
    _same(df, spark.sql(sql.format(t=oracle["other"])))


def test_only_straddling_parts_are_opened(
    answered: list[bool],
    spark: SparkSession,
    stats_catalog: Catalog,
    tables: dict[str, str],
    oracle: dict[str, str],
    opened: list[str],
) -> None:
    root = tables["other"]
    parts = open_table(root).parts()

    def cut_by(bound: int) -> set[str]:
        return {
            p.path for p in parts if any(d.min_time < bound <= d.max_time for d in p.devices or ())
        }

    # A time bound that cuts through some devices of some parts, not all parts.
    bound = next(b for b in range(110) if 0 < len(cut_by(b)) < len(parts))
    straddling = cut_by(bound)
    sql = f"SELECT count(*), min(i), max_by(s, time) FROM {{t}} WHERE time >= {bound}"
    df = stats_catalog.sql(sql.format(t=f"tsfile.`{root}`"))
    assert answered == [True]
    assert {url.rsplit("/", 1)[-1] for url in opened} == straddling
    _same(df, spark.sql(sql.format(t=oracle["other"])))


def test_time_travel_answers_the_old_version(
    answered: list[bool], spark: SparkSession, stats_catalog: Catalog, tables: dict[str, str]
) -> None:
    url = tables["small"]
    old = stats_catalog.sql(f"SELECT count(*), sum(i) FROM tsfile.`{url}` VERSION AS OF 0")
    assert answered == [True]
    expected = (
        spark.read.format("tsfile")
        .option("versionAsOf", "0")
        .load(url)
        .selectExpr("count(*)", "sum(i)")
    )
    _same(old, expected)


def test_a_registered_table(
    answered: list[bool],
    spark: SparkSession,
    stats_catalog: Catalog,
    tables: dict[str, str],
    oracle: dict[str, str],
) -> None:
    stats_catalog.sql(f"CREATE TABLE reg USING tsfile LOCATION '{tables['small']}'")
    sql = "SELECT device, avg(i), min_by(day, time) FROM {t} GROUP BY device"
    df = stats_catalog.sql(sql.format(t="reg"))
    assert answered == [True]
    _same(df, spark.sql(sql.format(t=oracle["small"])))


def test_a_path_with_no_manifest(
    answered: list[bool],
    spark: SparkSession,
    stats_catalog: Catalog,
    tables: dict[str, str],
    tmp_path: Path,
) -> None:
    # A plain directory of TsFiles: statistics from the footers, the same answers.
    root = tables["small"]
    sql = "SELECT city, count(*), max(i) FROM {t} GROUP BY city"
    plain = tmp_path / "plain"
    plain.mkdir()
    for name in os.listdir(root):
        if name.endswith(".tsfile"):
            os.link(os.path.join(root, name), plain / name)
    df = stats_catalog.sql(sql.format(t=f"tsfile.`{plain}`"))
    assert answered == [True]
    spark.read.format("tsfile").load(str(plain)).createOrReplaceTempView("plain_oracle")
    try:
        _same(df, spark.sql(sql.format(t="plain_oracle")))
    finally:
        spark.catalog.dropTempView("plain_oracle")
