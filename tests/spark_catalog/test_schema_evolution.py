"""Schema evolution through plain ``spark.sql``: RENAME COLUMN, DROP COLUMN(S), ALTER COLUMN
FIRST/AFTER/DROP NOT NULL on a catalog table give what Spark computes on a Parquet copy with
the same change applied, no part is rewritten, and each version keeps its own schema (moves
of time and TAG columns: tests/spark_catalog/test_column_order.py)."""

from __future__ import annotations

import datetime
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.spark_catalog.conftest import create_weather, weather_rows
from tsfile_catalog import Catalog, open_table

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

QUERIES = (
    "SELECT * FROM {t}",
    "SELECT city, device, temperature FROM {t} WHERE temperature > 20",
    "SELECT city, count(*), count(temperature), min(temperature), max(temperature), "
    "sum(rain) FROM {t} GROUP BY city",
    "SELECT device, rain FROM {t} WHERE rain IS NOT NULL OR temperature < 12",
)


def _same(spark: SparkSession, table: str, expected: DataFrame) -> None:
    from pyspark.testing import assertDataFrameEqual

    expected.createOrReplaceTempView("pq_evolved")
    for query in QUERIES:
        assertDataFrameEqual(
            spark.sql(query.format(t=table)), spark.sql(query.format(t="pq_evolved"))
        )


def _parquet(spark: SparkSession, rows: DataFrame, folder: Path) -> DataFrame:
    rows.write.parquet(str(folder))
    return spark.read.parquet(str(folder))


def test_rename_drop_add_back_and_move_match_spark_on_parquet(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    from pyspark.sql import functions as F

    table = f"{ts}.db.evolving"
    create_weather(spark, table)
    rows = weather_rows(spark)
    rows.writeTo(table).append()  # version 1
    parquet = _parquet(spark, rows, tmp_path / "v1")
    location = warehouse / "db.db" / "evolving"
    parts = sorted(p.name for p in location.glob("*.tsfile"))

    spark.sql(f"ALTER TABLE {table} RENAME COLUMN temp TO temperature")  # 2
    spark.sql(f"ALTER TABLE {table} DROP COLUMN rain")  # 3
    spark.sql(f"ALTER TABLE {table} ADD COLUMNS (rain INT)")  # 4: a new, empty column
    spark.sql(f"ALTER TABLE {table} ALTER COLUMN rain AFTER device")  # 5
    spark.sql(f"ALTER TABLE {table} ALTER COLUMN temperature DROP NOT NULL")  # no change
    expected = parquet.select(
        "time",
        "city",
        "device",
        F.lit(None).cast("int").alias("rain"),
        F.col("temp").alias("temperature"),
    )
    assert spark.table(table).columns == expected.columns
    _same(spark, table, expected)
    assert sorted(p.name for p in location.glob("*.tsfile")) == parts, "nothing rewritten"
    assert open_table(str(location)).version == 5

    # Rows written after the changes land under the new names, next to the old parts.
    more = weather_rows(spark, start=40, count=12).select(
        "time", "city", "device", "rain", F.col("temp").alias("temperature")
    )
    more.writeTo(table).append()
    spark.sql(f"INSERT INTO {table} VALUES (TIMESTAMP '2024-03-01 00:00:00', 'bj', 'd9', 7, 31.5)")
    inserted = spark.sql(
        "SELECT TIMESTAMP '2024-03-01 00:00:00' AS time, 'bj' AS city, 'd9' AS device, "
        "7 AS rain, 31.5D AS temperature"
    )
    _same(spark, table, expected.unionByName(more).unionByName(inserted))

    # Each version reads with its own schema.
    from pyspark.testing import assertDataFrameEqual

    first = spark.sql(f"SELECT * FROM {table} VERSION AS OF 1")
    assert first.columns == ["time", "city", "device", "temp", "rain"]
    assertDataFrameEqual(first, parquet)
    renamed = spark.sql(f"SELECT * FROM {table} VERSION AS OF 2")
    assert renamed.columns == ["time", "city", "device", "temperature", "rain"]
    assertDataFrameEqual(renamed, parquet.withColumnRenamed("temp", "temperature"))
    dropped = spark.sql(f"SELECT * FROM {table} VERSION AS OF 3")
    assert dropped.columns == ["time", "city", "device", "temperature"]


def test_tag_columns_and_impossible_places_are_refused_by_name(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    table = f"{ts}.db.strict_evolution"
    create_weather(spark, table)
    weather_rows(spark, count=8).writeTo(table).append()
    version = open_table(str(warehouse / "db.db" / "strict_evolution")).version
    refusals = {
        "RENAME COLUMN city TO town": "cannot rename TAG column 'city'",
        "DROP COLUMN device": "cannot drop TAG column 'device'",
        # Spark refuses these, before the catalog is asked.
        "ALTER COLUMN temp AFTER wind": "`wind` cannot be resolved",
        "RENAME COLUMN temp TO rain": "`rain` already exists",
        "DROP COLUMNS (rain, wind)": "`wind` cannot be resolved",
    }
    for clause, message in refusals.items():
        with pytest.raises(Exception, match=message):
            spark.sql(f"ALTER TABLE {table} {clause}")
    assert open_table(str(warehouse / "db.db" / "strict_evolution")).version == version
    spark.sql(f"ALTER TABLE {table} DROP COLUMNS (rain, temp)")
    assert spark.table(table).columns == ["time", "city", "device"]
    assert spark.table(table).count() == 8


def test_catalog_sql_and_url_references_follow_the_same_evolution(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    from pyspark.sql import functions as F
    from pyspark.testing import assertDataFrameEqual

    catalog = Catalog(spark, str(warehouse), register_views=False)
    create_weather(spark, f"{ts}.db.through_catalog")  # one registry: the Catalog sees it
    rows = weather_rows(spark)
    rows.writeTo(f"{ts}.db.through_catalog").append()  # version 1
    parquet = _parquet(spark, rows, tmp_path / "v1")
    catalog.sql("ALTER TABLE db.through_catalog DROP COLUMN temp")  # 2
    catalog.sql("ALTER TABLE db.through_catalog ADD COLUMNS (temp DOUBLE)")  # 3: new, empty
    catalog.sql("ALTER TABLE db.through_catalog RENAME COLUMN rain TO rainfall")  # 4
    catalog.sql("ALTER TABLE db.through_catalog ALTER COLUMN temp AFTER device")  # 5
    expected = parquet.select(
        "time",
        "city",
        "device",
        F.lit(None).cast("double").alias("temp"),
        F.col("rain").alias("rainfall"),
    )
    assertDataFrameEqual(catalog.sql("SELECT * FROM db.through_catalog"), expected)
    assertDataFrameEqual(
        catalog.sql(
            "SELECT city, sum(rainfall), count(temp) FROM db.through_catalog GROUP BY city"
        ),
        expected.groupBy("city").agg(F.sum("rainfall"), F.count("temp")),
    )
    older = catalog.sql("SELECT * FROM db.through_catalog VERSION AS OF 2")
    assert older.columns == ["time", "city", "device", "rain"]
    assertDataFrameEqual(older, parquet.drop("temp"))
    url = (warehouse / "db.db" / "through_catalog").as_uri()
    for version, columns in (
        (1, ["time", "city", "device", "temp", "rain"]),
        (2, ["time", "city", "device", "rain"]),
        (3, ["time", "city", "device", "rain", "temp"]),
        (4, ["time", "city", "device", "rainfall", "temp"]),
        (5, ["time", "city", "device", "temp", "rainfall"]),
    ):
        read = catalog.sql(f"SELECT * FROM tsfile('{url}', version => {version})")
        assert read.columns == columns, version
        answer = parquet.select(
            "time",  # a URL reference reads time as the table records it: a TIMESTAMP
            "city",
            "device",
            *(
                F.col("temp")
                if c == "temp" and version == 1
                else F.lit(None).cast("double").alias("temp")
                if c == "temp"
                else F.col("rain").alias(c)
                for c in columns[3:]
            ),
        )
        assertDataFrameEqual(read, answer)


def test_insert_with_schema_evolution_adds_and_widens_in_one_commit(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    from pyspark.sql import functions as F
    from pyspark.testing import assertDataFrameEqual

    table = f"{ts}.db.evolving_insert"
    create_weather(spark, table)
    rows = weather_rows(spark, count=8)
    rows.writeTo(table).append()
    # rain given as BIGINT: widened; wind new.
    row = (
        "SELECT TIMESTAMP '2024-02-01 00:00:00' AS time, 'bj' AS city, 'd1' AS device, "
        "1.5D AS temp, 2L AS rain, 3.5D AS wind"
    )
    with pytest.raises(Exception, match="wind"):
        spark.sql(f"INSERT INTO {table} BY NAME {row}")
    location = str(warehouse / "db.db" / "evolving_insert")
    version = open_table(location).version
    spark.sql(f"INSERT WITH SCHEMA EVOLUTION INTO {table} BY NAME {row}")
    # One commit: the schema with the rows (Spark alone would ALTER, then append).
    assert open_table(location).version == version + 1
    assert open_table(location).history(limit=1)[0].operation == "WRITE"
    assert spark.table(table).columns == ["time", "city", "device", "temp", "rain", "wind"]
    assert spark.table(table).schema["rain"].dataType.simpleString() == "bigint"
    expected = (
        rows.withColumn("rain", F.col("rain").cast("bigint"))
        .withColumn("wind", F.lit(None).cast("double"))
        .unionByName(spark.sql(row))
    )
    assertDataFrameEqual(spark.table(table), expected)
    # A type the merge does not widen to: one line naming the column, nothing committed.
    narrowing = f"{row.replace('2L AS rain', '2.5D AS rain')}, 1 AS gust"
    refusal = r"column 'rain' .* is INT64 but the incoming data has DOUBLE"
    with pytest.raises(Exception, match=refusal) as refused:
        spark.sql(f"INSERT WITH SCHEMA EVOLUTION INTO {table} BY NAME {narrowing}")
    assert re.search(refusal, str(refused.value).splitlines()[0])
    assert open_table(location).version == version + 1
    assert "gust" not in spark.table(table).columns


def test_a_merge_schema_append_through_the_data_source_follows_the_mapping(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    from pyspark.sql import functions as F
    from pyspark.testing import assertDataFrameEqual

    table = f"{ts}.db.evolving_merge"
    create_weather(spark, table)
    rows = weather_rows(spark, count=8)
    rows.writeTo(table).append()
    spark.sql(f"ALTER TABLE {table} RENAME COLUMN temp TO temperature")
    spark.sql(f"ALTER TABLE {table} DROP COLUMN rain")
    location = str(warehouse / "db.db" / "evolving_merge")
    more = weather_rows(spark, start=8, count=4).select(
        "time", "city", "device", F.col("temp").alias("temperature"), "rain"
    )
    # One commit: the rows, and 'rain' back as a new column (the dropped one's data stays out).
    version = open_table(location).version
    more.write.format("tsfile").mode("append").option("mergeSchema", "true").save(location)
    assert open_table(location).version == version + 1
    assert open_table(location).history(limit=1)[0].operation == "WRITE"
    expected = (
        rows.select(
            "time",
            "city",
            "device",
            F.col("temp").alias("temperature"),
            F.lit(None).cast("int").alias("rain"),
        )
    ).unionByName(more)
    assertDataFrameEqual(spark.table(table), expected)


def test_a_merge_schema_write_to_adds_the_new_fields_and_widens_in_one_commit(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    from pyspark.sql import functions as F
    from pyspark.testing import assertDataFrameEqual

    table = f"{ts}.db.merge_write_to"
    create_weather(spark, table)
    rows = weather_rows(spark, count=8)
    rows.writeTo(table).append()
    # By name, in another order, rain widened INT -> BIGINT, a new FIELD wind.
    more = weather_rows(spark, start=8, count=4).select(
        "device",
        "time",
        F.col("rain").cast("bigint").alias("rain"),
        "city",
        "temp",
        (F.col("temp") * 2).alias("wind"),
    )
    with pytest.raises(Exception, match="wind"):
        more.writeTo(table).append()  # without mergeSchema: refused as today
    more.writeTo(table).option("mergeSchema", "true").append()
    history = spark.sql(f"DESCRIBE HISTORY {table}").orderBy("version").collect()
    # Creation, the first append, and one commit for the new columns and the rows.
    assert len(history) == 3 and history[-1].operation == "WRITE"
    assert spark.table(table).schema["rain"].dataType.simpleString() == "bigint"
    expected = (
        rows.withColumn("rain", F.col("rain").cast("bigint"))
        .withColumn("wind", F.lit(None).cast("double"))
        .unionByName(more)
    )
    assertDataFrameEqual(spark.table(table), expected)

    # saveAsTable in append mode: another new field, the same way.
    last = weather_rows(spark, start=12, count=4).withColumn("gust", F.lit(7))
    last.write.option("mergeSchema", "true").mode("append").saveAsTable(table)
    assert len(spark.sql(f"DESCRIBE HISTORY {table}").collect()) == len(history) + 1
    assertDataFrameEqual(
        spark.table(table),
        expected.withColumn("gust", F.lit(None).cast("int")).unionByName(
            last.withColumn("wind", F.lit(None).cast("double")), allowMissingColumns=False
        ),
    )


def test_a_merge_schema_write_to_refuses_narrowing_and_new_tags_committing_nothing(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    from pyspark.sql import functions as F

    table = f"{ts}.db.merge_refused"
    create_weather(spark, table)
    weather_rows(spark, count=8).writeTo(table).append()
    location = str(warehouse / "db.db" / "merge_refused")
    version = open_table(location).version
    more = weather_rows(spark, start=8, count=4)
    # INT -> DOUBLE is no widening the merge makes (Spark alone would cast the doubles to int).
    doubled = more.withColumn("rain", F.col("rain").cast("double")).withColumn("wind", F.lit(1.0))
    refusal = r"column 'rain' .* is INT32 but the incoming data has DOUBLE"
    with pytest.raises(Exception, match=refusal) as refused:
        doubled.writeTo(table).option("mergeSchema", "true").append()
    assert re.search(refusal, str(refused.value).splitlines()[0]), "the first line says it all"
    text = more.withColumn("temp", F.col("temp").cast("string"))
    with pytest.raises(Exception, match=r"column 'temp' .* is DOUBLE but the incoming data has "):
        text.write.option("mergeSchema", "true").mode("append").saveAsTable(table)
    tagged = more.withColumn("region", F.lit("north"))
    with pytest.raises(Exception, match="column 'region'.*TAG"):
        tagged.writeTo(table).option("mergeSchema", "true").option(
            "tagColumns", "city,device,region"
        ).append()
    assert open_table(location).version == version
    assert spark.table(table).columns == ["time", "city", "device", "temp", "rain"]


def test_added_columns_take_their_place_on_every_read_path(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    from pyspark.sql import functions as F
    from pyspark.testing import assertDataFrameEqual

    table = f"{ts}.db.placed_columns"
    create_weather(spark, table)
    rows = weather_rows(spark, count=12)
    rows.writeTo(table).append()  # version 1
    parquet = _parquet(spark, rows, tmp_path / "v1")
    location = warehouse / "db.db" / "placed_columns"
    spark.sql(f"ALTER TABLE {table} ADD COLUMNS (wind DOUBLE AFTER device, gust INT AFTER wind)")
    # By position, in the new order.
    spark.sql(
        f"INSERT INTO {table} VALUES (TIMESTAMP '2024-03-01 00:00:00', 'bj', 'd9', 4.5, 6, 20.5, 1)"
    )  # 3
    catalog = Catalog(spark, str(warehouse), register_views=False)
    catalog.sql("ALTER TABLE db.placed_columns ADD COLUMNS (snow INT AFTER temp)")  # 4
    inserted = spark.sql(
        "SELECT TIMESTAMP '2024-03-01 00:00:00' AS time, 'bj' AS city, 'd9' AS device, "
        "4.5D AS wind, 6 AS gust, 20.5D AS temp, CAST(NULL AS INT) AS snow, 1 AS rain"
    )
    expected = parquet.select(
        "time",
        "city",
        "device",
        F.lit(None).cast("double").alias("wind"),
        F.lit(None).cast("int").alias("gust"),
        "temp",
        F.lit(None).cast("int").alias("snow"),
        "rain",
    ).unionByName(inserted)
    assert spark.table(table).columns == expected.columns
    expected.createOrReplaceTempView("pq_placed")
    for query in (
        "SELECT * FROM {t}",
        "SELECT city, wind, gust, temp FROM {t} WHERE gust IS NOT NULL OR temp > 20",
        "SELECT city, count(*), count(wind), max(gust), sum(rain) FROM {t} GROUP BY city",
    ):
        assertDataFrameEqual(
            spark.sql(query.format(t=table)), spark.sql(query.format(t="pq_placed"))
        )
    assertDataFrameEqual(catalog.sql("SELECT * FROM db.placed_columns"), expected)
    assert catalog.sql("SELECT * FROM db.placed_columns").columns == expected.columns
    scanned = open_table(str(location)).scan().to_arrow()
    assert scanned.column_names == expected.columns
    assert scanned.num_rows == 13
    # Older versions keep their own order; the change feed reads the range's last schema.
    assert spark.sql(f"SELECT * FROM {table} VERSION AS OF 1").columns == parquet.columns
    assertDataFrameEqual(spark.sql(f"SELECT * FROM {table} VERSION AS OF 1"), parquet)
    assert spark.sql(f"SELECT * FROM {table} VERSION AS OF 2").columns == [
        "time",
        "city",
        "device",
        "wind",
        "gust",
        "temp",
        "rain",
    ]
    changes = spark.sql(f"SELECT * FROM table_changes('{table}', 3, 4)")
    assert changes.columns[:8] == expected.columns
    assertDataFrameEqual(changes.select(*expected.columns), inserted)
    # Spark-free, times raw (the table's milliseconds), as the Spark-free scan reads them.
    raw = inserted.withColumn("time", F.unix_millis("time"))
    spark_free = open_table(str(location)).changes(3, 4).to_pylist()
    assert [tuple(r.values())[:8] for r in spark_free] == [tuple(r) for r in raw.collect()]


def test_added_columns_go_first_or_between_the_tags_where_users_see_them(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    table = f"{ts}.db.placed_anywhere"
    create_weather(spark, table)
    weather_rows(spark, count=4).writeTo(table).append()
    catalog = Catalog(spark, str(warehouse), register_views=False)
    spark.sql(f"ALTER TABLE {table} ADD COLUMNS (wind DOUBLE FIRST)")
    catalog.sql("ALTER TABLE db.placed_anywhere ADD COLUMNS (gust INT, snow INT AFTER city)")
    shown = ["wind", "time", "city", "snow", "device", "temp", "rain", "gust"]
    assert spark.table(table).columns == shown
    assert catalog.sql("SELECT * FROM db.placed_anywhere").columns == shown
    assert spark.table(table).count() == 4
    with pytest.raises(Exception, match="'hail' .*AFTER fog: the table has no column 'fog'"):
        catalog.sql("ALTER TABLE db.placed_anywhere ADD COLUMNS (hail INT AFTER fog)")


def test_a_by_position_merge_schema_insert_adds_trailing_columns_in_one_commit(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    from pyspark.sql import functions as F
    from pyspark.testing import assertDataFrameEqual

    table = f"{ts}.db.evolving_by_position"
    create_weather(spark, table)
    rows = weather_rows(spark, count=8)
    rows.writeTo(table).append()
    location = str(warehouse / "db.db" / "evolving_by_position")
    # By position, as Delta matches df.insertInto: the first columns are the table's (whatever
    # their names), the trailing ones new FIELDs under their own names.
    more = (
        weather_rows(spark, start=8, count=4)
        .withColumn("wind", F.col("temp") * 2)
        .toDF("t", "c", "d", "x", "y", "wind")
    )
    with pytest.raises(Exception, match="TOO_MANY_DATA_COLUMNS"):
        more.write.insertInto(table)  # without mergeSchema: Spark's own check, as before
    version = open_table(location).version
    more.write.option("mergeSchema", "true").insertInto(table)
    assert open_table(location).version == version + 1
    assert open_table(location).history(limit=1)[0].operation == "WRITE"
    expected = rows.withColumn("wind", F.lit(None).cast("double")).union(more)
    assert spark.table(table).columns == expected.columns
    assertDataFrameEqual(spark.table(table), expected)
    with pytest.raises(Exception, match="NOT_ENOUGH_DATA_COLUMNS"):
        more.select("t", "c", "d").write.option("mergeSchema", "true").insertInto(table)
    assert open_table(location).version == version + 1


def test_a_by_position_insert_with_schema_evolution_is_one_commit(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    table = f"{ts}.db.evolving_insert_by_position"
    create_weather(spark, table)
    weather_rows(spark, count=8).writeTo(table).append()
    location = str(warehouse / "db.db" / "evolving_insert_by_position")
    version = open_table(location).version
    spark.sql(
        f"INSERT WITH SCHEMA EVOLUTION INTO {table} SELECT TIMESTAMP '2024-02-01 00:00:00', "
        "'bj', 'd1', 1.5D, 2, 7 AS gust"
    )
    assert open_table(location).version == version + 1
    assert spark.table(table).columns == ["time", "city", "device", "temp", "rain", "gust"]
    assert [tuple(r) for r in spark.table(table).where("gust IS NOT NULL").collect()] == [
        (datetime.datetime(2024, 2, 1), "bj", "d1", 1.5, 2, 7)
    ]
