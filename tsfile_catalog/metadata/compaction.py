"""Which parts a rewrite touches: the pure plans behind OPTIMIZE, DELETE and replaceWhere.

:func:`plan_compaction` decides which small parts OPTIMIZE merges into which new part;
:func:`plan_removal` decides, for a bound predicate, which parts a DELETE (or a replaceWhere
overwrite) drops in metadata only, which it must rewrite without the matching rows and which it
leaves alone. Both work on part statistics alone; reading and writing files is
:mod:`tsfile_catalog.table.rewrite`'s job.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tsfile_catalog.metadata.expressions.model import Expr, Not, columns_of
from tsfile_catalog.metadata.expressions.pruning import PartEvaluator
from tsfile_catalog.metadata.overlap import overlapping_ranges
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
    another format or one it only references), so DELETE may replace it.

    External parts are never rewritten.
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
    """``groups`` to rewrite (each into one part); ``kept`` parts stay as they are."""

    groups: tuple[CompactionGroup, ...]
    kept: tuple[PartFile, ...]

    @property
    def rewritten(self) -> tuple[PartFile, ...]:
        return tuple(p for g in self.groups for p in g.parts)


def _time_key(part: PartFile) -> tuple[int, int, str]:
    lo = part.min_time if part.min_time is not None else 0
    hi = part.max_time if part.max_time is not None else 0
    return lo, hi, part.path


def _may_share_rows(a: PartFile, b: PartFile) -> bool:
    """Whether two parts may hold the same (device, time): TsFile keeps one row per (device,
    time), so merging them would lose one. Device lists decide when both have them; without,
    overlapping time ranges are enough to keep them apart."""
    if a.devices is not None and b.devices is not None:
        return bool(overlapping_ranges([a.devices, b.devices]))
    if None in (a.min_time, a.max_time, b.min_time, b.max_time):
        return True
    assert a.min_time is not None and a.max_time is not None
    assert b.min_time is not None and b.max_time is not None
    return a.min_time <= b.max_time and b.min_time <= a.max_time


def plan_compaction(parts: Iterable[PartFile], *, target_size: int) -> CompactionPlan:
    """Group the small TsFile parts of ``parts`` into new parts of about ``target_size`` bytes.

    Only TsFile parts this table's writer wrote (:func:`is_writer_part`) smaller than
    :data:`NEAR_TARGET` of the target are candidates. They are packed in time order (by
    ``min_time``, then ``max_time``): each new part covers one contiguous stretch of time, and
    the writer sorts its rows by device then time, so a device's rows for a time range land
    in as few parts as possible and time pruning stays as sharp as the inputs allowed
    (usually sharper: fewer, disjoint ranges).
    A group closes when the next part would take it past the target, or when the next part
    may share a (device, time) with a part already in it (the files hold such duplicates
    separately; a TsFile cannot). A group of one part is no gain and is dropped.
    """
    if target_size <= 0:
        raise ValueError(f"target_size must be positive, got {target_size}")
    kept: list[PartFile] = []
    candidates: list[PartFile] = []
    for part in parts:
        small = part.size_bytes < target_size * NEAR_TARGET
        wanted = is_writer_part(part) and small and part.row_count > 0
        (candidates if wanted else kept).append(part)
    groups: list[list[PartFile]] = []
    current: list[PartFile] = []
    size = 0
    for part in sorted(candidates, key=_time_key):
        if current and (
            size + part.size_bytes > target_size
            or any(_may_share_rows(part, other) for other in current)
        ):
            groups.append(current)
            current, size = [], 0
        current.append(part)
        size += part.size_bytes
    if current:
        groups.append(current)
    out: list[CompactionGroup] = []
    for group in groups:
        if len(group) > 1:
            out.append(CompactionGroup(tuple(group)))
        else:
            kept.extend(group)
    return CompactionPlan(tuple(out), tuple(kept))


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
        field = part.fields.get(name)
        if field is None or field.null_count is None or field.null_count > 0:
            return False
    return True


def plan_removal(parts: Sequence[PartFile], predicate: Expr, schema: TableSchema) -> RemovalPlan:
    """Classify ``parts`` for removing the rows where the bound ``predicate`` is TRUE.

    A part is dropped whole when its statistics prove every row makes the predicate TRUE:
    no row may make it FALSE (the pruning visitor finds no row that might satisfy ``NOT
    predicate``, device by device when the part lists its devices) and none may make it NULL
    (no column it reads may be null in the part). A part whose statistics prove no row
    matches is untouched; any other part is rewritten. External parts are never dropped or
    rewritten: a predicate that may match one is refused by the caller.
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
