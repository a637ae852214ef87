"""The row counts of ``UPDATE``, ``MERGE INTO`` and ``DELETE FROM`` through plain ``spark.sql``
on catalog tables: recorded in the history as ``Catalog.sql`` records its own (Spark's write
summaries), each compared with the same statement through ``Catalog.sql`` on an identical
copy of the table."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.spark_catalog.conftest import weather_rows
from tests.spark_catalog.test_rewrites import MODES, _Pair
from tsfile_catalog import open_table

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

_COUNTED = ("numUpdatedRows", "numDeletedRows", "numInsertedRows")
_RUNTIME_FILTER = "spark.sql.optimizer.runtime.rowLevelOperationGroupFilter.enabled"


def _counts(location: str) -> dict[str, str]:
    info = open_table(location).history(limit=1)[0]
    return {k: v for k, v in info.operation_parameters.items() if k in _COUNTED}


def _merge_source(pair: _Pair, view: str) -> str:
    """A MERGE whose source updates, deletes (``rain = 0``) and inserts rows."""
    source = weather_rows(pair.spark, start=10, count=20).union(weather_rows(pair.spark, 40, 6))
    source.selectExpr("time", "city", "device", "temp * 3 AS temp", "rain").createOrReplaceTempView(
        view
    )
    return (
        f"MERGE INTO {{t}} t USING {view} s "
        "ON t.time = s.time AND t.city = s.city AND t.device = s.device "
        "WHEN MATCHED AND s.rain = 0 THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET temp = s.temp, rain = s.rain + 10 "
        "WHEN NOT MATCHED THEN INSERT (time, city, device, temp, rain) "
        "VALUES (s.time, s.city, s.device, s.temp, s.rain)"
    )


@pytest.mark.parametrize("mode", MODES)
def test_the_history_records_the_rows_each_statement_changed(
    spark: SparkSession, ts: str, warehouse: Path, mode: str
) -> None:
    """Spark's counts, as ``Catalog.sql`` records its own: the rows changed, not those of the
    rewritten parts (which ``rows_added`` / ``rows_removed`` count)."""
    pair = _Pair(spark, ts, warehouse, f"counted_{mode}", mode)
    copy = str(warehouse / "db.db" / f"counted_{mode}_copy")
    for statement, counted in (
        ("UPDATE {t} SET temp = temp + 100 WHERE device = 'd1'", {"numUpdatedRows"}),
        (_merge_source(pair, "counted_src"), set(_COUNTED)),
        # A condition the scan cannot take: Spark's copy-on-write.
        ("DELETE FROM {t} WHERE rain > hour(time) % 2", {"numDeletedRows"}),
    ):
        pair.run(statement)
        ours, theirs = _counts(pair.location), _counts(copy)
        assert set(ours) == counted and ours == theirs, statement
        assert all(int(v) > 0 for v in ours.values()), statement
        info = open_table(pair.location).history(limit=1)[0]
        # Rows of the parts read that the statement left as they were.
        copied = int(info.operation_parameters["numCopiedRows"])
        assert 0 < copied <= info.rows_added


@pytest.mark.parametrize("mode", MODES)
def test_a_rewrite_that_changes_no_row_commits_nothing(
    spark: SparkSession, ts: str, warehouse: Path, mode: str
) -> None:
    """Without Spark's run-time filter the parts a statement may match are read whole; when
    it matches no row of them, Spark's counts say so and nothing is committed (the parts
    would be written back as they were), as ``Catalog.sql`` commits nothing."""
    pair = _Pair(spark, ts, warehouse, f"unchanged_{mode}", mode)
    parts = pair.parts()
    spark.conf.set(_RUNTIME_FILTER, "false")
    try:
        for statement in (
            "UPDATE {t} SET temp = 0 WHERE temp + 1 > 1000",
            "DELETE FROM {t} WHERE rain > hour(time) + 100",
        ):
            pair.run(statement, commits=0)
    finally:
        spark.conf.unset(_RUNTIME_FILTER)
    assert pair.parts() == parts
