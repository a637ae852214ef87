"""Rewriting parts: what OPTIMIZE, DELETE, UPDATE, MERGE and replaceWhere share.

Rows are read through the one shared read path (:func:`~tsfile_catalog.exec.read.read_slices`)
and written as new TsFiles with the TsFile adapter, staged exactly as the batch writer stages
its task files (``_staging/<job>/<task>/part-….tsfile``, names from
:mod:`tsfile_catalog.metadata.ownership`), so a rewrite that dies leaves only what VACUUM
recognises as the table's own orphans. :class:`RewriteJob` publishes the staged files and makes
one commit; on any failure it deletes what it published and its staging folder. A copy-on-write
of single parts is a picklable :class:`PartChange` (:class:`Without` for DELETE), applied by
:func:`rewrite_each` here or, given a :data:`PartRewrites`, in tasks
(:mod:`tsfile_catalog.table.rewrite_tasks`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import TracebackType
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import pyarrow as pa
import pyarrow.compute as pc

from tsfile_catalog.exec.arrow_filter import predicate_mask
from tsfile_catalog.exec.read import read_slices
from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.formats.base import NORMALIZED_ARROW
from tsfile_catalog.formats.tsfile import (
    TSFILE,
    WriteSettings,
    opened,
    part_and_devices,
)
from tsfile_catalog.io import FileIO, join_url
from tsfile_catalog.metadata.compaction import RemovalPlan, plan_removal
from tsfile_catalog.metadata.expressions import INT64_MAX, INT64_MIN, Expr, ScanPushdown
from tsfile_catalog.metadata.manifest import Action, AddPart, Operation, RemovePart, Snapshot
from tsfile_catalog.metadata.ownership import STAGING_DIR, new_job_id, new_part_name, task_dir_name
from tsfile_catalog.metadata.parts import DeviceStats, PartFile
from tsfile_catalog.metadata.schema import DataType, TableSchema
from tsfile_catalog.metadata.slices import FileSlice
from tsfile_catalog.progress import Progress
from tsfile_catalog.table.commits import commit

if TYPE_CHECKING:
    from tsfile_catalog.table.handle import Table

__all__ = [
    "StagedFile",
    "PartSource",
    "TableParts",
    "PartStager",
    "RewriteJob",
    "discard_task_staging",
    "stage_part",
    "to_physical",
    "read_part_rows",
    "empty_rows",
    "without_matching",
    "matches",
    "to_writer_types",
    "RowRemoval",
    "remove_matching_rows",
    "rewrite_without",
    "PartChange",
    "NarrowedChange",
    "Without",
    "PartRewrites",
    "rewrite_each",
]


@dataclass(frozen=True)
class StagedFile:
    """A new part written to a staging folder: where it is, its statistics, every device."""

    staged_url: str
    part: PartFile  # ``part.path`` is the name it gets at the table root
    devices: tuple[DeviceStats, ...]


def stage_part(
    io: FileIO,
    data: pa.Table,
    schema: TableSchema,
    settings: WriteSettings,
    *,
    staging: str,
    local_dir: str,
    partition: int = 0,
) -> StagedFile:
    """Write ``data`` (the writer's raw Arrow types) as a new TsFile under ``staging``.

    The file is written locally, its statistics read back from its metadata, then it is
    uploaded; the batch writer's tasks and the driver-side rewrites share this.
    """
    name = new_part_name(partition)
    local = os.path.join(local_dir, name)
    # Part files hold each column under its physical name, and so do their statistics.
    file_schema, data, settings = to_physical(schema, data, settings)
    TSFILE.write(local, data, file_schema, settings)
    size = os.path.getsize(local)
    # Read back, not recomputed from ``data``: the native writer computed them while encoding,
    # and the footer of a file just written locally costs less to read than the same exact
    # per-device, per-series values cost to aggregate from the rows (bench/write_phases.py
    # times this phase; bench/bottlenecks.md, "Writes").
    with opened(FileIO(local), local) as reader:
        part, devices = part_and_devices(reader, file_schema, name, size)
    staged_url = join_url(staging, name)
    io.put_file(local, staged_url)  # a rename locally; the caller's scratch folder goes after
    return StagedFile(staged_url, part, devices)


def to_physical(
    schema: TableSchema, data: pa.Table, settings: WriteSettings
) -> tuple[TableSchema, pa.Table, WriteSettings]:
    """``schema``, ``data`` (columns named as in ``schema``) and ``settings`` (per-column
    encodings by column name) as a part file holds them: under physical names."""
    names = schema.physical_names()
    if not names:
        return schema, data, settings
    data = data.rename_columns([names.get(n, n) for n in data.column_names])
    encodings = tuple(sorted((names.get(c, c), e) for c, e in settings.column_encodings))
    return schema.file_schema(), data, replace(settings, column_encodings=encodings)


def read_part_rows(
    table: PartSource, part: PartFile, *, time_min: int = INT64_MIN, time_max: int = INT64_MAX
) -> pa.Table:
    """Every row of ``part`` (with ``time_min <= time <= time_max``), as all columns of the
    table schema in the raw domain (columns the part lacks as nulls), through the shared read
    path."""
    scan = ResolvedScan(table.location, table.schema, (part,), table.version, io=table.io)
    columns = list(table.schema.names)
    whole = FileSlice.of(part, time_min, time_max)  # checked against its recorded size
    tables = list(read_slices(scan, [whole], ScanPushdown(), columns))
    if not tables:
        return empty_rows(table.schema)
    return pa.concat_tables(tables)


def empty_rows(schema: TableSchema) -> pa.Table:
    """No rows, with every column of ``schema`` as :func:`read_part_rows` returns them."""
    fields = [pa.field(schema.names[0], pa.int64())]
    fields += [pa.field(c.name, NORMALIZED_ARROW[c.type]) for c in schema.columns]
    return pa.schema(fields).empty_table()


def without_matching(rows: pa.Table, predicate: Expr) -> pa.Table:
    """``rows`` minus those where the bound ``predicate`` is TRUE (NULL keeps a row, as a
    DELETE's WHERE deletes only rows it holds for)."""
    if rows.num_rows == 0:
        return rows
    return rows.filter(pc.invert(matches(rows, predicate)))


def matches(rows: pa.Table, predicate: Expr | None) -> pa.Array | pa.ChunkedArray:
    """Per row of ``rows``, whether the bound ``predicate`` is TRUE (None: every row); NULL
    is False, as a WHERE holds only where it is TRUE."""
    if predicate is None:
        return pa.array([True] * rows.num_rows, pa.bool_())
    return pc.fill_null(predicate_mask(rows, predicate), False)


def to_writer_types(rows: pa.Table, schema: TableSchema) -> pa.Table:
    """Raw-domain rows in the types the TsFile writer takes: it accepts TIMESTAMP FIELDs only
    as ``timestamp[ns]`` (it stores the raw long as is)."""
    out = rows
    for index, name in enumerate(rows.column_names):
        column = schema.column(name) if index else None
        if column is not None and column.type is DataType.TIMESTAMP:
            out = out.set_column(
                index, name, rows.column(index).cast(pa.int64()).cast(pa.timestamp("ns"))
            )
    return out


class PartSource(Protocol):
    """What reading a table's parts and staging their rewrite need of one table version: a
    :class:`~tsfile_catalog.table.handle.Table` is one, and so is the picklable
    :class:`TableParts` a rewrite task carries to a Spark executor."""

    @property
    def location(self) -> str: ...

    @property
    def schema(self) -> TableSchema: ...

    @property
    def version(self) -> int: ...

    @property
    def io(self) -> FileIO: ...


@dataclass(frozen=True)
class TableParts:
    """A :class:`PartSource` without the snapshot: what a rewrite task ships to an
    executor (``io`` pickles with the storage options and without its live client, as a
    read's scan does)."""

    location: str
    schema: TableSchema
    version: int
    io: FileIO

    @classmethod
    def of(cls, table: PartSource) -> TableParts:
        return cls(table.location, table.schema, table.version, table.io)


def discard_task_staging(io: FileIO, location: str, job: str, staging: str) -> None:
    """Remove one task attempt's staging folder ``staging``, then the job's folder and the
    staging root if that left them empty (the job's other tasks may still be staging)."""
    io.delete(staging, recursive=True)
    io.remove_empty_dir(join_url(location, STAGING_DIR, job))
    io.remove_empty_dir(join_url(location, STAGING_DIR))


class PartStager:
    """One task's new parts, staged under ``_staging/<job>/<partition>-<attempt>/``.

    Use as a context manager: leaving it removes the local scratch space, and on an error
    also the task's staging folder (what it staged must not outlive a failed attempt).
    """

    def __init__(
        self,
        table: PartSource,
        settings: WriteSettings | None = None,
        *,
        job: str,
        partition: int = 0,
        attempt: int = 0,
    ) -> None:
        self._source = table
        self._settings = settings or WriteSettings()
        self._io = table.io
        self._job = job
        self._partition = partition
        self._staging = join_url(
            table.location, STAGING_DIR, job, task_dir_name(partition, attempt)
        )
        self._local_dir = tempfile.mkdtemp(prefix="tsfile-catalog-rewrite-")
        self.staged: list[StagedFile] = []

    @property
    def source(self) -> PartSource:
        return self._source

    @property
    def job(self) -> str:
        return self._job

    @property
    def settings(self) -> WriteSettings:
        return self._settings

    def __enter__(self) -> PartStager:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        shutil.rmtree(self._local_dir, ignore_errors=True)
        if error is not None:
            discard_task_staging(self._io, self._source.location, self._job, self._staging)

    def write(self, rows: pa.Table, *, sources: Sequence[PartFile] = ()) -> StagedFile:
        """Stage ``rows`` (raw domain, every table column) as one new part; with
        ``sources``, as their rewrite (it keeps the largest of their key sequences,
        :meth:`PartFile.rewritten_from`): its rows are old rows, which a newer write's rows
        with the same key must still replace)."""
        schema = self._source.schema
        settings = WriteSettings(self._settings.compression, self._settings.encoding, "error")
        staged = stage_part(
            self._io,
            to_writer_types(rows, schema),
            schema,
            settings,
            staging=self._staging,
            local_dir=self._local_dir,
            partition=self._partition,
        )
        if sources:
            staged = replace(staged, part=staged.part.rewritten_from(sources))
        self.staged.append(staged)
        return staged


class RewriteJob(PartStager):
    """One rewrite of a table's parts: stage new files, then publish them in one commit.

    The job stages as task 0 itself (:meth:`write`), and may :meth:`adopt` what its tasks
    staged elsewhere (:mod:`tsfile_catalog.table.rewrite_tasks`, on Spark executors). Use as
    a context manager: leaving it (after :meth:`commit`, or on an error) removes the job's
    whole staging folder, every task attempt's included, and local scratch space.
    """

    def __init__(
        self,
        table: Table,
        settings: WriteSettings | None = None,
        *,
        job: str | None = None,
        keep_staging: bool = False,
    ) -> None:
        """``job``: the job id (a fresh one by default); ``keep_staging``: leaving the job
        without an error keeps its staging folder, whose parts a later commit takes (the
        caller removes the folder after it)."""
        super().__init__(table, settings, job=job or new_job_id())
        self._table = table
        self._keep = keep_staging
        self._next_task = 1  # the job stages as task 0 itself

    def reserve_tasks(self, count: int) -> int:
        """The first of ``count`` task indices no other task of this job uses (a failed
        attempt removes its own folder, which must hold no other task's parts)."""
        self._next_task += count
        return self._next_task - count

    @property
    def table(self) -> Table:
        return self._table

    def __enter__(self) -> RewriteJob:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        shutil.rmtree(self._local_dir, ignore_errors=True)
        if self._keep and error is None:
            return
        self._io.delete(join_url(self._table.location, STAGING_DIR, self._job), recursive=True)
        # Other writers may be staging: only an emptied staging root goes.
        self._io.remove_empty_dir(join_url(self._table.location, STAGING_DIR))

    def adopt(self, staged: Iterable[StagedFile]) -> None:
        """Take parts a task of this job staged (in its own task folder) into the commit."""
        self.staged.extend(staged)

    def commit(
        self,
        removed: Sequence[PartFile],
        *,
        operation: Operation,
        parameters: Mapping[str, str],
        data_change: bool,
        extra: Iterable[Action] = (),
        extra_published: Sequence[str] = (),
    ) -> Snapshot:
        """Publish the staged parts and commit: remove ``removed``, add the staged parts and
        ``extra`` actions, against the snapshot the job read. Concurrent appends rebase; a
        concurrent commit that removed one of ``removed`` conflicts. On failure every file
        published here (and ``extra_published``) is deleted."""
        published: list[str] = []
        try:
            for item in self.staged:
                final = join_url(self._table.location, item.part.path)
                self._io.move(item.staged_url, final)
                published.append(final)
            actions: list[Action] = [RemovePart(p.path, p.row_count, p.size_bytes) for p in removed]
            actions.extend(extra)
            actions.extend(AddPart(s.part) for s in self.staged)
            return commit(
                self._io,
                self._table.location,
                actions,
                read=self._table.snapshot,
                operation=operation,
                operation_parameters=parameters,
                data_change=data_change,
            )
        except BaseException:
            for url in (*published, *extra_published):
                self._io.delete(url)
            raise


@dataclass(frozen=True)
class RowRemoval:
    """What removing the rows that match a predicate staged in a :class:`RewriteJob`."""

    removed: tuple[PartFile, ...]  # parts leaving the table (dropped or rewritten)
    dropped: int  # of those, parts removed in metadata only (every row matched)
    rewritten: int  # of those, parts rewritten without the matching rows
    deleted_rows: int


class PartChange(Protocol):
    """One part's copy-on-write, picklable so a Spark task can apply it: stage ``part``
    changed (nothing when the change matches none of its rows) and answer how many of its
    rows the change matched and what was staged."""

    def __call__(
        self, stager: PartStager, part: PartFile
    ) -> tuple[int, tuple[StagedFile, ...]]: ...


@runtime_checkable
class NarrowedChange(PartChange, Protocol):
    """A change that carries data per key (a key change's keys): what a task of ``parts``
    needs of it is only what may touch them, so each task is sent that much."""

    def for_parts(self, parts: Sequence[PartFile]) -> PartChange: ...


@dataclass(frozen=True)
class Without:
    """DELETE's change: the part without the rows where ``predicate`` is TRUE
    (:func:`rewrite_without`)."""

    predicate: Expr

    def __call__(self, stager: PartStager, part: PartFile) -> tuple[int, tuple[StagedFile, ...]]:
        return rewrite_without(stager, part, self.predicate)


PartRewrites = Callable[
    [Sequence[PartFile], PartChange], Sequence[tuple[int, tuple[StagedFile, ...]]]
]
"""Applies a :class:`PartChange` to each part elsewhere (in Spark tasks, each with its own
:class:`PartStager` of the job): per part, in order, what the change answers."""


def rewrite_each(
    job: RewriteJob,
    parts: Sequence[PartFile],
    change: PartChange,
    *,
    rewrite: PartRewrites | None = None,
    progress: Progress | None = None,
) -> list[tuple[PartFile, int, tuple[StagedFile, ...]]]:
    """Apply ``change`` to each of ``parts``, here (``progress(done, total)`` after each) or
    by ``rewrite``, whose staged parts the job adopts: the same rewrite either way. Per part,
    in order: the part, how many of its rows the change matched, what was staged for it."""
    if rewrite is not None and parts:
        answers = list(rewrite(parts, change))
        for _, staged in answers:
            job.adopt(staged)
    else:
        answers = []
        for done, part in enumerate(parts, start=1):
            answers.append(change(job, part))
            if progress is not None:
                progress(done, len(parts))
    return [(p, count, staged) for p, (count, staged) in zip(parts, answers, strict=True)]


def remove_matching_rows(
    job: RewriteJob,
    predicate: Expr | None,
    *,
    progress: Progress | None = None,
    rewrite: PartRewrites | None = None,
) -> RowRemoval:
    """Stage the removal of every row of ``job.table`` where the bound ``predicate`` is TRUE
    (None: every row).

    Parts whose statistics prove every row matches are dropped without being read; parts that
    may hold some matching rows are read and, if they do, rewritten without them (one new part
    per rewritten part, none when nothing is left; see
    :func:`~tsfile_catalog.metadata.compaction.plan_removal`).

    External parts are treated as Delta and Iceberg treat any data file: never modified,
    never refused. One whose rows all match leaves the manifest; one holding some matching
    rows leaves it too, its other rows staged as a new part of the table's own (a TsFile).
    Their files stay as they are and stay the user's (``owns_part``: nothing ever deletes
    them).

    The parts are rewritten (:func:`rewrite_without`) in this process, calling
    ``progress(done, total)`` after each, or by ``rewrite``, whose staged parts the job
    adopts.
    """
    table = job.table
    parts = table.parts()
    if predicate is None:
        plan = RemovalPlan(tuple(parts), (), ())
    else:
        plan = plan_removal(parts, predicate, table.schema)
    removed = list(plan.drop)
    deleted = sum(p.row_count for p in plan.drop)
    rewritten = 0
    assert predicate is not None or not plan.rewrite
    results = (
        rewrite_each(job, plan.rewrite, Without(predicate), rewrite=rewrite, progress=progress)
        if predicate is not None
        else []
    )
    for part, count, staged in results:
        if count:
            removed.append(part)
            deleted += count
            rewritten += 1 if staged else 0
    return RowRemoval(tuple(removed), len(plan.drop), rewritten, deleted)


def rewrite_without(
    stager: PartStager, part: PartFile, predicate: Expr
) -> tuple[int, tuple[StagedFile, ...]]:
    """Stage ``part`` without the rows where ``predicate`` is TRUE (none when no row is
    left, nothing when no row matches; the new part keeps ``part``'s key sequence).

    Returns:
        How many rows matched, and what was staged.
    """
    rows = read_part_rows(stager.source, part)
    kept = without_matching(rows, predicate)
    count = rows.num_rows - kept.num_rows
    if count and kept.num_rows:
        return count, (stager.write(kept, sources=(part,)),)
    return count, ()
