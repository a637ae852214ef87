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
    copy = pair.copy_location
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


@pytest.mark.parametrize("mode", MODES)
def test_spark_sql_returns_the_counts_catalog_sql_returns(
    spark: SparkSession, ts: str, warehouse: Path, mode: str
) -> None:
    """With the plugin's extensions each statement returns one row with ``Catalog.sql``'s
    columns (Delta's) and values. A DELETE's file counts say how it did the work: equal for
    the metadata delete on tables of the same parts (the first statement), since it is
    ``Catalog.sql``'s DELETE; the parts differ once the statements rewrote them differently."""
    pair = _Pair(spark, ts, warehouse, f"answered_{mode}", mode)
    merge = _merge_source(pair, "answered_src")
    for statement, same_files in (
        ("DELETE FROM {t} WHERE device = 'd4'", True),  # in metadata: Catalog.sql's DELETE
        ("UPDATE {t} SET temp = temp + 100 WHERE device = 'd1'", True),
        ("UPDATE {t} SET temp = 0 WHERE temp + 1 > 1000", True),  # no row
        (merge, True),
        ("DELETE FROM {t} WHERE rain > hour(time) % 2", False),  # Spark's copy-on-write
        ("DELETE FROM {t} WHERE rain > hour(time) + 100", True),  # no row
    ):
        ours = spark.sql(statement.format(t=pair.table))
        theirs = pair.catalog.sql(statement.format(t=pair.copy))
        assert ours.schema == theirs.schema, statement
        mine, expected = ours.collect(), theirs.collect()
        assert len(mine) == len(expected) == 1, statement
        if same_files:
            assert mine == expected, statement
        else:
            assert mine[0][:2] == expected[0][:2], statement  # num_affected_rows, version
        assert mine[0][0] > 0 or "1000" in statement or "100" in statement
        pair.check()
    assert ours.columns[:2] == ["num_affected_rows", "version"]
    assert mine[0].num_affected_rows == 0 and mine[0].version is None
    assert pair.history()[:5] == ["DELETE", "MERGE", "UPDATE", "DELETE", "WRITE"]


def test_the_counts_are_the_statements_own(spark: SparkSession, ts: str, warehouse: Path) -> None:
    """The result is that statement's counts: an UPDATE's are the rows it changed, a MERGE
    with a source row of each kind answers one of each; DESCRIBE HISTORY shows the same."""
    pair = _Pair(spark, ts, warehouse, "own_counts", "last")
    (row,) = spark.sql(
        f"UPDATE {pair.table} SET rain = 99 WHERE device = 'd2' AND time < '2024-01-01 09:00:00'"
    ).collect()
    assert row.asDict() == {"num_affected_rows": 2}  # d2 at hours 1 and 5
    spark.createDataFrame(
        [
            ("2024-01-01 01:00:00", "bj", "d2", 1.0, 0),
            ("2024-01-01 02:00:00", "sh", "d3", 2.0, 1),
            ("2030-01-01 00:00:00", "sh", "d3", 3.0, 1),
        ],
        "time string, city string, device string, temp double, rain int",
    ).selectExpr(
        "CAST(time AS TIMESTAMP) AS time", "city", "device", "temp", "rain"
    ).createOrReplaceTempView("own_src")
    (row,) = spark.sql(
        f"MERGE INTO {pair.table} t USING own_src s "
        "ON t.time = s.time AND t.city = s.city AND t.device = s.device "
        "WHEN MATCHED AND s.rain = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET temp = s.temp "
        "WHEN NOT MATCHED THEN INSERT *"
    ).collect()
    assert row.asDict() == {
        "num_affected_rows": 3,
        "num_updated_rows": 1,
        "num_deleted_rows": 1,
        "num_inserted_rows": 1,
    }
    history = spark.sql(f"DESCRIBE HISTORY {pair.table}").first()
    assert history is not None
    assert {k: history.operation_parameters[k] for k in _COUNTED} == {
        "numUpdatedRows": "1",
        "numDeletedRows": "1",
        "numInsertedRows": "1",
    }


def test_other_statements_and_tables_keep_spark_s_results(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    """An INSERT into a catalog table returns no rows, as Spark's; an UPDATE of a Spark
    table is Spark's own refusal."""
    pair = _Pair(spark, ts, warehouse, "untouched", "keep")
    inserted = spark.sql(f"INSERT INTO {pair.table} SELECT * FROM {pair.table} LIMIT 1")
    assert inserted.columns == [] and inserted.collect() == []
    spark.range(3).write.parquet(str(tmp_path / "pq"))
    spark.sql(f"CREATE TABLE untouched_pq USING parquet LOCATION '{tmp_path / 'pq'}'")
    try:
        with pytest.raises(Exception, match="UPDATE TABLE is not supported|UNSUPPORTED"):
            spark.sql("UPDATE untouched_pq SET id = 0")
    finally:
        spark.sql("DROP TABLE untouched_pq")


@pytest.mark.parametrize("mode", MODES)
def test_catalog_sql_runs_them_through_spark_sql_where_the_plugin_serves(
    spark: SparkSession, ts: str, warehouse: Path, mode: str
) -> None:
    """``Catalog.sql`` over the plugin's warehouse hands UPDATE, MERGE and DELETE to
    ``spark.sql`` (the history records Spark's id of the write), with the answer and rows its
    own implementation gives on an identical copy (a warehouse no plugin serves). A ``last``
    table's UPDATE stays its own (it appends the changed rows only), and so does a MERGE
    that only inserts (Spark appends it, with no counts); a refusal is the same either way."""
    from tsfile_catalog import Catalog
    from tsfile_catalog.exceptions import SqlError

    pair = _Pair(spark, ts, warehouse, f"front_{mode}", mode)
    served = Catalog(spark, str(warehouse), register_views=True)
    assert served._tables.plugin() == ts
    table = pair.table.split(".", 1)[1]  # db.<name>, as Catalog.sql names it
    spark.createDataFrame(
        [("2024-01-02 05:00:00", "sh", "d9", 1.5, 2)],
        "time string, city string, device string, temp double, rain int",
    ).selectExpr(
        "CAST(time AS TIMESTAMP) AS time", "city", "device", "temp", "rain"
    ).createOrReplaceTempView("front_new")
    insert_only = (
        "MERGE INTO {t} t USING front_new s "
        "ON t.time = s.time AND t.city = s.city AND t.device = s.device "
        "WHEN NOT MATCHED THEN INSERT *"
    )
    for statement, through_spark in (
        ("UPDATE {t} SET temp = temp + 100 WHERE device = 'd1'", mode == "keep"),
        (_merge_source(pair, f"front_src_{mode}"), True),
        ("DELETE FROM {t} WHERE rain > hour(time) % 2", True),  # Spark's copy-on-write
        (insert_only, False),
    ):
        ours = served.sql(statement.format(t=table))
        theirs = pair.catalog.sql(statement.format(t=pair.copy))
        assert ours.schema == theirs.schema, statement
        mine, expected = ours.collect(), theirs.collect()
        assert mine[0][:2] == expected[0][:2] and mine[0][0] > 0, statement
        info = open_table(pair.location).history(limit=1)[0]
        assert ("writeId" in info.operation_parameters) == through_spark, statement
        own = open_table(pair.copy_location).history(limit=1)[0]
        assert "writeId" not in own.operation_parameters, statement
        if not through_spark and mode == "last" and statement.startswith("UPDATE"):
            assert info.rows_removed == 0  # the changed rows appended, no part rewritten
        pair.check()
    # Catalog.sql's refusals, before Spark reads a row: one line naming statement and column.
    version = pair.version()
    for statement in (
        "UPDATE {t} SET device = 'x'",
        "MERGE INTO {t} t USING front_new s ON t.time = s.time WHEN MATCHED THEN DELETE",
    ):
        with pytest.raises(SqlError) as refused:
            served.sql(statement.format(t=table))
        with pytest.raises(SqlError) as own_refusal:
            pair.catalog.sql(statement.format(t=pair.copy))
        shown = str(refused.value)
        assert "\n" not in shown and "device" in shown
        assert shown == str(own_refusal.value).replace(pair.copy, table), statement
    assert pair.version() == version


def test_catalog_sql_updates_a_default_table_its_view_shares_the_name_of(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    """A default-database table's convenience view has the table's name: the statement
    Catalog.sql hands to ``spark.sql`` names the table with the plugin's catalog, so Spark
    updates the table, not the view (which it cannot)."""
    from tsfile_catalog import Catalog

    spark.sql(
        f"CREATE TABLE {ts}.default.front_viewed (time BIGINT, dev STRING, v BIGINT) "
        "USING tsfile TBLPROPERTIES ('tagColumns' = 'dev', 'key.duplicates' = 'keep')"
    )
    spark.sql(f"INSERT INTO {ts}.default.front_viewed VALUES (1, 'a', 1), (2, 'b', 2)")
    served = Catalog(spark, str(warehouse))  # registers the view front_viewed
    try:
        assert spark.catalog.getTable("front_viewed").isTemporary
        (row,) = served.sql("UPDATE front_viewed SET v = v + 10 WHERE dev = 'a'").collect()
        assert row.num_affected_rows == 1
        location = str(warehouse / "front_viewed")
        assert "writeId" in open_table(location).history(limit=1)[0].operation_parameters
        assert sorted(served.sql("SELECT v FROM front_viewed").collect()) == [(2,), (11,)]
    finally:
        spark.catalog.dropTempView("front_viewed")
