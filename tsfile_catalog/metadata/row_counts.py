"""The rows an UPDATE, MERGE or DELETE changed: what the history records and what the statement
returns, whichever engine ran it.

``Catalog.sql`` counts the rows itself; Spark's copy-on-write of a catalog table (the plugin)
hands them to the write at commit (its ``UpdateSummary``, ``DeleteSummary``, ``MergeSummary``,
PySpark 4.2 and 4.3). Both record the same ``operation_parameters`` (``numUpdatedRows``,
``numDeletedRows``, ``numInsertedRows``; a copy-on-write adds ``numCopiedRows``, the rows it
wrote back unchanged) and return the same columns (Delta's: ``num_affected_rows`` first).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["RowCounts"]

# Spark's summary getters, by the count each stands for (MERGE's are the target's rows).
_SPARK = {
    "UPDATE": {"updated": "numUpdatedRows", "copied": "numCopiedRows"},
    "DELETE": {"deleted": "numDeletedRows", "copied": "numCopiedRows"},
    "MERGE": {
        "updated": "numTargetRowsUpdated",
        "deleted": "numTargetRowsDeleted",
        "inserted": "numTargetRowsInserted",
        "copied": "numTargetRowsCopied",
    },
}

# The history parameters each statement records (Catalog.sql's names since issue 25).
_PARAMETERS = {
    "UPDATE": ("updated",),
    "DELETE": ("deleted",),
    "MERGE": ("updated", "deleted", "inserted"),
}
_NAMES = {"updated": "numUpdatedRows", "deleted": "numDeletedRows", "inserted": "numInsertedRows"}


@dataclass(frozen=True, slots=True)
class RowCounts:
    """How many rows one statement updated, deleted, inserted and (a copy-on-write) copied
    unchanged; ``operation`` is ``UPDATE``, ``MERGE`` or ``DELETE``."""

    operation: str
    updated: int = 0
    deleted: int = 0
    inserted: int = 0
    copied: int | None = None

    @classmethod
    def from_spark(cls, operation: str, summary: Mapping[str, object]) -> RowCounts:
        """The counts of Spark's write summary (its getters' names and values).

        Raises:
            ValueError: an operation other than UPDATE, MERGE, DELETE, or a count missing
                or not a non-negative integer.
        """
        names = _SPARK.get(operation)
        if names is None:
            raise ValueError(f"no row counts for operation {operation!r}")
        values: dict[str, int] = {}
        for field_name, getter in names.items():
            value = summary.get(getter)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"Spark's {operation} summary: {getter} = {value!r}")
            values[field_name] = value
        return cls(operation, **values)

    @property
    def affected(self) -> int:
        """Delta's ``num_affected_rows``: the rows updated, deleted or inserted."""
        return self.updated + self.deleted + self.inserted

    def parameters(self) -> dict[str, str]:
        """The history's ``operation_parameters`` for these counts."""
        out = {_NAMES[f]: str(getattr(self, f)) for f in _PARAMETERS[self.operation]}
        if self.copied is not None:
            out["numCopiedRows"] = str(self.copied)
        return out
