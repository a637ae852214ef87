"""A snapshot's parts as an immutable sequence that builds each :class:`PartFile` on first use.

A cold plan at 100,000 parts spent most of its time building a ``PartFile`` for every part of
the checkpoint (and collecting the garbage that made), although a time range keeps a few
percent of them. A Parquet checkpoint therefore hands its parts out as :class:`StoredParts`
(columns, one part built when asked for), and a snapshot's parts are a :class:`PartList`: the
stored parts still in the table, in their order, then the parts commits added since, each
still a :class:`~tsfile_catalog.metadata.parts.PendingPart` (its checked JSON) until used.
Replaying commits, pre-filtering a plan by time and TAG values (``table/part_index.py``) and
listing pruned parts touch only paths and columns; the parts a plan keeps are built.

A ``PartList`` equals the tuple of its parts and pickles as that tuple: nothing lazy crosses
processes.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Any, Protocol, overload

from tsfile_catalog.metadata.parts import PartEntry, PartFile, built_part

__all__ = [
    "PartList",
    "StoredParts",
    "part_paths",
    "part_positions",
    "parts_not_in_format",
    "has_external",
]


class StoredParts(Protocol):
    """Parts kept column-wise (a checkpoint), each built (once) when first asked for."""

    def __len__(self) -> int: ...

    def part(self, row: int) -> PartFile:
        """The part at ``row``; the same object every time."""
        ...

    def rows_of(self, paths: Collection[str]) -> dict[str, int]:
        """The row of each of ``paths`` that is stored here (absent paths are left out),
        found without listing every path."""
        ...

    def values(self, name: str) -> Sequence[Any]:
        """Every row's value of the scalar column ``name`` (``path``, ``format``, ...), in row
        order, without building a part."""
        ...

    def tags_hold_one_of(self, column: str, values: frozenset[str], rows: Any) -> Any:
        """Per row of the ascending ``rows`` (a NumPy array), False only when that part's
        exact value set of TAG ``column`` misses all of ``values``, as the part built from it
        answers (the part index's TAG pre-filter), reading only what those rows need."""
        ...

    def column(self, name: str) -> Any:
        """The scalar column ``name`` (``row_count``, ``min_time``, ...) of every row, as an
        Arrow array (the columnar part index reads it; nothing here imports pyarrow)."""
        ...


class PartList(Sequence[PartFile]):
    """``stored`` parts at ``rows`` (ascending), then the parts ``tail`` (built or pending)."""

    __slots__ = ("_rows", "_stored", "_tail")

    def __init__(
        self, stored: StoredParts | None, rows: Sequence[int], tail: Sequence[PartEntry] = ()
    ) -> None:
        self._stored = stored
        self._rows = rows if stored is not None else ()
        self._tail = tuple(tail)

    @classmethod
    def of(cls, stored: StoredParts) -> PartList:
        """All of ``stored``, in row order."""
        return cls(stored, range(len(stored)))

    @property
    def stored(self) -> StoredParts | None:
        return self._stored

    @property
    def rows(self) -> Sequence[int]:
        """The rows of :attr:`stored` this list holds first (ascending)."""
        return self._rows

    @property
    def tail(self) -> tuple[PartEntry, ...]:
        """The parts after the stored ones, those not yet built as their checked JSON (read
        their scalars there; :func:`~tsfile_catalog.metadata.parts.built_part` builds)."""
        return self._tail

    def without(self, positions: set[int], added: Sequence[PartEntry]) -> PartList:
        """This list without the parts at ``positions`` (indices into it), then ``added``."""
        if not positions:
            return PartList(self._stored, self._rows, self._tail + tuple(added))
        head = len(self._rows)
        rows = [r for i, r in enumerate(self._rows) if i not in positions]
        tail = [p for i, p in enumerate(self._tail, head) if i not in positions]
        return PartList(self._stored, rows, (*tail, *added))

    def excluding(self, positions: Sequence[int]) -> PartList:
        """The parts not at ascending ``positions`` (indices into this list), still unbuilt:
        a plan's pruned parts, nearly all of a big table's, without a list of their rows (a
        million of them cost 40 MiB and 80 ms of a cold plan)."""
        head = len(self._rows)
        cut = bisect_left(positions, head)
        rows = _Without(self._rows, positions[:cut])
        dropped = set(positions[cut:])
        tail = [p for i, p in enumerate(self._tail, head) if i not in dropped]
        return PartList(self._stored, rows, tail)

    def select(self, positions: Sequence[int]) -> PartList:
        """The parts at ascending ``positions`` (indices into this list), still unbuilt."""
        head = len(self._rows)
        cut = bisect_left(positions, head)
        own = self._rows
        if isinstance(own, range) and own.start == 0 and own.step == 1:
            # All of a checkpoint's rows (the usual case): a position is its row.
            rows: Sequence[int] = list(positions[:cut])
        else:
            rows = [own[i] for i in positions[:cut]]
        tail = [self._tail[i - head] for i in positions[cut:]]
        return PartList(self._stored, rows, tail)

    def __len__(self) -> int:
        return len(self._rows) + len(self._tail)

    @overload
    def __getitem__(self, index: int) -> PartFile: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[PartFile, ...]: ...

    def __getitem__(self, index: int | slice) -> PartFile | tuple[PartFile, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        head = len(self._rows)
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("part index out of range")
        if index < head:
            assert self._stored is not None
            return self._stored.part(self._rows[index])
        return built_part(self._tail[index - head])

    def __iter__(self) -> Iterator[PartFile]:
        stored = self._stored
        if stored is not None:
            for row in self._rows:
                yield stored.part(row)
        for entry in self._tail:
            yield built_part(entry)

    def __eq__(self, other: object) -> bool:
        # Equal to the tuple it stands for (tuple.__eq__ defers to this for a PartList).
        if isinstance(other, (PartList, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"PartList({len(self)} parts)"

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (tuple(self),))


class _Without(Sequence[int]):
    """The rows ``rows`` without those at the ascending positions ``dropped``: held as the two,
    not as the (long) list of what is left."""

    __slots__ = ("_dropped", "_rows")

    def __init__(self, rows: Sequence[int], dropped: Sequence[int]) -> None:
        self._rows = rows
        self._dropped = dropped

    def __len__(self) -> int:
        return len(self._rows) - len(self._dropped)

    def _position(self, index: int) -> int:
        """The position in ``rows`` of the ``index``-th row kept."""
        dropped = self._dropped
        # The smallest p with p - (drops at or before p) == index: step up by the drops
        # passed until none is left below.
        skipped = bisect_right(dropped, index)
        while True:
            more = bisect_right(dropped, index + skipped)
            if more == skipped:
                return index + skipped
            skipped = more

    @overload
    def __getitem__(self, index: int) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> list[int]: ...

    def __getitem__(self, index: int | slice) -> int | list[int]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("row index out of range")
        return self._rows[self._position(index)]

    def __iter__(self) -> Iterator[int]:
        rows, dropped = self._rows, self._dropped
        start = 0
        for stop in (*dropped, len(rows)):
            yield from rows[start:stop]
            start = stop + 1


def part_paths(parts: Sequence[PartFile]) -> list[str]:
    """The paths of ``parts`` in order, read from the stored columns where it can."""
    if isinstance(parts, PartList):
        head = [] if parts.stored is None else parts.stored.values("path")
        return [head[r] for r in parts.rows] + [p.path for p in parts.tail]
    return [p.path for p in parts]


def part_positions(parts: Sequence[PartFile], paths: Collection[str]) -> dict[str, int]:
    """The position in ``parts`` of each of ``paths`` it holds (the last, should a path occur
    twice), read from the stored columns where it can: replaying a commit looks up the
    paths it adds and removes, not the hundreds of thousands the table holds."""
    if not paths:
        return {}
    if isinstance(parts, PartList):
        rows = parts.rows
        found = {}
        stored = {} if parts.stored is None else parts.stored.rows_of(paths)
        for path, row in stored.items():
            at = row if isinstance(rows, range) and rows.start == 0 and rows.step == 1 else None
            if at is None:
                at = bisect_left(rows, row)
            if at < len(rows) and rows[at] == row:
                found[path] = at
        head = len(rows)
        found.update((p.path, i) for i, p in enumerate(parts.tail, head) if p.path in paths)
        return found
    return {p.path: i for i, p in enumerate(parts) if p.path in paths}


def parts_not_in_format(parts: Sequence[PartFile], format: str) -> tuple[PartFile, ...]:
    """The parts of ``parts`` whose format is not ``format``, in order; only those are built."""
    if isinstance(parts, PartList):
        formats = [] if parts.stored is None else parts.stored.values("format")
        head = len(parts.rows)
        other = [i for i, r in enumerate(parts.rows) if formats[r] != format]
        other += [i for i, p in enumerate(parts.tail, head) if p.format != format]
        return tuple(parts.select(other))
    return tuple(p for p in parts if p.format != format)


def has_external(parts: Iterable[PartFile]) -> bool:
    """Whether any of ``parts`` is external (read from the stored column where it can)."""
    if isinstance(parts, PartList):
        flags = [] if parts.stored is None else parts.stored.values("external")
        if any(flags[r] for r in parts.rows):
            return True
        return any(p.external for p in parts.tail)
    return any(p.external for p in parts)
