"""Stored procedures: ``CALL <catalog>.system.<verb>(table => ...)`` runs the Catalog's
statement once and returns its rows."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.spark_catalog.conftest import WEATHER_COLUMNS, weather_rows
from tsfile_catalog import open_table

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark


def test_optimize_and_restore(spark: SparkSession, ts: str, warehouse: Path) -> None:
    from pyspark.testing import assertDataFrameEqual

    table = f"{ts}.db.maintained"
    spark.sql(
        f"CREATE TABLE {table} ({WEATHER_COLUMNS}) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city,device')"
    )
    for start in (0, 10, 20):
        weather_rows(spark, start=start, count=10).writeTo(table).append()
    before = spark.table(table).collect()
    location = str(warehouse / "db.db" / "maintained")
    parts = len(open_table(location).parts())
    # Planning a CALL (EXPLAIN, a DataFrame not collected) changes nothing.
    spark.sql(f"EXPLAIN CALL {ts}.system.optimize(table => 'db.maintained')").collect()
    assert open_table(location).version == 3
    done = spark.sql(f"CALL {ts}.system.optimize(table => 'db.maintained')").collect()
    assert [r.version for r in done] == [4]
    assert done[0].num_files_removed == parts and done[0].num_files_added < parts
    assert len(open_table(location).parts()) < parts
    assertDataFrameEqual(spark.table(table), before)
    restored = spark.sql(f"CALL {ts}.system.restore(table => 'db.maintained', version => 1)")
    assert [(r.version, r.restored_version) for r in restored.collect()] == [(5, 1)]
    assert spark.table(table).count() == 10


def test_unknown_procedures_and_arguments_are_refused(spark: SparkSession, ts: str) -> None:
    with pytest.raises(Exception, match="compact"):
        spark.sql(f"CALL {ts}.system.compact(table => 'db.t')").collect()
    with pytest.raises(Exception, match="exactly one of version"):
        spark.sql(f"CALL {ts}.system.restore(table => 'db.t')").collect()


def test_delete_runs_once_and_removes_what_spark_would(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    from pyspark.testing import assertDataFrameEqual

    table = f"{ts}.db.pruned"
    spark.sql(
        f"CREATE TABLE {table} ({WEATHER_COLUMNS}) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city,device')"
    )
    rows = weather_rows(spark)
    rows.writeTo(table).append()
    rows.write.parquet(str(tmp_path / "pq"))
    condition = "city = 'bj' AND temp > 20"
    call = f"CALL {ts}.system.delete(table => 'db.pruned', where => \"{condition}\")"
    spark.sql(f"EXPLAIN {call}").collect()
    location = str(warehouse / "db.db" / "pruned")
    assert open_table(location).version == 1, "planning deletes nothing"
    done = spark.sql(call).collect()
    assert open_table(location).version == 2
    # DELETE removes the rows where the predicate is TRUE: NULL temperatures stay.
    expected = spark.read.parquet(str(tmp_path / "pq")).where(f"NOT coalesce({condition}, false)")
    assert done[0].num_affected_rows == rows.count() - expected.count() > 0
    assertDataFrameEqual(spark.table(table), expected)
    with pytest.raises(Exception, match="REQUIRED_PARAMETER_NOT_FOUND|where"):
        spark.sql(f"CALL {ts}.system.delete(table => 'db.pruned')").collect()


def test_add_part_with_options_and_drop_part(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    from pyspark.testing import assertDataFrameEqual

    table = f"{ts}.db.parts"
    spark.sql(
        f"CREATE TABLE {table} ({WEATHER_COLUMNS}) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city,device')"
    )
    rows = weather_rows(spark, count=20)
    rows.writeTo(table).append()
    # Files a user already has, with another name for the time column.
    older = weather_rows(spark, start=20, count=12)
    folder = tmp_path / "older"
    older.withColumnRenamed("time", "ts").coalesce(1).write.parquet(str(folder))
    (file,) = folder.glob("part-*.parquet")
    added = spark.sql(
        f"CALL {ts}.system.add_part(table => 'db.parts', path => '{file}', format => 'parquet', "
        "options => map('timeColumn', 'ts'))"
    ).collect()
    assert [r.version for r in added] == [2]
    location = str(warehouse / "db.db" / "parts")
    assert str(file) in {p.path for p in open_table(location).parts()}
    assertDataFrameEqual(spark.table(table), rows.unionByName(older))
    with pytest.raises(Exception, match="give path => '…' as an argument"):
        spark.sql(
            f"CALL {ts}.system.add_part(table => 'db.parts', path => '{file}', "
            f"options => map('path', '{file}'))"
        ).collect()
    dropped = spark.sql(f"CALL {ts}.system.drop_part(table => 'db.parts', path => '{file}')")
    assert [r.version for r in dropped.collect()] == [3]
    assertDataFrameEqual(spark.table(table), rows)
    assert file.exists(), "an external file stays the user's"
