"""The rows a row change read and wrote, and whether a concurrent commit touched them.

A row change (UPDATE, MERGE, DELETE, an overwrite by condition) computes new rows from the
rows it read, against one version. Committed on top of a newer version, it is right only if
no commit in between changed those rows: otherwise it writes a value computed from a stale
row (a lost update), brings back a row a concurrent DELETE removed, or, in a ``key.duplicates
= last`` table, replaces a row a concurrent writer inserted that it never read. Delta and
Iceberg refuse such a commit (Serializable for row changes); so does
:func:`~tsfile_catalog.metadata.manifest.conflicts.rebase`, with a :class:`RowFootprint`.

The footprint is what the statement's own commit removes and adds, per device and time
range: every row it read and wrote lies in a part it removes (copy-on-write) or shares its
(TAG values, time) with a row it adds (a ``last`` table's UPDATE appends the new rows and
rewrites nothing). A concurrent commit that changed rows (``data_change``) touches it when it
added or removed a part holding a row of one of those devices inside one of those ranges.
Statistics are ranges, so this may refuse a commit whose rows were not changed (a retry then
succeeds); it never lets one through whose rows were. Commits that change no row (OPTIMIZE)
never touch a footprint.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from tsfile_catalog.metadata.manifest.model import Action, AddPart, Operation, RemovePart, Snapshot
from tsfile_catalog.metadata.part_list import part_positions
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.stats import DeviceStats

__all__ = ["ROW_CHANGES", "RowFootprint", "Touch", "footprint_of", "row_change_footprint"]

# The operations that compute rows from rows they read. OVERWRITE here is an overwrite by
# condition (``replaceWhere``); a whole-table overwrite has its stricter rule of its own.
ROW_CHANGES = frozenset({Operation.UPDATE, Operation.MERGE, Operation.DELETE, Operation.OVERWRITE})

_Tags = tuple[str | None, ...]
_Range = tuple[int, int]

_ANY_TIME: _Range = (-(2**63), 2**63 - 1)


@dataclass(frozen=True)
class Touch:
    """Where a part meets a footprint: a device (None: a part whose devices are unknown)
    and the time range they share."""

    tags: _Tags | None
    min_time: int
    max_time: int

    def describe(self, tag_names: Sequence[str]) -> str:
        if self.tags is None:
            where = "rows"
        else:
            pairs = ", ".join(f"{n}={v!r}" for n, v in zip(tag_names, self.tags, strict=False))
            where = f"rows of device ({pairs})" if pairs else "rows"
        return f"{where} at times {self.min_time}..{self.max_time}"


@dataclass(frozen=True)
class RowFootprint:
    """The devices and time ranges a row change read and wrote (see the module docstring).

    ``by_device`` holds each device's time ranges; ``anywhere`` the time ranges of parts
    whose device lists are unknown (a part with too many devices, an external part), which
    meet every device.
    """

    by_device: Mapping[_Tags, tuple[_Range, ...]]
    anywhere: tuple[_Range, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.by_device) or bool(self.anywhere)

    def touched_by(self, part: PartFile) -> Touch | None:
        """Where ``part`` (added or removed by another commit) holds rows of this footprint;
        None when it cannot."""
        if part.row_count == 0:
            return None
        devices: Sequence[DeviceStats] | None = part.devices
        if devices is None:
            span = _span(part)
            for lo, hi in (*self.anywhere, *(r for rs in self.by_device.values() for r in rs)):
                if lo <= span[1] and span[0] <= hi:
                    return Touch(None, max(lo, span[0]), min(hi, span[1]))
            return None
        for device in devices:
            ranges = (*self.by_device.get(_key(device.tags), ()), *self.anywhere)
            for lo, hi in ranges:
                if lo <= device.max_time and device.min_time <= hi:
                    return Touch(device.tags, max(lo, device.min_time), min(hi, device.max_time))
        return None


def footprint_of(parts: Iterable[PartFile]) -> RowFootprint:
    """The footprint of a commit that removes and adds ``parts``."""
    by_device: dict[_Tags, list[_Range]] = {}
    anywhere: list[_Range] = []
    for part in parts:
        if part.row_count == 0:
            continue
        if part.devices is None:
            anywhere.append(_span(part))
            continue
        for device in part.devices:
            by_device.setdefault(_key(device.tags), []).append((device.min_time, device.max_time))
    return RowFootprint(
        {tags: _merged(ranges) for tags, ranges in by_device.items()}, _merged(anywhere)
    )


def row_change_footprint(
    actions: Sequence[Action], read: Snapshot | None, operation: Operation
) -> RowFootprint | None:
    """The footprint of a commit of ``operation`` making ``actions`` against ``read``: the
    parts it removes (their statistics from ``read``) and adds; None when it is no row change
    (an append, OPTIMIZE, a property change) or creates the table."""
    if operation not in ROW_CHANGES or read is None:
        return None
    removed = {a.path for a in actions if isinstance(a, RemovePart)}
    positions = part_positions(read.parts, removed) if removed else {}
    parts = [read.parts[i] for i in positions.values()]
    parts.extend(a.part for a in actions if isinstance(a, AddPart))
    return footprint_of(parts)


def _key(tags: _Tags) -> _Tags:
    """A device's TAG values without trailing nulls: a device recorded before a TAG column
    was added lists fewer values than the same device recorded after, and is the same."""
    end = len(tags)
    while end and tags[end - 1] is None:
        end -= 1
    return tags[:end]


def _span(part: PartFile) -> _Range:
    if part.min_time is None or part.max_time is None:
        return _ANY_TIME
    return (part.min_time, part.max_time)


def _merged(ranges: list[_Range]) -> tuple[_Range, ...]:
    """``ranges`` sorted, the overlapping ones joined (fewer comparisons per landed part)."""
    out: list[_Range] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)
