"""The benchmark queries, expressed once and run on every engine.

Every query ends in a small aggregate (Q7/Q8 grouped per device), or returns a few rows (Q9,
the latest readings of a device), so the timing measures the scan and not ``collect()`` of
millions of rows, and so the engines' answers can be compared exactly. Six engines: tsfile
through the DataFrame API as a user writes it (``spark.read.format("tsfile").load(path)
.where(...)``, then the projection, aggregate or top-N), with the catalog plugin's jar and
extensions (``tsfile``: the plugin's scan of the path, docs/spark-catalog.md) and without them
(``tsfile_nojar``: the same code on the Python source alone, which Spark hands no filter,
column or aggregate; ``spark.tsfile.pathReads.enabled=false`` is what a session without the
jar reads), tsfile through
``Catalog.sql`` (the same query as SQL text, which the catalog plans: pruning, small scans in
the driver, and whatever aggregate pushdown it knows), the same SQL text through plain
``spark.sql`` on the table in the Spark catalog plugin (Spark plans it and hands the plugin's
scan its columns, filters and aggregates), and Spark on Parquet written with snappy and with
zstd (the predicate as a DataFrame filter, pushed into the Parquet reader natively).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from bench.datagen import STEP_MS, T0_MS, Scale

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from tsfile_catalog import Catalog

__all__ = [
    "Engine",
    "Query",
    "ENGINES",
    "SPARK_CATALOG",
    "SQL_TABLE",
    "build_queries",
    "plugin_table",
    "run_query",
    "same_answer",
    "same_rows",
    "sql_text",
]

Engine = Literal["tsfile", "tsfile_nojar", "tsfile_sql", "spark_sql", "parquet", "parquet_zstd"]
ENGINES: tuple[Engine, ...] = (
    "tsfile",
    "tsfile_nojar",
    "tsfile_sql",
    "spark_sql",
    "parquet",
    "parquet_zstd",
)
# The session setting that keeps a path read on the Python source's own scan (no plugin).
PATH_READS = "spark.tsfile.pathReads.enabled"
SQL_TABLE = "sensors"  # the catalog name the tsfile_sql engine queries
SPARK_CATALOG = "bench"  # the catalog plugin's name in a session bench.run starts
HOUR_MS = 3_600_000


@dataclass(frozen=True)
class Query:
    id: str
    title: str
    kind: Literal["full", "selective", "field", "grouped", "latest"]
    where: str | None
    # What the aggregate reads (tsfile ``columns`` option); without aggregates, the rows.
    columns: tuple[str, ...]
    aggregates: tuple[str, ...]  # Spark SQL aggregate expressions
    group_by: tuple[tuple[str, str], ...] = ()  # (expression, output name)
    # Without aggregates: the first ``latest`` rows by time, newest first (the rows returned).
    latest: int | None = None

    def source_options(self) -> dict[str, str]:
        """The ``tsfile`` source options of the DataFrame engine: the only way a Python
        data source is told the query's columns, filter and top-N."""
        options = {"columns": ",".join(self.columns)}
        if self.where:
            options["where"] = self.where
        if self.latest is not None:
            options["latest"] = str(self.latest)
        return options

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "kind": self.kind,
            "where": self.where,
            "columns": list(self.columns),
            "aggregates": list(self.aggregates),
            "group_by": [expr for expr, _ in self.group_by],
            "latest": self.latest,
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
            "Q2",
            "avg(f_double), full scan",
            "full",
            None,
            ("f_double",),
            ("count(f_double) AS n", "avg(f_double) AS avg"),
        ),
        Query(
            "Q3",
            f"one device ({device}), 1% of the time range",
            "selective",
            f"device = '{device}' AND {_time_window(scale, 0.40, 0.01)}",
            ("time", "f_double", "f_long"),
            (
                "count(*) AS n",
                "avg(f_double) AS avg",
                "max(f_long) AS max_long",
                "max(time) AS last",
            ),
        ),
        Query(
            "Q4",
            f"one region ({region}), all time",
            "selective",
            f"region = '{region}'",
            ("f_double", "f_float"),
            ("count(*) AS n", "avg(f_double) AS avg", "count(f_float) AS n_float"),
        ),
        Query(
            "Q5",
            "5% of the time range, all devices",
            "selective",
            _time_window(scale, 0.50, 0.05),
            ("f_double", "f_bool", "f_str"),
            (
                "count(*) AS n",
                "avg(f_double) AS avg",
                "sum(CAST(f_bool AS INT)) AS n_true",
                "count(f_str) AS n_str",
            ),
        ),
        Query(
            "Q6",
            "project f_double WHERE f_double > 29",
            "field",
            "f_double > 29",
            ("f_double",),
            ("count(*) AS n", "sum(f_double) AS total"),
        ),
        Query(
            "Q7",
            "hourly average per device over a day",
            "grouped",
            _first_day(scale),
            ("time", "device", "f_double"),
            ("avg(f_double) AS avg", "count(*) AS n"),
            (("device", "device"), (f"floor(time / {HOUR_MS}) * {HOUR_MS}", "hour")),
        ),
        Query(
            "Q8",
            "last value per device",
            "grouped",
            None,
            ("time", "device", "f_double"),
            ("max_by(f_double, time) AS last", "max(time) AS at"),
            (("device", "device"),),
        ),
        Query(
            "Q9",
            f"latest 10 readings of one device ({device})",
            "latest",
            f"device = '{device}'",
            ("time", "device", "f_double"),
            (),
            latest=10,
        ),
    ]


def _first_day(scale: Scale) -> str:
    """The first day of data (all of it when the data spans less)."""
    return f"time >= {T0_MS} AND time < {T0_MS + 24 * HOUR_MS}"


def sql_text(query: Query, table: str = SQL_TABLE) -> str:
    """The query as one SQL statement on catalog table ``table``."""
    select = [f"{expr} AS {name}" for expr, name in query.group_by] + list(query.aggregates)
    text = f"SELECT {', '.join(select or query.columns)} FROM {table}"
    if query.where:
        text += f" WHERE {query.where}"
    if query.group_by:
        text += " GROUP BY " + ", ".join(expr for expr, _ in query.group_by)
    if query.latest is not None:
        text += f" ORDER BY time DESC LIMIT {query.latest}"
    return text


def plugin_table(spark: SparkSession, warehouse: str, table: str = SQL_TABLE) -> str:
    """``table``'s name for ``spark.sql`` (default :data:`SQL_TABLE`, the ``spark_sql``
    engine's): the Catalog's unqualified ``sensors`` in ``warehouse`` is
    ``<catalog>.default.sensors`` in a catalog plugin's catalog over the same warehouse, whose
    registry is the Catalog's.

    The catalog is :data:`SPARK_CATALOG` when the session was started with it over
    ``warehouse``, else one configured now under a fresh name (Spark keeps a catalog it has
    used with the settings it first had, so a reused name could point at another warehouse).
    Either way the plugin's delegate is registered.

    Raises:
        TsFileCatalogError: the plugin's jar is not on the session's classpath.
    """
    import uuid

    from py4j.java_gateway import JavaClass  # PySpark's own dependency

    from tsfile_catalog.exceptions import TsFileCatalogError
    from tsfile_catalog.io import FileIO
    from tsfile_catalog.spark_catalog.session import CATALOG_CLASS, register

    register(spark)
    jvm = spark.sparkContext._jvm
    if jvm is None or not isinstance(jvm.io.tsfilecatalog.spark.Client, JavaClass):
        raise TsFileCatalogError(
            "the spark_sql engine needs the catalog plugin's jar on the session's classpath: "
            "start the session with tsfile_catalog.configure(builder, warehouse=...)"
        )
    warehouse = FileIO(warehouse).normalize(warehouse)  # as the catalog's settings hold it
    prefix = "spark.sql.catalog."
    name = SPARK_CATALOG
    if spark.conf.get(f"{prefix}{name}.warehouse", None) != warehouse:
        name = f"{SPARK_CATALOG}_{uuid.uuid4().hex[:8]}"
        spark.conf.set(f"{prefix}{name}", CATALOG_CLASS)
        spark.conf.set(f"{prefix}{name}.warehouse", warehouse)
    return f"{name}.default.{table}"


def frame(
    spark: SparkSession,
    engine: Engine,
    path: str,
    query: Query,
    catalog: Catalog | None = None,
    *,
    spark_table: str | None = None,
) -> DataFrame:
    """The query as a DataFrame on ``engine`` (not yet executed); ``tsfile_sql`` runs
    :func:`sql_text` through ``catalog``, where ``path`` is registered as :data:`SQL_TABLE`;
    ``spark_sql`` runs it through ``spark.sql`` on ``spark_table``, the same table's name in
    the catalog plugin (``<catalog>.default.sensors``)."""
    from pyspark.sql import functions as F

    aggregates = [F.expr(a) for a in query.aggregates]
    groups = [F.expr(expr).alias(name) for expr, name in query.group_by]
    if engine == "tsfile_sql":
        assert catalog is not None, "the tsfile_sql engine needs a catalog"
        return catalog.sql(sql_text(query))
    if engine == "spark_sql":
        assert spark_table is not None, "the spark_sql engine needs the plugin's table name"
        return spark.sql(sql_text(query, spark_table))
    if engine in ("tsfile", "tsfile_nojar"):
        df = spark.read.format("tsfile").load(path)
    else:
        df = spark.read.parquet(path)
    if query.where:
        df = df.where(query.where)
    if query.latest is not None:
        return df.select(*query.columns).orderBy(F.desc("time")).limit(query.latest)
    return df.groupBy(*groups).agg(*aggregates) if groups else df.agg(*aggregates)


def run_query(
    spark: SparkSession,
    engine: Engine,
    path: str,
    query: Query,
    catalog: Catalog | None = None,
    *,
    spark_table: str | None = None,
) -> list[list[Any]]:
    """Execute and return the result rows as lists, sorted (grouped queries have several)."""
    # Read when load() is analysed: with the plugin (its default), or the source's own scan.
    previous = spark.conf.get(PATH_READS, None)
    spark.conf.set(PATH_READS, "false" if engine == "tsfile_nojar" else "true")
    try:
        df = frame(spark, engine, path, query, catalog, spark_table=spark_table)
    finally:
        if previous is None:
            spark.conf.unset(PATH_READS)
        else:
            spark.conf.set(PATH_READS, previous)
    rows = df.collect()
    assert rows, f"{query.id} on {engine} returned no rows"
    return sorted((list(r) for r in rows), key=lambda r: [str(v) for v in r])


def same_rows(a: Sequence[Sequence[Any]], b: Sequence[Sequence[Any]]) -> bool:
    """Equal row lists (both sorted), floats compared as :func:`same_answer` does."""
    return len(a) == len(b) and all(same_answer(x, y) for x, y in zip(a, b, strict=True))


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
