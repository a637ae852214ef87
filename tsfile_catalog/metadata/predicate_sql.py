"""Moved to :mod:`tsfile_catalog.metadata.expressions.parser`; this path keeps old imports
working."""

from __future__ import annotations

from tsfile_catalog.metadata.expressions.parser import (
    MAX_DEPTH,
    parse_predicate,
    predicate_from_sqlglot,
)

__all__ = ["parse_predicate", "predicate_from_sqlglot", "MAX_DEPTH"]
