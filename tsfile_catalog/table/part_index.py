"""A snapshot's parts as Arrow columns, pruned with vectorised compute before any visitor runs.

The pruning visitor (``metadata/pruning.py``) is Python per part: at 10,000 parts it costs
more than the rest of a warm plan, although a time range usually keeps a few percent of them.
:class:`PartIndex` holds the columns that decide that cheaply (row count, min and max time),
built once per snapshot and kept next to it in the metadata cache, and answers which parts
can pass a :class:`~tsfile_catalog.metadata.scan.TimeWindow`; ``plan_bound`` then runs the
exact visitor on those only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.scan import TimeWindow

__all__ = ["PartIndex"]

_INT64_MAX = 2**63 - 1
_INT64_MIN = -(2**63)


class PartIndex:
    """Row counts and time ranges of ``parts`` (in their order) as Arrow columns."""

    __slots__ = ("_has_rows", "_max_time", "_min_time", "_size")

    def __init__(self, parts: Sequence[PartFile]) -> None:
        self._size = len(parts)
        self._has_rows = pc.greater(pa.array([p.row_count for p in parts], pa.int64()), 0)
        # A part with no time range (None) passes every window, as the visitor answers.
        self._min_time = pa.array([p.min_time for p in parts], pa.int64())
        self._max_time = pa.array([p.max_time for p in parts], pa.int64())

    def __len__(self) -> int:
        return self._size

    def candidates(self, window: TimeWindow) -> list[int]:
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
        indices: list[int] = np.flatnonzero(mask).tolist()
        return indices
