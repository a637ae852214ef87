"""Split a pruned list of parts into read tasks: Spark input partitions, or the thread-pool
tasks of a Spark-free scan (pure, no Spark).

Each task (a Spark partition above all) has a fixed cost, so small parts are packed together
up to ``target_rows``; a part larger than that is split by device groups (or, when its device
list was not kept, by time ranges) so that every core gets work.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from tsfile_catalog.metadata.expressions.pushdown import ScanPushdown
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.stats import DeviceStats

__all__ = [
    "FileSlice",
    "plan_slices",
    "estimated_rows",
    "matching_devices",
    "rows_per_partition",
    "MIN_PARTITION_ROWS",
]

# Below this many rows a partition costs more (a task, a Python worker hand-off) than it
# saves: small scans stay in one partition whatever the core count.
MIN_PARTITION_ROWS = 65_536


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
) -> list[list[FileSlice]]:
    """Group the parts' queries into partitions of about ``target_rows`` rows each."""
    out: list[list[FileSlice]] = []
    pending: list[FileSlice] = []
    pending_rows = 0
    for part in sorted(parts, key=lambda p: p.path):
        lo, hi = pushdown.time_min, pushdown.time_max
        devices = matching_devices(part, pushdown, tag_names)
        if devices is not None and not devices:
            continue
        rows = estimated_rows(part, devices)
        pieces = math.ceil(rows / target_rows) if rows > target_rows else 1
        if pieces > 1 and devices is not None and len(devices) > 1:
            for group in _device_groups(devices, min(pieces, len(devices))):
                out.append([FileSlice.of(part, lo, hi, tuple(d.tags for d in group))])
            continue
        if pieces > 1 and part.min_time is not None and part.max_time is not None:
            start, stop = max(lo, part.min_time), min(hi, part.max_time)
            width = max(1, math.ceil((stop - start + 1) / pieces))
            for begin in range(start, stop + 1, width):
                out.append([FileSlice.of(part, begin, min(stop, begin + width - 1))])
            continue
        if pending and pending_rows + rows > target_rows:
            out.append(pending)
            pending, pending_rows = [], 0
        pending.append(FileSlice.of(part, lo, hi))
        pending_rows += rows
    if pending:
        out.append(pending)
    return out


def rows_per_partition(
    parts: Sequence[PartFile],
    pushdown: ScanPushdown,
    tag_names: Sequence[str],
    partitions: int,
    minimum: int = MIN_PARTITION_ROWS,
) -> int:
    """The ``target_rows`` that spreads the rows ``pushdown`` keeps of ``parts`` over about
    ``partitions`` partitions (one per core), but never below ``minimum`` rows each."""
    total = sum(estimated_rows(p, matching_devices(p, pushdown, tag_names)) for p in parts)
    return max(minimum, math.ceil(total / max(1, partitions)))
