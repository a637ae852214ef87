"""The streaming sink: ``df.writeStream.format("tsfile")``, one commit per micro-batch.

Each micro-batch is written like a batch append (:mod:`~tsfile_catalog.write.staging`:
tasks stage part files, the driver publishes them) and committed as one manifest version,
history operation ``STREAMING UPDATE``. Exactly once: the commit records the streaming query
id and the micro-batch id (:class:`~tsfile_catalog.metadata.manifest.StreamTxn`, Delta's
``txn``), and a batch the table already holds is skipped, its staged files removed. Spark
replays a batch under the same id after a restart from the checkpoint when the previous run
died before Spark logged the batch as done, which may be after this commit landed (measured
on 4.3.0: the batch id is stable across such a restart; the query id is stable for a
checkpoint).

Where the ids come from (measured on 4.3.0): ``write()`` runs in a Spark task whose local
properties carry ``sql.streaming.queryId`` and ``streaming.sql.batchId``; ``commit()`` runs in
a Python process of its own, on a writer instance made for it, with no task context: the
ids and the staging job travel in the commit messages. Spark passes ``overwrite=True`` to
``streamWriter`` only in output mode complete, and refuses mode update itself ("tsfile does
not support Update mode") before the sink is asked.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamArrowWriter, WriterCommitMessage

from tsfile_catalog.datasource.staging import TsFileCommitMessage, staged_parts
from tsfile_catalog.exceptions import AlreadyCommittedError, TsFileCatalogError
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.manifest import Operation, StreamTxn, already_committed
from tsfile_catalog.metadata.ownership import new_job_id
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.options import StreamWriteOptions
from tsfile_catalog.table import append_parts
from tsfile_catalog.write.api import existing_table
from tsfile_catalog.write.plan import WritePlan
from tsfile_catalog.write.staging import publish_and_commit, remove_staging, stage_task

__all__ = ["TsFileStreamWriter", "QUERY_ID_PROPERTY", "BATCH_ID_PROPERTY", "COMPLETE_MODE_MESSAGE"]

# The task local properties a micro-batch's tasks run with (StreamExecution's keys).
QUERY_ID_PROPERTY = "sql.streaming.queryId"
BATCH_ID_PROPERTY = "streaming.sql.batchId"

COMPLETE_MODE_MESSAGE = (
    "the tsfile streaming sink supports output mode 'append' only, and this query uses "
    "output mode 'complete' (it would replace the whole table every micro-batch); use "
    "outputMode('append'), with withWatermark for aggregations"
)

_log = logging.getLogger(__name__)


class TsFileStreamWriter(DataSourceStreamArrowWriter):
    """Made by Spark for every micro-batch (planned against the table as of then), once to
    run the tasks and once more, in another process, to commit or abort."""

    def __init__(self, plan: WritePlan, options: StreamWriteOptions) -> None:
        self._plan = plan
        self._options = options
        self._job = new_job_id()

    # -- executor side --------------------------------------------------------------------

    def write(self, iterator: Iterator[pa.RecordBatch]) -> TsFileCommitMessage:
        from pyspark import TaskContext

        context = TaskContext.get()
        query_id = context.getLocalProperty(QUERY_ID_PROPERTY) if context else None
        batch_id = context.getLocalProperty(BATCH_ID_PROPERTY) if context else None
        if not query_id or batch_id is None:
            raise TsFileCatalogError(
                "the tsfile streaming sink's task has no streaming query id "
                f"('{QUERY_ID_PROPERTY}') or batch id ('{BATCH_ID_PROPERTY}') from Spark; "
                "it runs only inside df.writeStream"
            )
        parts, staging = stage_task(
            iterator,
            schema=self._plan.schema,
            time_source=self._plan.time_source,
            sources=self._plan.sources,
            unit=self._plan.unit,
            options=self._options.write,
            job=self._job,
            partition=context.partitionId() if context else 0,
            attempt=context.attemptNumber() if context else 0,
        )
        return TsFileCommitMessage(
            parts, staging, None, self._job, query_id=query_id, batch_id=int(batch_id)
        )

    # -- driver side ----------------------------------------------------------------------

    def commit(self, messages: list[WriterCommitMessage | None], batch_id: int) -> None:
        options = self._options.write
        io = FileIO(options.path, options.storage_options)
        ours = [m for m in messages if isinstance(m, TsFileCommitMessage)]
        try:
            staged = staged_parts(ours)
            if not staged:
                # A batch without rows commits nothing: replaying it adds nothing either.
                return
            txn = StreamTxn(_query_id(ours, batch_id), batch_id)
            table = existing_table(options)
            if table is not None and already_committed(table.snapshot.transactions, txn):
                _log.info("batch %d of query %s is already in %s", batch_id, txn.app_id, table)
                return
            previous = None if table is None else table.snapshot.transactions.get(txn.app_id)
            times = [s.part.max_time for s in staged if s.part.max_time is not None]
            if previous is not None and previous.max_time is not None:
                times.append(previous.max_time)
            txn = StreamTxn(txn.app_id, batch_id, max(times, default=None))
            publish_and_commit(
                io,
                schema=self._plan.schema,
                options=options,
                job=ours[0].job,
                staged=staged,
                commit=lambda parts: self._commit(parts, txn),
            )
        except AlreadyCommittedError as e:
            # Another run of this very batch committed first (the race rebase settles).
            _log.info("%s", e)
        finally:
            remove_staging(io, options, {m.job for m in ours if m.job})

    def _commit(self, parts: Sequence[PartFile], txn: StreamTxn) -> int:
        delay = self._options.complete_until_delay(self._plan.unit)
        return append_parts(
            self._options.write.path,
            parts,
            self._plan.schema,
            merge_schema=self._options.write.merge_schema,
            operation=Operation.STREAMING_UPDATE,
            operation_parameters={
                "outputMode": "Append",
                "queryId": txn.app_id,
                "epochId": str(txn.version),
            },
            storage_options=self._options.write.storage_options,
            expected_table_uuid=self._plan.table_uuid,
            # A table the stream creates records the time it was planned with.
            properties=self._plan.new_table_properties(),
            # Every row up to the stream's newest time, less the delay, is in: the bound only
            # grows, since max_time is the maximum over every batch the query committed.
            complete_until=None if delay is None or txn.max_time is None else txn.max_time - delay,
            txn=txn,
        )

    def abort(self, messages: list[WriterCommitMessage | None], batch_id: int) -> None:
        # Spark also aborts after a failed commit(); the staging may be gone already.
        options = self._options.write
        jobs = {m.job for m in messages if isinstance(m, TsFileCommitMessage) and m.job}
        remove_staging(FileIO(options.path, options.storage_options), options, jobs)


def _query_id(messages: Sequence[TsFileCommitMessage], batch_id: int) -> str:
    ids = {m.query_id for m in messages if m.query_id}
    batches = {m.batch_id for m in messages if m.batch_id is not None}
    if len(ids) != 1 or batches - {batch_id}:
        raise TsFileCatalogError(
            f"micro-batch {batch_id}: the sink's tasks reported streaming query ids "
            f"{sorted(ids)} and batch ids {sorted(b for b in batches if b is not None)}; "
            "expected one query and this batch"
        )
    return ids.pop()
