"""Duplicate (device, time) rows across the parts of one write, resolved on the driver.

Tasks deduplicate their own rows (``sort_and_dedupe``); whether two equal rows meet in one
task depends on Spark's partitioning and on ``maxRowsPerFile``, so the commit checks across
parts too. :func:`~tsfile_catalog.metadata.overlap.overlapping_ranges` says from the parts'
per-device time ranges where a collision is possible; only those devices and time ranges are
read back (time and TAG columns only). Nothing is read when no two parts overlap.

"Last" across parts follows the write's input order: the row of the higher Spark partition
wins, and within a partition the later part file (files roll over in input order). That is the
order in which ``df.collect()`` returns the rows, the same "last" a task applies to its own
rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from tsfile_catalog.formats.tsfile import duplicate_error, opened, scan_file
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.expressions import INT64_MAX, INT64_MIN
from tsfile_catalog.metadata.overlap import DeviceRange, overlapping_ranges
from tsfile_catalog.metadata.parts import DeviceStats
from tsfile_catalog.metadata.schema import TIME_COLUMN, TableSchema

__all__ = ["duplicates_to_drop", "read_part"]

# A native TAG filter is one OR term per device; past this many devices reading the time
# range of every device and joining in Arrow is cheaper than a huge filter expression.
_MAX_FILTER_DEVICES = 256
_BATCH_ROWS = 65_536
_PART = "__part"


def _scan(
    io: FileIO,
    url: str,
    schema: TableSchema,
    columns: Sequence[str],
    *,
    time_min: int = INT64_MIN,
    time_max: int = INT64_MAX,
    devices: Sequence[tuple[str | None, ...]] | None = None,
) -> list[pa.Table]:
    with opened(io, url) as reader:
        return list(
            scan_file(
                reader,
                schema.table,
                list(columns),
                time_min=time_min,
                time_max=time_max,
                tag_values={},
                device_group=devices,
                tag_names=schema.tag_names,
                batch_rows=_BATCH_ROWS,
            )
        )


def read_part(io: FileIO, url: str, schema: TableSchema) -> pa.Table:
    """Every row of a staged part, in the raw Arrow types the TsFile writer accepts, named
    as in ``schema`` (the file holds its columns' physical names)."""
    rows = pa.concat_tables(_scan(io, url, schema, [c.physical for c in schema.columns]))
    names = {c.physical: c.name for c in schema.columns}
    return rows.rename_columns([names.get(n, n) for n in rows.column_names])


def _key_schema(schema: TableSchema) -> pa.Schema:
    return pa.schema(
        [
            *(pa.field(name, pa.string()) for name in schema.tag_names),
            pa.field(TIME_COLUMN, pa.int64()),
            pa.field(_PART, pa.int64()),
        ]
    )


def _keys_in_ranges(
    io: FileIO, url: str, schema: TableSchema, ranges: Sequence[DeviceRange], part: int
) -> pa.Table:
    """(TAGs..., time, part) of the part's rows inside ``ranges``."""
    tag_names = list(schema.tag_names)
    devices = [r.tags for r in ranges]
    found = _scan(
        io,
        url,
        schema,
        tag_names,
        time_min=min(r.min_time for r in ranges),
        time_max=max(r.max_time for r in ranges),
        devices=devices if len(devices) <= _MAX_FILTER_DEVICES else None,
    )
    key_schema = _key_schema(schema)
    if not found:
        return key_schema.empty_table()
    rows = pa.concat_tables(found)
    rows = rows.append_column(_PART, pa.array([part] * rows.num_rows, pa.int64()))
    rows = rows.select(key_schema.names).cast(key_schema)
    bounds = pa.table(
        {
            **{
                name: pa.array([r.tags[i] for r in ranges], pa.string())
                for i, name in enumerate(tag_names)
            },
            "__lo": pa.array([r.min_time for r in ranges], pa.int64()),
            "__hi": pa.array([r.max_time for r in ranges], pa.int64()),
        }
    )
    joined = rows.join(bounds, keys=tag_names, join_type="inner")
    inside = pc.and_(
        pc.greater_equal(joined[TIME_COLUMN], joined["__lo"]),
        pc.less_equal(joined[TIME_COLUMN], joined["__hi"]),
    )
    return joined.filter(inside).select(key_schema.names)


def duplicates_to_drop(
    io: FileIO,
    urls: Sequence[str],
    devices: Sequence[Sequence[DeviceStats]],
    schema: TableSchema,
    on_duplicate: str,
) -> Mapping[int, pa.Table]:
    """The rows to remove so that no (device, time) is in two of the parts ``urls``.

    ``urls`` are in write order (see the module docstring) with each part's complete device
    list in ``devices``.

    Returns:
        Per part index, the keys (TAG columns and ``time``) of the rows a later part
        supersedes; empty when no two parts share a (device, time).

    Raises:
        DataError: with ``on_duplicate='error'``, naming the first duplicated device and time.
    """
    ranges = overlapping_ranges(devices)
    if not ranges:
        return {}
    keys = pa.concat_tables(
        [_keys_in_ranges(io, urls[part], schema, found, part) for part, found in ranges.items()]
    )
    key_names = [*schema.tag_names, TIME_COLUMN]
    counted = keys.group_by(key_names).aggregate([(_PART, "count"), (_PART, "max")])
    repeated = counted.filter(pc.greater(counted[f"{_PART}_count"], 1))
    if repeated.num_rows == 0:
        return {}
    if on_duplicate == "error":
        first = repeated.sort_by([(k, "ascending") for k in key_names]).slice(0, 1)
        raise duplicate_error(schema, first.to_pylist()[0], across_parts=True)
    winners = repeated.select([*key_names, f"{_PART}_max"])
    losing = keys.join(winners, keys=key_names, join_type="inner")
    losing = losing.filter(pc.not_equal(losing[_PART], losing[f"{_PART}_max"]))
    out: dict[int, pa.Table] = {}
    for part in sorted(set(losing[_PART].to_pylist())):
        rows = losing.filter(pc.equal(losing[_PART], part))
        out[part] = rows.select(key_names)
    return out
