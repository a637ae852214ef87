"""The row counts of ``UPDATE``, ``MERGE INTO`` and ``DELETE FROM`` through plain ``spark.sql``.

Spark counts the rows its copy-on-write changed and hands the counts to the write's commit
(``UpdateSummary``, ``DeleteSummary``, ``MergeSummary``), but a Python data source's commit is
not given them: the plugin's write (``RowFedWrite``) forwards them here as they are, and adds
the message :func:`counts_message` makes to its tasks' messages, which the ``tsfile`` writer's
commit records in the history (:mod:`tsfile_catalog.write.commit`).

With the plugin's session extensions the statement then returns one row (``RowCounts.java``):
the columns ``Catalog.sql`` returns for it (:func:`result_schema`), the values of that
statement's own write (:func:`result_row`), or those of ``Catalog.sql``'s DELETE when Spark
deleted in metadata (:mod:`.deletes`).
"""

from __future__ import annotations

import base64
import pickle
from collections.abc import Mapping
from typing import Any

from tsfile_catalog import inspect
from tsfile_catalog.datasource.staging import RowCountsMessage
from tsfile_catalog.metadata.key import key_mode
from tsfile_catalog.metadata.manifest import CommitInfo
from tsfile_catalog.metadata.row_counts import RowCounts
from tsfile_catalog.options import WriteOptions, parse_write_options
from tsfile_catalog.spark_catalog.rewrites import appending_commit
from tsfile_catalog.spark_catalog.scan_request import ScanRequest
from tsfile_catalog.table.handle import open_table

__all__ = ["counts_message", "plan_inserts", "result_row", "result_schema"]


def counts_message(request: Mapping[str, Any]) -> str:
    """The commit message (pickled, base64) carrying the counts of Spark's write summary
    ``request["summary"]`` (its getters by name) for statement ``request["operation"]``, and
    Spark's id of the write, ``request["write_id"]``.

    Raises:
        ValueError: the operation or a count is not one Spark gives.
    """
    counts = RowCounts.from_spark(str(request["operation"]).upper(), request["summary"])
    message = RowCountsMessage(counts, str(request["write_id"]))
    return base64.b64encode(pickle.dumps(message)).decode("ascii")


_SCHEMAS = {
    "UPDATE": inspect.UPDATE_SCHEMA,
    "MERGE": inspect.MERGE_SCHEMA,
    "DELETE": inspect.DELETE_SCHEMA,
}


def result_schema(operation: str) -> str:
    """The columns ``spark.sql``'s ``operation`` returns: ``Catalog.sql``'s for it (DDL)."""
    return _SCHEMAS[operation.upper()]


def result_row(request: Mapping[str, Any]) -> list[int | None]:
    """The row a copy-on-write statement returns once its write ran: Spark's counts
    (``request["summary"]``, null when Spark gave none) and, for a DELETE, the commit
    recorded with Spark's id of the write (``request["write_id"]``; no commit: no row
    matched, the version null), found among those after the version the statement read
    (``request["options"]``, the write's)."""
    operation = str(request["operation"]).upper()
    summary = request.get("summary")
    counts = None if summary is None else RowCounts.from_spark(operation, summary)
    if operation == "UPDATE":
        return [None if counts is None else counts.updated]
    if operation == "MERGE":
        if counts is None:
            return [None] * 4
        return [counts.affected, counts.updated, counts.deleted, counts.inserted]
    options = parse_write_options(request["options"])
    info = _commit(options, str(request["write_id"]))
    if info is None:
        return [None if counts is None else counts.deleted, None, 0, 0, None, None]
    parameters = info.operation_parameters
    return [
        None if counts is None else counts.deleted,
        info.version,
        int(parameters.get("numRemovedFiles", info.parts_removed)),
        int(parameters.get("numAddedFiles", info.parts_added)),
        # Which removed parts held only deleted rows, a copy-on-write does not tell apart.
        None,
        None,
    ]


def plan_inserts(scan: ScanRequest) -> dict[str, str]:
    """The write options of a MERGE whose every clause inserts (``WHEN NOT MATCHED THEN
    INSERT``), which Spark writes as an append of the source rows no target row matched
    (its ``InsertOnlyMerge``, with a ``MergeSummary``): a write of new rows only (no part
    replaced), committed as ``Catalog.sql``'s own MERGE commits it, against the version read
    with operation ``MERGE`` and Spark's counts. In a ``key.duplicates = last`` table they
    replace any row of the same key (an ``ON`` stricter than the key leaves such a row
    unmatched), as any write's; an append-only table keeps both."""
    last = key_mode(scan.opened.properties) == "last"
    return appending_commit(scan, "MERGE", "replace" if last else "keep")


def _commit(options: WriteOptions, write_id: str) -> CommitInfo | None:
    """The commit recorded with ``write_id``, made after the version the statement read."""
    table = open_table(options.path, storage_options=options.storage_options, use_cache=False)
    read = options.rewrite_version
    newer = None if read is None else max(table.version - read, 0)
    if newer == 0:
        return None
    found = (
        i for i in table.history(limit=newer) if i.operation_parameters.get("writeId") == write_id
    )
    return next(found, None)
