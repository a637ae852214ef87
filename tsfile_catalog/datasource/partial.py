"""Moved to :mod:`tsfile_catalog.datasource.partial_aggregates`; kept so old imports work."""

from tsfile_catalog.datasource.partial_aggregates import (
    TsFilePartialReader,
    TsFileStatsPartition,
    partial_schema,
)

__all__ = ["partial_schema", "TsFilePartialReader", "TsFileStatsPartition"]
