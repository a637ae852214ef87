"""Moved to :mod:`tsfile_catalog.exec.time_buckets`; kept so old imports work."""

from tsfile_catalog.exec.time_buckets import (
    RAW_PER_SECOND,
    bucket_raw,
    buckets_of,
    floor_divide,
)

__all__ = [
    "floor_divide",
    "bucket_raw",
    "buckets_of",
    "RAW_PER_SECOND",
]
