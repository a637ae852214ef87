"""The message a Spark write task hands its driver: the parts it staged.

Staging and publishing themselves are Spark-free (:mod:`~tsfile_catalog.write.staging`);
this is only Spark's envelope for them, which must subclass Spark's ``WriterCommitMessage``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pyspark.sql.datasource import WriterCommitMessage

from tsfile_catalog.metadata.row_counts import RowCounts
from tsfile_catalog.write.staging import StagedPart

__all__ = ["RowCountsMessage", "TsFileCommitMessage", "row_counts", "staged_parts"]


@dataclass(frozen=True)
class TsFileCommitMessage(WriterCommitMessage):
    parts: tuple[StagedPart, ...]
    staging_dir: str
    # The session time zone Spark gave the task: the driver's commit has no task context,
    # and ``replaceWhere`` must bind there exactly as the tasks bound it.
    time_zone: str | None = None
    # The write's job id (its ``_staging/<job>`` folder): a streaming commit runs on a writer
    # instance of its own, which only the messages tell where the tasks staged.
    job: str = ""
    # The streaming query id and micro-batch id the task ran for (its local properties);
    # the streaming commit has no task context to read them from. None in a batch write.
    query_id: str | None = None
    batch_id: int | None = None


def staged_parts(messages: Iterable[WriterCommitMessage | None]) -> list[StagedPart]:
    return [s for m in messages if isinstance(m, TsFileCommitMessage) for s in m.parts]


@dataclass(frozen=True)
class RowCountsMessage(WriterCommitMessage):
    """The rows a row-level statement changed, as Spark counted them: the catalog plugin
    adds this message to its tasks' when Spark commits the write with a summary (the Python
    data source's commit is not given the summary itself). ``write_id`` is Spark's id of the
    write, which the commit records so the statement's result finds its commit."""

    counts: RowCounts
    write_id: str


def row_counts(messages: Iterable[WriterCommitMessage | None]) -> RowCountsMessage | None:
    return next((m for m in messages if isinstance(m, RowCountsMessage)), None)
