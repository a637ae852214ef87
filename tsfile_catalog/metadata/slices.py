"""Split a pruned list of parts into read tasks: Spark input partitions, or the thread-pool
tasks of a Spark-free scan (pure, no Spark).

Each task (a Spark partition above all) has a fixed cost, so small parts are packed together
up to ``target_rows``; a part larger than that is split by device groups (or, when its device
list was not kept, by time ranges) so that every core gets work.

The (part, device) slices a ``key.duplicates = last`` table must merge on read
(:class:`MergeRead`, planned by :mod:`~tsfile_catalog.metadata.key_reads`) leave their parts'
plain slices and become :class:`MergeSlice` s: one read each, whose rows are resolved by key
before any FIELD filter. A merge splits only where keys cannot cross (between devices, or
between time ranges), so every key's rows stay in one :class:`MergeSlice`.

Before slicing, a scan with a predicate drops the (part, device) pairs whose own statistics
prove that no row matches (:func:`skip_unmatched_devices`): a FIELD filter such as ``v > 29``
then reads only the devices whose range reaches past 29. A part that lost devices is sliced
as the rest, and :func:`narrow_slices` then names the devices it still reads.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeAlias

from tsfile_catalog.metadata.expressions.pruning import PartEvaluator
from tsfile_catalog.metadata.expressions.pushdown import ScanPushdown
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.stats import DeviceStats

__all__ = [
    "FileSlice",
    "MergeRead",
    "MergeSlice",
    "ReadSlice",
    "DeviceSkip",
    "skip_unmatched_devices",
    "without_devices",
    "narrow_slices",
    "merged_devices",
    "merge_slices",
    "plan_slices",
    "estimated_rows",
    "matching_devices",
    "rows_per_partition",
    "MIN_PARTITION_ROWS",
]

# Below this many rows a partition costs more (a task, a Python worker hand-off) than it
# saves: small scans stay in one partition whatever the core count.
MIN_PARTITION_ROWS = 65_536

Tags = tuple[str | None, ...]


@dataclass(frozen=True, slots=True)
class FileSlice:
    """One TsFile query: a part, optionally narrowed to some devices or a time sub-range.

    ``size_bytes`` is the part's size as the manifest records it, so a read can tell a file
    replaced since (None: not checked). It says which file, not which rows: slices compare
    equal without it.
    """

    path: str
    time_min: int
    time_max: int
    devices: tuple[tuple[str | None, ...], ...] | None = None
    size_bytes: int | None = field(default=None, compare=False)

    @classmethod
    def of(
        cls,
        part: PartFile,
        time_min: int,
        time_max: int,
        devices: tuple[tuple[str | None, ...], ...] | None = None,
    ) -> FileSlice:
        """A slice of ``part`` (its path and recorded size; a size of 0 is not checked)."""
        return cls(part.path, time_min, time_max, devices, part.size_bytes or None)

    @property
    def paths(self) -> tuple[str, ...]:
        """The parts this read opens."""
        return (self.path,)


@dataclass(frozen=True, slots=True)
class MergeSlice:
    """Slices of parts of different writes whose rows may share keys, read as one: of the
    rows with the same (TAG values, time), only those of the largest sequence are kept.

    ``slices[i]`` holds the rows of write ``sequences[i]`` (ascending); every key's rows in
    the table (within the pushed range) are in these slices, so resolving them here is exact.
    """

    slices: tuple[FileSlice, ...]
    sequences: tuple[int, ...]

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(s.path for s in self.slices)


ReadSlice: TypeAlias = FileSlice | MergeSlice
"""One query of a read task: a part's slice, or slices merged by key."""


@dataclass(frozen=True, slots=True)
class MergeRead:
    """Where a planned scan must merge: the rows of ``devices`` (every row when None) in each
    of ``parts`` (by ascending key sequence), which may share keys across writes."""

    parts: tuple[PartFile, ...]
    devices: tuple[Tags, ...] | None


def merged_devices(merges: Sequence[MergeRead]) -> Mapping[str, frozenset[Tags] | None]:
    """Per part path, the devices a merge reads (None: the whole part): those (part,
    device) slices are never read plainly nor answered from statistics."""
    out: dict[str, frozenset[Tags] | None] = {}
    for merge in merges:
        for part in merge.parts:
            if merge.devices is None or part.devices is None:
                out[part.path] = None
                continue
            held = out.get(part.path, frozenset())
            if held is not None:
                out[part.path] = held | frozenset(merge.devices)
    return out


def _unmerged(
    part: PartFile,
    devices: list[DeviceStats] | None,
    merged: Mapping[str, frozenset[Tags] | None],
) -> list[DeviceStats] | None:
    """``devices`` of ``part`` (None: unknown) less those a merge reads; [] when a merge
    reads the whole part."""
    if part.path not in merged:
        return devices
    taken = merged[part.path]
    if taken is None:
        return []
    listed = devices if devices is not None else list(part.devices or ())
    return [d for d in listed if d.tags not in taken]


@dataclass(frozen=True, slots=True)
class DeviceSkip:
    """``parts`` less the devices named in ``skipped`` (part path, TAG values as recorded);
    parts left with no device are dropped."""

    parts: tuple[PartFile, ...]
    skipped: tuple[tuple[str, Tags], ...]

    @property
    def narrowed(self) -> frozenset[str]:
        """The paths of the parts that lost devices (see :func:`narrow_slices`)."""
        return frozenset(path for path, _ in self.skipped)


def skip_unmatched_devices(
    parts: Sequence[PartFile], evaluator: PartEvaluator, *, merges: Sequence[MergeRead]
) -> DeviceSkip:
    """``parts`` without the devices whose statistics prove that no row satisfies the
    evaluator's predicate (:meth:`PartEvaluator.device_might_match`). Devices a merge reads
    stay: a row that fails the predicate may still hide an older row by its key."""
    merged = merged_devices(merges)
    skipped: list[tuple[str, Tags]] = []
    dropped: dict[str, set[Tags]] = {}
    for part in parts:
        taken = merged.get(part.path, frozenset())
        if taken is None:
            continue
        for device in part.devices or ():
            if device.tags not in taken and not evaluator.device_might_match(part, device):
                skipped.append((part.path, device.tags))
                dropped.setdefault(part.path, set()).add(device.tags)
    if not skipped:
        return DeviceSkip(tuple(parts), ())
    return DeviceSkip(tuple(without_devices(parts, dropped)), tuple(skipped))


def without_devices(
    parts: Iterable[PartFile], dropped: Mapping[str, set[Tags]]
) -> Iterable[PartFile]:
    """``parts`` less the ``dropped`` devices of each (by path), row counts adjusted; a part
    left with no device is dropped."""
    for part in parts:
        done = dropped.get(part.path)
        if not done:
            yield part
            continue
        devices = tuple(d for d in part.devices or () if d.tags not in done)
        if devices:
            rows = sum(d.row_count for d in devices)
            yield replace(part, devices=devices, row_count=rows)


def narrow_slices(
    groups: Iterable[Sequence[ReadSlice]], parts: Iterable[PartFile], narrowed: frozenset[str]
) -> list[list[ReadSlice]]:
    """``groups`` (planned over ``parts``, some of which lost devices) with every whole-part
    slice of a ``narrowed`` part restricted to the devices it still has, so no device left
    out is read (merged slices read none of them)."""
    remaining = {p.path: tuple(d.tags for d in p.devices or ()) for p in parts}
    out = []
    for group in groups:
        out.append(
            [
                replace(s, devices=remaining[s.path])
                if isinstance(s, FileSlice) and s.devices is None and s.path in narrowed
                else s
                for s in group
            ]
        )
    return out


def matching_devices(
    part: PartFile, pushdown: ScanPushdown, tag_names: Sequence[str]
) -> list[DeviceStats] | None:
    """Devices of ``part`` that the pushed TAG sets and time range admit (None: unknown)."""
    if part.devices is None:
        return None
    wanted = pushdown.tag_dict()
    index = {name: i for i, name in enumerate(tag_names)}
    out = []
    for device in part.devices:
        if device.max_time < pushdown.time_min or device.min_time > pushdown.time_max:
            continue
        if all(
            index[name] < len(device.tags) and device.tags[index[name]] in values
            for name, values in wanted.items()
        ):
            out.append(device)
    return out


def estimated_rows(part: PartFile, devices: Sequence[DeviceStats] | None) -> int:
    return part.row_count if devices is None else sum(d.row_count for d in devices)


def _device_groups(devices: Sequence[DeviceStats], groups: int) -> list[list[DeviceStats]]:
    """Contiguous runs of devices with roughly equal row counts."""
    total = sum(d.row_count for d in devices)
    share = total / groups
    out: list[list[DeviceStats]] = [[]]
    acc = 0
    for device in devices:
        if out[-1] and acc + device.row_count / 2 > share * len(out) and len(out) < groups:
            out.append([])
        out[-1].append(device)
        acc += device.row_count
    return [g for g in out if g]


def plan_slices(
    parts: Sequence[PartFile],
    pushdown: ScanPushdown,
    tag_names: Sequence[str],
    target_rows: int,
    *,
    merges: Sequence[MergeRead],
) -> list[list[ReadSlice]]:
    """Group the parts' queries into partitions of about ``target_rows`` rows each; the
    slices ``merges`` name are read merged (:class:`MergeSlice`), not plainly."""
    out: list[list[ReadSlice]] = []
    pending: list[ReadSlice] = []
    pending_rows = 0
    merged = merged_devices(merges)
    lo, hi = pushdown.time_min, pushdown.time_max
    for part in sorted(parts, key=lambda p: p.path):
        matching = matching_devices(part, pushdown, tag_names)
        devices = _unmerged(part, matching, merged)
        if devices is not None and not devices:
            continue
        narrowed = devices is not matching
        rows = estimated_rows(part, devices)
        pieces = math.ceil(rows / target_rows) if rows > target_rows else 1
        if pieces > 1 and devices is not None and len(devices) > 1:
            for group in _device_groups(devices, min(pieces, len(devices))):
                out.append([FileSlice.of(part, lo, hi, tuple(d.tags for d in group))])
            continue
        if pieces > 1 and part.min_time is not None and part.max_time is not None:
            start, stop = max(lo, part.min_time), min(hi, part.max_time)
            width = max(1, math.ceil((stop - start + 1) / pieces))
            only = tuple(d.tags for d in devices) if narrowed and devices is not None else None
            for begin in range(start, stop + 1, width):
                out.append([FileSlice.of(part, begin, min(stop, begin + width - 1), only)])
            continue
        if pending and pending_rows + rows > target_rows:
            out.append(pending)
            pending, pending_rows = [], 0
        only = tuple(d.tags for d in devices) if narrowed and devices is not None else None
        pending.append(FileSlice.of(part, lo, hi, only))
        pending_rows += rows
    for merge in merges:
        for piece, rows in merge_slices(merge, pushdown, tag_names, target_rows):
            if pending and pending_rows + rows > target_rows:
                out.append(pending)
                pending, pending_rows = [], 0
            pending.append(piece)
            pending_rows += rows
    if pending:
        out.append(pending)
    return out


def merge_slices(
    merge: MergeRead,
    pushdown: ScanPushdown,
    tag_names: Sequence[str],
    target_rows: int | None = None,
) -> list[tuple[MergeSlice, int]]:
    """``merge`` as merged slices of about ``target_rows`` rows each (one when None), with
    their estimated rows: split between devices, or between time ranges when the devices
    are not listed, never through a key. Each part's slice names only the devices it holds
    inside the pushed range."""
    lo, hi = pushdown.time_min, pushdown.time_max
    wanted = None if merge.devices is None else frozenset(merge.devices)
    held: list[tuple[PartFile, list[DeviceStats] | None]] = []
    for part in merge.parts:
        devices = matching_devices(part, pushdown, tag_names)
        if devices is not None and wanted is not None:
            devices = [d for d in devices if d.tags in wanted]
        held.append((part, devices))
    rows = sum(estimated_rows(p, d) for p, d in held)
    pieces = 1 if target_rows is None or rows <= target_rows else math.ceil(rows / target_rows)
    if merge.devices is not None and pieces > 1 and len(merge.devices) > 1:
        chunks = _split(list(merge.devices), min(pieces, len(merge.devices)))
        return [_merge_piece(held, lo, hi, frozenset(chunk)) for chunk in chunks]
    starts = [p.min_time for p in merge.parts if p.min_time is not None]
    stops = [p.max_time for p in merge.parts if p.max_time is not None]
    if pieces > 1 and starts and stops:
        start, stop = max(lo, min(starts)), min(hi, max(stops))
        width = max(1, math.ceil((stop - start + 1) / pieces))
        return [
            _merge_piece(held, begin, min(stop, begin + width - 1), wanted)
            for begin in range(start, stop + 1, width)
        ]
    return [_merge_piece(held, lo, hi, wanted)]


def _merge_piece(
    held: Sequence[tuple[PartFile, list[DeviceStats] | None]],
    lo: int,
    hi: int,
    wanted: frozenset[Tags] | None,
) -> tuple[MergeSlice, int]:
    slices: list[FileSlice] = []
    sequences: list[int] = []
    rows = 0
    for part, devices in held:
        if devices is not None and wanted is not None:
            devices = [d for d in devices if d.tags in wanted]
            if not devices:
                continue
        only = None if wanted is None or devices is None else tuple(d.tags for d in devices)
        slices.append(FileSlice.of(part, lo, hi, only))
        sequences.append(part.key_sequence)
        rows += estimated_rows(part, devices)
    return MergeSlice(tuple(slices), tuple(sequences)), rows


def _split(items: list[Tags], groups: int) -> list[list[Tags]]:
    size = math.ceil(len(items) / groups)
    return [items[i : i + size] for i in range(0, len(items), size)]


def rows_per_partition(
    parts: Sequence[PartFile],
    pushdown: ScanPushdown,
    tag_names: Sequence[str],
    partitions: int,
    minimum: int = MIN_PARTITION_ROWS,
) -> int:
    """The ``target_rows`` that spreads the rows ``pushdown`` keeps of ``parts`` over about
    ``partitions`` partitions (one per core), but never below ``minimum`` rows each.

    That is a core's share of the rows, raised (by less than the largest part packed whole)
    until :func:`plan_slices`' packing, which closes a partition before the part that would
    overflow it, leaves no small partition over after ``partitions`` of them: such an extra
    task runs after the others on a busy core.
    """
    ordered = sorted(parts, key=lambda p: p.path)  # plan_slices' order
    sizes = [estimated_rows(p, matching_devices(p, pushdown, tag_names)) for p in ordered]
    target = max(minimum, math.ceil(sum(sizes) / max(1, partitions)))
    if partitions <= 1 or _packed(sizes, target) <= partitions:
        return target
    # With room for one more part than a share, every closed partition holds more than a
    # share, so at most ``partitions`` are closed: search between the two.
    low, high = target, target + max((n for n in sizes if n <= target), default=0)
    while low < high:
        middle = (low + high) // 2
        if _packed(sizes, middle) <= partitions:
            high = middle
        else:
            low = middle + 1
    return low


def _packed(sizes: Sequence[int], target: int) -> int:
    """The partitions :func:`plan_slices` packs parts of ``sizes`` rows into (parts above
    ``target``, which it splits, each count once)."""
    count, pending = 0, 0
    for size in sizes:
        if size > target:
            count += 1
            continue
        if pending and pending + size > target:
            count += 1
            pending = 0
        pending += size
    return count + (1 if pending else 0)
