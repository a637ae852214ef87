"""The six benchmark queries, expressed once and run on both engines.

Every query ends in a small aggregate so the timing measures the scan and not ``collect()``
of millions of rows, and so the two engines' answers can be compared exactly. tsfile gets
its filter and projection through the ``where`` / ``columns`` options (the only way a Python
data source sees them); Parquet gets the same SQL predicate as a DataFrame filter, which
Spark pushes into the Parquet reader natively.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from bench.datagen import STEP_MS, T0_MS, Scale

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["Engine", "Query", "ENGINES", "build_queries", "run_query", "same_answer"]

Engine = Literal["tsfile", "parquet"]
ENGINES: tuple[Engine, Engine] = ("tsfile", "parquet")


@dataclass(frozen=True)
class Query:
    id: str
    title: str
    kind: Literal["full", "selective", "field"]
    where: str | None
    columns: tuple[str, ...]  # what the aggregate reads (tsfile ``columns`` option)
    aggregates: tuple[str, ...]  # Spark SQL aggregate expressions

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "kind": self.kind,
            "where": self.where,
            "columns": list(self.columns),
            "aggregates": list(self.aggregates),
        }


def _time_window(scale: Scale, start_fraction: float, width_fraction: float) -> str:
    span = scale.timestamps * STEP_MS
    lo = T0_MS + int(span * start_fraction) // STEP_MS * STEP_MS
    hi = lo + max(STEP_MS, int(span * width_fraction) // STEP_MS * STEP_MS)
    return f"time >= {lo} AND time < {hi}"


def build_queries(scale: Scale) -> list[Query]:
    width = max(2, math.ceil(math.log10(scale.devices + 1)))
    device = f"d{scale.devices // 2 + 1:0{width}d}"
    region = f"r{min(3, scale.regions - 1):02d}"
    return [
        Query("Q1", "count(*)", "full", None, ("time",), ("count(*) AS n",)),
        Query(
            "Q2", "avg(f_double), full scan", "full", None, ("f_double",),
            ("count(f_double) AS n", "avg(f_double) AS avg"),
        ),
        Query(
            "Q3", f"one device ({device}), 1% of the time range", "selective",
            f"device = '{device}' AND {_time_window(scale, 0.40, 0.01)}",
            ("time", "f_double", "f_long"),
            ("count(*) AS n", "avg(f_double) AS avg", "max(f_long) AS max_long",
             "max(time) AS last"),
        ),
        Query(
            "Q4", f"one region ({region}), all time", "selective", f"region = '{region}'",
            ("f_double", "f_float"),
            ("count(*) AS n", "avg(f_double) AS avg", "count(f_float) AS n_float"),
        ),
        Query(
            "Q5", "5% of the time range, all devices", "selective",
            _time_window(scale, 0.50, 0.05), ("f_double", "f_bool", "f_str"),
            ("count(*) AS n", "avg(f_double) AS avg", "sum(CAST(f_bool AS INT)) AS n_true",
             "count(f_str) AS n_str"),
        ),
        Query(
            "Q6", "project f_double WHERE f_double > 29", "field", "f_double > 29",
            ("f_double",), ("count(*) AS n", "sum(f_double) AS total"),
        ),
    ]


def frame(spark: SparkSession, engine: Engine, path: str, query: Query) -> DataFrame:
    """The query as a DataFrame on ``engine`` (not yet executed)."""
    from pyspark.sql import functions as F

    aggregates = [F.expr(a) for a in query.aggregates]
    if engine == "tsfile":
        reader = spark.read.format("tsfile").option("columns", ",".join(query.columns))
        if query.where:
            reader = reader.option("where", query.where)
        return reader.load(path).agg(*aggregates)
    df = spark.read.parquet(path)
    if query.where:
        df = df.where(query.where)
    return df.agg(*aggregates)


def run_query(spark: SparkSession, engine: Engine, path: str, query: Query) -> list[Any]:
    """Execute and return the single result row as a list."""
    rows = frame(spark, engine, path, query).collect()
    assert len(rows) == 1
    return list(rows[0])


def same_answer(a: Sequence[Any], b: Sequence[Any], rel_tol: float = 1e-9) -> bool:
    """Equal row values; floats within ``rel_tol`` (sums differ in the last bits by order)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if isinstance(x, float) or isinstance(y, float):
            if x is None or y is None:
                if x is not y:
                    return False
            elif not math.isclose(float(x), float(y), rel_tol=rel_tol, abs_tol=1e-12):
                return False
        elif x != y:
            return False
    return True
