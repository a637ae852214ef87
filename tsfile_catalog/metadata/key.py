"""The table key, (TAG values, time): which parts' rows must be merged on read (pure, no I/O).

With the table property ``key.duplicates = last`` a row from a later write replaces the row
with the same (TAG values, time) from earlier writes, as writing a point again does in IoTDB.
Rows are never rewritten when they are replaced: reads merge, and only where needed. A part
records, per device, the time range it holds; two parts of different writes
(:attr:`~tsfile_catalog.metadata.parts.PartFile.key_sequence`) can only hold the same key for
a device whose ranges in both meet. This module finds those places from the manifest alone,
as :class:`MergeGroup` s: a set of parts and the devices whose rows in them must be read
together and resolved (latest sequence wins). Every other (part, device) slice reads as
before, at the same speed. ``keep`` (append-only: every row stays) is what tables created
before the property existed read as; new tables get ``last``.

A merge must see the rows before any FIELD filter: an old row whose value matches a filter
is hidden by a newer row whose value does not. Time and TAG predicates are key predicates (the
rows sharing a key agree on them), so pruning parts by them before planning merges is exact;
pruning by FIELD statistics is not, so :func:`merge_groups` takes the parts as pruned by time
and TAGs only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.metadata.parts import PartFile

__all__ = [
    "KEY_DUPLICATES",
    "KeyMode",
    "KEY_MODES",
    "NEW_TABLE_KEY_MODE",
    "key_mode",
    "check_key_property",
    "new_table_properties",
    "MergeGroup",
    "merge_groups",
    "merged_slices",
    "merged_slices_by_part",
    "close_over_key_overlap",
    "may_share_key",
]

KEY_DUPLICATES = "key.duplicates"
"""Table property: ``last`` (a later write replaces rows with the same key) or ``keep``."""

KeyMode = Literal["last", "keep"]
KEY_MODES: tuple[KeyMode, ...] = ("last", "keep")
NEW_TABLE_KEY_MODE: KeyMode = "last"
# A table whose properties do not say (created before the property existed) keeps every row,
# so nothing changes under it until a user sets the property.
_UNSET_KEY_MODE: KeyMode = "keep"

Tags = tuple[str | None, ...]


def key_mode(properties: Mapping[str, str]) -> KeyMode:
    """The table's ``key.duplicates`` (``keep`` when unset).

    Raises:
        OptionError: naming the property and its value, when it is neither mode.
    """
    text = properties.get(KEY_DUPLICATES)
    if text is None:
        return _UNSET_KEY_MODE
    value = text.strip().lower()
    if value == "last":
        return "last"
    if value == "keep":
        return "keep"
    raise OptionError(
        f"table property '{KEY_DUPLICATES}' = {text!r} must be 'last' (a later write replaces "
        "rows with the same TAG values and time) or 'keep' (every row is kept)"
    )


def check_key_property(properties: Mapping[str, str]) -> None:
    """Refuse a ``key.duplicates`` value :func:`key_mode` would fail to read.

    Raises:
        OptionError: naming the property and its value.
    """
    key_mode(properties)


def new_table_properties(properties: Mapping[str, str] | None) -> dict[str, str]:
    """The properties a new table is created with: ``key.duplicates = last`` unless the user
    chose a mode."""
    out = dict(properties or {})
    out.setdefault(KEY_DUPLICATES, NEW_TABLE_KEY_MODE)
    return out


@dataclass(frozen=True, slots=True)
class MergeGroup:
    """Rows to read together and resolve by key: the rows of ``devices`` in each of
    ``parts`` (indices into the list given to :func:`merge_groups`, by ascending
    ``key_sequence``), or every row of those parts when ``devices`` is None (a part that
    kept no device list overlaps another write somewhere in its time range)."""

    parts: tuple[int, ...]
    devices: tuple[Tags, ...] | None

    def slice_count(self, parts: Sequence[PartFile]) -> int:
        """How many (part, device) slices this group merges (a part without a device list
        counts as one slice)."""
        if self.devices is None:
            return len(self.parts)
        return len(self.parts) * len(self.devices)


def _chains(spans: Iterable[tuple[int, int, int]]) -> list[list[int]]:
    """The indices of ``spans`` (``(lo, hi, index)``, inclusive) grouped where their ranges
    chain together, transitively."""
    out: list[list[int]] = []
    reach: int | None = None
    for lo, hi, i in sorted(spans):
        if reach is None or lo > reach:
            out.append([i])
            reach = hi
        else:
            out[-1].append(i)
            reach = max(reach, hi)
    return out


def _time_components(parts: Sequence[PartFile]) -> list[list[int]]:
    """Parts (by index) grouped where their whole time ranges chain together; empty parts
    (no rows) are in none."""
    return _chains(
        (p.min_time, p.max_time, i)
        for i, p in enumerate(parts)
        if p.min_time is not None and p.max_time is not None and p.row_count > 0
    )


def _device_components(
    parts: Sequence[PartFile], members: Iterable[int]
) -> dict[Tags, list[list[int]]]:
    """Per device, the members whose ranges for it chain together (each a list of indices)."""
    ranges: dict[Tags, list[tuple[int, int, int]]] = {}
    for i in members:
        for device in parts[i].devices or ():
            ranges.setdefault(device.tags, []).append((device.min_time, device.max_time, i))
    out: dict[Tags, list[list[int]]] = {}
    for tags, spans in ranges.items():
        if len(spans) > 1:
            out[tags] = [c for c in _chains(spans) if len(c) > 1]
    return out


def _by_sequence(parts: Sequence[PartFile], indices: Iterable[int]) -> tuple[int, ...]:
    return tuple(sorted(set(indices), key=lambda i: (parts[i].key_sequence, i)))


def _mixed(parts: Sequence[PartFile], indices: Sequence[int]) -> bool:
    return len({parts[i].key_sequence for i in indices}) > 1


def merge_groups(parts: Sequence[PartFile]) -> tuple[MergeGroup, ...]:
    """Where rows of ``parts`` (a ``last`` table's parts, pruned by time and TAGs only) may
    share a key with rows of another write, grouped by the set of parts involved.

    A device's slices chain into a group when their time ranges meet, transitively, and the
    chain holds more than one write; a chain of one write's parts never shares a key (the
    writer deduplicates across its tasks). Parts in no group hold no key any other part holds.
    """
    groups: dict[tuple[int, ...], list[Tags]] = {}
    wide: list[tuple[int, ...]] = []
    for component in _time_components(parts):
        if len(component) < 2 or not _mixed(parts, component):
            continue
        if any(parts[i].devices is None for i in component):
            # Without a device list the part's keys could be anywhere in its time range.
            wide.append(_by_sequence(parts, component))
            continue
        for tags, chains in _device_components(parts, component).items():
            for chain in chains:
                if _mixed(parts, chain):
                    groups.setdefault(_by_sequence(parts, chain), []).append(tags)
    out = [
        MergeGroup(members, tuple(sorted(tags, key=_tags_order)))
        for members, tags in groups.items()
    ]
    out.extend(MergeGroup(members, None) for members in wide)
    return tuple(sorted(out, key=lambda g: g.parts))


def _tags_order(tags: Tags) -> tuple[tuple[bool, str], ...]:
    return tuple((t is not None, t or "") for t in tags)


def merged_slices(parts: Sequence[PartFile]) -> int:
    """How many (part, device) slices of ``parts`` a read merges (DESCRIBE DETAIL, SHOW
    PARTS): 0 once OPTIMIZE has rewritten every overlap."""
    return sum(g.slice_count(parts) for g in merge_groups(parts))


def merged_slices_by_part(parts: Sequence[PartFile]) -> tuple[int, ...]:
    """For each of ``parts``, how many of its (part, device) slices a read merges (SHOW
    PARTS); they add up to :func:`merged_slices`."""
    counts = [0] * len(parts)
    for group in merge_groups(parts):
        per_part = 1 if group.devices is None else len(group.devices)
        for i in group.parts:
            counts[i] += per_part
    return tuple(counts)


def close_over_key_overlap(parts: Sequence[PartFile], chosen: Iterable[int]) -> frozenset[int]:
    """``chosen`` plus every part that may share a key with one of them, transitively: the
    set a rewrite that merges rows must take whole, so that its output (with the largest of
    their sequences, :meth:`PartFile.rewritten_from`) replaces exactly what it should."""
    out = set(chosen)
    frontier = list(out)
    while frontier:
        i = frontier.pop()
        for j, other in enumerate(parts):
            if j not in out and may_share_key(parts[i], other):
                out.add(j)
                frontier.append(j)
    return frozenset(out)


def may_share_key(a: PartFile, b: PartFile) -> bool:
    """Whether parts of two different writes may hold a row with the same key (their time
    ranges for some device meet; anywhere in their time ranges without device lists)."""
    if a.key_sequence == b.key_sequence:
        return False
    if a.row_count == 0 or b.row_count == 0:
        return False
    if a.min_time is None or a.max_time is None or b.min_time is None or b.max_time is None:
        return False
    if a.max_time < b.min_time or b.max_time < a.min_time:
        return False
    if a.devices is None or b.devices is None:
        return True
    ranges = {d.tags: (d.min_time, d.max_time) for d in a.devices}
    for device in b.devices:
        span = ranges.get(device.tags)
        if span is not None and span[0] <= device.max_time and device.min_time <= span[1]:
            return True
    return False
