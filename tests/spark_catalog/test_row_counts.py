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


@pytest.mark.slow
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
        if mode == "last" and statement.startswith("UPDATE"):
            # The updated rows appended: no part read whole, no row copied.
            assert "numCopiedRows" not in info.operation_parameters
            assert info.rows_removed == 0
            continue
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


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_catalog_sql_runs_them_through_spark_sql_where_the_plugin_serves(
    spark: SparkSession, ts: str, warehouse: Path, mode: str
) -> None:
    """``Catalog.sql`` over the plugin's warehouse hands UPDATE, MERGE and DELETE to
    ``spark.sql`` (the history records Spark's id of the write), with the answer and rows its
    own implementation gives on an identical copy (a warehouse no plugin serves); a ``last``
    table's UPDATE appends the changed rows only either way, and a MERGE that only inserts
    is an append with the same counts; a refusal is the same either way."""
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
        ("UPDATE {t} SET temp = temp + 100 WHERE device = 'd1'", True),
        (_merge_source(pair, f"front_src_{mode}"), True),
        ("DELETE FROM {t} WHERE rain > hour(time) % 2", True),  # Spark's copy-on-write
        (insert_only, True),
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
        if mode == "last" and statement.startswith("UPDATE"):
            assert info.rows_removed == own.rows_removed == 0  # the changed rows appended
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


def test_a_last_table_s_update_appends_only_the_rows_it_changed(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    """A ``key.duplicates = last`` table: ``spark.sql``'s UPDATE writes the updated rows only,
    as a new write whose rows replace the old ones by the key rule (no part rewritten), as
    ``Catalog.sql``'s own UPDATE does: the same answer, history counts and change feed, and
    the rows Spark computes for the UPDATE on a Parquet copy."""
    from pyspark.sql import functions as F
    from pyspark.testing import assertDataFrameEqual

    pair = _Pair(spark, ts, warehouse, "appended_last", "last")
    spark.table(pair.table).write.parquet(str(tmp_path / "before"))
    parts = pair.parts()
    condition = "device = 'd1' AND rain > 0 OR hour(time) = 20"
    statement = f"UPDATE {{t}} SET temp = temp + 100, rain = rain * 2 WHERE {condition}"
    ours = spark.sql(statement.format(t=pair.table)).collect()
    theirs = pair.catalog.sql(statement.format(t=pair.copy)).collect()
    assert ours == theirs and ours[0].num_affected_rows > 0
    updated = ours[0].num_affected_rows
    assert parts < pair.parts()  # only new parts: nothing rewritten
    mine = open_table(pair.location).history(limit=1)[0]
    own = open_table(pair.copy_location).history(limit=1)[0]
    assert mine.operation == own.operation == "UPDATE"
    assert mine.parts_removed == own.parts_removed == 0
    assert mine.rows_added == own.rows_added == updated
    assert _counts(pair.location) == _counts(pair.copy_location) == {"numUpdatedRows": str(updated)}
    # The change feed: each updated row an update, its pre- and post-image.
    dropped = ["_commit_version", "_commit_timestamp"]
    feed = open_table(pair.location).changes(mine.version, mine.version).drop_columns(dropped)
    own_feed = open_table(pair.copy_location).changes(own.version, own.version)
    assert sorted(feed.to_pylist(), key=repr) == sorted(
        own_feed.drop_columns(dropped).to_pylist(), key=repr
    )
    assert feed.num_rows == 2 * updated
    # Spark's own UPDATE semantics, computed over a Parquet copy of the rows before.
    before = spark.read.parquet(str(tmp_path / "before"))
    hit = F.coalesce(F.expr(condition), F.lit(False))
    expected = before.select(
        "time",
        "city",
        "device",
        F.when(hit, F.col("temp") + 100).otherwise(F.col("temp")).alias("temp"),
        F.when(hit, F.col("rain") * 2).otherwise(F.col("rain")).alias("rain"),
    )
    assertDataFrameEqual(spark.table(pair.table), expected)
    pair.check()


@pytest.mark.parametrize("mode", MODES)
def test_a_merge_that_only_inserts_returns_and_records_its_counts(
    spark: SparkSession, ts: str, warehouse: Path, mode: str
) -> None:
    """Spark writes a MERGE whose every clause inserts as an append of the source rows no
    target row matched: through ``spark.sql`` it returns ``Catalog.sql``'s counts and
    commits a MERGE with the same counts (none when no row is new: nothing committed)."""
    pair = _Pair(spark, ts, warehouse, f"inserting_{mode}", mode)
    # Rows 30..39 exist, 40..45 are new.
    weather_rows(spark, start=30, count=16).selectExpr(
        "time", "city", "device", "temp * 2 AS temp", "rain"
    ).createOrReplaceTempView("inserting_src")
    on = "ON t.time = s.time AND t.city = s.city AND t.device = s.device "
    for statement, inserted in (
        (
            f"MERGE INTO {{t}} AS t USING inserting_src s {on}WHEN NOT MATCHED THEN INSERT *",
            6,
        ),
        (
            f"MERGE INTO {{t}} t USING inserting_src s {on}"
            "WHEN NOT MATCHED AND s.temp > 1000 THEN INSERT (time, city, device, temp, rain) "
            "VALUES (s.time, s.city, s.device, s.temp, -1)",
            0,
        ),
    ):
        before = pair.version()
        ours = spark.sql(statement.format(t=pair.table))
        theirs = pair.catalog.sql(statement.format(t=pair.copy))
        assert ours.schema == theirs.schema, statement
        assert ours.collect() == theirs.collect(), statement
        assert ours.collect()[0].asDict() == {
            "num_affected_rows": inserted,
            "num_updated_rows": 0,
            "num_deleted_rows": 0,
            "num_inserted_rows": inserted,
        }
        assert pair.version() == before + (1 if inserted else 0), statement
        pair.check()
    mine = open_table(pair.location).history(limit=1)[0]
    own = open_table(pair.copy_location).history(limit=1)[0]
    assert mine.operation == own.operation == "MERGE"
    assert "writeId" in mine.operation_parameters
    assert _counts(pair.location) == _counts(pair.copy_location)
    assert mine.parts_removed == own.parts_removed == 0
