"""Running a rewrite's tasks as Spark tasks: OPTIMIZE, DELETE, UPDATE and MERGE spread over
the executors.

:class:`SparkTasks` is a :class:`~tsfile_catalog.table.rewrite_tasks.TaskRunner`: one Spark
task per rewrite group (OPTIMIZE) or batch of rewritten parts (DELETE, UPDATE, MERGE, at least
``defaultParallelism`` batches when there are that many parts), each reading its parts
through the shared read path and staging its new parts under its own
``_staging/<job>/<task>-<attempt>/`` folder, as the batch writer's tasks do. Storage options
travel inside the pickled task (its ``FileIO``), as a read's scan carries them. A task
answers with its staged parts' JSON only; the driver adopts them into its
:class:`~tsfile_catalog.table.rewrite.RewriteJob` and commits once. A failed attempt removes
its own staging folder; a job that fails for good raises here, and the driver's job removes
every attempt's staging, so nothing of it reaches a committed version.

:class:`FrameRows` stages the new rows of a key change (Catalog.sql's UPDATE and MERGE) where
Spark computed them: each partition of the frame (clustered by key first where the key
rule needs it) is staged by a :class:`~tsfile_catalog.table.keyed.NewRowsTask` in the same
job group, so the rows never pass through the driver.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import pyarrow as pa
from pyspark import SparkContext, StatusTracker, TaskContext
from pyspark.sql import DataFrame, SparkSession

from tsfile_catalog.metadata.expressions import TimeUnit
from tsfile_catalog.metadata.key import KeyMode
from tsfile_catalog.metadata.schema import TIME_COLUMN
from tsfile_catalog.metadata.spark.quoting import quote_identifier
from tsfile_catalog.table.keyed import NewRowsTask, adopt_new_rows, key_columns
from tsfile_catalog.table.rewrite import RewriteJob, TableParts
from tsfile_catalog.table.rewrite_tasks import (
    RewriteTask,
    TaskOutcome,
    outcome_from_json,
    outcome_to_json,
)
from tsfile_catalog.write.arrow import raw_table

__all__ = ["DISTRIBUTED_REWRITES", "FrameRows", "SparkTasks", "distributed_rewrites"]

# Whether Catalog.sql's OPTIMIZE, DELETE, UPDATE and MERGE rewrite parts in Spark tasks (default
# true); "false" keeps the rewrite in the driver process, as without a session.
DISTRIBUTED_REWRITES = "spark.tsfile.distributedRewrites.enabled"

_JOB_GROUP = "spark.jobGroup.id"
_JOB_DESCRIPTION = "spark.job.description"
_INTERRUPT = "spark.job.interruptOnCancel"


def distributed_rewrites(spark: SparkSession) -> bool:
    """Whether ``spark``'s conf leaves :data:`DISTRIBUTED_REWRITES` on."""
    return str(spark.conf.get(DISTRIBUTED_REWRITES, "true")).strip().lower() != "false"


def job_group(job: str) -> str:
    """The Spark job group a rewrite job's tasks run in (``job``: the commit's ``job``)."""
    return f"tsfile-catalog-rewrite-{job}"


class SparkTasks:
    """Run rewrite tasks as one Spark job on ``spark``, one Spark task each.

    ``workers`` lists, after a run, where each task ran (``host:pid``), in task order.
    """

    def __init__(self, spark: SparkSession) -> None:
        self._spark = spark
        self.workers: list[str] = []

    @property
    def slots(self) -> int:
        """Spark's ``defaultParallelism``: the cores of the executors (or
        ``spark.default.parallelism``), the tasks that run at once."""
        return max(1, self._spark.sparkContext.defaultParallelism)

    def __call__(self, tasks: Sequence[RewriteTask]) -> list[TaskOutcome]:
        if not tasks:
            return []
        context = self._spark.sparkContext
        schema = tasks[0].table.schema
        description = f"tsfile-catalog rewrite of {tasks[0].table.location}: {len(tasks)} tasks"
        with _job_group(context, tasks[0].job, description):
            answers = (
                context.parallelize(list(tasks), len(tasks))
                .map(lambda task: json.dumps(outcome_to_json(task.run(_attempt()), schema)))
                .collect()
            )
        outcomes = sorted(
            (outcome_from_json(json.loads(a), schema) for a in answers), key=lambda o: o.index
        )
        self.workers = [o.worker for o in outcomes]
        return outcomes


@dataclass(frozen=True)
class FrameRows:
    """A key change's new rows as ``frame`` computes them (a column per table column, by
    name, as Spark shows them; ``unit``: the table's time unit), staged by Spark tasks: a
    :class:`~tsfile_catalog.table.keyed.RowStaging`.

    Each task stages its partition's rows as parts of about ``max_rows`` rows; the driver
    receives the parts' statistics only. With ``clustered``, the frame is first
    hash-partitioned by the TAG columns (by ``time`` without any) and sorted by key in each
    partition, so every row of a key reaches one task, next to its repeats: what a ``last``
    table's check that the new rows hold each key once needs when they may repeat one (a
    MERGE's inserts). Otherwise the rows are staged as Spark computed them (a shuffle and a
    sort cost more than the staging): right when their keys are unique, and in a ``keep``
    table, where a key's repeats may land in different parts."""

    frame: DataFrame
    unit: TimeUnit
    max_rows: int
    clustered: bool

    def __call__(self, job: RewriteJob, mode: KeyMode) -> int:
        table = TableParts.of(job.table)
        schema = table.schema
        unit = self.unit
        columns = [self.frame[quote_identifier(c)] for c in schema.names]
        rows = self.frame.select(*columns)
        if self.clustered:
            rows = rows.repartition(
                *[quote_identifier(c) for c in (schema.tag_names or (TIME_COLUMN,))]
            ).sortWithinPartitions(*[quote_identifier(c) for c in key_columns(schema)])
        # The job's last tasks: nothing reserves task indices after these.
        task = NewRowsTask(table, job.settings, job.job, job.reserve_tasks(0), mode, self.max_rows)

        def stage(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            context = TaskContext.get()
            partition = context.partitionId() if context is not None else 0
            raw = (raw_table(pa.Table.from_batches([b]), schema, unit) for b in batches)
            outcome = task.run(raw, partition, _attempt())
            answer = json.dumps(outcome_to_json(outcome, schema))
            yield pa.RecordBatch.from_pydict({"outcome": [answer]})

        description = f"tsfile-catalog new rows of {table.location}"
        with _job_group(self.frame.sparkSession.sparkContext, job.job, description):
            answers = rows.mapInArrow(stage, "outcome string").collect()
        outcomes = [outcome_from_json(json.loads(a.outcome), schema) for a in answers]
        return adopt_new_rows(job, outcomes)


@contextmanager
def _job_group(context: SparkContext, job: str, description: str) -> Iterator[None]:
    """Run the Spark jobs started inside in the rewrite job's group (:func:`job_group`), and
    leave only when none of their tasks runs any more."""
    # setJobGroup sets these for the thread: the caller's own come back afterwards.
    saved = {k: context.getLocalProperty(k) for k in (_JOB_GROUP, _JOB_DESCRIPTION, _INTERRUPT)}
    context.setJobGroup(job_group(job), description)
    try:
        yield
    finally:
        for key, value in saved.items():
            context.setLocalProperty(key, value)  # type: ignore[arg-type]  # None unsets
        _stop_tasks(context, job_group(job))


# How long the driver waits for a rewrite's tasks to stop. Spark kills a Python task within
# spark.python.task.killTimeout (2 s by default); past this, what a task still stages is
# left to VACUUM, as a dead driver's staging is.
_STOP_SECONDS = 60.0
_POLL_SECONDS = 0.05
# A job the status tracker does not know yet may still be starting: how long to look for one.
_START_SECONDS = 1.0


def _stop_tasks(context: SparkContext, group: str) -> None:
    """Cancel what still runs in ``group`` and wait until none of its tasks runs.

    Spark fails a job at its first failed task, and its other tasks run on until killed: a
    running task stages parts after the driver gave up on the job. The driver removes the
    job's staging only after this, so nothing a task stages outlives the job. A job that
    succeeded leaves nothing to wait for (but a speculative copy of a task, killed here)."""
    context.cancelJobGroup(group)
    tracker = context.statusTracker()
    start = time.monotonic()
    while time.monotonic() - start < _STOP_SECONDS:
        jobs = tracker.getJobIdsForGroup(group)
        if not jobs and time.monotonic() - start >= _START_SECONDS:
            return
        if jobs and not any(_running(tracker, j) for j in jobs):
            return
        time.sleep(_POLL_SECONDS)


def _running(tracker: StatusTracker, job: int) -> bool:
    info = tracker.getJobInfo(job)
    # Not yet in the tracker, or its end not yet there: its tasks may run.
    if info is None or info.status in ("RUNNING", "UNKNOWN"):
        return True
    stages = (tracker.getStageInfo(s) for s in info.stageIds)
    return any(s is not None and s.numActiveTasks > 0 for s in stages)


def _attempt() -> int:
    context = TaskContext.get()
    return context.attemptNumber() if context is not None else 0
