"""A ``CREATE`` or ``REPLACE TABLE … AS SELECT`` with ``TBLPROPERTIES`` is one commit: the
properties are set by the commit that adds the rows, as Delta's CTAS does, through
``spark.sql``, the DataFrame writers and ``Catalog.sql``. Before, the rows were one version
and the properties the next, so a reader (or a time-travel query) saw the new rows without
the table's declared properties, and a process dying between the two left them unset."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.spark_catalog.conftest import create_weather, weather_rows
from tsfile_catalog import Catalog, open_table

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark


def _history(location: str) -> list[tuple[int, str]]:
    return [(h.version, h.operation) for h in open_table(location).history()]


def test_create_table_as_select_sets_its_properties_in_the_rows_commit(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    weather_rows(spark, count=6).createOrReplaceTempView("ctas_rows")
    spark.sql(
        f"CREATE TABLE {ts}.db.ctas_props TBLPROPERTIES ('tagColumns' = 'city,device', "
        "'team' = 'ops', 'watermark.interval' = '1 hour') AS SELECT * FROM ctas_rows"
    )
    location = str(warehouse / "db.db" / "ctas_props")
    assert _history(location) == [(0, "WRITE")]
    first = open_table(location, version=0)
    assert first.properties["team"] == "ops"
    assert first.properties["watermark.interval"] == "1 hour"
    assert first.scan().to_arrow().num_rows == 6
    # The table's options stay options, never stored as properties.
    assert "tagColumns" not in first.properties
    listed = spark.sql(f"SHOW TBLPROPERTIES {ts}.db.ctas_props").collect()
    shown = {r["key"]: r["value"] for r in listed}
    assert shown["team"] == "ops"


def test_dataframe_create_and_create_or_replace_are_one_commit(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    table = f"{ts}.db.writeto_props"
    location = str(warehouse / "db.db" / "writeto_props")
    rows = weather_rows(spark, count=5)
    (
        rows.writeTo(table)
        .using("tsfile")
        .tableProperty("tagColumns", "city,device")
        .tableProperty("team", "ops")
        .create()
    )
    assert _history(location) == [(0, "WRITE")]
    assert open_table(location).properties["team"] == "ops"
    replacing = weather_rows(spark, start=40, count=3)
    (
        replacing.writeTo(table)
        .using("tsfile")
        .tableProperty("team", "data")
        .tableProperty("site", "north")
        .createOrReplace()
    )
    assert _history(location) == [(1, "OVERWRITE"), (0, "WRITE")]
    replaced = open_table(location, version=1)
    assert (replaced.properties["team"], replaced.properties["site"]) == ("data", "north")
    assert sorted(spark.table(table).collect()) == sorted(replacing.collect())


def test_replace_table_as_select_sets_its_properties_with_the_rows(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    table = f"{ts}.db.rtas_props"
    create_weather(spark, table)
    weather_rows(spark, count=8).writeTo(table).append()
    location = str(warehouse / "db.db" / "rtas_props")
    before = _history(location)
    weather_rows(spark, start=20, count=4).createOrReplaceTempView("rtas_rows")
    spark.sql(
        f"CREATE OR REPLACE TABLE {table} USING tsfile TBLPROPERTIES ('team' = 'ops') "
        "AS SELECT * FROM rtas_rows"
    )
    after = _history(location)
    assert after[1:] == before
    assert after[0] == (before[0][0] + 1, "OVERWRITE")
    assert open_table(location, version=after[0][0]).properties["team"] == "ops"
    assert spark.table(table).count() == 4
    # The same properties again: one commit, nothing more to set.
    spark.sql(
        f"REPLACE TABLE {table} USING tsfile TBLPROPERTIES ('team' = 'ops') "
        "AS SELECT * FROM rtas_rows"
    )
    assert [op for _, op in _history(location)[:2]] == ["OVERWRITE", "OVERWRITE"]


def test_a_time_property_contradicting_the_rows_is_refused_before_they_are_written(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    # The rows' time is TIMESTAMP in ms: a statement declaring microseconds would have every
    # raw time read in the wrong unit. Refused in one line, and no table is left behind.
    weather_rows(spark, count=3).createOrReplaceTempView("unit_rows")
    with pytest.raises(Exception) as refused:
        spark.sql(
            f"CREATE TABLE {ts}.db.ctas_unit TBLPROPERTIES ('tagColumns' = 'city,device', "
            "'time.unit' = 'us') AS SELECT * FROM unit_rows"
        )
    message = str(refused.value).strip().splitlines()[0]
    assert "time.unit" in message, message
    location = warehouse / "db.db" / "ctas_unit"
    assert not location.exists() or not any(location.iterdir())
    assert not spark.catalog.tableExists(f"{ts}.db.ctas_unit")


def test_catalog_sql_create_table_as_select_is_one_commit(
    spark: SparkSession, tmp_path: Path
) -> None:
    catalog = Catalog(spark, str(tmp_path / "wh"), register_views=False)
    weather_rows(spark, count=4).createOrReplaceTempView("sql_ctas_rows")
    catalog.sql(
        "CREATE TABLE sql_ctas USING tsfile OPTIONS (tagColumns 'city,device') "
        "TBLPROPERTIES ('team' = 'ops') AS SELECT * FROM sql_ctas_rows"
    )
    location = str(tmp_path / "wh" / "sql_ctas")
    assert _history(location) == [(0, "WRITE")]
    assert open_table(location, version=0).properties["team"] == "ops"
    assert open_table(location).scan().to_arrow().num_rows == 4


def test_create_table_with_properties_is_one_commit(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    create_weather(spark, f"{ts}.db.created_props", team="ops")
    location = str(warehouse / "db.db" / "created_props")
    assert _history(location) == [(0, "CREATE")]
    assert open_table(location, version=0).properties["team"] == "ops"
