"""Resolving rows by the table key in Arrow: of the rows sharing (TAG values, time), keep the
latest write's.

A :class:`~tsfile_catalog.metadata.slices.MergeSlice` reads each write's rows of the same
keys; :func:`latest_rows` keeps a row iff no write with a larger sequence holds a row with
its key. Rows of one write sharing a key (``onDuplicate`` rules of that write) all stay or go
together. Vectorised: one sort by key and sequence, then run boundaries, no per-row Python.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["latest_rows"]

_SEQUENCE = "__key_sequence"


def latest_rows(tables: Sequence[tuple[pa.Table, int]], keys: Sequence[str]) -> pa.Table:
    """The rows of ``tables`` (each with its write's sequence; all of one schema) that no
    later write replaces, by the ``keys`` columns (nulls equal to nulls), sorted by key."""
    present = [(t, s) for t, s in tables if t.num_rows]
    if not present:
        return tables[0][0] if tables else pa.table({})
    if len({s for _, s in present}) == 1:
        # One write's rows: nothing replaces anything.
        return pa.concat_tables([t for t, _ in present])
    rows = pa.concat_tables(
        [
            t.append_column(_SEQUENCE, pa.repeat(pa.scalar(s, pa.int64()), t.num_rows))
            for t, s in present
        ]
    )
    order = [(k, "ascending") for k in keys] + [(_SEQUENCE, "ascending")]
    rows = rows.take(pc.sort_indices(rows, sort_keys=order))
    # ``same[i]``: row i + 1 has the key of row i (empty for a single row).
    same = _same_key(rows, keys)
    true = pa.array([True])
    starts = pa.concat_arrays([true, pc.invert(same)])  # the first row of each key's run
    ends = pa.concat_arrays([pc.invert(same), true])  # its last row: the largest sequence
    run = pc.subtract(pc.cumulative_sum(pc.cast(starts, pa.int64())), 1)
    sequence = rows.column(_SEQUENCE).combine_chunks()
    latest = pc.take(pc.filter(sequence, ends), run)
    return rows.filter(pc.equal(sequence, latest)).drop_columns([_SEQUENCE])


def _same_key(rows: pa.Table, keys: Sequence[str]) -> pa.Array:
    """For each row but the last, whether the next row has the same key (null equals null)."""
    same: pa.Array = pa.repeat(pa.scalar(True), rows.num_rows - 1)
    for name in keys:
        column = rows.column(name).combine_chunks()
        a, b = column.slice(0, len(column) - 1), column.slice(1)
        equal = pc.fill_null(pc.equal(a, b), False)
        both_null = pc.and_(pc.is_null(a), pc.is_null(b))
        term = pc.or_(equal, both_null)
        same = pc.and_(same, term)
    return same
