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
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pyspark import TaskContext
from pyspark.sql import SparkSession

from tsfile_catalog.table.rewrite_tasks import (
    RewriteTask,
    TaskOutcome,
    outcome_from_json,
    outcome_to_json,
)

__all__ = ["DISTRIBUTED_REWRITES", "SparkTasks", "distributed_rewrites"]

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
        # setJobGroup sets these for the thread: the caller's own come back afterwards.
        saved = {k: context.getLocalProperty(k) for k in (_JOB_GROUP, _JOB_DESCRIPTION, _INTERRUPT)}
        context.setJobGroup(
            job_group(tasks[0].job),
            f"tsfile-catalog rewrite of {tasks[0].table.location}: {len(tasks)} tasks",
        )
        try:
            answers = (
                context.parallelize(list(tasks), len(tasks))
                .map(lambda task: json.dumps(outcome_to_json(task.run(_attempt()), schema)))
                .collect()
            )
        finally:
            for key, value in saved.items():
                context.setLocalProperty(key, value)  # type: ignore[arg-type]  # None unsets
        outcomes = sorted(
            (outcome_from_json(json.loads(a), schema) for a in answers), key=lambda o: o.index
        )
        self.workers = [o.worker for o in outcomes]
        return outcomes


def _attempt() -> int:
    context = TaskContext.get()
    return context.attemptNumber() if context is not None else 0
