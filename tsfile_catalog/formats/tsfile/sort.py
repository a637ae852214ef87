"""Rows in the order the native writer requires: by device, then time, duplicates resolved.

Pure Arrow (no ``tsfile``): the writer rejects, or after an internal flush silently
corrupts on, anything else, and a write's duplicates are found by the same rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from tsfile_catalog.exceptions import DataError
from tsfile_catalog.metadata.schema import TIME_COLUMN, TableSchema

__all__ = ["sort_and_dedupe", "split_duplicates", "duplicate_error"]


def duplicate_error(
    schema: TableSchema, row: Mapping[str, Any], *, across_parts: bool = False
) -> DataError:
    """The error for two rows of one write with the same device and time."""
    device = ", ".join(f"{t}={row[t]!r}" for t in schema.tag_names)
    where = (
        " in two part files of this write (different Spark partitions or rolled files)"
        if across_parts
        else ""
    )
    return DataError(
        f"duplicate rows for device ({device}) at time {row[TIME_COLUMN]}{where}; TsFile keeps "
        "one row per (device, time): deduplicate, or set onDuplicate=last to keep the last one"
    )


def sort_and_dedupe(data: pa.Table, schema: TableSchema, on_duplicate: str) -> pa.Table:
    """Rows ordered by device then time, with duplicate (device, time) pairs resolved.

    The native writer requires exactly this order and rejects (or, after an internal flush,
    silently corrupts on) anything else. Among duplicates the input order survives, so
    "last" means last written.

    A sort on the TAG strings dominated a write task's time; the TAG tuple is mapped to one
    integer device code in the same order (:func:`_device_codes`), input that already is in
    order (checked, vectorised) is not reordered at all, and input in long runs of one device
    (what a clustered write's shuffle hands a task) is ordered by moving the runs whole. The
    result is the same as :func:`_sort_and_dedupe_by_keys`, which stays the path when codes
    do not fit.
    """
    data, same = _sort_by_device_time(data, schema)
    if same is None:
        return data
    return _resolve_adjacent(data, schema, on_duplicate, same)


def split_duplicates(data: pa.Table, schema: TableSchema) -> list[pa.Table]:
    """Rows split into as few tables as hold each (device, time) at most once, every row kept:
    the k-th row of a (device, time) in input order goes to the k-th table, each ordered by
    device then time. One table when there is no duplicate.

    What OPTIMIZE writes when the parts it merges hold the same (device, time) more than once
    (an append-only table keeps both rows; one TsFile cannot hold them): the first rows of
    every key in one new part, the repeats in as many more as the most repeated key needs.
    """
    data, same = _sort_by_device_time(data, schema)
    if same is None or not pc.any(same).as_py():
        return [data]
    # A row's rank among its (device, time) run: its index less the index its run starts at.
    starts = pa.concat_arrays([pa.array([True]), pc.invert(_contiguous(same))])
    index = pa.array(range(data.num_rows), pa.int64())
    run_start = pc.cumulative_max(pc.if_else(starts, index, 0))
    rank = pc.subtract(index, run_start)
    deepest = pc.max(rank).as_py()
    return [data.filter(pc.equal(rank, k)) for k in range(deepest + 1)]


def _contiguous(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def _sort_by_device_time(
    data: pa.Table, schema: TableSchema
) -> tuple[pa.Table, pa.Array | pa.ChunkedArray | None]:
    """``data`` stably ordered by device then time, and ``same`` (``same[i]``: row i+1 has
    row i's device and time), None when there are fewer than two rows."""

    if data.num_rows == 0:
        return data, None
    time = data.column(TIME_COLUMN)
    device = _device_codes(data, schema.tag_names)
    if device is None or time.null_count:
        return _sort_by_keys(data, schema)
    time = time.combine_chunks() if isinstance(time, pa.ChunkedArray) else time
    if not _in_device_time_order(device, time):
        grouped = _by_device_runs(data, device, time)
        if grouped is not None:
            return _with_same(*grouped)
        # Every sort here is stable: equal (device, time) keep their input order. Rows
        # usually arrive in time order, when grouping by device alone (a counting sort on
        # small integers) already orders them; otherwise sort on both.
        indices = pc.sort_indices(device)
        if not _in_device_time_order(device.take(indices), time.take(indices)):
            indices = pc.sort_indices(
                pa.table({"device": device, "time": time}),
                sort_keys=[("device", "ascending"), ("time", "ascending")],
            )
        # A take from one contiguous table is cheaper than from Spark's many small batches.
        data = data.combine_chunks().take(indices)
        device, time = device.take(indices), time.take(indices)
    return _with_same(data, device, time)


def _with_same(
    data: pa.Table, device: pa.Array, time: pa.Array
) -> tuple[pa.Table, pa.Array | None]:
    """Ordered ``data`` and its ``same`` (see :func:`_sort_by_device_time`)."""
    if data.num_rows < 2:
        return data, None
    n = data.num_rows
    same = pc.and_(
        pc.equal(device.slice(1), device.slice(0, n - 1)),
        pc.equal(time.slice(1), time.slice(0, n - 1)),
    )
    return data, same


# The fewest rows per run, on average, for which runs are moved as slices rather than rows
# taken one by one: each slice becomes a chunk the native writer gets as a batch of its own.
_MIN_RUN_ROWS = 4096


def _by_device_runs(
    data: pa.Table, device: pa.Array, time: pa.Array
) -> tuple[pa.Table, pa.Array, pa.Array] | None:
    """``data``, ``device`` and ``time`` stably ordered by device then time when that only
    moves long runs of rows whole; None otherwise (the caller sorts).

    What a task of a clustered write receives (``sql/write_distribution.py``): Spark's shuffle
    hands over each input partition's rows of a device together, in that partition's order,
    so rows come in runs of one device in time order whose devices are out of order. Ordering
    the runs by device (stably: a device's runs keep their input order) and slicing them into
    place copies no row, where a sort and a take copy every row; the result is checked
    and is what the stable sort gives (equal keys keep their input order).
    """
    n = len(device)
    changes = pc.not_equal(device.slice(1), device.slice(0, n - 1))
    if ((pc.sum(changes).as_py() or 0) + 1) * _MIN_RUN_ROWS > n:
        return None
    starts = pc.add(pc.indices_nonzero(changes), 1).to_pylist()
    bounds = [0, *starts, n]
    codes = device.take(pa.array(bounds[:-1], pa.int64())).to_pylist()
    runs = sorted(range(len(codes)), key=lambda r: (codes[r], r))
    spans = [(bounds[r], bounds[r + 1] - bounds[r]) for r in runs]
    ordered_device = pa.concat_arrays([device.slice(s, k) for s, k in spans])
    ordered_time = pa.concat_arrays([time.slice(s, k) for s, k in spans])
    if not _in_device_time_order(ordered_device, ordered_time):
        return None
    return pa.concat_tables([data.slice(s, k) for s, k in spans]), ordered_device, ordered_time


# Device codes are products of the TAG columns' distinct counts; beyond this the general
# sort is used rather than risk overflowing int64.
_MAX_DEVICE_CODE = 2**62


def _device_codes(data: pa.Table, tags: Sequence[str]) -> pa.Array | None:
    """One int64 per row ordering rows exactly as the TAG columns do under Arrow's sort
    (byte-wise, each TAG's nulls after its values); None when the codes would not fit."""
    code = pa.array([0] * data.num_rows, pa.int64()) if not tags else None
    width = 1
    for name in tags:
        column = data.column(name)
        # Distinct values are few (one per device at most): sorting them is cheap, and
        # their rank is the column's order.
        values = pc.unique(column).drop_null()
        values = values.take(pc.sort_indices(values))
        ranks = pc.fill_null(pc.index_in(column, value_set=values), len(values))
        ranks = ranks.combine_chunks() if isinstance(ranks, pa.ChunkedArray) else ranks
        ranks = ranks.cast(pa.int64())
        width *= len(values) + 1
        if width > _MAX_DEVICE_CODE:
            return None
        code = ranks if code is None else pc.add(pc.multiply(code, len(values) + 1), ranks)
    return code


def _in_device_time_order(device: pa.Array, time: pa.Array) -> bool:
    """Whether rows already are ordered by device code, then time."""
    n = len(device)
    if n < 2:
        return True
    d0, d1 = device.slice(0, n - 1), device.slice(1)
    t0, t1 = time.slice(0, n - 1), time.slice(1)
    backwards = pc.or_(pc.less(d1, d0), pc.and_(pc.equal(d1, d0), pc.less(t1, t0)))
    return not pc.any(backwards).as_py()


def _sort_and_dedupe_by_keys(data: pa.Table, schema: TableSchema, on_duplicate: str) -> pa.Table:
    """:func:`sort_and_dedupe` by sorting on the TAG and time columns themselves."""
    data, same = _sort_by_keys(data, schema)
    if same is None:
        return data
    return _resolve_adjacent(data, schema, on_duplicate, same)


def _sort_by_keys(
    data: pa.Table, schema: TableSchema
) -> tuple[pa.Table, pa.Array | pa.ChunkedArray | None]:
    """:func:`_sort_by_device_time` by sorting on the TAG and time columns themselves."""
    keys = [*schema.tag_names, TIME_COLUMN]
    if data.num_rows == 0:
        return data, None
    # Stable sort: among duplicates the input order survives, so "last" means last written.
    indices = pc.sort_indices(data, sort_keys=[(k, "ascending") for k in keys])
    data = data.take(indices)
    if data.num_rows < 2:
        return data, None
    same = None
    for key in keys:
        col = data.column(key)
        after, before = col.slice(1), col.slice(0, data.num_rows - 1)
        # A null TAG is a value of the device key: two rows of the null device at one
        # time are duplicates too (as the device codes of the fast path see it).
        eq = pc.or_(
            pc.fill_null(pc.equal(after, before), False),
            pc.and_(pc.is_null(after), pc.is_null(before)),
        )
        same = eq if same is None else pc.and_(same, eq)
    assert same is not None
    return data, same


def _resolve_adjacent(
    data: pa.Table, schema: TableSchema, on_duplicate: str, same: pa.Array | pa.ChunkedArray
) -> pa.Table:
    """Sorted ``data`` with runs of equal keys resolved; ``same[i]``: row i+1 repeats row i."""
    if not pc.any(same).as_py():
        return data
    if on_duplicate == "error":
        first = pc.index(same, True).as_py()
        raise duplicate_error(schema, data.slice(first, 1).to_pylist()[0])
    # Keep the last row of each run of equal keys.
    keep = pc.invert(pc.fill_null(same, False))
    if isinstance(keep, pa.ChunkedArray):
        keep = keep.combine_chunks()
    mask = pa.concat_arrays([keep, pa.array([True])])
    return data.filter(mask)
