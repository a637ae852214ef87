"""Moved to :mod:`tsfile_catalog.metadata.spark.literals`; this path keeps old imports working."""

from __future__ import annotations

from tsfile_catalog.metadata.spark.literals import (
    MICROS_PER_DAY,
    instant_micros,
    local_date,
    parse_date,
    parse_double,
    parse_interval_ns,
    parse_long,
    parse_timestamp,
    parse_zone,
    start_of_day_micros,
)

__all__ = [
    "MICROS_PER_DAY",
    "parse_zone",
    "parse_date",
    "parse_timestamp",
    "parse_long",
    "parse_double",
    "instant_micros",
    "local_date",
    "start_of_day_micros",
    "parse_interval_ns",
]
