"""Staging and publishing part files: the two phases every writer shares.

The Spark batch writer, the streaming sink and the Spark-free ``write_table`` write the same
way and differ only in the commit they make. Task side, :func:`stage_task` turns a stream of
Arrow batches into sorted ``part-*.tsfile`` files under
``_staging/<job>/<partition>-<attempt>/`` (a part whenever ``maxRowsPerFile`` rows are
pending, so memory stays bounded by one part) and returns their statistics. Commit side,
:func:`publish_and_commit` resolves duplicate rows across the parts (``onDuplicate`` holds
for the whole write), moves them into the table all or none, makes the caller's one commit,
and removes what was published again if that commit fails; the job's staging folder goes in
every case (:func:`remove_staging`).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import pyarrow as pa

from tsfile_catalog.exceptions import DataError
from tsfile_catalog.formats.tsfile.sort import split_duplicates
from tsfile_catalog.io import FileIO, join_url
from tsfile_catalog.metadata.expressions import TimeUnit
from tsfile_catalog.metadata.ownership import STAGING_DIR, task_dir_name
from tsfile_catalog.metadata.parts import DeviceStats, PartFile
from tsfile_catalog.metadata.schema import TIME_COLUMN, TableSchema
from tsfile_catalog.options import WriteOptions
from tsfile_catalog.table.rewrite import discard_task_staging, stage_part
from tsfile_catalog.write.arrow import raw_from_arrow_column
from tsfile_catalog.write.duplicates import duplicates_to_drop, read_part

__all__ = [
    "StagedPart",
    "stage_task",
    "publish_and_commit",
    "remove_staging",
    "job_dir",
]

T = TypeVar("T")


@dataclass(frozen=True)
class StagedPart:
    staged_url: str
    part: PartFile  # ``part.path`` is the final path relative to the table root
    partition: int
    sequence: int  # the task's files in input order: 0, 1, ... (maxRowsPerFile rolls over)
    # Every device with its time range (``part.devices`` stops at MAX_DEVICES): the commit
    # finds the parts that may share a (device, time) from these alone.
    devices: tuple[DeviceStats, ...]


def job_dir(options: WriteOptions, job: str) -> str:
    return join_url(options.path, STAGING_DIR, job)


@dataclass(frozen=True)
class _Writing:
    """What staging a task's rows needs: the planned schema and sources, and the options."""

    schema: TableSchema
    time_source: str
    sources: tuple[str, ...]
    options: WriteOptions
    unit: TimeUnit

    def to_raw(self, batch: pa.RecordBatch) -> pa.Table:
        precision = self.unit
        time = batch.column(batch.schema.get_field_index(self.time_source))
        if time.null_count:
            raise DataError(
                f"time column '{self.time_source}' has a null value; every row needs a time"
            )
        arrays = [raw_from_arrow_column(time, None, precision, self.time_source)]
        for column, name in zip(self.schema.columns, self.sources, strict=False):
            array = batch.column(batch.schema.get_field_index(name))
            arrays.append(raw_from_arrow_column(array, column, precision))
        return pa.Table.from_arrays(arrays, names=list(self.schema.names))

    def stage_all(
        self,
        io: FileIO,
        tables: Sequence[pa.Table],
        staging: str,
        partition: int,
        sequence: int,
        local_dir: str,
    ) -> list[StagedPart]:
        """:meth:`stage`, or, when the write keeps rows sharing a (device, time)
        (``rewriteDuplicates = keep``), one part per layer of repeats."""
        if self.options.rewrite_duplicates != "keep":
            return [self.stage(io, tables, staging, partition, sequence, local_dir)]
        layers = split_duplicates(pa.concat_tables(tables), self.schema)
        return [
            self.stage(io, [layer], staging, partition, sequence + i, local_dir)
            for i, layer in enumerate(layers)
        ]

    def stage(
        self,
        io: FileIO,
        tables: Sequence[pa.Table],
        staging: str,
        partition: int,
        sequence: int,
        local_dir: str,
    ) -> StagedPart:
        staged = stage_part(
            io,
            pa.concat_tables(tables),
            self.schema,
            self.options.settings(),
            staging=staging,
            local_dir=local_dir,
            partition=partition,
        )
        return StagedPart(staged.staged_url, staged.part, partition, sequence, staged.devices)


def stage_task(
    iterator: Iterator[pa.RecordBatch],
    *,
    schema: TableSchema,
    time_source: str,
    sources: tuple[str, ...],
    unit: TimeUnit,
    options: WriteOptions,
    job: str,
    partition: int,
    attempt: int,
    check: Callable[[pa.Table], None] | None = None,
) -> tuple[tuple[StagedPart, ...], str]:
    """Stage one task's rows as part files (``maxRowsPerFile`` rows each, input order).

    ``unit`` is the planned unit of the raw times (``WritePlan.unit``). ``check`` sees every
    converted batch (raw domain) first and may refuse it. On any
    failure the task's staged files are deleted (and the job and staging folders, if that
    leaves them empty) before the error propagates.

    Returns:
        The staged parts and the task's staging folder.
    """
    writing = _Writing(schema, time_source, sources, options, unit)
    io = FileIO(options.path, options.storage_options)
    staging = join_url(job_dir(options, job), task_dir_name(partition, attempt))
    staged: list[StagedPart] = []
    local_dir = tempfile.mkdtemp(prefix="tsfile-catalog-")
    try:
        pending: list[pa.Table] = []
        rows = 0
        limit = options.max_rows_per_file
        for batch in iterator:
            table = writing.to_raw(batch)
            if check is not None:
                check(table)
            while table.num_rows:
                piece = table.slice(0, limit - rows)
                table = table.slice(piece.num_rows)
                pending.append(piece)
                rows += piece.num_rows
                if rows == limit:
                    staged.extend(
                        writing.stage_all(io, pending, staging, partition, len(staged), local_dir)
                    )
                    pending, rows = [], 0
        if pending:
            staged.extend(
                writing.stage_all(io, pending, staging, partition, len(staged), local_dir)
            )
    except BaseException:
        discard_task_staging(io, options.path, job, staging)
        raise
    finally:
        shutil.rmtree(local_dir, ignore_errors=True)
    return tuple(staged), staging


def remove_staging(io: FileIO, options: WriteOptions, jobs: Iterable[str]) -> None:
    for job in jobs:
        io.delete(job_dir(options, job), recursive=True)
    # Concurrent jobs may still be staging: only an empty staging root goes.
    io.remove_empty_dir(join_url(options.path, STAGING_DIR))


def publish_and_commit(
    io: FileIO,
    *,
    schema: TableSchema,
    options: WriteOptions,
    job: str,
    staged: list[StagedPart],
    commit: Callable[[list[PartFile]], T],
) -> T:
    """Resolve duplicates across ``staged``, move the parts into the table (all or none),
    and return ``commit(parts)``; if anything fails, the published files are deleted again.

    The staging folder is the caller's to remove (:func:`remove_staging`), in every case.
    """
    published: list[str] = []
    try:
        staged = _resolve_duplicates(io, schema, options, job, staged)
        moves = [(s.staged_url, join_url(options.path, s.part.path)) for s in staged]
        # All or none: a failed move leaves no part published (move_all cleans up).
        io.move_all(moves)
        published = [final for _, final in moves]
        return commit([s.part for s in staged])
    except BaseException:
        for url in published:
            io.delete(url)
        raise


def _resolve_duplicates(
    io: FileIO, schema: TableSchema, options: WriteOptions, job: str, staged: list[StagedPart]
) -> list[StagedPart]:
    """``staged`` with no (device, time) in two parts: ``onDuplicate`` holds across the
    whole write, however Spark partitioned it.

    Reads nothing unless two parts hold a device over overlapping time ranges. With
    ``last``, a part that loses rows to a later one is rewritten without them (a new
    staged file); a part left empty is dropped.
    """
    staged = sorted(staged, key=lambda s: (s.partition, s.sequence))
    if options.rewrite_duplicates == "keep":
        return staged  # an append-only table's rewrite keeps every row
    drop = duplicates_to_drop(
        io,
        [s.staged_url for s in staged],
        [s.devices for s in staged],
        schema,
        options.on_duplicate,
    )
    if not drop:
        return staged
    # The rewrite stages raw rows like a task; its time source, sources and unit are never
    # read (nothing is converted).
    writing = _Writing(schema, TIME_COLUMN, (), options, options.precision)
    rewrites = join_url(job_dir(options, job), "commit")
    local_dir = tempfile.mkdtemp(prefix="tsfile-catalog-")
    out = []
    try:
        for index, item in enumerate(staged):
            if index not in drop:
                out.append(item)
                continue
            rows = read_part(io, item.staged_url, schema)
            keys = [*schema.tag_names, TIME_COLUMN]
            kept = rows.join(drop[index], keys=keys, join_type="left anti")
            io.delete(item.staged_url)
            if kept.num_rows:
                out.append(
                    writing.stage(io, [kept], rewrites, item.partition, item.sequence, local_dir)
                )
    finally:
        shutil.rmtree(local_dir, ignore_errors=True)
    return out
