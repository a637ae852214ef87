"""Moved to :mod:`tsfile_catalog.metadata.spark.time`; this path keeps old imports working."""

from __future__ import annotations

from tsfile_catalog.metadata.spark.time import SPARK_TIMESTAMP_RANGE, spark_timestamp_bounds

__all__ = ["SPARK_TIMESTAMP_RANGE", "spark_timestamp_bounds"]
