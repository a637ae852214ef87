"""Overlapping writes of one table and Spark's "last row per key" over them: the oracle of
the table key's tests (tests/exec/test_key_merge_spark.py).

Each write holds random rows of some devices at times that meet other writes' (a key may be
written several times); its ``w`` column names the write, so a part's statistics say which
write it holds and the commit order is read back from the manifest.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

TAGS = ("city", "device")
DEVICES = [("bj", "x"), ("bj", "y"), ("sh", "x"), ("sz", "z")]


def rows(seed: int) -> pa.Table:
    """Write ``seed``'s rows (``w`` = ``seed``): a few devices, unique times per device."""
    rng = random.Random(seed)
    out: dict[str, list[Any]] = {"time": [], "city": [], "device": [], "v": [], "i": [], "s": []}
    for city, device in rng.sample(DEVICES, rng.randint(1, len(DEVICES))):
        start = rng.randint(0, 40)
        for time in sorted(rng.sample(range(start, start + 25), rng.randint(1, 10))):
            out["time"].append(time)
            out["city"].append(city)
            out["device"].append(device)
            out["v"].append(None if rng.random() < 0.15 else round(rng.uniform(-10, 10), 2))
            out["i"].append(None if rng.random() < 0.15 else rng.randint(-100, 100))
            out["s"].append(rng.choice(["a", "b", None]))
    return pa.table(
        {
            "time": pa.array(out["time"], pa.int64()),
            "city": pa.array(out["city"], pa.string()),
            "device": pa.array(out["device"], pa.string()),
            "v": pa.array(out["v"], pa.float64()),
            "i": pa.array(out["i"], pa.int64()),
            "s": pa.array(out["s"], pa.string()),
            "w": pa.array([seed] * len(out["time"]), pa.int64()),
        }
    )


def last_per_key(
    spark: SparkSession, writes: Sequence[pa.Table], tags: Sequence[str] = TAGS
) -> DataFrame:
    """Spark's own "last row per key" of ``writes`` (in commit order): the union, keeping
    each row whose write is the latest holding its (TAG values, time)."""
    union = pa.concat_tables(
        [
            w.append_column("__seq", pa.array([i] * w.num_rows, pa.int64()))
            for i, w in enumerate(writes)
        ]
    )
    df = spark.createDataFrame(union)
    latest = F.max("__seq").over(Window.partitionBy(*tags, "time"))
    return df.withColumn("__latest", latest).where("__seq = __latest").drop("__seq", "__latest")


def union(spark: SparkSession, writes: Sequence[pa.Table]) -> DataFrame:
    """Every row of ``writes``: what a ``keep`` table returns."""
    return spark.createDataFrame(pa.concat_tables(writes))
