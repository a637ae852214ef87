"""Which keys of a key change a set of parts may hold, by each part's device statistics.

A key change (UPDATE, MERGE, a ``last`` table's DELETE) removes keys from every part that
may hold them, as rewrite tasks over batches of parts. Each task is pickled on its own, so
each should carry only the keys its parts may hold: a device of a part lists its TAG values
and time range. :class:`KeyIndex` sorts the keys once by TAG values, then time, and answers
each batch with two binary searches per (part, device): the keys in that device's slice and
time range. Only the answer is copied; the index holds the keys once.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import TIME_COLUMN

__all__ = ["KeyIndex", "keys_within"]

# A device's place in the sorted keys: rows [start, end).
_Slice = tuple[int, int]


@dataclass(frozen=True, eq=False)  # an array field: compared by identity
class KeyIndex:
    """``keys`` (key columns, raw domain) sorted by TAG values, then time, with each
    device's slice of them."""

    keys: pa.Table
    tags: tuple[str, ...]  # the TAG columns, in the order of a device's TAG values
    times: np.ndarray  # the sorted keys' times
    devices: Mapping[tuple[Any, ...], _Slice]  # a device's TAG values → its slice

    @classmethod
    def of(cls, keys: pa.Table) -> KeyIndex:
        tags = tuple(c for c in keys.column_names if c != TIME_COLUMN)
        order = [(c, "ascending") for c in (*tags, TIME_COLUMN)]
        ordered = keys.sort_by(order).combine_chunks()
        count = ordered.num_rows
        times = ordered.column(TIME_COLUMN).to_numpy()
        if not tags or not count:
            return cls(ordered, tags, times, {(): (0, count)} if count else {})
        # A device starts where any TAG value differs from the row before (a null is -1).
        starts = np.zeros(count, dtype=bool)
        starts[0] = True
        for tag in tags:
            encoded = pc.dictionary_encode(ordered.column(tag)).combine_chunks()
            codes = pc.fill_null(encoded.indices, -1).to_numpy()
            starts[1:] |= codes[1:] != codes[:-1]
        first = np.flatnonzero(starts)
        ends = np.append(first[1:], count)
        values = ordered.select(list(tags)).take(pa.array(first)).to_pylist()
        devices = {
            tuple(v[t] for t in tags): (int(s), int(e))
            for v, s, e in zip(values, first, ends, strict=True)
        }
        return cls(ordered, tags, times, devices)

    def within(self, parts: Sequence[PartFile]) -> pa.Table:
        """The keys ``parts`` may hold: a device of a part, the keys of its TAG values in its
        time range; a part without per-device statistics, any key in its time range."""
        spans = [span for part in parts for span in self._spans(part)]
        return self.keys.take(pa.array(_rows(spans), pa.int64()))

    def may_hold(self, part: PartFile) -> bool:
        """Whether ``part`` may hold one of the keys (:meth:`within` it is not empty)."""
        return any(start < end for start, end in self._spans(part))

    def _spans(self, part: PartFile) -> Iterator[_Slice]:
        if part.row_count <= 0 or part.min_time is None or part.max_time is None:
            return
        if part.devices is None or not self.tags:
            for whole in self.devices.values():
                yield self._span(whole, part.min_time, part.max_time)
            return
        for device in part.devices:
            found = self.devices.get(self._values(device.tags))
            if found is not None:
                yield self._span(found, device.min_time, device.max_time)

    def _values(self, tags: Sequence[Any]) -> tuple[Any, ...]:
        # A device written before a TAG column was added has no value for it: null.
        return tuple(tags[i] if i < len(tags) else None for i in range(len(self.tags)))

    def _span(self, found: _Slice, low: int, high: int) -> _Slice:
        start, end = found
        times = self.times[start:end]
        left = np.searchsorted(times, low, side="left")
        right = np.searchsorted(times, high, side="right")
        return start + int(left), start + int(right)


def _rows(spans: list[_Slice]) -> np.ndarray:
    """The rows of the (possibly overlapping) ``spans``, each once, in order."""
    rows: list[np.ndarray] = []
    reached = 0
    for start, end in sorted(spans):
        start = max(start, reached)
        if start < end:
            rows.append(np.arange(start, end, dtype=np.int64))
            reached = end
    return np.concatenate(rows) if rows else np.empty(0, dtype=np.int64)


def keys_within(keys: pa.Table, parts: Sequence[PartFile]) -> pa.Table:
    """The keys of ``keys`` (key columns, raw domain) that ``parts`` may hold
    (:meth:`KeyIndex.within`); to answer several batches, build the :class:`KeyIndex` once."""
    return KeyIndex.of(keys).within(parts)
