"""Moved to :mod:`tsfile_catalog.exec.arrow_filter`; kept so old imports work."""

from tsfile_catalog.exec.arrow_filter import (
    apply_filter,
    predicate_mask,
)

__all__ = [
    "predicate_mask",
    "apply_filter",
]
