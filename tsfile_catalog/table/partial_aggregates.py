"""Moved to :mod:`tsfile_catalog.exec.partial_aggregates`; kept so old imports work."""

from tsfile_catalog.exec.partial_aggregates import (
    partial_aggregate,
    partial_aggregates,
)

__all__ = [
    "partial_aggregate",
    "partial_aggregates",
]
