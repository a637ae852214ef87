"""RowCounts: Spark's write summaries as the history's parameters and Delta's counts."""

from __future__ import annotations

import pytest

from tsfile_catalog.metadata.row_counts import RowCounts


def test_a_merge_summary_counts_the_target_rows() -> None:
    counts = RowCounts.from_spark(
        "MERGE",
        {
            "numTargetRowsUpdated": 3,
            "numTargetRowsDeleted": 2,
            "numTargetRowsInserted": 1,
            "numTargetRowsCopied": 40,
            "numTargetRowsMatchedUpdated": 3,  # parts of the totals above: not recorded
        },
    )
    assert (counts.updated, counts.deleted, counts.inserted, counts.affected) == (3, 2, 1, 6)
    assert counts.parameters() == {
        "numUpdatedRows": "3",
        "numDeletedRows": "2",
        "numInsertedRows": "1",
        "numCopiedRows": "40",
    }


def test_update_and_delete_record_their_own_count_as_catalog_sql_does() -> None:
    update = RowCounts.from_spark("UPDATE", {"numUpdatedRows": 5, "numCopiedRows": 7})
    assert update.parameters() == {"numUpdatedRows": "5", "numCopiedRows": "7"}
    delete = RowCounts.from_spark("DELETE", {"numDeletedRows": 0, "numCopiedRows": 9})
    assert delete.affected == 0 and delete.parameters()["numDeletedRows"] == "0"
    # Catalog.sql's own counts have no copied rows: none recorded.
    assert RowCounts("UPDATE", updated=2).parameters() == {"numUpdatedRows": "2"}


@pytest.mark.parametrize(
    "operation, summary",
    [
        ("INSERT", {"numInsertedRows": 1}),
        ("UPDATE", {"numCopiedRows": 1}),  # numUpdatedRows missing
        ("DELETE", {"numDeletedRows": -1, "numCopiedRows": 0}),
        ("DELETE", {"numDeletedRows": True, "numCopiedRows": 0}),
    ],
)
def test_a_summary_that_is_not_spark_s_is_refused_naming_it(
    operation: str, summary: dict[str, object]
) -> None:
    with pytest.raises(ValueError, match=operation if operation == "INSERT" else "num"):
        RowCounts.from_spark(operation, summary)
