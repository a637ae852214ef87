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

    __slots__ = ("_has_rows", "_max_time", "_min_time", "_parts", "_size")

    def __init__(self, parts: Sequence[PartFile]) -> None:
        self._size = len(parts)
        self._parts = parts
        self._has_rows = pc.greater(_column(parts, "row_count"), 0)
        # A part with no time range (None) passes every window, as the visitor answers.
        self._min_time = _column(parts, "min_time")
        self._max_time = _column(parts, "max_time")

    def __len__(self) -> int:
        return self._size

    def candidates(self, window: PartWindow) -> list[int]:
        """Ascending indices of the parts holding rows whose time range meets ``window``,
        and whose TAG value sets meet its TAG conditions (tested on the parts the time range
        keeps only: a checkpoint reads those parts' TAG statistics only)."""
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
        positions = np.flatnonzero(keep.to_numpy(zero_copy_only=False))
        for column, values in window.tags:
            positions = positions[self._holds_one_of(column, values, positions)]
        indices: list[int] = positions.tolist()
        return indices

    def _holds_one_of(
        self, column: str, values: frozenset[str], positions: np.ndarray
    ) -> np.ndarray:
        """Per part at ascending ``positions``, False only when its exact value set of TAG
        ``column`` misses all of ``values`` (as the visitor's part-level check finds it)."""
        parts = self._parts
        if isinstance(parts, PartList) and parts.stored is not None:
            head = len(parts.rows)
            cut = int(np.searchsorted(positions, head))
            own = positions[:cut]
            rows = own if _all_rows(parts) else np.asarray(parts.rows, np.int64)[own]
            stored = parts.stored.tags_hold_one_of(column, values, rows)
            tail = [
                _holds(built_part(parts.tail[i - head]), column, values)
                for i in positions[cut:].tolist()
            ]
            return np.concatenate([stored, np.array(tail, dtype=bool)])
        return np.array([_holds(parts[i], column, values) for i in positions.tolist()], dtype=bool)


def _all_rows(parts: PartList) -> bool:
    rows = parts.rows
    return isinstance(rows, range) and parts.stored is not None and rows == range(len(parts.stored))


def _holds(part: PartFile, column: str, values: frozenset[str]) -> bool:
    stats = part.tags.get(column)
    return stats is None or stats.values is None or not stats.values.isdisjoint(values)


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
