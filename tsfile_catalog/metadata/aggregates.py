"""Moved to :mod:`tsfile_catalog.metadata.stats_aggregates`; kept so old imports work."""

from tsfile_catalog.metadata.stats_aggregates import (
    Aggregate,
    AggregateFunction,
    AggregatePlan,
    finish_aggregates,
    metadata_count,
    plan_aggregates,
    supported_aggregate,
)

__all__ = [
    "AggregateFunction",
    "Aggregate",
    "AggregatePlan",
    "metadata_count",
    "supported_aggregate",
    "plan_aggregates",
    "finish_aggregates",
]
