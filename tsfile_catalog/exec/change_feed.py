"""The change data feed's rows: one commit's changes read and compared in Arrow, no Spark.

:mod:`tsfile_catalog.metadata.change_feed` decides which parts a commit's changes are
computed from; here the rows of both sides are read through the one read path
(:mod:`tsfile_catalog.exec.read`, merged by key in a ``last`` table) and compared:

* rows equal in every column cancel out, as a multiset (a rewrite that changes no row,
  a RESTORE bringing back what a later commit removed, gives nothing);
* of the rest, a key (TAG values, time) that lost exactly one row and gained exactly one is an
  update: ``update_preimage`` then ``update_postimage``; any other row is a ``delete`` or an
  ``insert``.

So applying a commit's changes to the rows before it gives the rows after it, whatever the key
mode. Values compare as Spark's grouping does: null equals null, NaN equals NaN.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tsfile_catalog.exec.read import NORMALIZED_ARROW, read_slices
from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.metadata.change_feed import (
    CHANGE_TYPE,
    COMMIT_TIMESTAMP,
    COMMIT_VERSION,
    DELETE,
    INSERT,
    UPDATE_POSTIMAGE,
    UPDATE_PREIMAGE,
    CommitChanges,
)
from tsfile_catalog.metadata.key import KeyMode
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import TIME_COLUMN
from tsfile_catalog.metadata.slices import plan_slices

__all__ = ["commit_changes", "diff_rows", "net_changes", "read_rows", "change_schema"]

_SIDE = "__side"
# Every row of a side in one task: the comparison needs them all at once anyway.
_ALL_ROWS = 1 << 62


def read_rows(scan: ResolvedScan, parts: Sequence[PartFile], key: KeyMode) -> pa.Table:
    """Every row ``parts`` hold as ``scan.schema``'s columns in the raw domain, merged by key
    when ``key`` is ``last`` (the table's rows, as far as these parts decide them)."""
    columns = list(scan.schema.display_names)
    side = replace(scan, parts=tuple(parts), candidates=None, read_only=False, key=key)
    empty = pa.schema([_raw_field(scan, c) for c in columns])
    if not parts:
        return empty.empty_table()
    plan = side.plan()
    tasks = plan_slices(
        plan.parts, plan.pushdown, plan.schema.tag_names, _ALL_ROWS, merges=plan.merges
    )
    tables = [t for task in tasks for t in read_slices(side, task, plan.pushdown, columns)]
    if not tables:
        return empty.empty_table()
    return pa.concat_tables(tables).cast(empty)


def _raw_field(scan: ResolvedScan, name: str) -> pa.Field:
    if name == TIME_COLUMN:
        return pa.field(name, pa.int64())
    column = scan.schema.column(name)
    assert column is not None
    return pa.field(name, NORMALIZED_ARROW[column.type])


def change_schema(data: pa.Schema) -> pa.Schema:
    """``data``'s columns plus the change columns (the commit time as UTC milliseconds)."""
    return (
        data.append(pa.field(CHANGE_TYPE, pa.string(), nullable=False))
        .append(pa.field(COMMIT_VERSION, pa.int64(), nullable=False))
        .append(pa.field(COMMIT_TIMESTAMP, pa.timestamp("ms", tz="UTC"), nullable=False))
    )


def commit_changes(scan: ResolvedScan, changes: CommitChanges) -> pa.Table:
    """The change rows of one commit: ``scan.schema``'s columns (raw domain) plus
    ``_change_type``, ``_commit_version`` and ``_commit_timestamp``, sorted by key."""
    before = read_rows(scan, changes.before, changes.before_key)
    after = read_rows(scan, changes.after, changes.after_key)
    keys = [*scan.schema.tag_names, TIME_COLUMN]
    if changes.touched:
        before, after = _touched_keys_only(scan, changes, before, after, keys)
    rows, kinds = diff_rows(before, after, keys)
    return _with_commit(rows, kinds, changes.version, changes.timestamp_ms)


def _touched_keys_only(
    scan: ResolvedScan,
    changes: CommitChanges,
    before: pa.Table,
    after: pa.Table,
    keys: Sequence[str],
) -> tuple[pa.Table, pa.Table]:
    """``before`` and ``after`` reduced to the keys the commit's own parts hold: no other key
    can have changed (:mod:`tsfile_catalog.metadata.change_feed`), and a small correction of
    a large table then compares a few rows instead of sorting all of them."""
    own = [p for p in (*changes.before, *changes.after) if p.path in changes.touched]
    unique = {p.path: p for p in own}
    touched = _join_keys(read_rows(scan, list(unique.values()), "keep"), keys)
    touched = touched.group_by(touched.column_names).aggregate([])
    return _semi_join(before, touched, keys), _semi_join(after, touched, keys)


def _join_keys(rows: pa.Table, keys: Sequence[str]) -> pa.Table:
    """``rows``' key columns as a hash join can match them: a join matches no null, so each
    nullable key column is its value with nulls filled plus whether it was null."""
    columns: dict[str, pa.Array | pa.ChunkedArray] = {}
    for i, name in enumerate(keys):
        column = rows.column(name)
        if column.null_count:
            columns[f"__k{i}"] = pc.fill_null(column, pa.scalar("", column.type))
        else:
            columns[f"__k{i}"] = column
        columns[f"__n{i}"] = pc.is_null(column)
    return pa.table(columns)


def _semi_join(rows: pa.Table, touched: pa.Table, keys: Sequence[str]) -> pa.Table:
    """The rows of ``rows`` whose key is one of ``touched``'s (:func:`_join_keys` form)."""
    index = pa.array(np.arange(rows.num_rows, dtype=np.int64))
    joined = _join_keys(rows, keys).append_column("__row", index)
    kept = joined.join(touched, touched.column_names, join_type="left semi")
    return rows.take(pa.array(np.sort(kept.column("__row").to_numpy())))


def net_changes(
    changes: pa.Table, keys: Sequence[str], version: int, timestamp_ms: int
) -> pa.Table:
    """The net effect of ``changes`` (rows of :func:`commit_changes`, of consecutive commits):
    the rows they removed against the rows they added, compared as :func:`diff_rows` compares
    two versions, so a row changed and changed back shows nothing and a row updated twice one
    update. Every row carries ``version`` and ``timestamp_ms``, the range's last commit.

    Equal to the difference between the table before the first commit and after the last:
    each commit removes rows the table holds, so what the range removed and added differ by
    exactly what the two versions do.
    """
    data = [
        c for c in changes.column_names if c not in (CHANGE_TYPE, COMMIT_VERSION, COMMIT_TIMESTAMP)
    ]
    kinds = changes.column(CHANGE_TYPE)
    lost = pc.is_in(kinds, pa.array([DELETE, UPDATE_PREIMAGE]))
    rows, kinds = diff_rows(
        changes.filter(lost).select(data), changes.filter(pc.invert(lost)).select(data), keys
    )
    return _with_commit(rows, kinds, version, timestamp_ms)


def _with_commit(rows: pa.Table, kinds: pa.Array, version: int, timestamp_ms: int) -> pa.Table:
    n = rows.num_rows
    out = rows.append_column(pa.field(CHANGE_TYPE, pa.string(), nullable=False), kinds)
    out = out.append_column(
        pa.field(COMMIT_VERSION, pa.int64(), nullable=False),
        pa.repeat(pa.scalar(version, pa.int64()), n),
    )
    stamp = pa.scalar(timestamp_ms, pa.timestamp("ms", tz="UTC"))
    return out.append_column(
        pa.field(COMMIT_TIMESTAMP, pa.timestamp("ms", tz="UTC"), nullable=False),
        pa.repeat(stamp, n),
    )


def diff_rows(before: pa.Table, after: pa.Table, keys: Sequence[str]) -> tuple[pa.Table, pa.Array]:
    """The rows that differ between ``before`` and ``after`` (one schema) as a multiset, and
    each one's change type; sorted by ``keys``, a key's lost rows before its gained ones."""
    columns = before.column_names
    rows = pa.concat_tables(
        [
            before.append_column(_SIDE, pa.repeat(pa.scalar(-1, pa.int8()), before.num_rows)),
            after.append_column(_SIDE, pa.repeat(pa.scalar(1, pa.int8()), after.num_rows)),
        ]
    ).combine_chunks()  # one chunk: taking by sorted indices across many chunks is slow
    if rows.num_rows == 0:
        return before, pa.array([], pa.string())
    rest = [c for c in columns if c not in keys]
    order = [(c, "ascending") for c in (*keys, *rest, _SIDE)]
    rows = rows.take(pc.sort_indices(rows, sort_keys=order))
    side = rows.column(_SIDE).to_numpy().astype(np.int64)

    # Identical rows cancel: of a run of equal rows, |sum(side)| rows of the majority side
    # remain (lost rows sort first in a run, so they are the run's first ones).
    run, position, length = _runs(_same(rows, columns))
    net = np.bincount(run, weights=side).astype(np.int64)
    keep = np.where(
        net[run] < 0, position < -net[run], position >= length[run] - np.maximum(net[run], 0)
    )
    keep &= net[run] != 0
    rows = rows.filter(pa.array(keep))
    if rows.num_rows == 0:
        return rows.drop_columns([_SIDE]), pa.array([], pa.string())
    # A key's lost rows before its gained ones (Arrow's sort is stable).
    rows = rows.take(pc.sort_indices(rows, sort_keys=[(c, "ascending") for c in (*keys, _SIDE)]))
    side = rows.column(_SIDE).to_numpy().astype(np.int64)

    # A key that lost one row and gained one was updated.
    key_run, _, key_length = _runs(_same(rows, keys))
    lost = np.bincount(key_run, weights=(side < 0)).astype(np.int64)
    update = (key_length[key_run] == 2) & (lost[key_run] == 1)
    kinds = np.where(
        update,
        np.where(side < 0, UPDATE_PREIMAGE, UPDATE_POSTIMAGE),
        np.where(side < 0, DELETE, INSERT),
    )
    return rows.drop_columns([_SIDE]), pa.array(kinds.tolist(), pa.string())


def _runs(same: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For rows where ``same[i]`` says row i + 1 continues row i's run: each row's run id,
    its position in the run, and each run's length (by run id)."""
    n = len(same) + 1
    starts = np.concatenate([[True], ~same])
    run = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    position = np.arange(n) - first[run]
    length = np.diff(np.append(first, n))
    return run, position, length


def _same(rows: pa.Table, columns: Sequence[str]) -> np.ndarray:
    """For each row but the last, whether the next row equals it in ``columns`` (null equals
    null, NaN equals NaN)."""
    n = rows.num_rows
    same = np.ones(max(n - 1, 0), dtype=bool)
    for name in columns:
        column = rows.column(name).combine_chunks()
        a, b = column.slice(0, n - 1), column.slice(1)
        term = pc.fill_null(pc.equal(a, b), False)
        term = pc.or_(term, pc.and_(pc.is_null(a), pc.is_null(b)))
        if pa.types.is_floating(column.type):
            term = pc.or_(term, pc.fill_null(pc.and_(pc.is_nan(a), pc.is_nan(b)), False))
        same &= term.to_numpy(zero_copy_only=False)
    return same
