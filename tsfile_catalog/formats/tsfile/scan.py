"""Scanning rows out of an open TsFile as Arrow tables, for one pushed-down query.

The native query takes a time range and a TAG filter; its time filter is not exact, so the
range is applied again to every batch (the pushdown never decides which rows a scan returns).
The native block size is this module's choice, not the caller's batch size: see
:data:`NATIVE_BLOCK_ROWS`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from tsfile_catalog.formats.base import coalesce_tables
from tsfile_catalog.formats.tsfile.native import native
from tsfile_catalog.metadata.schema import TIME_COLUMN

__all__ = ["NATIVE_BLOCK_ROWS", "scan_file"]

# The ``batch_size`` of native queries. The 2.5 reader hands out one block per device (or per
# this many rows of one device) and sizes every column of every block for ``batch_size`` rows,
# however few the block holds. At 65,536 a numeric column's buffer is 512 KiB, beyond glibc's
# default mmap threshold: depending on the allocator's state (it varies from process to
# process) each block of a device of a thousand rows then costs fresh, zeroed pages per
# column, and that, not decoding, was most of the cost of reading time + a TAG + a FIELD (it
# looked like the per-row cost of TAG columns). At 4,096 rows the buffers stay small heap
# allocations while the per-block cost of the Arrow hand-off stays low; blocks are coalesced
# to the caller's ``batch_rows`` afterwards either way.
NATIVE_BLOCK_ROWS = 4_096


def _tag_filter(
    tag_values: Mapping[str, frozenset[str]],
    device_group: Sequence[tuple[str | None, ...]] | None,
    tag_names: Sequence[str],
) -> Any:
    tsfile = native()

    terms = []
    for name, values in sorted(tag_values.items()):
        ors = None
        for value in sorted(values):
            eq = tsfile.tag_eq(name, value)
            ors = eq if ors is None else ors | eq
        terms.append(ors)
    if device_group is not None:
        group = None
        for tags in device_group:
            one = None
            for name, tag in zip(tag_names, tags, strict=False):
                term = tsfile.tag_is_null(name) if tag is None else tsfile.tag_eq(name, tag)
                one = term if one is None else one & term
            if one is not None:
                group = one if group is None else group | one
        if group is not None:
            terms.append(group)
    result = None
    for term in terms:
        result = term if result is None else result & term
    return result


def scan_file(
    reader: Any,
    table: str,
    columns: Sequence[str],
    *,
    time_min: int,
    time_max: int,
    tag_values: Mapping[str, frozenset[str]],
    device_group: Sequence[tuple[str | None, ...]] | None,
    tag_names: Sequence[str],
    batch_rows: int,
) -> Iterator[pa.Table]:
    """Arrow tables of ``time`` + ``columns`` for one query on an open reader.

    The native reader's time filter is not exact (2.5 returns the next row of a device when
    ``[time_min, time_max]`` falls between two of its rows), so the range is applied again
    here: the pushdown must never decide which rows a scan returns.
    """
    bounded = time_min > -(2**63) or time_max < 2**63 - 1
    result = reader.query_table(
        table,
        list(columns),
        start_time=time_min,
        end_time=time_max,
        tag_filter=_tag_filter(tag_values, device_group, tag_names),
        batch_size=min(batch_rows, NATIVE_BLOCK_ROWS),
    )

    def blocks() -> Iterator[pa.Table]:
        while (batch := result.read_arrow_batch()) is not None:
            yield batch

    try:
        # The time range is re-applied per ``batch_rows`` rows, not per native block.
        for batch in coalesce_tables(blocks(), batch_rows):
            if bounded:
                batch = _within(batch, time_min, time_max)
            if batch.num_rows:
                yield batch
    finally:
        result.close()


def _within(batch: pa.Table, time_min: int, time_max: int) -> pa.Table:
    times = batch.column(TIME_COLUMN)
    if not pa.types.is_integer(times.type):
        times = times.cast(pa.int64())
    inside = pc.and_(pc.greater_equal(times, time_min), pc.less_equal(times, time_max))
    if pc.all(inside).as_py():
        return batch
    return batch.filter(inside)
