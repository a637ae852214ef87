"""A snapshot's parts as Arrow columns, pruned with vectorised compute before any visitor runs.

The pruning visitor (``metadata/pruning.py``) is Python per part: at 10,000 parts it costs
more than the rest of a warm plan, although a time range usually keeps a few percent of them.
:class:`PartIndex` holds the columns that decide that cheaply (row count, min and max time),
built once per snapshot and kept next to it in the metadata cache, and answers which parts
can pass a :class:`~tsfile_catalog.metadata.scan.PartWindow`; ``plan_bound`` then runs the
exact visitor on those only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tsfile_catalog.metadata.part_list import PartList
from tsfile_catalog.metadata.parts import PartFile, built_part
from tsfile_catalog.metadata.scan import PartWindow

__all__ = ["PartIndex"]

_INT64_MAX = 2**63 - 1
_INT64_MIN = -(2**63)


class PartIndex:
    """Row counts and time ranges of ``parts`` (in their order) as Arrow columns."""

    __slots__ = ("_has_rows", "_max_time", "_min_time", "_parts", "_size", "_tag_sets")

    def __init__(self, parts: Sequence[PartFile]) -> None:
        self._size = len(parts)
        self._parts = parts
        self._tag_sets: _StoredTagSets | None = None
        self._has_rows = pc.greater(_column(parts, "row_count"), 0)
        # A part with no time range (None) passes every window, as the visitor answers.
        self._min_time = _column(parts, "min_time")
        self._max_time = _column(parts, "max_time")

    def __len__(self) -> int:
        return self._size

    def candidates(self, window: PartWindow) -> list[int]:
        """Ascending indices of the parts holding rows whose time range meets ``window``."""
        keep = self._has_rows
        # Bounds beyond int64 (a literal past the range, plus one) are clamped: weaker, so safe.
        if window.lo is not None:
            lo = min(window.lo, _INT64_MAX)
            meets = pc.fill_null(pc.greater_equal(self._max_time, lo), True)
            keep = pc.and_(keep, meets)
        if window.hi is not None:
            hi = max(window.hi, _INT64_MIN)
            meets = pc.fill_null(pc.less_equal(self._min_time, hi), True)
            keep = pc.and_(keep, meets)
        mask = keep.to_numpy(zero_copy_only=False)
        for column, values in window.tags:
            mask = mask & self._holds_one_of(column, values)
        indices: list[int] = np.flatnonzero(mask).tolist()
        return indices

    def _holds_one_of(self, column: str, values: frozenset[str]) -> np.ndarray:
        """Per part, False only when its exact value set of TAG ``column`` misses all of
        ``values`` (as the visitor's part-level check finds it)."""
        parts = self._parts
        if isinstance(parts, PartList) and parts.stored is not None:
            if self._tag_sets is None:
                self._tag_sets = _StoredTagSets(parts.stored.column("tags"))
            stored = self._tag_sets.holds_one_of(column, values)
            head = stored if _all_rows(parts) else stored[np.asarray(parts.rows, np.int64)]
            tail = np.array([_holds(built_part(p), column, values) for p in parts.tail], bool)
            return np.concatenate([head, tail])
        return np.array([_holds(p, column, values) for p in parts], dtype=bool)


def _all_rows(parts: PartList) -> bool:
    rows = parts.rows
    return isinstance(rows, range) and parts.stored is not None and rows == range(len(parts.stored))


def _holds(part: PartFile, column: str, values: frozenset[str]) -> bool:
    stats = part.tags.get(column)
    return stats is None or stats.values is None or not stats.values.isdisjoint(values)


class _StoredTagSets:
    """A checkpoint's ``tags`` column (per row a list of {name, min, max, has_null,
    values}) answering "does the row's value set of TAG c miss all of S?" for every row at
    once."""

    def __init__(self, column: pa.Array) -> None:
        # Offset-aware compute functions throughout (a column may be a slice).
        entries = pc.list_flatten(column)
        self._rows = len(column)
        self._row_of_entry = pc.list_parent_indices(column).to_numpy()
        self._names = pc.struct_field(entries, "name")
        sets = pc.struct_field(entries, "values")
        self._has_set = sets.is_valid().to_numpy(zero_copy_only=False)
        self._entry_of_value = pc.list_parent_indices(sets).to_numpy()
        self._values = pc.list_flatten(sets)

    def holds_one_of(self, column: str, values: frozenset[str]) -> np.ndarray:
        named = pc.fill_null(pc.equal(self._names, column), False).to_numpy(zero_copy_only=False)
        # A row listing the TAG twice (no writer does; a hand-made file might) counts its last
        # entry, as the part built from it does (a dict keeps the last).
        entries = np.flatnonzero(named)
        rows = self._row_of_entry[entries]
        last = np.ones(len(rows), dtype=bool)
        last[:-1] = rows[1:] != rows[:-1]
        entries = entries[last]
        wanted = pa.array(sorted(values), pa.string())
        found = pc.is_in(self._values, value_set=wanted)
        found = pc.fill_null(found, False).to_numpy(zero_copy_only=False)
        meets = np.zeros(len(named), dtype=bool)
        meets[self._entry_of_value[found]] = True
        # The row's entry of this TAG has an exact set that meets none of the values.
        misses = entries[self._has_set[entries] & ~meets[entries]]
        out = np.ones(self._rows, dtype=bool)
        out[self._row_of_entry[misses]] = False
        return out


def _column(parts: Sequence[PartFile], name: str) -> pa.Array:
    """The int64 attribute ``name`` of every part: taken from a checkpoint's column for the
    parts still unbuilt (a :class:`PartList` read from one), and from the checked JSON of
    the parts commits added, so no part is built for it."""
    if isinstance(parts, PartList):
        tail = pa.array([getattr(p, name) for p in parts.tail], pa.int64())
        if parts.stored is None:
            return tail
        stored = parts.stored.column(name)
        if not _all_rows(parts):
            stored = stored.take(pa.array(parts.rows, pa.int64()))
        return pa.concat_arrays([stored.cast(pa.int64()), tail])
    return pa.array([getattr(p, name) for p in parts], pa.int64())
