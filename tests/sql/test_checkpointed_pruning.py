"""A table read through its Parquet checkpoint (parts built only when a plan keeps them,
pre-filtered by time and TAG sets from the checkpoint's columns) returns exactly Spark's rows
through Catalog.sql and the ``where`` option, and opens only the parts that can match."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from tests.factories import table_schema
from tests.table.helpers import append_rows, log_file
from tsfile_catalog import Catalog
from tsfile_catalog.metadata.part_list import PartList
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.table import clear_cache, open_table

pytestmark = pytest.mark.spark

SCHEMA = table_schema("readings", tags=("city", "device"), fields=[("temp", DataType.DOUBLE)])
_CITIES = ("paris", "oslo", "rome", "lima")
_APPENDS = 14  # a checkpoint at version 10, then commits after it


def _rows(rng: random.Random, start: int) -> pa.Table:
    """One part: one or two cities (so TAG sets differ between parts), 20 rows a device."""
    cities = rng.sample(_CITIES, rng.choice((1, 2)))
    out: dict[str, list[Any]] = {"time": [], "city": [], "device": [], "temp": []}
    for city in sorted(cities):
        for device in ("a", "b"):
            for t in range(start, start + 20):
                out["time"].append(t)
                out["city"].append(city)
                out["device"].append(device)
                out["temp"].append(rng.choice([rng.uniform(-5, 30), float("nan"), None]))
    return pa.table(
        {
            "time": pa.array(out["time"], pa.int64()),
            "city": pa.array(out["city"]),
            "device": pa.array(out["device"]),
            "temp": pa.array(out["temp"], pa.float64()),
        }
    )


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("checkpointed")
    rng = random.Random(15)
    for i in range(_APPENDS):
        append_rows(str(root), _rows(rng, i * 10), SCHEMA)  # parts overlap in time
    assert log_file(Path(root), 10, ".checkpoint.parquet").exists()
    return str(root)


@pytest.fixture(scope="module")
def oracle(spark: SparkSession, table: str) -> Iterator[str]:
    """Spark's own view: a plain load without pushdown."""
    spark.read.format("tsfile").option("pushdown", "false").load(table).createOrReplaceTempView(
        "checkpointed_oracle"
    )
    yield "checkpointed_oracle"
    spark.catalog.dropTempView("checkpointed_oracle")


@pytest.fixture(scope="module")
def registered(catalog: Catalog, table: str) -> str:
    catalog.sql(f"CREATE TABLE readings USING tsfile LOCATION '{table}'")
    return "readings"


_WHERE = [
    "time >= 40 AND time < 75",
    "city = 'rome'",
    "city IN ('oslo', 'lima') AND time > 100",
    "city = 'paris' OR city = 'nowhere'",
    "NOT (city != 'oslo') AND device = 'b'",
    "city = 'rome' AND city = 'oslo'",
    "city != 'paris' AND time BETWEEN 20 AND 60",
    "(city = 'lima' AND time < 30) OR (time > 125 AND device = 'a')",
    "temp > 10 AND city = 'paris'",
    "city NOT IN ('rome') OR time = 3",
]


def _sorted(rows: list[Any]) -> list[tuple[Any, ...]]:
    # NaN != NaN: compare by representation, nulls and NaN included.
    return sorted(tuple(repr(v) for v in r) for r in rows)


@pytest.mark.parametrize("where", _WHERE)
def test_a_checkpointed_table_returns_sparks_rows(
    spark: SparkSession, catalog: Catalog, registered: str, oracle: str, table: str, where: str
) -> None:
    clear_cache()  # cold: the snapshot comes from the checkpoint plus the commits after it
    columns = "time, city, device, temp"
    expected = _sorted(spark.sql(f"SELECT {columns} FROM {oracle} WHERE {where}").collect())
    got = _sorted(catalog.sql(f"SELECT {columns} FROM {registered} WHERE {where}").collect())
    assert got == expected
    clear_cache()
    read = spark.read.format("tsfile").option("where", where).load(table)
    assert _sorted(read.select("time", "city", "device", "temp").collect()) == expected

    # A part pruned wrongly would have lost rows above; here the snapshot is the lazy one.
    clear_cache()
    assert isinstance(open_table(table).snapshot.parts, PartList)


def test_a_tag_predicate_opens_only_the_parts_holding_the_value(table: str) -> None:
    clear_cache()
    parts = open_table(table).parts()
    rome = [p.path for p in parts if "rome" in (p.tags["city"].values or ())]
    assert 0 < len(rome) < len(parts)
    clear_cache()
    plan = open_table(table).plan("city = 'rome' AND device = 'a'")
    assert sorted(p.path for p in plan.parts) == sorted(rome)
    assert len(plan.pruned) == len(parts) - len(rome)
