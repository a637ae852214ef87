"""The row counts of ``UPDATE``, ``MERGE INTO`` and ``DELETE FROM`` through plain ``spark.sql``.

Spark counts the rows its copy-on-write changed and hands the counts to the write's commit
(``UpdateSummary``, ``DeleteSummary``, ``MergeSummary``), but a Python data source's commit is
not given them: the plugin's write (``RowFedWrite``) forwards them here as they are, and adds
the message :func:`counts_message` makes to its tasks' messages, which the ``tsfile`` writer's
commit records in the history (:mod:`tsfile_catalog.write.commit`).
"""

from __future__ import annotations

import base64
import pickle
from collections.abc import Mapping
from typing import Any

from tsfile_catalog.datasource.staging import RowCountsMessage
from tsfile_catalog.metadata.row_counts import RowCounts

__all__ = ["counts_message"]


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
