"""Moved to :mod:`tsfile_catalog.metadata.spark.dialect`; this path keeps old imports working."""

from __future__ import annotations

from tsfile_catalog.metadata.spark.dialect import (
    SparkDialect,
    SparkLiteralParser,
    quote_identifier,
    quote_string,
)

__all__ = ["SparkDialect", "SparkLiteralParser", "quote_identifier", "quote_string"]
