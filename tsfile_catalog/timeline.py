"""A timeline of a table's parts: which rows each part holds for each device (or TAG value)
over time, and where two parts may hold rows of one device at the same times.

Computed from part statistics alone (no data file is read), for the CLI's ``timeline``
picture and its ``--json`` rows (:func:`tsfile_catalog.inspect.timeline_result`). Nothing
here imports pyspark or the sql package.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.metadata.overlap import overlapping_ranges
from tsfile_catalog.metadata.parts import DeviceStats
from tsfile_catalog.metadata.scan import ScanPlan
from tsfile_catalog.metadata.slices import matching_devices
from tsfile_catalog.table import Table

__all__ = ["DEVICE", "Timeline", "TimelineBar", "timeline"]

DEVICE = "device"
"""The ``group_by`` of a timeline with one row per device."""

_UNLISTED = "(devices not listed)"


@dataclass(frozen=True, slots=True)
class TimelineBar:
    """The rows one part holds for one timeline row: raw times ``start..end`` inclusive."""

    group: str
    part: str
    start: int
    end: int
    rows: int


@dataclass(frozen=True)
class Timeline:
    """What a timeline picture draws, computed from part statistics alone.

    Attributes:
        bars: one per (part, group) holding rows, in ``groups`` then ``parts`` order.
        groups: the picture's rows, sorted: devices (TAG values joined by ``.``) or the
            values of one TAG column; parts whose device list was not kept (over
            :data:`~tsfile_catalog.metadata.parts.MAX_DEVICES` devices) share one row.
        parts: the parts drawn (one colour each), oldest version first.
        group_by: ``device`` or the TAG column grouped by.
        overlaps: device ranges that meet the same device's range in another part: where two
            parts may hold rows of one device at the same times.
    """

    bars: tuple[TimelineBar, ...]
    groups: tuple[str, ...]
    parts: tuple[str, ...]
    group_by: str
    overlaps: int


def _label(value: str | None) -> str:
    return "null" if value is None else value


def timeline(table: Table, *, group_by: str = DEVICE, plan: ScanPlan | None = None) -> Timeline:
    """The bars of a timeline of ``table``'s parts, grouped by device or by one TAG column.

    With ``plan`` only the parts it keeps are drawn, each narrowed to the devices and the time
    range its pushed filter admits (what a scan would read).

    Raises:
        OptionError: ``group_by`` is neither ``device`` nor a TAG column.
    """
    tag_names = table.schema.tag_names
    if group_by != DEVICE and group_by not in tag_names:
        raise OptionError(
            f"cannot group a timeline by {group_by!r}: use 'device' or a TAG column of "
            f"{table.schema.table} ({', '.join(tag_names) or 'it has none'})"
        )
    index = tag_names.index(group_by) if group_by != DEVICE else None
    parts = sorted(
        plan.parts if plan is not None else table.parts(), key=lambda p: (p.added_version, p.path)
    )
    spans: dict[tuple[str, str], tuple[int, int, int]] = {}
    listed: list[Sequence[DeviceStats]] = []
    for part in parts:
        if not part.row_count or part.min_time is None or part.max_time is None:
            continue
        if part.devices is None:
            pieces = [(_UNLISTED, part.min_time, part.max_time, part.row_count)]
        else:
            devices = part.devices
            if plan is not None:
                devices = tuple(matching_devices(part, plan.pushdown, tag_names) or ())
            listed.append(devices)
            pieces = [
                (
                    ".".join(_label(t) for t in d.tags) or table.schema.table
                    if index is None
                    else _label(d.tags[index] if index < len(d.tags) else None),
                    d.min_time,
                    d.max_time,
                    d.row_count,
                )
                for d in devices
            ]
        for group, lo, hi, rows in pieces:
            if plan is not None:
                lo, hi = max(lo, plan.pushdown.time_min), min(hi, plan.pushdown.time_max)
            known = spans.get((group, part.path))
            if known is not None:
                lo, hi, rows = min(lo, known[0]), max(hi, known[1]), rows + known[2]
            spans[(group, part.path)] = (lo, hi, rows)
    order = [p.path for p in parts]
    drawn = [path for path in order if any(key[1] == path for key in spans)]
    groups = sorted({group for group, _ in spans})
    rank = {path: i for i, path in enumerate(drawn)}
    bars = tuple(
        TimelineBar(group, path, lo, hi, rows)
        for (group, path), (lo, hi, rows) in sorted(
            spans.items(), key=lambda item: (item[0][0], rank[item[0][1]])
        )
    )
    overlaps = sum(len(ranges) for ranges in overlapping_ranges(listed).values())
    return Timeline(bars, tuple(groups), tuple(drawn), group_by, overlaps)
