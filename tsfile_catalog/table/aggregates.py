"""Moved to :mod:`tsfile_catalog.exec.stats_aggregates`; kept so old imports work."""

from tsfile_catalog.exec.stats_aggregates import (
    device_stats_of,
    read_device_stats,
)

__all__ = [
    "read_device_stats",
    "device_stats_of",
]
