"""Exact answers to aggregate queries from part statistics alone, without reading data.

Pure: takes a :class:`~tsfile_catalog.metadata.scan.ScanPlan` (the pushed predicate and the
parts it keeps) and answers only when statistics make the answer exact, else None.
"""

from __future__ import annotations

from tsfile_catalog.metadata.expressions import INT64_MAX, INT64_MIN
from tsfile_catalog.metadata.scan import ScanPlan

__all__ = ["metadata_count"]


def metadata_count(plan: ScanPlan) -> int | None:
    """The exact number of rows a scan with ``plan``'s predicate returns, from statistics
    alone, or None when statistics cannot tell (then the caller must scan).

    Exact when nothing is left for row-level evaluation (no residual) and, for each part the
    plan keeps, the pushed time range and TAG sets either hold for every row of the part or,
    device by device, hold for all or none of a device's rows.
    """
    pushdown = plan.pushdown
    if pushdown.residual is not None:
        return None
    if pushdown.empty:
        return 0
    lo, hi = pushdown.time_min, pushdown.time_max
    unbounded = lo == INT64_MIN and hi == INT64_MAX
    tag_sets = pushdown.tag_dict()
    tag_index = {name: i for i, name in enumerate(plan.schema.tag_names)}
    total = 0
    for part in plan.parts:
        if not part.row_count:
            continue
        if not tag_sets and (unbounded or _inside(part.min_time, part.max_time, lo, hi)):
            total += part.row_count
            continue
        if part.devices is None:
            return None
        for device in part.devices:
            if any(device.tags[tag_index[t]] not in values for t, values in tag_sets.items()):
                continue
            if device.max_time < lo or device.min_time > hi:
                continue
            if lo <= device.min_time and device.max_time <= hi:
                total += device.row_count
                continue
            return None
    return total


def _inside(part_min: int | None, part_max: int | None, lo: int, hi: int) -> bool:
    return part_min is not None and part_max is not None and lo <= part_min and part_max <= hi
