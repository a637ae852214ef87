"""Small scans without a Spark job: read them in the driver, hand Spark a local relation.

A query on the ``tsfile`` Python data source pays a fixed cost per Spark job (planning in a
Python worker, a task, rows crossing from a Python worker into the JVM) that dwarfs reading a
few thousand rows. When the manifest's row counts say a table reference reads at most
``smallScanRows`` rows, :func:`local_scan` reads it in the driver with the same Spark-free
read path every reader shares (:func:`~tsfile_catalog.exec.read.read_slices` over the
slices :func:`~tsfile_catalog.metadata.slices.plan_slices` plans for the pruned parts) and
converts to Spark's types exactly as the data source does
(:func:`~tsfile_catalog.datasource.types.to_output`), so the rows and their types are the
same on both paths.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from tsfile_catalog.datasource.types import arrow_schema, spark_schema, to_output
from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.exec.read import read_slices
from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.metadata.scan import ScanPlan
from tsfile_catalog.metadata.slices import estimated_rows, matching_devices, plan_slices

__all__ = [
    "SMALL_SCAN_CONF",
    "DEFAULT_SMALL_SCAN_ROWS",
    "small_scan_rows",
    "planned_rows",
    "local_scan",
]

SMALL_SCAN_CONF = "spark.tsfile.smallScanRows"
"""Session setting for the threshold (a ``Catalog(small_scan_rows=...)`` argument wins)."""

DEFAULT_SMALL_SCAN_ROWS = 100_000
"""Chosen from ``python -m bench.smallscan`` (docs/benchmarks-smallscan.md): the largest
measured scan for which the driver read plus ``createDataFrame`` still beat the data source's
job on the same query (the next, twice as large, was clearly slower)."""


def small_scan_rows(spark: SparkSession, configured: int | None) -> int:
    """The threshold in force: the catalog's own, else the session's, else the default.

    Raises:
        OptionError: the session setting is not a non-negative integer.
    """
    if configured is not None:
        return configured
    text = spark.conf.get(SMALL_SCAN_CONF, None)
    if text is None:
        return DEFAULT_SMALL_SCAN_ROWS
    try:
        value = int(str(text).strip())
    except ValueError:
        value = -1
    if value < 0:
        raise OptionError(
            f"{SMALL_SCAN_CONF} = {text!r} is not a row count (a non-negative integer; 0 "
            "turns the driver-side read of small scans off)"
        )
    return value


def planned_rows(plan: ScanPlan) -> int:
    """At most how many rows the plan reads: the manifest's row counts of the kept parts,
    per device where the part records its devices (pushed TAG sets and time range)."""
    tags = plan.schema.tag_names
    return sum(
        estimated_rows(part, matching_devices(part, plan.pushdown, tags)) for part in plan.parts
    )


def local_scan(
    spark: SparkSession,
    scan: ResolvedScan,
    plan: ScanPlan,
    columns: Sequence[str],
) -> DataFrame:
    """``columns`` of the rows ``plan`` selects, read here, as a DataFrame over a local
    relation with the exact schema the ``tsfile`` source would give the same scan (read with
    the scan's ``timestamp_as`` and ``unit``). For a query whose every filter on these rows
    ``plan`` took: Spark evaluates the query over a local relation while it plans."""
    schema = spark_schema(scan.schema, columns, scan.timestamp_as)
    out_schema = arrow_schema(schema)
    # One group: the driver reads every slice anyway, in path order like the source's tasks.
    groups = plan_slices(
        plan.parts, plan.pushdown, scan.schema.tag_names, 1 << 62, merges=plan.merges
    )
    slices = [piece for group in groups for piece in group]
    tables = [
        to_output(table, scan.schema, out_schema, scan.unit)
        for table in read_slices(scan, slices, plan.pushdown, columns)
    ]
    if not tables:
        return _no_rows(spark, schema)
    return spark.createDataFrame(pa.concat_tables(tables), schema)


def _no_rows(spark: SparkSession, schema: StructType) -> DataFrame:
    """No rows, as a relation Spark's optimizer cannot see is empty, like a scan's: over an
    empty local relation it drops the query's operators before folding their constants, and
    a constant that fails to fold (``txt IN ('a', DATE '2024-01-01')`` under ANSI) would
    answer where Spark over the data source fails."""
    try:
        empty = spark.sparkContext.emptyRDD()
    except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext
        return spark.createDataFrame(arrow_schema(schema).empty_table(), schema)
    return spark.createDataFrame(empty, schema)
