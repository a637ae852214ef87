"""Counting the Spark jobs an action runs: how tests show an answer came without one."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


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
