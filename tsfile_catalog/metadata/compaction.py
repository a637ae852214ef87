"""Which parts a rewrite touches: the pure plans behind OPTIMIZE, DELETE and replaceWhere.

:func:`plan_compaction` decides which small parts OPTIMIZE merges into which new part;
:func:`plan_removal` decides, for a bound predicate, which parts a DELETE (or a replaceWhere
overwrite) drops in metadata only, which it must rewrite without the matching rows and which it
leaves alone; :func:`plan_batches` packs the parts a DELETE rewrites into the tasks that
rewrite them. All work on part statistics alone; reading and writing files is
:mod:`tsfile_catalog.table.rewrite`'s job.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tsfile_catalog.metadata.expressions.model import Expr, Not, columns_of
from tsfile_catalog.metadata.expressions.pruning import PartEvaluator
from tsfile_catalog.metadata.key import KeyMode, merge_groups
from tsfile_catalog.metadata.ownership import is_part_name
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import TIME_COLUMN, TableSchema

__all__ = [
    "DEFAULT_TARGET_FILE_SIZE",
    "TARGET_FILE_SIZE_PROPERTY",
    "NEAR_TARGET",
    "CompactionGroup",
    "CompactionPlan",
    "RemovalPlan",
    "is_own_tsfile",
    "is_writer_part",
    "key_overlap_components",
    "plan_batches",
    "plan_compaction",
    "plan_removal",
    "target_file_size",
]

TARGET_FILE_SIZE_PROPERTY = "targetFileSize"
DEFAULT_TARGET_FILE_SIZE = 128 * 1024 * 1024
# A part at least this fraction of the target is "near it" and stays as it is: rewriting it
# would cost a full read and write for almost no fewer files.
NEAR_TARGET = 0.75


def target_file_size(properties: dict[str, str] | None, override: int | None = None) -> int:
    """The target size of OPTIMIZE's output files in bytes: ``override``, else the table
    property ``targetFileSize`` (an integer byte count), else 128 MiB.

    Raises:
        ValueError: the property or the override is not a positive integer (callers turn it
            into an :class:`~tsfile_catalog.exceptions.OptionError` naming where it came from).
    """
    if override is not None:
        if isinstance(override, bool) or not isinstance(override, int) or override <= 0:
            raise ValueError(f"target_file_size must be a positive integer, got {override!r}")
        return override
    text = (properties or {}).get(TARGET_FILE_SIZE_PROPERTY)
    if text is None:
        return DEFAULT_TARGET_FILE_SIZE
    try:
        value = int(text.strip())
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(
            f"table property '{TARGET_FILE_SIZE_PROPERTY}' = {text!r} is not a positive "
            "integer byte count"
        )
    return value


def is_own_tsfile(part: PartFile) -> bool:
    """Whether ``part`` is a TsFile the table holds as its own data (not an external part of
    another format or one it only references), so a rewrite may replace it.

    An external part's file is never modified: a DELETE moves its other rows into a new
    part instead; UPDATE and MERGE refuse it.
    """
    return part.format == "tsfile" and not part.external


def is_writer_part(part: PartFile) -> bool:
    """Whether this table's writer wrote ``part`` (a writer-named TsFile at the table root).

    OPTIMIZE compacts only these: an adopted layout's files are the user's, named and placed
    as the user chose, and stay as they are.
    """
    return is_own_tsfile(part) and is_part_name(part.path)


@dataclass(frozen=True, slots=True)
class CompactionGroup:
    """Parts rewritten together into one new part."""

    parts: tuple[PartFile, ...]

    @property
    def size_bytes(self) -> int:
        return sum(p.size_bytes for p in self.parts)

    @property
    def row_count(self) -> int:
        return sum(p.row_count for p in self.parts)


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    """``groups`` to rewrite; ``kept`` parts stay as they are.

    With ``resolve_keys`` (a ``key.duplicates = last`` table) each group holds every part
    that may share a (device, time) with one of its parts, and is rewritten with one row per
    key, the row of the largest ``key_sequence``, into as many parts of about the target size
    as its rows need. Without it (``keep``) each group becomes one part, or one per repeat
    of a (device, time).
    """

    groups: tuple[CompactionGroup, ...]
    kept: tuple[PartFile, ...]
    resolve_keys: bool = False

    @property
    def rewritten(self) -> tuple[PartFile, ...]:
        return tuple(p for g in self.groups for p in g.parts)


def _time_key(part: PartFile) -> tuple[int, int, str]:
    lo = part.min_time if part.min_time is not None else 0
    hi = part.max_time if part.max_time is not None else 0
    return lo, hi, part.path


def plan_compaction(
    parts: Iterable[PartFile],
    *,
    target_size: int,
    key: KeyMode = "keep",
    table_parts: Sequence[PartFile] | None = None,
) -> CompactionPlan:
    """Group the small TsFile parts of ``parts`` into new parts of about ``target_size`` bytes.

    Only TsFile parts this table's writer wrote (:func:`is_writer_part`) smaller than
    :data:`NEAR_TARGET` of the target are candidates. They are packed in time order (by
    ``min_time``, then ``max_time``): each new part covers one contiguous stretch of time, and
    the writer sorts its rows by device then time, so a device's rows for a time range land
    in as few parts as possible and time pruning stays as sharp as the inputs allowed
    (usually sharper: fewer, disjoint ranges).
    A group closes when the next part would take it past the target. Time ranges that overlap
    or interleave (a stream's micro-batches, appends of the same devices) do not keep parts
    apart. A group of one part is no gain and is dropped.

    ``key`` is the table's ``key.duplicates``. Under ``keep`` a (device, time) two parts of a
    group hold is written to separate new parts
    (:func:`~tsfile_catalog.formats.tsfile.split_duplicates`), so every row survives. Under
    ``last`` rows that share a key are resolved instead (the plan's ``resolve_keys``), so:

    * every writer part a read must merge (:func:`~tsfile_catalog.metadata.key.merge_groups`
      over ``table_parts``) is a candidate whatever its size: afterwards no slice overlaps;
    * each group is closed over key overlap within ``table_parts``
      (:func:`~tsfile_catalog.metadata.key.close_over_key_overlap`), groups whose closures
      meet are joined, and a group whose closure reaches a part OPTIMIZE may not rewrite (an
      external or adopted file) is left as it is: its output takes the largest sequence of
      its sources, which is exact only when no other part may hold one of its keys.

    Args:
        parts: the candidates (all live parts, or those an ``OPTIMIZE … WHERE`` selects).
        target_size: bytes.
        key: the table's ``key.duplicates``.
        table_parts: every live part of the table (default ``parts``): what a ``last``
            group is closed over.
    """
    if target_size <= 0:
        raise ValueError(f"target_size must be positive, got {target_size}")
    given = list(parts)
    everything = list(given) if table_parts is None else list(table_parts)
    overlapping: set[str] = set()
    if key == "last":
        for merged in merge_groups(everything):
            overlapping.update(everything[i].path for i in merged.parts)
    kept: list[PartFile] = []
    candidates: list[PartFile] = []
    for part in given:
        small = part.size_bytes < target_size * NEAR_TARGET or part.path in overlapping
        wanted = is_writer_part(part) and small and part.row_count > 0
        (candidates if wanted else kept).append(part)
    groups: list[list[PartFile]] = []
    current: list[PartFile] = []
    size = 0
    for part in sorted(candidates, key=_time_key):
        if current and size + part.size_bytes > target_size:
            groups.append(current)
            current, size = [], 0
        current.append(part)
        size += part.size_bytes
    if current:
        groups.append(current)
    if key == "last":
        groups = _closed_over_key_overlap(groups, everything)
    out: list[CompactionGroup] = []
    rewritten: set[str] = set()
    for group in groups:
        if len(group) > 1:
            out.append(CompactionGroup(tuple(group)))
            rewritten.update(p.path for p in group)
    kept = [p for p in given if p.path not in rewritten]
    return CompactionPlan(tuple(out), tuple(kept), resolve_keys=key == "last")


def _closed_over_key_overlap(
    groups: list[list[PartFile]], everything: Sequence[PartFile]
) -> list[list[PartFile]]:
    """``groups`` each extended by every part of ``everything`` that may share a key with
    it, transitively (the sets :func:`~tsfile_catalog.metadata.key.close_over_key_overlap`
    builds), joined where they meet; a group that reaches a part OPTIMIZE may not rewrite is
    dropped (its parts stay, read merged)."""
    index = {p.path: i for i, p in enumerate(everything)}
    component = key_overlap_components(everything)
    members: dict[int, list[int]] = {}
    for i, root in enumerate(component):
        members.setdefault(root, []).append(i)
    # Groups that take parts of one component are joined: a part is in one group at most.
    joined = _Roots(len(groups))
    owner: dict[int, int] = {}
    for g, group in enumerate(groups):
        for part in group:
            root = component[index[part.path]]
            joined.union(owner.setdefault(root, g), g)
    closures: dict[int, set[int]] = {}
    for root, g in owner.items():
        closures.setdefault(joined.find(g), set()).update(members[root])
    out: list[list[PartFile]] = []
    for closure in closures.values():
        chosen = [everything[i] for i in sorted(closure)]
        if all(is_writer_part(p) for p in chosen):
            out.append(sorted(chosen, key=_time_key))
    return sorted(out, key=lambda g: _time_key(g[0]))


class _Roots:
    """Union-find over ``0 .. n - 1``."""

    def __init__(self, n: int) -> None:
        self._parent = list(range(n))

    def find(self, i: int) -> int:
        parent = self._parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(self, a: int, b: int) -> int:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self._parent[rb] = ra
        return ra


def key_overlap_components(parts: Sequence[PartFile]) -> list[int]:
    """For each of ``parts``, a component id: two parts have the same id exactly when they
    are linked by a chain of parts each pair of which may share a key (different key
    sequences, both with rows, a device whose time ranges meet in both, or meeting time ranges
    when one kept no device list). :func:`~tsfile_catalog.metadata.key.close_over_key_overlap`
    of a set is the union of its parts' components.

    All components at once, by one sweep over each device's time ranges, in about
    n log n: closing each group of a long stream's parts separately cost n^2 per group.
    """
    roots = _Roots(len(parts))
    live = [
        i
        for i, p in enumerate(parts)
        if p.row_count > 0 and p.min_time is not None and p.max_time is not None
    ]
    by_device: dict[tuple[str | None, ...], list[tuple[int, int, int]]] = {}
    for i in live:
        part = parts[i]
        if part.devices is None:
            # Rare (over MAX_DEVICES devices): it may share a key anywhere in its time range.
            for j in live:
                if j != i and part.key_sequence != parts[j].key_sequence:
                    other = parts[j]
                    assert part.min_time is not None and part.max_time is not None
                    assert other.min_time is not None and other.max_time is not None
                    if part.min_time <= other.max_time and other.min_time <= part.max_time:
                        roots.union(i, j)
            continue
        for device in part.devices:
            by_device.setdefault(device.tags, []).append((device.min_time, device.max_time, i))
    for spans in by_device.values():
        if len(spans) > 1:
            _sweep(parts, spans, roots)
    return [roots.find(i) for i in range(len(parts))]


def _sweep(parts: Sequence[PartFile], spans: list[tuple[int, int, int]], roots: _Roots) -> None:
    """Join the parts whose ranges for one device meet and whose sequences differ.

    Sorted by start, each span meets every span still open. The open spans are tracked by
    component, with how many of them each sequence has: a component with open spans of two
    sequences, or of one other than the new span's, is joined with it. Each component is
    joined once before it is merged away, so the work stays near the number of spans even
    where every span meets every other (a stream's interleaved micro-batches, or one large
    write of many overlapping parts, which share no key and are never joined).
    """
    open_by_end: list[tuple[int, int]] = []
    counts: dict[int, dict[int, int]] = {}  # component -> sequence -> open spans
    single: dict[int, set[int]] = {}  # sequence -> components whose open spans all have it
    mixed: set[int] = set()  # components with open spans of two sequences or more

    def unlist(root: int) -> None:
        seqs = counts.get(root)
        if not seqs:
            return
        if len(seqs) > 1:
            mixed.discard(root)
        else:
            (seq,) = seqs
            single[seq].discard(root)
            if not single[seq]:
                del single[seq]

    def relist(root: int) -> None:
        seqs = counts.get(root)
        if not seqs:
            counts.pop(root, None)
        elif len(seqs) > 1:
            mixed.add(root)
        else:
            (seq,) = seqs
            single.setdefault(seq, set()).add(root)

    for lo, hi, i in sorted(spans):
        while open_by_end and open_by_end[0][0] < lo:
            _, j = heapq.heappop(open_by_end)
            root = roots.find(j)
            unlist(root)
            seqs = counts[root]
            seq = parts[j].key_sequence
            seqs[seq] -= 1
            if not seqs[seq]:
                del seqs[seq]
            relist(root)
        seq = parts[i].key_sequence
        targets = set(mixed)
        for other, members in single.items():
            if other != seq:
                targets.update(members)
        root = roots.find(i)
        tallies = []
        for target in {*targets, root}:
            unlist(target)
            tallies.append(counts.pop(target, {}))
        # The smaller tallies into the largest, which is kept: a component open across many
        # sequences is not copied for every span that joins it.
        tallies.sort(key=len)
        merged = tallies.pop()
        for tally in tallies:
            for key, n in tally.items():
                merged[key] = merged.get(key, 0) + n
        for target in targets:
            root = roots.union(root, target)
        merged[seq] = merged.get(seq, 0) + 1
        counts[root] = merged
        relist(root)
        heapq.heappush(open_by_end, (hi, i))


@dataclass(frozen=True, slots=True)
class RemovalPlan:
    """What removing the rows that match a predicate does to each part.

    ``drop``: every row matches, the part leaves the table in metadata only.
    ``rewrite``: some rows may match, the part is rewritten without them (copy-on-write).
    ``untouched``: statistics prove no row matches.
    """

    drop: tuple[PartFile, ...]
    rewrite: tuple[PartFile, ...]
    untouched: tuple[PartFile, ...]


def _never_null(part: PartFile, columns: Iterable[str], schema: TableSchema) -> bool:
    """Whether statistics prove ``columns`` hold no null in ``part`` (``time`` never does)."""
    tags = set(schema.tag_names)
    for name in columns:
        if name == TIME_COLUMN:
            continue
        if name in tags:
            tag = part.tags.get(name)
            if tag is None or tag.has_null:
                return False
            continue
        field = part.fields.get(schema.physical_name(name))
        if field is None or field.null_count is None or field.null_count > 0:
            return False
    return True


def plan_removal(parts: Sequence[PartFile], predicate: Expr, schema: TableSchema) -> RemovalPlan:
    """Classify ``parts`` for removing the rows where the bound ``predicate`` is TRUE.

    A part is dropped whole when its statistics prove every row makes the predicate TRUE:
    no row may make it FALSE (the pruning visitor finds no row that might satisfy ``NOT
    predicate``, device by device when the part lists its devices) and none may make it NULL
    (no column it reads may be null in the part). A part whose statistics prove no row
    matches is untouched; any other part is rewritten. External parts are classified alike:
    "dropped" and "rewritten" change only the manifest for them (a rewrite's rows go into a
    new part of the table's own), never their files.
    """
    might = PartEvaluator(predicate, schema)
    might_not = PartEvaluator(Not(predicate), schema)
    columns = columns_of(predicate)
    drop: list[PartFile] = []
    rewrite: list[PartFile] = []
    untouched: list[PartFile] = []
    for part in parts:
        if part.row_count <= 0 or not might.might_match(part):
            untouched.append(part)
        elif not might_not.might_match(part) and _never_null(part, columns, schema):
            drop.append(part)
        else:
            rewrite.append(part)
    return RemovalPlan(tuple(drop), tuple(rewrite), tuple(untouched))


def plan_batches(sizes: Sequence[int], *, max_bytes: int, slots: int) -> list[range]:
    """Pack work items of ``sizes`` bytes, in order, into consecutive batches, one per task.

    As many batches as it takes to hold about ``max_bytes`` (the target file size) each,
    but at least ``slots`` (the tasks that run at once), as Spark packs a scan's small
    files (``maxSplitBytes``), and never more than the items: work far below ``max_bytes``
    still spreads over every slot, and an item of ``max_bytes`` or more is a task of its
    own. Each batch takes items while that brings it closer to an equal share of the bytes
    still unpacked, so the batches come out even (no small last task) and an item much
    larger than a share stays alone. Concatenated, the batches are ``range(len(sizes))``.
    """
    if not sizes:
        return []
    total = sum(sizes)
    count = min(len(sizes), max(slots, -(-total // max(1, max_bytes)), 1))
    batches: list[range] = []
    start, remaining = 0, total
    for left in range(count, 1, -1):  # batches still to make, this one included
        share = remaining / left
        end, held = start + 1, sizes[start]
        # Leave an item for each later batch.
        while end < len(sizes) - (left - 1) and held + sizes[end] / 2 <= share:
            held += sizes[end]
            end += 1
        batches.append(range(start, end))
        start, remaining = end, remaining - held
    batches.append(range(start, len(sizes)))
    return batches
