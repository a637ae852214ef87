"""Row changes by the table key, in the driver: what UPDATE, MERGE and a ``last`` table's
DELETE share.

A row of a ``key.duplicates = last`` table is its (TAG values, time): the newest of the rows
sharing it (:attr:`~tsfile_catalog.metadata.parts.PartFile.key_sequence`) is the one reads
show. Changing such a row therefore changes a *key*, and removing a key must remove it from
every part that holds it: a stale older row would otherwise come back once the newest is
gone. This module reads the rows of a set of parts resolved by key (:func:`latest_rows`),
removes keys from every part that may hold them, copy-on-write with the sequence of what was
rewritten kept (:func:`remove_keys`), and stages new rows and makes the one commit
(:func:`commit_key_change`). Given a :class:`~tsfile_catalog.table.rewrite_tasks.TaskRunner`,
the parts losing keys are rewritten in its tasks (each part's rewrite the same,
:class:`WithoutKeys`). The new rows are an Arrow table staged in this process, or a
:class:`RowStaging` that stages them where they were computed: Spark's tasks each stage their
share (:class:`NewRowsTask`), so the rows never pass through the driver; only the keys to
remove do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tsfile_catalog.exceptions import DataError, InvalidCommitError
from tsfile_catalog.formats.tsfile import WriteSettings, split_duplicates
from tsfile_catalog.metadata.compaction import is_own_tsfile
from tsfile_catalog.metadata.key import KeyMode, key_mode
from tsfile_catalog.metadata.manifest import Operation, Snapshot
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import TIME_COLUMN, TableSchema
from tsfile_catalog.table.key_ranges import KeyIndex
from tsfile_catalog.table.rewrite import (
    PartRewrites,
    PartStager,
    RewriteJob,
    RowRemoval,
    StagedFile,
    TableParts,
    empty_rows,
    read_part_rows,
    rewrite_each,
)
from tsfile_catalog.table.rewrite_tasks import (
    TaskOutcome,
    TaskRunner,
    part_rewrites,
    worker_name,
)

if TYPE_CHECKING:
    from tsfile_catalog.table.handle import Table

__all__ = [
    "KeyChange",
    "key_columns",
    "latest_rows",
    "keys_of",
    "WithoutKeys",
    "remove_keys",
    "RowStaging",
    "NewRowsTask",
    "adopt_new_rows",
    "commit_key_change",
]

# The position of a row among the parts read, in key-sequence order: the largest wins.
_ORDER = "__key_order"


def key_columns(schema: TableSchema) -> list[str]:
    """The table key's columns: the TAG columns, in order, then ``time``."""
    return [*schema.tag_names, TIME_COLUMN]


def latest_rows(table: Table, parts: Sequence[PartFile]) -> pa.Table:
    """The rows of ``parts`` (raw domain, every column) as a ``last`` table reads them: of
    the rows sharing a (TAG values, time), only the one of the part with the largest key
    sequence. ``parts`` must hold every part that may share a key with one of them
    (:func:`~tsfile_catalog.metadata.key.close_over_key_overlap`)."""
    ordered = sorted(parts, key=lambda p: p.key_sequence)
    tables: list[pa.Table] = []
    offset = 0
    for part in ordered:
        rows = read_part_rows(table, part)
        order = pa.array(range(offset, offset + rows.num_rows), pa.int64())
        tables.append(rows.append_column(_ORDER, order))
        offset += rows.num_rows
    if not tables:
        return empty_rows(table.schema)
    rows = pa.concat_tables(tables)
    keys = key_columns(table.schema)
    winners = rows.group_by(keys, use_threads=False).aggregate([(_ORDER, "max")])
    kept = rows.filter(pc.is_in(rows.column(_ORDER), winners.column(f"{_ORDER}_max")))
    return kept.drop_columns([_ORDER])


def keys_of(rows: pa.Table, schema: TableSchema) -> pa.Table:
    """The distinct keys of ``rows`` (raw domain)."""
    keys = key_columns(schema)
    return rows.select(keys).group_by(keys, use_threads=False).aggregate([])


@dataclass(frozen=True)
class WithoutKeys:
    """A key change's :class:`~tsfile_catalog.table.rewrite.PartChange`: the part without
    its rows whose key is in ``keys`` (raw domain), staged with its key sequence kept so its
    remaining rows keep their place among the writes (nothing when no row is left). An
    external part's remaining rows are staged the same way, as a new part of the table's own:
    its file is never modified (:func:`remove_keys` decides whether that may replace it). A
    task gets only the keys its parts may hold (:meth:`for_parts`)."""

    keys: pa.Table

    def for_parts(self, parts: Sequence[PartFile]) -> WithoutKeys:
        """The keys a device of ``parts`` may hold, by its time range (a part without
        per-device statistics: any key in its time range)."""
        return WithoutKeys(self.index.within(parts))

    @cached_property
    def index(self) -> KeyIndex:
        """The keys by device and time; built once, where the parts that may hold them are
        chosen (the driver), never pickled."""
        return KeyIndex.of(self.keys)

    def __getstate__(self) -> dict[str, Any]:
        return {"keys": self.keys}

    def __call__(self, stager: PartStager, part: PartFile) -> tuple[int, tuple[StagedFile, ...]]:
        rows = read_part_rows(stager.source, part)
        kept = rows.join(self.keys, keys=key_columns(stager.source.schema), join_type="left anti")
        count = rows.num_rows - kept.num_rows
        if count and kept.num_rows:
            return count, (stager.write(kept.select(rows.column_names), sources=(part,)),)
        return count, ()


def remove_keys(
    job: RewriteJob,
    keys: pa.Table,
    parts: Sequence[PartFile],
    *,
    rewrite: PartRewrites | None = None,
    replace_external: bool = False,
) -> RowRemoval:
    """Stage the removal of every row of ``parts`` whose key is in ``keys`` (raw domain):
    parts that hold some are rewritten without them (:class:`WithoutKeys`; in this process,
    or by ``rewrite`` in tasks), parts left empty are dropped.

    With ``replace_external`` (a DELETE), an external part holding a key leaves the
    manifest and its other rows go into a new part of the table's own; its file is never
    modified. Without it (UPDATE, MERGE) such a part is refused.

    Raises:
        InvalidCommitError: without ``replace_external``, an external part holds one of the
            keys (naming every such part): the table never rewrites files it does not own.
    """
    if keys.num_rows == 0:
        return RowRemoval((), 0, 0, 0)
    change = WithoutKeys(keys)
    candidates = [p for p in parts if change.index.may_hold(p)]
    removed: list[PartFile] = []
    foreign: list[str] = []
    dropped = rewritten = deleted = 0
    for part, count, staged in rewrite_each(job, candidates, change, rewrite=rewrite):
        if not count:
            continue
        if not replace_external and not is_own_tsfile(part):
            foreign.append(f"'{part.path}' ({count} rows)")
            continue
        removed.append(part)
        deleted += count
        if staged:
            rewritten += 1
        else:
            dropped += 1
    if foreign:
        raise InvalidCommitError(
            f"external part{'s' if len(foreign) > 1 else ''} {', '.join(foreign)} hold rows "
            "this statement changes; the table never rewrites files it does not own: drop "
            "the part (ALTER TABLE ... DROP PART) and append its rows, or narrow the statement"
        )
    return RowRemoval(tuple(removed), dropped, rewritten, deleted)


@dataclass(frozen=True)
class KeyChange:
    """What a key change committed. ``version`` is None when there was nothing to do."""

    version: int | None
    rows_removed: int  # rows taken out of existing parts
    rows_added: int  # new rows written
    files_removed: int
    files_added: int


class RowStaging(Protocol):
    """A key change's new rows, computed elsewhere and staged there (Spark's tasks:
    :class:`~tsfile_catalog.datasource.rewrite_tasks.FrameRows`)."""

    def __call__(self, job: RewriteJob, mode: KeyMode) -> int:
        """Stage the rows as new parts of ``job`` (adopted into it); the rows staged.

        Raises:
            DataError: the rows repeat a key of a ``last`` table, or hold a value the
                writer refuses (naming it); nothing of them stays staged.
        """
        ...


@dataclass(frozen=True)
class NewRowsTask:
    """One Spark partition's share of a key change's new rows (raw domain, every column),
    staged as parts in its own task folder (index ``first + partition``).

    A part ends about every ``max_rows`` rows (bounding the task's memory), only where a
    key's run of rows does. A ``last`` table's check that the new rows hold each key once is
    made per partition: complete when every row of a key is in one partition, next to its
    repeats (the caller clusters them so), or when the keys cannot repeat. A
    :class:`~tsfile_catalog.exceptions.DataError` is answered as the outcome's ``refusal``,
    with nothing staged."""

    table: TableParts
    settings: WriteSettings
    job: str
    first: int
    mode: KeyMode
    max_rows: int

    def run(self, rows: Iterable[pa.Table], partition: int, attempt: int = 0) -> TaskOutcome:
        index = self.first + partition
        schema = self.table.schema
        try:
            with PartStager(
                self.table, self.settings, job=self.job, partition=index, attempt=attempt
            ) as stager:
                pending: list[pa.Table] = []
                held = 0
                for piece in rows:
                    pending.append(piece)
                    held += piece.num_rows
                    if held < self.max_rows:
                        continue
                    whole = pa.concat_tables(pending)
                    cut = _last_key_start(whole, schema)
                    if cut:
                        stage_layers(stager, whole.slice(0, cut), self.mode)
                        pending, held = [whole.slice(cut)], whole.num_rows - cut
                if held:
                    stage_layers(stager, pa.concat_tables(pending), self.mode)
        except DataError as e:
            return TaskOutcome(index, False, (), worker_name(), refusal=str(e))
        return TaskOutcome(index, bool(stager.staged), tuple(stager.staged), worker_name())


def _last_key_start(rows: pa.Table, schema: TableSchema) -> int:
    """Where the run of rows sharing the last row's key starts (``rows`` grouped by key)."""
    last = rows.num_rows - 1
    same: pa.ChunkedArray | pa.Array | None = None
    for name in key_columns(schema):
        column = rows.column(name)
        value = column[last]
        equal = (
            pc.fill_null(pc.equal(column, value), False) if value.is_valid else pc.is_null(column)
        )
        same = equal if same is None else pc.and_(same, equal)
    assert same is not None
    differing = np.flatnonzero(~np.asarray(same))
    return int(differing[-1]) + 1 if differing.size else 0


def stage_layers(stager: PartStager, rows: pa.Table, mode: KeyMode) -> None:
    """Stage new rows as parts: one, or one per layer of a ``keep`` table's repeated keys.

    Raises:
        DataError: the rows repeat a key of a ``last`` table (naming it).
    """
    for layer in _layers(rows, stager.source.schema, mode):
        stager.write(layer)


def adopt_new_rows(job: RewriteJob, outcomes: Sequence[TaskOutcome]) -> int:
    """Take what :class:`NewRowsTask` s staged into ``job``; the rows they staged.

    Raises:
        DataError: a task refused its rows (the first one's reason).
    """
    refused = [o.refusal for o in sorted(outcomes, key=lambda o: o.index) if o.refusal]
    if refused:
        raise DataError(refused[0])
    staged = [s for o in outcomes for s in o.staged]
    job.adopt(staged)
    return sum(s.part.row_count for s in staged)


def commit_key_change(
    table: Table,
    *,
    new_rows: pa.Table | RowStaging | None,
    remove: pa.Table | None,
    operation: Operation,
    parameters: Mapping[str, str],
    settings: WriteSettings | None = None,
    runner: TaskRunner | None = None,
) -> KeyChange:
    """One commit against ``table``'s version: remove the keys ``remove`` from every part
    that holds them and add ``new_rows`` (raw domain, every column; or staged where they
    were computed, :class:`RowStaging`) as new parts.

    The new parts belong to this commit's write, so in a ``last`` table their rows replace
    any row with the same key. In a ``last`` table ``new_rows`` must hold each key once; in
    a ``keep`` table a key may repeat (the repeats go to as many parts as needed, as
    OPTIMIZE writes them).

    With a ``runner`` (``SparkTasks(spark)``) the parts losing keys are rewritten in its
    tasks (:func:`~tsfile_catalog.table.rewrite_tasks.part_rewrites`); an Arrow
    ``new_rows`` is staged here. The commit's parameters name its ``job`` (a Spark job
    group's name).

    Raises:
        DataError: ``new_rows`` repeats a key of a ``last`` table (naming it).
        InvalidCommitError: an external part holds a removed key.
        OptionError: with a ``runner``, the ``targetFileSize`` property is not a positive
            integer.
        CommitConflictError: a concurrent commit removed a part this one rewrites.
    """
    mode = key_mode(table.properties)
    with RewriteJob(table, settings) as job:
        removal = (
            remove_keys(
                job,
                remove,
                table.parts(),
                rewrite=None if runner is None else part_rewrites(job, runner),
            )
            if remove is not None
            else RowRemoval((), 0, 0, 0)
        )
        if new_rows is None:
            added = 0
        elif isinstance(new_rows, pa.Table):
            if new_rows.num_rows:
                stage_layers(job, new_rows, mode)
            added = new_rows.num_rows
        else:
            added = new_rows(job, mode)
        if not added and not removal.removed:
            return KeyChange(None, 0, 0, 0, 0)
        snapshot: Snapshot = job.commit(
            removal.removed,
            operation=operation,
            parameters={**parameters, "job": job.job},
            data_change=True,
        )
        return KeyChange(
            version=snapshot.version,
            rows_removed=removal.deleted_rows,
            rows_added=added,
            files_removed=len(removal.removed),
            files_added=len(job.staged),
        )


def _layers(rows: pa.Table, schema: TableSchema, mode: KeyMode) -> list[pa.Table]:
    layers = split_duplicates(rows, schema)
    if mode == "last" and len(layers) > 1:
        repeat = layers[1].slice(0, 1).to_pylist()[0]
        key = ", ".join(f"{c}={repeat[c]!r}" for c in key_columns(schema))
        raise DataError(
            f"the new rows hold the key ({key}) more than once; a table with "
            "key.duplicates = last holds one row per (TAG values, time)"
        )
    return layers
