"""Moved to :mod:`tsfile_catalog.exec.read`; kept so old imports work."""

from tsfile_catalog.exec.read import (
    NORMALIZED_ARROW,
    SliceQuery,
    normalize,
    read_slices,
    scan_columns,
)

__all__ = [
    "NORMALIZED_ARROW",
    "SliceQuery",
    "normalize",
    "read_slices",
    "scan_columns",
]
