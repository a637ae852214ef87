"""Builders for the metadata records tests make by hand: parts and table schemas.

Every test that needs a :class:`PartFile` or a :class:`TableSchema` it does not read from a
real file builds it here, by keyword, so a new field changes one place and a test names only
the values it cares about.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from tsfile_catalog.metadata.parts import (
    DeviceStats,
    FieldStats,
    PartFile,
    tag_stats_from_devices,
)
from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema


def part_file(
    path: str = "p.tsfile",
    *,
    format: str = "tsfile",
    size_bytes: int = 1,
    row_count: int = 1,
    min_time: int | None = 0,
    max_time: int | None = 0,
    devices: Iterable[DeviceStats] | None = None,
    tag_names: Sequence[str] | None = None,
    fields: Mapping[str, FieldStats] | None = None,
) -> PartFile:
    """A part with the given stats (by default one row at time 0, no device stats).

    With ``tag_names``, the per-tag stats are derived from ``devices`` the way a writer records
    them; without, the part has no tag stats.
    """
    device_stats = None if devices is None else tuple(devices)
    tags = (
        {}
        if tag_names is None
        else tag_stats_from_devices(tag_names, [d.tags for d in device_stats or ()])
    )
    return PartFile(
        path=path,
        format=format,
        size_bytes=size_bytes,
        row_count=row_count,
        min_time=min_time,
        max_time=max_time,
        devices=device_stats,
        tags=tags,
        fields=dict(fields or {}),
    )


def table_schema(
    name: str,
    *,
    tags: Sequence[str] = ("city",),
    fields: Iterable[tuple[str, DataType]] = (),
) -> TableSchema:
    """A schema of STRING tag columns ``tags`` followed by the FIELD columns ``fields``."""
    return TableSchema.of(
        name,
        [
            *(Column(tag, DataType.STRING, Category.TAG) for tag in tags),
            *(Column(field, type_, Category.FIELD) for field, type_ in fields),
        ],
    )


def weather_schema(*fields: tuple[str, DataType], table: str = "weather") -> TableSchema:
    """The TsFile tests' table: tags ``city`` and ``device``, then ``fields``."""
    return table_schema(table, tags=("city", "device"), fields=fields)
