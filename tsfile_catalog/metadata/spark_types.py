"""Moved to :mod:`tsfile_catalog.metadata.spark.types`; this path keeps old imports working."""

from __future__ import annotations

from tsfile_catalog.metadata.spark.types import spark_type, spark_type_of, tsfile_type_of_sql

__all__ = ["spark_type", "spark_type_of", "tsfile_type_of_sql"]
