"""A schema and shorthands for predicates parsed and bound to it."""

from __future__ import annotations

from tsfile_catalog.metadata.expressions import BindContext, Expr, TimestampAs, TimeUnit, bind
from tsfile_catalog.metadata.expressions.parser import parse_predicate
from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema

SCHEMA = TableSchema.of(
    "weather",
    [
        Column("city", DataType.STRING, Category.TAG),
        Column("device", DataType.STRING, Category.TAG),
        Column("temp", DataType.DOUBLE, Category.FIELD),
        Column("day", DataType.DATE, Category.FIELD),
        Column("seen", DataType.TIMESTAMP, Category.FIELD),
        Column("ok", DataType.BOOLEAN, Category.FIELD),
        Column("level", DataType.INT32, Category.FIELD),
        Column("ratio", DataType.FLOAT, Category.FIELD),
    ],
)


def bound_text(
    text: str, unit: TimeUnit = "ms", timestamp_as: TimestampAs = "long", zone: str | None = "UTC"
) -> Expr:
    return bind(parse_predicate(text), SCHEMA, BindContext(unit, timestamp_as, zone))


def bound_timestamps(text: str, unit: TimeUnit = "ms", zone: str | None = "UTC") -> Expr:
    return bound_text(text, unit, "timestamp", zone)
