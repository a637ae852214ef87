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
