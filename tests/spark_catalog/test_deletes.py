"""``DELETE FROM`` (and ``TRUNCATE TABLE``) on a catalog table through plain ``spark.sql``:
taken when every conjunct binds exactly, run once when Spark executes the statement, and
compared with the same delete over a Parquet copy."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.spark_catalog.conftest import WEATHER_COLUMNS, weather_rows
from tsfile_catalog import Catalog, open_table

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark


def test_delete_from_matches_spark_and_runs_once(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    from pyspark.testing import assertDataFrameEqual

    table = f"{ts}.db.deleted"
    spark.sql(
        f"CREATE TABLE {table} ({WEATHER_COLUMNS}) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city,device')"
    )
    rows = weather_rows(spark)
    for start in (0, 20):
        weather_rows(spark, start=start, count=20).writeTo(table).append()
    rows.write.parquet(str(tmp_path / "pq"))
    copy = spark.read.parquet(str(tmp_path / "pq"))
    location = str(warehouse / "db.db" / "deleted")
    first = "city = 'bj' AND temp > 20"
    spark.sql(f"EXPLAIN DELETE FROM {table} WHERE {first}").collect()
    assert open_table(location).version == 2, "planning deletes nothing"
    spark.sql(f"DELETE FROM {table} WHERE {first}")
    assert open_table(location).version == 3
    # Rows where the condition is NULL (a NULL temperature) stay, as in Spark.
    expected = copy.where(f"NOT coalesce({first}, false)")
    assertDataFrameEqual(spark.table(table), expected)
    second = "time < TIMESTAMP '2024-01-01 05:00:00' OR device IN ('d4')"
    spark.sql(f"DELETE FROM {table} WHERE {second}")
    expected = expected.where(f"NOT coalesce({second}, false)")
    assertDataFrameEqual(spark.table(table), expected)
    history = Catalog(spark, str(warehouse), register_views=False).sql(
        "DESCRIBE HISTORY db.deleted"
    )
    assert [r.operation for r in history.collect()][:2] == ["DELETE", "DELETE"]
    spark.sql(f"DELETE FROM {table} WHERE false")
    assert open_table(location).version == 4, "nothing matches: no commit"


def test_delete_from_rewrites_parts_for_what_it_cannot_bind_exactly(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    """A condition the metadata delete cannot evaluate exactly is Spark's copy-on-write of
    the parts (tests/spark_catalog/test_rewrites.py), no longer a refusal."""
    table = f"{ts}.db.kept"
    spark.sql(
        f"CREATE TABLE {table} ({WEATHER_COLUMNS}) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city,device')"
    )
    weather_rows(spark).writeTo(table).append()
    expected = weather_rows(spark).where("NOT coalesce(city = 'bj' AND temp + 1 > 20, false)")
    spark.sql(f"DELETE FROM {table} WHERE city = 'bj' AND temp + 1 > 20")
    assert open_table(str(warehouse / "db.db" / "kept")).version == 2
    assert spark.table(table).count() == expected.count() < 40
    spark.sql(f"TRUNCATE TABLE {table}")
    assert spark.table(table).count() == 0
    assert open_table(str(warehouse / "db.db" / "kept")).version == 3
