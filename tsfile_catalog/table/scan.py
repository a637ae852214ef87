"""Moved to :mod:`tsfile_catalog.exec.table_scan`; kept so old imports work."""

from tsfile_catalog.exec.table_scan import (
    TableScan,
    resolve_columns,
)

__all__ = [
    "TableScan",
    "resolve_columns",
]
