"""``MERGE WITH SCHEMA EVOLUTION INTO`` a catalog table through plain ``spark.sql`` (Spark
4.2.1 and 4.3 parse it): the source's new FIELD columns and the widenings are committed with
the MERGE's rows in one commit, as Delta does; rows equal what Spark computes on a Parquet copy;
a failed or refused MERGE commits neither the schema nor rows."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.spark_catalog.conftest import create_weather, weather_rows
from tsfile_catalog import open_table

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

KEY = ["time", "city", "device"]
ON = "t.time = s.time AND t.city = s.city AND t.device = s.device"
UPSERT = f"ON {ON} WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"


def _parquet(spark: SparkSession, rows: DataFrame, folder: Path) -> DataFrame:
    rows.write.parquet(str(folder))
    return spark.read.parquet(str(folder))


def _source(spark: SparkSession, folder: Path) -> DataFrame:
    """Four rows the table holds (new values) and four it lacks: rain as BIGINT (a widening)
    and a new FIELD, wind."""
    from pyspark.sql import functions as F

    rows = weather_rows(spark, start=4, count=8).select(
        "time",
        "city",
        "device",
        (F.coalesce("temp", F.lit(0.0)) + 100).alias("temp"),
        F.col("rain").cast("bigint").alias("rain"),
        (F.col("rain") * 1.5).alias("wind"),
    )
    return _parquet(spark, rows, folder)


def _table(spark: SparkSession, ts: str, warehouse: Path, name: str) -> tuple[str, str]:
    table = f"{ts}.db.{name}"
    create_weather(spark, table)
    weather_rows(spark, count=8).writeTo(table).append()
    return table, str(warehouse / "db.db" / name)


def test_merge_with_schema_evolution_commits_the_new_schema_with_its_rows(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    from pyspark.sql import functions as F
    from pyspark.testing import assertDataFrameEqual

    table, location = _table(spark, ts, warehouse, "merge_evolving")
    target = _parquet(spark, spark.table(table), tmp_path / "target")
    source = _source(spark, tmp_path / "source")
    source.createOrReplaceTempView("evolving_src")
    version = open_table(location).version
    spark.sql(f"MERGE WITH SCHEMA EVOLUTION INTO {table} t USING evolving_src s {UPSERT}")

    # One commit: the MERGE's, with the new schema (Spark alone: ADD COLUMNS, then MERGE).
    assert open_table(location).version == version + 1
    history = spark.sql(f"DESCRIBE HISTORY {table}").orderBy("version").collect()
    assert [r.operation for r in history[-2:]] == ["WRITE", "MERGE"]
    assert spark.table(table).columns == ["time", "city", "device", "temp", "rain", "wind"]
    assert spark.table(table).schema["rain"].dataType.simpleString() == "bigint"
    # Delta's semantics, computed by Spark on the Parquet copies: the rows the source does
    # not match keep their values, NULL in the new column; matched and new rows are the
    # source's.
    kept = (
        target.join(source, KEY, "left_anti")
        .withColumn("rain", F.col("rain").cast("bigint"))
        .withColumn("wind", F.lit(None).cast("double"))
    )
    expected = kept.unionByName(source)
    assertDataFrameEqual(spark.table(table), expected)
    assertDataFrameEqual(spark.sql(f"SELECT * FROM {table} VERSION AS OF {version}"), target)

    # The change feed of that version: the old rows as the new schema reads them, the new.
    before = spark.sql(f"SELECT * FROM {table} VERSION AS OF {version}").select(
        "time",
        "city",
        "device",
        "temp",
        F.col("rain").cast("bigint").alias("rain"),
        F.lit(None).cast("double").alias("wind"),
    )
    after = spark.table(table)
    changes = spark.sql(f"SELECT * FROM table_changes('{table}', {version + 1})")
    assert changes.columns[:6] == after.columns
    kinds = {r[0]: r[1] for r in changes.groupBy("_change_type").count().collect()}
    assert kinds == {"update_preimage": 4, "update_postimage": 4, "insert": 4}
    lost = changes.where("_change_type IN ('update_preimage', 'delete')")
    gained = changes.where("_change_type IN ('update_postimage', 'insert')")
    assertDataFrameEqual(lost.select(*after.columns), before.exceptAll(after))
    assertDataFrameEqual(gained.select(*after.columns), after.exceptAll(before))
    same = spark.sql(
        f"SELECT * FROM {table} CHANGES FROM VERSION {version + 1} TO VERSION {version + 1}"
    )
    assertDataFrameEqual(same, changes)


def test_a_merge_naming_no_new_column_evolves_nothing_and_without_evolution_is_unchanged(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    from pyspark.sql import functions as F
    from pyspark.testing import assertDataFrameEqual

    table, location = _table(spark, ts, warehouse, "merge_not_evolving")
    target = _parquet(spark, spark.table(table), tmp_path / "target")
    source = _source(spark, tmp_path / "source")
    source.createOrReplaceTempView("not_evolving_src")
    version = open_table(location).version
    # WITH SCHEMA EVOLUTION, but only existing columns are assigned: no column is added.
    spark.sql(
        f"MERGE WITH SCHEMA EVOLUTION INTO {table} t USING not_evolving_src s ON {ON} "
        "WHEN MATCHED THEN UPDATE SET temp = s.temp"
    )
    assert open_table(location).version == version + 1
    assert spark.table(table).columns == target.columns
    assert spark.table(table).schema["rain"].dataType.simpleString() == "int"
    updated = (
        target.alias("t")
        .join(source.alias("s"), KEY, "left")
        .select(*KEY, F.coalesce("s.temp", "t.temp").alias("temp"), F.col("t.rain"))
    )
    assertDataFrameEqual(spark.table(table), updated)
    # Without schema evolution, SET * and INSERT * take the table's columns (the source's
    # rain cast to INT), and the new column stays out.
    spark.sql(f"MERGE INTO {table} t USING not_evolving_src s {UPSERT}")
    assert open_table(location).version == version + 2
    assert spark.table(table).columns == target.columns
    assert spark.table(table).schema["rain"].dataType.simpleString() == "int"
    upserted = updated.join(source, KEY, "left_anti").unionByName(
        source.drop("wind").withColumn("rain", F.col("rain").cast("int"))
    )
    assertDataFrameEqual(spark.table(table), upserted)
    assert [i.operation for i in open_table(location).history(limit=2)] == ["MERGE", "MERGE"]


def test_columns_the_source_lacks_and_a_merge_changing_no_row_follow_delta(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    from pyspark.sql import functions as F
    from pyspark.testing import assertDataFrameEqual

    table, location = _table(spark, ts, warehouse, "merge_lacking")
    target = _parquet(spark, spark.table(table), tmp_path / "target")
    source = _source(spark, tmp_path / "source").drop("temp")
    source.createOrReplaceTempView("lacking_src")
    version = open_table(location).version
    spark.sql(f"MERGE WITH SCHEMA EVOLUTION INTO {table} t USING lacking_src s {UPSERT}")
    assert open_table(location).version == version + 1
    # UPDATE SET * keeps the column the source lacks, INSERT * leaves it NULL.
    kept = (
        target.join(source, KEY, "left_anti")
        .withColumn("rain", F.col("rain").cast("bigint"))
        .withColumn("wind", F.lit(None).cast("double"))
    )
    matched = (
        target.alias("t").join(source.alias("s"), KEY).select(*KEY, "t.temp", "s.rain", "s.wind")
    )
    inserted = source.join(target, KEY, "left_anti").withColumn("temp", F.lit(None).cast("double"))
    expected = kept.unionByName(matched).unionByName(inserted)
    assertDataFrameEqual(spark.table(table), expected)

    # A MERGE changing no row still evolves the schema (as Delta commits it), here through
    # an assignment to a column the table lacks; its change feed holds no row.
    spark.sql(
        f"MERGE WITH SCHEMA EVOLUTION INTO {table} t USING (SELECT *, rain * 2 AS gust FROM "
        f"lacking_src WHERE rain > 100) s ON {ON} WHEN MATCHED THEN UPDATE SET gust = s.gust"
    )
    assert open_table(location).version == version + 2
    assert open_table(location).history(limit=1)[0].operation == "MERGE"
    assert spark.table(table).dtypes[-1] == ("gust", "bigint")
    assertDataFrameEqual(
        spark.table(table), expected.withColumn("gust", F.lit(None).cast("bigint"))
    )
    assert spark.sql(f"SELECT * FROM table_changes('{table}', {version + 2})").count() == 0


def test_a_failing_merge_commits_neither_the_new_columns_nor_rows(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    table, location = _table(spark, ts, warehouse, "merge_failing")
    source = _source(spark, tmp_path / "source")
    # Two source rows for one target row: Spark refuses the MERGE while it runs.
    source.unionByName(source).createOrReplaceTempView("twice_src")
    version = open_table(location).version
    # Planning it commits nothing either (Spark alone ALTERs the table as it analyses it).
    spark.sql(f"EXPLAIN MERGE WITH SCHEMA EVOLUTION INTO {table} t USING twice_src s {UPSERT}")
    assert open_table(location).version == version
    with pytest.raises(Exception, match="MERGE_CARDINALITY_VIOLATION"):
        spark.sql(f"MERGE WITH SCHEMA EVOLUTION INTO {table} t USING twice_src s {UPSERT}")
    assert open_table(location).version == version
    assert spark.table(table).columns == ["time", "city", "device", "temp", "rain"]
    assert spark.table(table).count() == 8


@pytest.mark.parametrize(
    ("name", "change", "refusal"),
    [
        # A type the table does not widen to (INT -> DOUBLE).
        ("narrowed", "CAST(rain AS DOUBLE) AS rain", r"column 'rain' .* is INT32 but the incoming"),
        # A TAG's type: TAGs are the device identity.
        ("tag", "CAST(device AS INT) AS device", r"'device'"),
        # The key's time.
        ("time", "CAST(time AS DATE) AS time", r"'time'"),
        # A new column of a type tsfile tables lack.
        ("decimal", "CAST(rain AS DECIMAL(10, 2)) AS gust", r"'gust'"),
    ],
)
def test_a_refused_change_is_one_line_naming_the_column_and_commits_nothing(
    spark: SparkSession,
    ts: str,
    warehouse: Path,
    tmp_path: Path,
    name: str,
    change: str,
    refusal: str,
) -> None:
    name = f"merge_refused_{name}"
    table, location = _table(spark, ts, warehouse, name)
    _source(spark, tmp_path / "source").createOrReplaceTempView(f"{name}_src")
    column = change.rsplit(" AS ", 1)[1]
    kept = [c for c in ("time", "city", "device", "temp", "rain", "wind") if c != column]
    spark.sql(f"SELECT {', '.join(kept)}, {change} FROM {name}_src").createOrReplaceTempView(
        f"{name}_changed"
    )
    version = open_table(location).version
    with pytest.raises(Exception, match=refusal) as refused:
        spark.sql(f"MERGE WITH SCHEMA EVOLUTION INTO {table} t USING {name}_changed s {UPSERT}")
    assert re.search(refusal, str(refused.value).splitlines()[0]), str(refused.value)
    assert open_table(location).version == version
    assert spark.table(table).columns == ["time", "city", "device", "temp", "rain"]


def test_catalog_sql_runs_merge_and_insert_with_schema_evolution_as_spark_sql_does(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    """Catalog.sql hands ``MERGE|INSERT WITH SCHEMA EVOLUTION`` (Spark's grammar, not its
    parser's) to ``spark.sql`` through the plugin: the same one commit and rows as
    ``spark.sql`` gives a twin table, named as Catalog.sql names tables (``db.t``)."""
    from pyspark.testing import assertDataFrameEqual

    from tsfile_catalog import Catalog

    catalog = Catalog(spark, str(warehouse), register_views=False)
    source = _source(spark, tmp_path / "source")
    source.createOrReplaceTempView("front_src")
    twin, _ = _table(spark, ts, warehouse, "evolving_twin")
    spark.sql(f"MERGE WITH SCHEMA EVOLUTION INTO {twin} t USING front_src s {UPSERT}")
    table, location = _table(spark, ts, warehouse, "evolving_front")
    version = open_table(location).version

    catalog.sql(f"merge  with schema evolution into db.evolving_front t USING front_src s {UPSERT}")

    assert open_table(location).version == version + 1
    assert spark.table(table).columns == spark.table(twin).columns
    assert spark.table(table).columns[-1] == "wind"
    assertDataFrameEqual(spark.table(table), spark.table(twin))
    last = catalog.sql("DESCRIBE HISTORY db.evolving_front").orderBy("version").collect()[-1]
    assert last.operation == "MERGE"

    catalog.sql(
        "INSERT WITH SCHEMA EVOLUTION INTO db.evolving_front BY NAME "
        "SELECT time + INTERVAL 100 HOURS AS time, city, device, temp, rain, wind, "
        "rain * 2 AS gust FROM front_src"
    )
    assert open_table(location).version == version + 2
    assert spark.table(table).columns[-1] == "gust"
    assert spark.table(table).where("gust IS NOT NULL").count() == (
        source.where("rain IS NOT NULL").count()
    )


def test_catalog_sql_without_the_plugin_refuses_schema_evolution_in_one_line(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Catalog.sql's own MERGE and INSERT evolve no schema: on a warehouse no plugin serves,
    ``WITH SCHEMA EVOLUTION`` is refused naming the table, and nothing is committed (never
    run as a plain MERGE that would drop the new column)."""
    from tsfile_catalog import Catalog
    from tsfile_catalog.exceptions import SqlError

    catalog = Catalog(spark, str(tmp_path / "alone"), register_views=False)
    catalog.sql(
        "CREATE TABLE db.lonely (time TIMESTAMP, city STRING, temp DOUBLE) USING tsfile "
        "OPTIONS (tagColumns 'city')"
    )
    catalog.sql("INSERT INTO db.lonely VALUES (TIMESTAMP '2024-01-01 00:00:00', 'bj', 1.0)")
    location = str(tmp_path / "alone" / "db.db" / "lonely")
    version = open_table(location).version
    for statement in (
        "MERGE WITH SCHEMA EVOLUTION INTO db.lonely t USING (SELECT * FROM db.lonely) s "
        "ON t.time = s.time AND t.city = s.city WHEN MATCHED THEN UPDATE SET *",
        "INSERT WITH SCHEMA EVOLUTION INTO db.lonely SELECT *, 2.0 AS wind FROM db.lonely",
    ):
        with pytest.raises(SqlError) as refused:
            catalog.sql(statement)
        message = str(refused.value)
        assert "\n" not in message
        assert "WITH SCHEMA EVOLUTION INTO db.lonely needs the catalog plugin" in message
    assert open_table(location).version == version
