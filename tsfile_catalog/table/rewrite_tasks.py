"""A rewrite's groups (OPTIMIZE) or parts (DELETE, UPDATE, MERGE) as tasks, run here or on
Spark executors.

A task carries only what reading and staging its work need (:class:`CompactionTask` for a
group, :class:`CopyOnWriteTask` for a batch of parts a copy-on-write rewrites, with its
:class:`~tsfile_catalog.table.rewrite.PartChange`: the table's location, schema, version and
file IO, the parts, the writer settings and the job id); it stages its
new parts under its own ``_staging/<job>/<task>-<attempt>/`` folder
(:class:`~tsfile_catalog.table.rewrite.PartStager`) and answers with their metadata only
(:class:`TaskOutcome`). The driver's :class:`~tsfile_catalog.table.rewrite.RewriteJob`
adopts the outcomes and makes the one commit; leaving it removes the job's staging folder,
every attempt's included, so a failed or retried task leaves no part in a committed
version. A :class:`TaskRunner` decides where the tasks run: :func:`run_in_process` here, or
:class:`~tsfile_catalog.datasource.rewrite_tasks.SparkTasks` over a Spark session.

A copy-on-write of many small parts packs several parts into one task
(:func:`~tsfile_catalog.metadata.compaction.plan_batches`): a Spark task costs about
100 ms before it reads a byte, ten times the rewrite of a 10,000-row part
(docs/benchmarks-rewrites.md). Each part of a batch is still rewritten on its own, into its
own new part.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.formats.tsfile import WriteSettings
from tsfile_catalog.metadata.compaction import plan_batches, target_file_size
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import DataType, TableSchema
from tsfile_catalog.progress import Progress
from tsfile_catalog.table.compact import compact_parts
from tsfile_catalog.table.rewrite import (
    NarrowedChange,
    PartChange,
    PartRewrites,
    PartStager,
    RewriteJob,
    StagedFile,
    TableParts,
)

__all__ = [
    "CompactionTask",
    "CopyOnWriteTask",
    "RewriteTask",
    "TaskOutcome",
    "for_reading",
    "part_rewrites",
    "TaskRunner",
    "run_in_process",
    "outcome_to_json",
    "outcome_from_json",
    "staged_to_json",
    "staged_from_json",
    "worker_name",
]


@dataclass(frozen=True)
class TaskOutcome:
    """What one task staged: its index, whether it rewrote its group, the staged parts
    (their statistics; ``devices`` left empty, the commit needs only the part), and where it
    ran (``host:pid``).

    A copy-on-write task lists, per part in its batch, in order, how many rows its change
    matched and how many of ``staged`` (taken in order) are that part's rewrite. A task
    that refused its rows (``refusal``: the :class:`~tsfile_catalog.exceptions.DataError`
    text naming what it refused) staged nothing: the driver raises it, as the same rows
    refused in the driver would, instead of the executor's wrapped error."""

    index: int
    rewritten: bool
    staged: tuple[StagedFile, ...]
    worker: str
    removals: tuple[tuple[int, int], ...] = ()
    refusal: str | None = None


class RewriteTask(Protocol):
    """One task of a rewrite job: picklable, runnable in any process."""

    @property
    def table(self) -> TableParts: ...

    @property
    def job(self) -> str: ...

    @property
    def index(self) -> int: ...

    def run(self, attempt: int = 0) -> TaskOutcome: ...


@dataclass(frozen=True)
class CompactionTask:
    """OPTIMIZE's rewrite of one group of parts
    (:func:`~tsfile_catalog.table.compact.compact_parts`), runnable in any process."""

    table: TableParts
    parts: tuple[PartFile, ...]  # in commit order
    resolve_keys: bool
    target_size: int
    settings: WriteSettings
    job: str
    index: int  # the group's place in the plan; its task folder is ``<index>-<attempt>``

    def run(self, attempt: int = 0) -> TaskOutcome:
        """Read the group, stage its rewrite; on failure nothing of this attempt stays."""
        with PartStager(
            self.table, self.settings, job=self.job, partition=self.index, attempt=attempt
        ) as stager:
            done = compact_parts(
                stager, self.parts, resolve_keys=self.resolve_keys, target_size=self.target_size
            )
        return TaskOutcome(self.index, done, tuple(stager.staged), worker_name())


@dataclass(frozen=True)
class CopyOnWriteTask:
    """A copy-on-write of a batch of parts, each on its own: ``change`` applied to each
    (DELETE's rows removed, UPDATE's rows changed, a key change's keys removed), runnable
    in any process. The batch stages into one task folder: a failed attempt removes what
    any of its parts staged."""

    table: TableParts
    parts: tuple[PartFile, ...]  # as reading needs them (:func:`for_reading`)
    change: PartChange
    settings: WriteSettings
    job: str
    index: int

    def run(self, attempt: int = 0) -> TaskOutcome:
        removals = []
        with PartStager(
            self.table, self.settings, job=self.job, partition=self.index, attempt=attempt
        ) as stager:
            for part in self.parts:
                count, staged = self.change(stager, part)
                removals.append((count, len(staged)))
        rewritten = any(count for count, _ in removals)
        return TaskOutcome(
            self.index, rewritten, tuple(stager.staged), worker_name(), tuple(removals)
        )


def for_reading(part: PartFile) -> PartFile:
    """``part`` as a task rewriting it needs it: reading opens it by path and checks its
    size, and its rewrite keeps its key sequence. Its per-device, TAG and FIELD statistics
    (the bulk of a part's metadata: pickled, they went to every task) are dropped."""
    return replace(part, devices=None, tags={}, fields={})


def part_rewrites(job: RewriteJob, runner: TaskRunner) -> PartRewrites:
    """A copy-on-write's part rewrites as ``job``'s tasks, run by ``runner``: the parts
    packed, in order, into batches of about the table's ``targetFileSize`` bytes, at least
    as many as ``runner`` runs at once when there are that many parts
    (:func:`~tsfile_catalog.metadata.compaction.plan_batches`).

    Raises:
        OptionError: the ``targetFileSize`` property is not a positive integer.
    """
    try:
        target_size = target_file_size(dict(job.table.properties))
    except ValueError as e:
        raise OptionError(str(e)) from e

    def rewrite(
        parts: Sequence[PartFile], change: PartChange
    ) -> list[tuple[int, tuple[StagedFile, ...]]]:
        source = TableParts.of(job.table)
        batches = plan_batches(
            [p.size_bytes for p in parts], max_bytes=target_size, slots=runner.slots
        )
        first = job.reserve_tasks(len(batches))
        tasks = [
            CopyOnWriteTask(
                source,
                tuple(for_reading(parts[i]) for i in batch),
                _for_batch(change, [parts[i] for i in batch]),
                job.settings,
                job.job,
                first + index,
            )
            for index, batch in enumerate(batches)
        ]
        out: list[tuple[int, tuple[StagedFile, ...]]] = []
        for outcome in sorted(runner(tasks), key=lambda o: o.index):
            staged = iter(outcome.staged)
            for count, files in outcome.removals:
                out.append((count, tuple(next(staged) for _ in range(files))))
        if len(out) != len(parts):
            raise AssertionError(f"{len(parts)} parts to rewrite, {len(out)} rewrites answered")
        return out

    return rewrite


def _for_batch(change: PartChange, parts: Sequence[PartFile]) -> PartChange:
    """What a task of ``parts`` needs of ``change``: every task pickles its own, so a key
    change's keys go to each task only as far as its parts may hold them."""
    return change.for_parts(parts) if isinstance(change, NarrowedChange) else change


class TaskRunner(Protocol):
    """Runs every task once (each may be retried where it runs) and returns their outcomes,
    in any order; raises when a task failed for good."""

    @property
    def slots(self) -> int:
        """How many tasks run at once: a rewrite of many small parts makes at least this
        many tasks, when it has that many parts."""
        ...

    def __call__(self, tasks: Sequence[RewriteTask]) -> Sequence[TaskOutcome]: ...


@dataclass(frozen=True)
class _InProcess:
    progress: Progress | None = None
    slots: int = 1

    def __call__(self, tasks: Sequence[RewriteTask]) -> list[TaskOutcome]:
        out = []
        for done, task in enumerate(tasks, start=1):
            out.append(task.run())
            if self.progress is not None:
                self.progress(done, len(tasks))
        return out


def run_in_process(progress: Progress | None = None) -> TaskRunner:
    """The runner without a Spark session: the tasks one after another in this process
    (memory bounded by one group's target size), ``progress(done, total)`` after each."""
    return _InProcess(progress)


def worker_name() -> str:
    """Where a task runs: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def staged_to_json(staged: StagedFile, types: Mapping[str, DataType]) -> dict[str, Any]:
    """A staged part as a task answers it: where it is, and the part as the manifest writes
    it (``PartFile.to_json``, ``types``: the FIELD types); its devices stay behind."""
    return {"url": staged.staged_url, "part": staged.part.to_json(types)}


def staged_from_json(obj: Mapping[str, Any], types: Mapping[str, DataType]) -> StagedFile:
    return StagedFile(str(obj["url"]), PartFile.from_json(obj["part"], types), ())


def outcome_to_json(outcome: TaskOutcome, schema: TableSchema) -> dict[str, Any]:
    """``outcome`` as the JSON an executor sends its driver (:func:`staged_to_json`)."""
    types = {c.name: c.type for c in schema.fields}
    return {
        "index": outcome.index,
        "rewritten": outcome.rewritten,
        "staged": [staged_to_json(s, types) for s in outcome.staged],
        "worker": outcome.worker,
        "removals": [list(r) for r in outcome.removals],
        "refusal": outcome.refusal,
    }


def outcome_from_json(obj: Mapping[str, Any], schema: TableSchema) -> TaskOutcome:
    types = {c.name: c.type for c in schema.fields}
    staged = tuple(staged_from_json(s, types) for s in obj["staged"])
    return TaskOutcome(
        int(obj["index"]),
        bool(obj["rewritten"]),
        staged,
        str(obj["worker"]),
        tuple((int(count), int(files)) for count, files in obj["removals"]),
        None if obj.get("refusal") is None else str(obj["refusal"]),
    )
