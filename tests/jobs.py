"""Spark jobs in tests: counting those an action runs (how tests show an answer came
without one), and running a rewrite statement both in Spark tasks and without them."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Row, SparkSession

    from tsfile_catalog import Catalog


def spark_jobs(spark: SparkSession, df: DataFrame) -> int:
    """How many Spark jobs collecting ``df`` ran."""
    group = f"jobs-{uuid.uuid4().hex}"
    context = spark.sparkContext
    context.setJobGroup(group, "counting a test's jobs")
    try:
        df.collect()
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    return len(context.statusTracker().getJobIdsForGroup(group))


def both_ways(spark: SparkSession, catalog: Catalog, statement: str) -> tuple[Row, Row]:
    """``statement`` (``{}``: the table) on table ``t`` in Spark tasks, then on its twin
    ``u`` in the driver (``spark.tsfile.distributedRewrites.enabled=false``): the answer row
    of each."""
    from tsfile_catalog.datasource.rewrite_tasks import DISTRIBUTED_REWRITES

    row = catalog.sql(statement.format("t")).collect()[0]
    spark.conf.set(DISTRIBUTED_REWRITES, "false")
    try:
        same = catalog.sql(statement.format("u")).collect()[0]
    finally:
        spark.conf.unset(DISTRIBUTED_REWRITES)
    return row, same
