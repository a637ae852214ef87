"""Where the parts of one write may hold the same (device, time) row, from their statistics.

Each write task sorts and deduplicates its own rows, so a part never repeats a (device, time).
Two parts of one write can only collide on a device that both hold, inside the intersection
of that device's time ranges in the two parts. This module finds exactly those places, so
the driver reads nothing when the parts do not overlap (the usual case: data partitioned by
device or by time) and, when they do, only the overlapping devices' time ranges.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tsfile_catalog.metadata.stats import DeviceStats

__all__ = ["DeviceRange", "overlapping_ranges"]


@dataclass(frozen=True, slots=True)
class DeviceRange:
    """One device's rows of one part that must be compared: ``min_time..max_time`` inclusive."""

    tags: tuple[str | None, ...]
    min_time: int
    max_time: int


def overlapping_ranges(
    parts: Sequence[Sequence[DeviceStats]],
) -> dict[int, tuple[DeviceRange, ...]]:
    """For each part (by index in ``parts``, its complete device list), the devices whose time
    range meets that device's range in another part, narrowed to where they meet.

    Parts missing from the result cannot share a (device, time) with any other part.
    """
    by_device: dict[tuple[str | None, ...], list[tuple[int, int, int]]] = {}
    for index, devices in enumerate(parts):
        for device in devices:
            by_device.setdefault(device.tags, []).append((device.min_time, device.max_time, index))
    # (part, device) -> the bounding range of every intersection with another part's range
    found: dict[tuple[int, tuple[str | None, ...]], tuple[int, int]] = {}

    def note(part: int, tags: tuple[str | None, ...], lo: int, hi: int) -> None:
        known = found.get((part, tags))
        found[(part, tags)] = (lo, hi) if known is None else (min(known[0], lo), max(known[1], hi))

    for tags, ranges in by_device.items():
        if len(ranges) < 2:
            continue
        ranges.sort()
        for i, (_, hi, part) in enumerate(ranges):
            # Sorted by start: every later range starting at or before ``hi`` meets this one.
            for other_lo, other_hi, other in ranges[i + 1 :]:
                if other_lo > hi:
                    break
                meet_hi = min(hi, other_hi)
                note(part, tags, other_lo, meet_hi)
                note(other, tags, other_lo, meet_hi)
    out: dict[int, list[DeviceRange]] = {}
    for (part, tags), (lo, hi) in sorted(found.items(), key=lambda item: item[0][0]):
        out.setdefault(part, []).append(DeviceRange(tags, lo, hi))
    return {part: tuple(ranges) for part, ranges in out.items()}
