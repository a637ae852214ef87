"""Property: a scan returns the same rows with and without pushdown, and the same rows as
Spark filtering an unfiltered load, for random predicates over random multi-part data."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from tests.datasource.helpers import write_rows
from tests.factories import weather_schema
from tsfile_catalog.metadata.schema import DataType

pytestmark = pytest.mark.spark

CITIES = ["bj", "sh", "gz"]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("equiv")
    rng = random.Random(7)
    schema = weather_schema(("temp", DataType.DOUBLE), ("hum", DataType.INT32))
    for part in range(4):
        rows = []
        for city in rng.sample(CITIES, 2):
            for device in rng.sample(["d0", "d1", "d2"], 2):
                for t in sorted(rng.sample(range(part * 15, part * 15 + 30), 8)):
                    rows.append({
                        "time": t, "city": city, "device": device,
                        "temp": round(rng.uniform(-5, 30), 1),
                        **({"hum": rng.randint(0, 100)} if rng.random() < 0.7 else {}),
                    })
        write_rows(str(root / f"part-{part}.tsfile"), schema, rows)
    return str(root)


_ops = st.sampled_from(["=", "!=", "<", "<=", ">", ">="])
_atom = st.one_of(
    st.builds(lambda o, v: f"time {o} {v}", _ops, st.integers(-5, 80)),
    st.builds(lambda a, b: f"time BETWEEN {a} AND {b}", st.integers(0, 60), st.integers(0, 80)),
    st.builds(lambda c: f"city = '{c}'", st.sampled_from([*CITIES, "xx"])),
    st.builds(lambda cs: "city IN ({})".format(", ".join(f"'{c}'" for c in cs)),
              st.lists(st.sampled_from(CITIES), min_size=1, max_size=2)),
    st.builds(lambda d: f"device = '{d}'", st.sampled_from(["d0", "d1", "d2"])),
    st.builds(lambda o, v: f"temp {o} {v}", _ops, st.integers(-5, 30)),
    st.builds(lambda n: f"hum IS {n}NULL", st.sampled_from(["", "NOT "])),
)
_predicate = st.recursive(
    _atom,
    lambda inner: st.one_of(
        st.builds(lambda a, b: f"({a} AND {b})", inner, inner),
        st.builds(lambda a, b: f"({a} OR {b})", inner, inner),
        st.builds(lambda a: f"NOT ({a})", inner),
    ),
    max_leaves=4,
)


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(predicate=st.builds(lambda a, b: f"{a} AND {b}", _predicate, _predicate))
def test_pushdown_never_changes_results(
    spark: SparkSession, table: str, predicate: str
) -> None:
    def rows(**options: str) -> list[tuple[object, ...]]:
        reader = spark.read.format("tsfile")
        for key, value in options.items():
            reader = reader.option(key, value)
        return sorted(tuple(r) for r in reader.load(table).collect())

    expected = sorted(
        tuple(r) for r in spark.read.format("tsfile").load(table).where(predicate).collect()
    )
    assert rows(where=predicate) == expected
    assert rows(where=predicate, pushdown="false") == expected
