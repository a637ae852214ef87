"""Spark's quoting of identifiers and string literals, as plain string functions.

They live apart from :mod:`tsfile_catalog.metadata.spark.dialect` (which re-exports them) so
that results naming columns (DESCRIBE DETAIL's schema string) need no SQL parser: the CLI's
metadata commands answer without importing sqlglot.
"""

from __future__ import annotations

__all__ = ["quote_identifier", "quote_string"]


def quote_identifier(name: str) -> str:
    """Quote ``name`` as a Spark identifier: backticks, embedded backticks doubled."""
    return "`" + name.replace("`", "``") + "`"


def quote_string(value: str) -> str:
    """Quote ``value`` as a Spark string literal (backslash escapes, as Spark reads them)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
