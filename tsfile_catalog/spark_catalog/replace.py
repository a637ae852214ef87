"""The catalog plugin's overwrite by condition (``writeTo(t).overwrite(c)``, ``INSERT INTO t
REPLACE WHERE c`` through ``spark.sql``): its straddling parts rewritten in Spark tasks.

The Java write (``io.tsfilecatalog.spark.PrestagedWrite``) names a staging job in the write's
``replaceStaged`` option when Spark builds it (:func:`new_job`), asks for the pre-staging when
the write starts (:func:`prestage`: the parts the ``replaceWhere`` straddles rewritten as Spark
tasks of that job, :mod:`~tsfile_catalog.write.replace_staging`), and for the job's folder to
be removed after the commit or the abort (:func:`release`). With
``spark.tsfile.distributedRewrites.enabled=false`` nothing is pre-staged: the write's commit
rewrites the parts, as a ``df.write`` does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from tsfile_catalog.datasource.rewrite_tasks import SparkTasks, distributed_rewrites
from tsfile_catalog.datasource.writer import plan_write
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.ownership import new_job_id
from tsfile_catalog.options import parse_write_options
from tsfile_catalog.table.rewrite import RewriteJob
from tsfile_catalog.write.api import existing_table
from tsfile_catalog.write.replace_staging import prestage_replace
from tsfile_catalog.write.staging import remove_staging

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["new_job", "prestage", "release"]


def new_job() -> str:
    """A fresh staging job id for a write's ``replaceStaged`` option."""
    return new_job_id()


def prestage(spark: SparkSession, options: Mapping[str, str], schema: str) -> bool:
    """Rewrite the parts the write's ``replaceWhere`` straddles as Spark tasks of the job its
    ``replaceStaged`` names, and record them there; whether anything was staged.
    ``schema``: the written rows' Spark schema (JSON), as the writer plans with it.

    Raises:
        OptionError: as the write itself would (a predicate it cannot bind exactly); a task
            failing for good raises Spark's error. Nothing stays staged either way.
    """
    from pyspark.sql.types import StructType  # the driver's PySpark: always there here

    write = parse_write_options(options)
    if write.replace_staged is None or not distributed_rewrites(spark):
        return False
    table = existing_table(write)
    if table is None:
        return False
    plan = plan_write(StructType.fromJson(json.loads(schema)), write)
    with RewriteJob(table, write.settings(), job=write.replace_staged, keep_staging=True) as job:
        return prestage_replace(job, plan, write, SparkTasks(spark)) is not None


def release(options: Mapping[str, str]) -> None:
    """Remove the folder of the job the write's ``replaceStaged`` names (its commit moved
    the parts it took)."""
    write = parse_write_options(options)
    if write.replace_staged is not None:
        remove_staging(FileIO(write.path, write.storage_options), write, [write.replace_staged])
