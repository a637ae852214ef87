"""Moved to :mod:`tsfile_catalog.metadata.spark.quoting`; this path keeps old imports working."""

from __future__ import annotations

from tsfile_catalog.metadata.spark.quoting import quote_identifier, quote_string

__all__ = ["quote_identifier", "quote_string"]
