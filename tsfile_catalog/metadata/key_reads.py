"""Which slices of a planned scan are read merged by key (pure, no I/O).

A ``key.duplicates = last`` table's read keeps, of the rows sharing a (TAG values, time),
only those of the latest write. :func:`~tsfile_catalog.metadata.key.merge_groups` finds
where two writes' parts may share a key; :func:`plan_merges` narrows those groups to what one
scan reads (its pushed time range and TAG sets, both key predicates: rows sharing a key agree
on them) as :class:`~tsfile_catalog.metadata.slices.MergeRead` s. Everything outside them is
read plainly, as in a ``keep`` table.

The parts given must be pruned by time and TAG predicates only (:func:`key_predicate`): a
part that no row of a FIELD filter's can be in may still hold the newer row that hides an
older, matching one.
"""

from __future__ import annotations

from collections.abc import Sequence

from tsfile_catalog.metadata.expressions.model import Expr, columns_of, conjunction, conjuncts
from tsfile_catalog.metadata.expressions.pushdown import ScanPushdown
from tsfile_catalog.metadata.key import merge_groups
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import TIME_COLUMN
from tsfile_catalog.metadata.slices import MergeRead, Tags, matching_devices

__all__ = ["key_predicate", "plan_merges"]


def key_predicate(bound: Expr | None, tag_names: Sequence[str]) -> Expr | None:
    """The top-level AND terms of ``bound`` that read only ``time`` and TAG columns: a
    weaker predicate that every row sharing a key with a row it keeps passes too."""
    key = {TIME_COLUMN, *tag_names}
    return conjunction(t for t in conjuncts(bound) if columns_of(t) <= key)


def plan_merges(
    parts: Sequence[PartFile], pushdown: ScanPushdown, tag_names: Sequence[str]
) -> tuple[MergeRead, ...]:
    """The merges a scan of ``parts`` (pruned by its key predicate only) with ``pushdown``
    reads: per merge group, the devices still held by two writes inside the pushed range."""
    if pushdown.empty:
        return ()
    out: list[MergeRead] = []
    for group in merge_groups(parts):
        members = [parts[i] for i in group.parts]
        if group.devices is None:
            out.append(MergeRead(tuple(members), None))
            continue
        wanted = frozenset(group.devices)
        # Per device, the members holding it inside the range; merged where two writes do.
        holders: dict[Tags, list[PartFile]] = {}
        for part in members:
            for device in matching_devices(part, pushdown, tag_names) or ():
                if device.tags in wanted:
                    holders.setdefault(device.tags, []).append(part)
        by_parts: dict[tuple[str, ...], tuple[list[PartFile], list[Tags]]] = {}
        for tags in group.devices:
            held = holders.get(tags, [])
            if len({p.key_sequence for p in held}) < 2:
                continue  # one write's rows only: read plainly
            key = tuple(p.path for p in held)
            by_parts.setdefault(key, (held, []))[1].append(tags)
        out.extend(MergeRead(tuple(held), tuple(devices)) for held, devices in by_parts.values())
    return tuple(out)
