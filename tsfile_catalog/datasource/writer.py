"""The batch writer: Spark's envelope around the Spark-free writer in :mod:`tsfile_catalog.write`.

Two-phase and all-or-nothing: ``write()`` (an executor) stages ``part-*.tsfile`` files with
:func:`~tsfile_catalog.write.staging.stage_task` and returns their statistics; ``commit()``
(the driver, another process) hands them to :func:`~tsfile_catalog.write.commit.commit_write`,
which resolves duplicates across the parts, publishes them and makes one manifest commit;
``abort()`` and any failure delete what was staged. ``write_table`` runs the same two
functions without Spark, so both paths check, sort and commit alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from tsfile_catalog.datasource.reader import _session_time_zone
from tsfile_catalog.datasource.staging import TsFileCommitMessage, row_counts, staged_parts
from tsfile_catalog.datasource.types import spark_columns
from tsfile_catalog.exceptions import DataError
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.ownership import new_job_id
from tsfile_catalog.options import WriteOptions
from tsfile_catalog.write.api import existing_table
from tsfile_catalog.write.commit import commit_write
from tsfile_catalog.write.plan import (
    WritePlan,
    check_replaced,
    check_write_mode,
    replace_predicate,
)
from tsfile_catalog.write.plan import plan_write as plan_columns
from tsfile_catalog.write.staging import StagedPart, remove_staging, stage_task

__all__ = ["WritePlan", "plan_write", "TsFileBatchWriter", "StagedPart", "TsFileCommitMessage"]


def plan_write(spark_schema: StructType, options: WriteOptions) -> WritePlan:
    """Check the DataFrame against the options (and the table, if one exists).

    Raises:
        OptionError, SchemaError, UnsupportedTypeError: naming the column or option at fault.
    """
    return plan_columns(spark_columns(spark_schema), options, existing_table(options))


class TsFileBatchWriter(DataSourceArrowWriter):
    def __init__(self, plan: WritePlan, options: WriteOptions, overwrite: bool) -> None:
        check_write_mode(options, overwrite)
        self._plan = plan
        self._options = options
        self._overwrite = overwrite
        self._job = new_job_id()

    # -- executor side --------------------------------------------------------------------

    def write(self, iterator: Iterator[pa.RecordBatch]) -> TsFileCommitMessage:
        from pyspark import TaskContext

        context = TaskContext.get()
        options = self._options
        time_zone = options.time_zone or _session_time_zone()
        replace = (
            None
            if options.replace_where is None
            else replace_predicate(self._plan, options, time_zone, exact=True)
        )
        with _rewrite_errors(options):
            parts, staging = stage_task(
                iterator,
                schema=self._plan.schema,
                time_source=self._plan.time_source,
                sources=self._plan.sources,
                unit=self._plan.unit,
                options=options,
                job=self._job,
                partition=context.partitionId() if context else 0,
                attempt=context.attemptNumber() if context else 0,
                check=None
                if replace is None
                else lambda raw: check_replaced(raw, replace, options),
            )
        return TsFileCommitMessage(parts, staging, time_zone, self._job)

    # -- driver side ----------------------------------------------------------------------

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        options = self._options
        with _rewrite_errors(options):
            self._commit(messages)

    def _commit(self, messages: list[WriterCommitMessage | None]) -> None:
        zones = [m.time_zone for m in messages if isinstance(m, TsFileCommitMessage)]
        options = self._options
        counted = row_counts(messages)
        commit_write(
            self._plan,
            self._options,
            # Only a table the write was planned against matters: one created since is
            # refused by the commit.
            current=lambda: None if self._plan.table_uuid is None else existing_table(options),
            job=self._job,
            staged=staged_parts(messages),
            overwrite=self._overwrite,
            time_zone=self._options.time_zone or next((z for z in zones if z), None),
            counts=None if counted is None else counted.counts,
            write_id=None if counted is None else counted.write_id,
        )

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        # Failed partitions arrive as None; their attempts live under the job's staging dir.
        remove_staging(
            FileIO(self._options.path, self._options.storage_options), self._options, [self._job]
        )


@contextmanager
def _rewrite_errors(options: WriteOptions) -> Iterator[None]:
    """A copy-on-write's repeated key in words of its statement: in a ``key.duplicates =
    last`` table a MERGE writes one when it inserts a key its ON condition did not match
    though the table holds it, and an UPDATE or a MERGE's UPDATE SET when it moves a row onto
    a key another row holds (a condition the session's key check cannot see)."""
    try:
        yield
    except DataError as e:
        if options.rewrite_parts is None or "duplicate rows" not in str(e):
            raise
        # The writer's own advice (deduplicate, onDuplicate) is no advice for a statement.
        found = str(e).split(";", 1)[0]
        operation = options.rewrite_operation
        if operation == "MERGE":
            why = (
                "a MERGE whose ON condition did not match a row of the table inserts its key "
                "again, or its UPDATE SET moved a row onto another row's key; match on the key "
                "alone and put the other conditions in WHEN clauses, and leave the key as it is"
            )
        else:
            why = (
                f"the {operation} set a TAG column or time so that a row took the key of "
                "another; leave the key as it is, or delete the other row first"
            )
        raise DataError(
            f"{operation} on {options.path}: {found}. The statement wrote a key (TAG values, "
            f"time) twice, and a key.duplicates = last table holds one row per key: {why}; "
            "nothing was committed"
        ) from e
