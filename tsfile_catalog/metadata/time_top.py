"""Which parts can hold the first ``n`` rows in ``time`` order (a top-N by time).

``ORDER BY time DESC LIMIT 10`` — the latest readings — is the commonest time-series query.
Statistics tell how many matching rows a part (or one device of it) holds and between which
times, so a threshold ``T`` with at least ``n`` matching rows at or after it is known without
reading: a part whose rows all come before ``T`` cannot hold any of the latest ``n`` rows, and
is not read. Every row at or after ``T`` stays, so the rows kept include the first ``n`` rows
of any ordering whose first key is ``time``, whatever its ties and further keys: the caller
(Spark) still sorts and limits them.

Counts are taken only where they are exact: nothing left for row-level evaluation, and a
(part, device) whose rows all pass the pushed time range and TAG sets and that no key merge
touches (a merge may replace rows, so its parts are never counted; a merge is kept or dropped
whole). Without enough exact counts nothing is dropped.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.scan import ScanPlan
from tsfile_catalog.metadata.slices import matching_devices, merged_devices

__all__ = ["TimeTop", "keep_time_top", "time_top_threshold"]


@dataclass(frozen=True, slots=True)
class TimeTop:
    """The first ``n`` rows in ``time`` order: the latest when ``descending``, else the
    earliest."""

    n: int
    descending: bool

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"a top-N by time needs n >= 1, got {self.n}")

    @property
    def option(self) -> str:
        """The read option that asks for it (``latest`` or ``earliest`` = n)."""
        return "latest" if self.descending else "earliest"


def time_top_threshold(plan: ScanPlan, top: TimeTop) -> int | None:
    """A time ``T`` such that at least ``top.n`` of the plan's rows have ``time >= T``
    (descending; ``<= T`` ascending), from exact statistics alone; None when they cannot
    show it."""
    if plan.pushdown.residual is not None:
        return None
    # (the time every row of the unit is at or beyond, its exact row count)
    units = sorted(_exact_units(plan, top.descending), reverse=top.descending)
    counted = 0
    for bound, rows in units:
        counted += rows
        if counted >= top.n:
            return bound
    return None


def keep_time_top(plan: ScanPlan, top: TimeTop) -> tuple[ScanPlan, tuple[PartFile, ...]]:
    """``plan`` reading only the parts that may hold its first ``top.n`` rows in time order,
    and the parts it no longer reads (``plan.pruned`` is left as the predicate's)."""
    threshold = time_top_threshold(plan, top)
    if threshold is None:
        return plan, ()

    def beyond(part: PartFile) -> bool:
        if part.min_time is None or part.max_time is None:
            return False  # no time range recorded: it may hold anything
        if top.descending:
            return part.max_time < threshold
        return part.min_time > threshold

    kept = {p.path for p in plan.parts if not beyond(p)}
    merges = tuple(m for m in plan.merges if any(p.path in kept for p in m.parts))
    kept.update(p.path for m in merges for p in m.parts)
    if len(kept) == len(plan.parts):
        return plan, ()
    parts = tuple(p for p in plan.parts if p.path in kept)
    dropped = tuple(p for p in plan.parts if p.path not in kept)
    return replace(plan, parts=parts, merges=merges), dropped


def _exact_units(plan: ScanPlan, descending: bool) -> Iterator[tuple[int, int]]:
    """(bound, rows) of every unit whose matching rows are exactly known: a whole part, or
    one device of a part; ``bound`` is its earliest time (descending) or latest."""
    pushdown = plan.pushdown
    lo, hi = pushdown.time_min, pushdown.time_max
    merged = merged_devices(plan.merges)
    for part in plan.parts:
        if not part.row_count or part.min_time is None or part.max_time is None:
            continue
        taken = merged.get(part.path, frozenset())
        if taken is None:
            continue  # read whole by a merge
        if not pushdown.tag_values and not taken and lo <= part.min_time and part.max_time <= hi:
            yield (part.min_time if descending else part.max_time), part.row_count
            continue
        for device in matching_devices(part, pushdown, plan.schema.tag_names) or ():
            if device.tags not in taken and lo <= device.min_time and device.max_time <= hi:
                yield (device.min_time if descending else device.max_time), device.row_count
