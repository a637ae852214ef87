"""What a stream reads between two offsets: the pure decisions (no I/O).

A stream over a table is a sequence of *segments*, each an ordered list of parts: optionally
the table as of the version it started at (a snapshot segment), then the parts each later
commit added, in commit order (the seed's FIFO assignment). An offset is a position in that
sequence: the segment's version and how many of its parts were read. Reading from one offset
to the next therefore reads each part once, however batches were cut and across restarts.

Commits that only rearranged rows (``data_change=False``: OPTIMIZE) contribute no parts. A
commit that removed data (overwrite, DELETE, DROP PART, a RESTORE that removes parts) cannot be
streamed as an append: it stops the stream with :class:`ChangeCommitError`, unless the
reader skips such commits whole (``skipChangeCommits``, Delta's name and meaning).

A change feed stream (``readChangeFeed``) reads every commit instead, removals included: each
segment holds one unit, the commit's :class:`~tsfile_catalog.metadata.change_feed.
CommitChanges` (its changes are computed whole), so offsets and limits count commits there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tsfile_catalog.exceptions import ChangeCommitError, OptionError
from tsfile_catalog.metadata.change_feed import CommitChanges
from tsfile_catalog.metadata.manifest.model import AddPart, Commit, RemovePart
from tsfile_catalog.metadata.parts import PartFile

__all__ = [
    "StreamOffset",
    "Segment",
    "commit_segment",
    "plan_batch",
    "batch_parts",
    "batch_changes",
    "batch_complete_until",
]


@dataclass(frozen=True, slots=True)
class StreamOffset:
    """A position in a stream: parts ``[0, index)`` of segment ``version`` were read.

    ``snapshot`` says segment ``version`` is the whole table as of that version (the start of
    a stream without ``startingVersion``) rather than the parts commit ``version`` added.
    A fully read segment is always written as the next version at index 0, so one position
    has one spelling: Spark compares offsets as JSON strings.

    ``table`` is the UUID of the table the versions belong to: a table dropped and recreated
    at the stream's path restarts its versions, which must not pass for the old table's.
    Offsets written before it was recorded have none (and are not checked).
    """

    version: int
    index: int = 0
    snapshot: bool = False
    table: str | None = None

    def to_json(self) -> dict[str, Any]:
        # Fixed key order: Spark compares offsets by their JSON text. ``table`` comes last and
        # only when known, so an offset without it keeps the spelling earlier releases wrote.
        out: dict[str, Any] = {
            "version": self.version,
            "index": self.index,
            "snapshot": self.snapshot,
        }
        if self.table is not None:
            out["table"] = self.table
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> StreamOffset:
        """Raises OptionError when ``obj`` is not an offset this source wrote (a checkpoint
        of another source, or a hand-edited one)."""
        try:
            version, index, snapshot = obj["version"], obj["index"], obj["snapshot"]
            table = obj.get("table")
        except (KeyError, TypeError, AttributeError) as e:
            raise OptionError(f"stream offset {obj!r} is not a tsfile offset") from e
        if not (_is_int(version) and _is_int(index) and isinstance(snapshot, bool) and index >= 0):
            raise OptionError(f"stream offset {obj!r} is not a tsfile offset")
        if table is not None and not (isinstance(table, str) and table):
            raise OptionError(f"stream offset {obj!r} is not a tsfile offset")
        return cls(version, index, snapshot, table)

    def same_position(self, other: StreamOffset) -> bool:
        """Whether both offsets point at the same place in the log, whatever they record of
        the table (an offset from before ``table`` was recorded and its successor)."""
        return (self.version, self.index, self.snapshot) == (
            other.version,
            other.index,
            other.snapshot,
        )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Segment:
    """The parts one version contributes to a stream, in the order they are read, and what
    its commit declared complete (see :mod:`~tsfile_catalog.metadata.completeness`)."""

    version: int
    # A snapshot's segment keeps its parts as they are (unbuilt when read from a checkpoint).
    parts: Sequence[PartFile]
    complete_until: int | None = None
    snapshot: bool = False
    # Why a stream cannot pass this commit (it removed data); raised when a batch reaches it.
    refusal: str | None = None
    # A change feed's segment: the commit's changes, read as one unit (``parts`` is empty).
    change: CommitChanges | None = None

    @property
    def units(self) -> Sequence[PartFile | CommitChanges]:
        """What offsets count in this segment: its parts, or its commit's changes."""
        return self.parts if self.change is None else (self.change,)


def commit_segment(commit: Commit, *, skip_change_commits: bool) -> Segment:
    """The segment of one commit; one that removed data carries a ``refusal`` unless
    ``skip_change_commits`` (then it contributes nothing)."""
    info = commit.info
    added = tuple(a.part for a in commit.actions if isinstance(a, AddPart))
    removed = [a for a in commit.actions if isinstance(a, RemovePart)]
    if not info.data_change:
        # OPTIMIZE: the same rows in other files; a stream already read them.
        return Segment(info.version, (), info.complete_until)
    if removed:
        if skip_change_commits:
            return Segment(info.version, (), info.complete_until)
        refusal = (
            f"version {info.version} ({info.operation}) removed {len(removed)} part(s) "
            f"holding {sum(r.row_count for r in removed)} row(s): a stream reads appends "
            "only and cannot undo rows it already returned; set skipChangeCommits=true to "
            "skip such commits (their added rows too), or restart the stream from a later "
            "startingVersion"
        )
        return Segment(info.version, (), info.complete_until, refusal=refusal)
    return Segment(info.version, added, info.complete_until)


def plan_batch(
    segments: Sequence[Segment],
    start: StreamOffset,
    *,
    max_parts: int | None = None,
    max_rows: int | None = None,
) -> StreamOffset:
    """The end offset of the next batch from ``start`` over ``segments`` (consecutive, the
    first at ``start.version``); ``start`` itself when there is nothing new.

    Admission control (Spark's read limits): at most ``max_parts`` parts and ``max_rows``
    rows, never splitting a part and always taking at least one part, so a stream advances
    even when one part alone exceeds the limit. Segments without parts (OPTIMIZE, skipped
    commits, property changes) are passed over while the limits allow.

    Raises:
        ChangeCommitError: the batch would start at a commit that removed data (a batch that
            already took parts ends before it, so those parts are still read).
    """
    position = start
    parts = rows = 0
    for segment in segments:
        if segment.version < position.version:
            continue
        if segment.refusal is not None:
            if parts:
                return position
            raise ChangeCommitError(segment.refusal)
        first = position.index if segment.version == position.version else 0
        for part in segment.units[first:]:
            over_parts = max_parts is not None and parts + 1 > max_parts
            over_rows = max_rows is not None and rows + part.row_count > max_rows
            if parts and (over_parts or over_rows):
                return position
            parts, rows = parts + 1, rows + part.row_count
            first += 1
            position = StreamOffset(segment.version, first, segment.snapshot)
        position = _past(segment)
    return position


def _past(segment: Segment) -> StreamOffset:
    return StreamOffset(segment.version + 1, 0, False)


def batch_parts(
    segments: Sequence[Segment], start: StreamOffset, end: StreamOffset
) -> list[PartFile]:
    """The parts read between ``start`` and ``end`` (offsets :func:`plan_batch` returned),
    in stream order."""
    return [u for u in _batch_units(segments, start, end) if isinstance(u, PartFile)]


def batch_changes(
    segments: Sequence[Segment], start: StreamOffset, end: StreamOffset
) -> list[CommitChanges]:
    """The commits' changes read between ``start`` and ``end`` (a change feed stream)."""
    return [u for u in _batch_units(segments, start, end) if isinstance(u, CommitChanges)]


def _batch_units(
    segments: Sequence[Segment], start: StreamOffset, end: StreamOffset
) -> list[PartFile | CommitChanges]:
    out: list[PartFile | CommitChanges] = []
    for segment in segments:
        lo = start.index if segment.version == start.version else 0
        if segment.version < start.version or segment.version > end.version:
            continue
        units = segment.units
        hi = end.index if segment.version == end.version else len(units)
        out.extend(units[lo:hi])
    return out


def batch_complete_until(
    segments: Sequence[Segment], start: StreamOffset, end: StreamOffset
) -> int | None:
    """The largest completeness declared by the segments fully read between ``start`` and
    ``end``: a declaration holds only once every part of its commit was read."""
    declared = [
        s.complete_until
        for s in segments
        if start.version <= s.version < end.version and s.complete_until is not None
    ]
    return max(declared) if declared else None
