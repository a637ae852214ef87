"""A rewrite's groups (OPTIMIZE) or parts (DELETE) as tasks, run here or on Spark executors.

A task carries only what reading and staging its work need (:class:`CompactionTask` for a
group, :class:`RemovalTask` for a part DELETE rewrites: the table's location, schema,
version and file IO, the parts, the writer settings and the job id); it stages its new parts
under its own ``_staging/<job>/<task>-<attempt>/`` folder
(:class:`~tsfile_catalog.table.rewrite.PartStager`) and answers with their metadata only
(:class:`TaskOutcome`). The driver's :class:`~tsfile_catalog.table.rewrite.RewriteJob`
adopts the outcomes and makes the one commit; leaving it removes the job's staging folder,
every attempt's included, so a failed or retried task leaves no part in a committed
version. A :data:`TaskRunner` decides where the tasks run: :func:`run_in_process` here, or
:class:`~tsfile_catalog.datasource.rewrite_tasks.SparkTasks` over a Spark session.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tsfile_catalog.formats.tsfile import WriteSettings
from tsfile_catalog.metadata.expressions import Expr
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import TableSchema
from tsfile_catalog.progress import Progress
from tsfile_catalog.table.rewrite import (
    PartRewrites,
    PartStager,
    RewriteJob,
    StagedFile,
    TableParts,
    compact_parts,
    rewrite_without,
)

__all__ = [
    "CompactionTask",
    "RemovalTask",
    "RewriteTask",
    "TaskOutcome",
    "removal_rewrites",
    "TaskRunner",
    "run_in_process",
    "outcome_to_json",
    "outcome_from_json",
]


@dataclass(frozen=True)
class TaskOutcome:
    """What one task staged: its index, whether it rewrote its group, the staged parts
    (their statistics; ``devices`` left empty, the commit needs only the part), and where it
    ran (``host:pid``)."""

    index: int
    rewritten: bool
    staged: tuple[StagedFile, ...]
    worker: str
    rows_removed: int = 0  # DELETE's: the rows of its part the predicate matched


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
    (:func:`~tsfile_catalog.table.rewrite.compact_parts`), runnable in any process."""

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
        return TaskOutcome(self.index, done, tuple(stager.staged), _worker())


@dataclass(frozen=True)
class RemovalTask:
    """DELETE's copy-on-write of one part: its rows without those ``predicate`` matches
    (:func:`~tsfile_catalog.table.rewrite.rewrite_without`), runnable in any process."""

    table: TableParts
    part: PartFile
    predicate: Expr
    settings: WriteSettings
    job: str
    index: int

    def run(self, attempt: int = 0) -> TaskOutcome:
        with PartStager(
            self.table, self.settings, job=self.job, partition=self.index, attempt=attempt
        ) as stager:
            count, staged = rewrite_without(stager, self.part, self.predicate)
        return TaskOutcome(self.index, count > 0, staged, _worker(), count)


def removal_rewrites(job: RewriteJob, runner: TaskRunner) -> PartRewrites:
    """DELETE's part rewrites as ``job``'s tasks, run by ``runner``."""

    def rewrite(
        parts: Sequence[PartFile], predicate: Expr
    ) -> list[tuple[int, tuple[StagedFile, ...]]]:
        source = TableParts.of(job.table)
        tasks = [
            RemovalTask(source, part, predicate, job.settings, job.job, index)
            for index, part in enumerate(parts)
        ]
        outcomes = sorted(runner(tasks), key=lambda o: o.index)
        return [(o.rows_removed, o.staged) for o in outcomes]

    return rewrite


TaskRunner = Callable[[Sequence[RewriteTask]], Sequence[TaskOutcome]]
"""Runs every task once (each may be retried where it runs) and returns their outcomes, in
any order; raises when a task failed for good."""


def run_in_process(progress: Progress | None = None) -> TaskRunner:
    """The runner without a Spark session: the tasks one after another in this process
    (memory bounded by one group's target size), ``progress(done, total)`` after each."""

    def run(tasks: Sequence[RewriteTask]) -> list[TaskOutcome]:
        out = []
        for done, task in enumerate(tasks, start=1):
            out.append(task.run())
            if progress is not None:
                progress(done, len(tasks))
        return out

    return run


def _worker() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def outcome_to_json(outcome: TaskOutcome, schema: TableSchema) -> dict[str, Any]:
    """``outcome`` as the JSON an executor sends its driver: each staged part as the
    manifest writes it (``PartFile.to_json``)."""
    types = {c.name: c.type for c in schema.fields}
    return {
        "index": outcome.index,
        "rewritten": outcome.rewritten,
        "staged": [{"url": s.staged_url, "part": s.part.to_json(types)} for s in outcome.staged],
        "worker": outcome.worker,
        "rows_removed": outcome.rows_removed,
    }


def outcome_from_json(obj: Mapping[str, Any], schema: TableSchema) -> TaskOutcome:
    types = {c.name: c.type for c in schema.fields}
    staged = tuple(
        StagedFile(str(s["url"]), PartFile.from_json(s["part"], types), ()) for s in obj["staged"]
    )
    return TaskOutcome(
        int(obj["index"]),
        bool(obj["rewritten"]),
        staged,
        str(obj["worker"]),
        int(obj["rows_removed"]),
    )
