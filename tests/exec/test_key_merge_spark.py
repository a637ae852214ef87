"""The table key on every read path: overlapping writes, several of them from other
processes, read back by ``Table.scan()``, ``Catalog.sql`` and ``spark.read.format("tsfile")``
and compared with Spark's own "last row per key" over the union of the writes in commit order
(tests/exec/key_rows.py), under FIELD, time and TAG filters, grouped aggregates and time
travel; a ``keep`` table of the same writes returns every row.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession

from tests.exec.key_rows import TAGS, last_per_key, rows, union
from tests.factories import table_schema
from tsfile_catalog import Catalog, write_table
from tsfile_catalog.metadata.key import KEY_DUPLICATES
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.metadata.slices import MergeSlice
from tsfile_catalog.table import create_table, open_table

pytestmark = pytest.mark.spark

EXAMPLES = int(os.environ.get("TSFILE_PROPERTY_EXAMPLES", "12"))
ROOT = Path(__file__).resolve().parents[2]
SCHEMA = table_schema(
    "t",
    tags=TAGS,
    fields=(
        ("v", DataType.DOUBLE),
        ("i", DataType.INT64),
        ("s", DataType.STRING),
        ("w", DataType.INT64),
    ),
)
# Writes 1 and 2, then 3, 4 and 5 from three processes at once, then 6.
FIRST, CONCURRENT, LAST = (1, 2), (3, 4, 5), (6,)


def _append_elsewhere(url: str, seeds: tuple[int, ...]) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.exec.key_writer_child", url, str(seed)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in seeds
    ]
    for child in children:
        _, err = child.communicate(timeout=300)
        assert child.returncode == 0, err


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The ``last`` table (created by its first write, the default) and a ``keep`` twin of
    the same writes; the writes of the last table in commit order, with their versions."""
    last = str(tmp_path_factory.mktemp("key-last"))
    keep = str(tmp_path_factory.mktemp("key-keep"))
    create_table(keep, SCHEMA, properties={KEY_DUPLICATES: "keep"})
    write_table(last, rows(FIRST[0]), table="t", tag_columns=TAGS)
    for seed in FIRST[1:]:
        write_table(last, rows(seed))
    _append_elsewhere(last, CONCURRENT)
    for seed in LAST:
        write_table(last, rows(seed))
    for seed in (*FIRST, *CONCURRENT, *LAST):
        write_table(keep, rows(seed))
    table = open_table(last)
    assert table.snapshot.properties[KEY_DUPLICATES] == "last"
    # Which write each version committed: a part's ``w`` statistics name it.
    order: dict[int, int] = {}
    for part in table.parts():
        stats = part.fields["w"]
        assert stats.min == stats.max
        order[part.added_version] = int(stats.min)  # type: ignore[arg-type]
    versions = sorted(order)
    assert len(versions) == 6
    return {
        "last": last,
        "keep": keep,
        "versions": versions,
        "writes": [rows(order[v]) for v in versions],
    }


@pytest.fixture(scope="module")
def oracle(spark: SparkSession, tables: dict[str, Any]) -> DataFrame:
    return last_per_key(spark, tables["writes"]).cache()


@pytest.fixture(scope="module")
def catalogs(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> list[Catalog]:
    """A catalog that reads these small tables in the driver, and one that hands every scan
    to the Spark source (where aggregates are pre-aggregated in the scan)."""
    warehouse = str(tmp_path_factory.mktemp("wh"))
    return [
        Catalog(spark, warehouse, register_views=False),
        Catalog(spark, warehouse, register_views=False, small_scan_rows=0),
    ]


def _sorted(values: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return sorted(values, key=repr)


def _rows(df: DataFrame) -> list[tuple[Any, ...]]:
    return _sorted([tuple(r) for r in df.collect()])


def _arrow_rows(table: pa.Table) -> list[tuple[Any, ...]]:
    return _sorted([tuple(r.values()) for r in table.to_pylist()])


_TIME = ["time >= 20", "time < 35", "time BETWEEN 10 AND 30", "time = 25"]
_TAG = ["city = 'bj'", "device IN ('x')", "city IN ('bj', 'sz')", "city != 'sh'"]
_FIELD = ["v > 0", "v IS NULL", "s = 'a'", "i < 10", "(v > 5 OR time < 15)", "NOT (i > 0)"]

_where = st.tuples(
    st.one_of(st.none(), st.sampled_from(_TIME)),
    st.one_of(st.none(), st.sampled_from(_TAG)),
    st.one_of(st.none(), st.sampled_from(_FIELD)),
)


def _and(*terms: str | None) -> str | None:
    kept = [t for t in terms if t is not None]
    return " AND ".join(kept) if kept else None


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(where=_where)
# An old row matching the FIELD filter is hidden by the newer row that does not match.
@pytest.mark.slow
@example(where=(None, None, "v > 0"))
def test_every_read_path_returns_the_last_row_per_key(
    spark: SparkSession,
    catalogs: list[Catalog],
    tables: dict[str, Any],
    oracle: DataFrame,
    where: tuple[str | None, str | None, str | None],
) -> None:
    text = _and(*where)
    expected = _rows(oracle if text is None else oracle.where(text))
    root = tables["last"]
    scanned = open_table(root).scan(where=text).to_arrow()
    assert _arrow_rows(scanned) == expected
    reader = spark.read.format("tsfile")
    if text is not None:
        reader = reader.option("where", text)
    assert _rows(reader.load(root)) == expected
    sql = f"SELECT * FROM tsfile.`{root}`" + ("" if text is None else f" WHERE {text}")
    for catalog in catalogs:
        assert _rows(catalog.sql(sql)) == expected


_AGGREGATES = "count(*), count(s), sum(i), min(v), max(v), avg(v), max(time), min(time)"
# max_by(c, time) has one answer only where no two rows share a time: per device, after the
# merge (across devices Spark itself keeps whichever row it meets first).
_PER_DEVICE = ", max_by(i, time), min_by(v, time)"
# A time bucket: not what statistics answer, so the scan pre-aggregates it instead.
_BUCKET = "floor(time / 20) * 20"


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    where=st.tuples(
        st.one_of(st.none(), st.sampled_from(_TIME)), st.one_of(st.none(), st.sampled_from(_TAG))
    ),
    group=st.sampled_from([(), ("city",), ("device",), TAGS, ("city", _BUCKET), (*TAGS, _BUCKET)]),
)
@pytest.mark.slow
@example(where=(None, None), group=(*TAGS, _BUCKET))
def test_aggregates_count_each_key_once(
    spark: SparkSession,
    catalogs: list[Catalog],
    tables: dict[str, Any],
    oracle: DataFrame,
    where: tuple[str | None, str | None],
    group: tuple[str, ...],
) -> None:
    """Statistics answers, partial aggregation and Spark's own all agree with the oracle:
    merged devices are read and merged, the others may come from statistics."""
    text = _and(*where)
    per_device = group[: len(TAGS)] == TAGS
    items = ", ".join([*group, _AGGREGATES]) + (_PER_DEVICE if per_device else "")
    tail = ("" if text is None else f" WHERE {text}") + (
        f" GROUP BY {', '.join(group)}" if group else ""
    )
    oracle.createOrReplaceTempView("key_oracle")
    expected = _rows(spark.sql(f"SELECT {items} FROM key_oracle{tail}"))
    for catalog in catalogs:
        frame = catalog.sql(f"SELECT {items} FROM tsfile.`{tables['last']}`{tail}")
        if _BUCKET in group and catalog is catalogs[-1]:
            # Pre-aggregated in the scan: Spark merges the partial rows of merged reads.
            assert "__tsfc_bucket" in str(frame._jdf.queryExecution().optimizedPlan())
        actual = _rows(frame)
        assert len(actual) == len(expected)
        for got, want in zip(actual, expected, strict=True):
            for a, b in zip(got, want, strict=True):
                if isinstance(a, float) and isinstance(b, float):
                    assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9), (actual, expected)
                else:
                    assert a == b, (actual, expected)


def test_time_travel_sees_the_rows_of_each_version(
    spark: SparkSession, tables: dict[str, Any]
) -> None:
    root, writes = tables["last"], tables["writes"]
    for count, version in enumerate(tables["versions"], start=1):
        expected = _rows(last_per_key(spark, writes[:count]))
        assert _arrow_rows(open_table(root).scan(version=version).to_arrow()) == expected
        loaded = spark.read.format("tsfile").option("versionAsOf", str(version)).load(root)
        assert _rows(loaded) == expected


def test_a_keep_table_returns_every_row(spark: SparkSession, tables: dict[str, Any]) -> None:
    keep = open_table(tables["keep"])
    assert keep.plan().merges == ()
    expected = _rows(union(spark, tables["writes"]))
    assert _arrow_rows(keep.scan().to_arrow()) == expected
    assert _rows(spark.read.format("tsfile").load(tables["keep"])) == expected


def test_merges_read_only_what_overlaps(tables: dict[str, Any]) -> None:
    """The merged slices are a part of the table's, and every merge is one read."""
    scan = open_table(tables["last"]).scan()
    merged = [s for task in scan.tasks for s in task if isinstance(s, MergeSlice)]
    assert merged, "the writes overlap: some slices must merge"
    assert all(len(set(m.sequences)) > 1 for m in merged)
