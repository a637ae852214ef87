"""Tables and namespaces of the catalog plugin through plain ``spark.sql``: the same
registry as ``Catalog(spark, warehouse)``, the same checks and messages."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.children import run_child
from tsfile_catalog import Catalog, open_table
from tsfile_catalog.exceptions import SqlError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

CREATE = (
    "CREATE TABLE {ts}.{name} (time TIMESTAMP, city STRING, device STRING, temp DOUBLE) "
    "USING tsfile TBLPROPERTIES ('tagColumns' = 'city,device')"
)


def _catalog(spark: SparkSession, warehouse: Path) -> Catalog:
    return Catalog(spark, str(warehouse), register_views=False)


def test_create_show_describe_drop(spark: SparkSession, ts: str, warehouse: Path) -> None:
    spark.sql(CREATE.format(ts=ts, name="db.weather"))
    shown = spark.sql(f"SHOW TABLES IN {ts}.db").collect()
    assert [(r.namespace, r.tableName) for r in shown] == [("db", "weather")]
    # One registry: the Catalog sees the table Spark created, with its TAGs and time type.
    assert "db.weather" in _catalog(spark, warehouse).tables()
    table = open_table(str(warehouse / "db.db" / "weather"))
    assert table.schema.tag_names == ("city", "device")
    described = {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE {ts}.db.weather").collect()}
    assert described == {
        "time": "timestamp",
        "city": "string",
        "device": "string",
        "temp": "double",
    }
    properties = {
        r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {ts}.db.weather").collect()
    }
    assert properties["tagColumns"] == "city,device"
    spark.sql(f"DROP TABLE {ts}.db.weather")
    assert spark.sql(f"SHOW TABLES IN {ts}.db").collect() == []
    assert "db.weather" not in _catalog(spark, warehouse).tables()


def test_a_name_is_one_table_on_both_sides(spark: SparkSession, ts: str, warehouse: Path) -> None:
    catalog = _catalog(spark, warehouse)
    catalog.sql(
        "CREATE TABLE shared (time BIGINT, city STRING, temp DOUBLE) USING tsfile "
        "OPTIONS (tagColumns 'city')"
    )
    catalog.sql("INSERT INTO shared VALUES (1, 'bj', 1.5)")
    # The Catalog's unqualified name is the plugin's default namespace.
    assert spark.sql(f"SELECT * FROM {ts}.default.shared").collect() == [(1, "bj", 1.5)]
    with pytest.raises(Exception, match="already exists"):
        spark.sql(
            f"CREATE TABLE {ts}.default.shared (time BIGINT, city STRING) USING tsfile "
            "TBLPROPERTIES ('tagColumns' = 'city')"
        )
    spark.sql(f"DROP TABLE {ts}.default.shared")
    assert "shared" not in catalog.tables()


def test_refusals_carry_the_catalogs_messages(spark: SparkSession, ts: str) -> None:
    with pytest.raises(Exception, match="option 'tagColumns' is required to create a table"):
        spark.sql(f"CREATE TABLE {ts}.db.untagged (time BIGINT, temp DOUBLE) USING tsfile")
    with pytest.raises(Exception, match="column 'price' has type decimal"):
        spark.sql(
            f"CREATE TABLE {ts}.db.priced (time BIGINT, city STRING, price DECIMAL(5, 2)) "
            "USING tsfile TBLPROPERTIES ('tagColumns' = 'city')"
        )
    with pytest.raises(Exception, match="tsfile tables only"):
        spark.sql(
            f"CREATE TABLE {ts}.db.other (time BIGINT, city STRING) USING parquet "
            "TBLPROPERTIES ('tagColumns' = 'city')"
        )
    assert spark.sql(f"SHOW TABLES IN {ts}.db").collect() == []


def test_missing_tables_are_sparks_not_found(spark: SparkSession, ts: str) -> None:
    with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql(f"SELECT * FROM {ts}.db.nowhere")
    spark.sql(f"DROP TABLE IF EXISTS {ts}.db.nowhere")  # no error
    assert not spark.catalog.tableExists(f"{ts}.db.nowhere")


def test_namespaces(spark: SparkSession, ts: str, warehouse: Path) -> None:
    spark.sql(f"CREATE NAMESPACE {ts}.empty_db")
    names = {r.namespace for r in spark.sql(f"SHOW NAMESPACES IN {ts}").collect()}
    assert {"default", "empty_db"} <= names
    with pytest.raises(Exception, match="already exists"):
        spark.sql(f"CREATE NAMESPACE {ts}.empty_db")
    spark.sql(CREATE.format(ts=ts, name="empty_db.t"))
    with pytest.raises(Exception, match="SCHEMA_NOT_EMPTY"):
        spark.sql(f"DROP NAMESPACE {ts}.empty_db")
    spark.sql(f"DROP NAMESPACE {ts}.empty_db CASCADE")
    names = {r.namespace for r in spark.sql(f"SHOW NAMESPACES IN {ts}").collect()}
    assert "empty_db" not in names
    assert "empty_db.t" not in _catalog(spark, warehouse).tables()


def test_alter_and_rename(spark: SparkSession, ts: str, warehouse: Path) -> None:
    spark.sql(CREATE.format(ts=ts, name="db.altered"))
    spark.sql(f"ALTER TABLE {ts}.db.altered ADD COLUMNS (rain INT)")
    spark.sql(f"ALTER TABLE {ts}.db.altered ALTER COLUMN rain TYPE BIGINT")
    spark.sql(f"ALTER TABLE {ts}.db.altered SET TBLPROPERTIES ('team' = 'ops')")
    columns = {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE {ts}.db.altered").collect()}
    assert columns["rain"] == "bigint"
    properties = {
        r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {ts}.db.altered").collect()
    }
    assert properties["team"] == "ops"
    with pytest.raises(Exception, match="cannot drop TAG column 'city'"):
        spark.sql(f"ALTER TABLE {ts}.db.altered DROP COLUMN city")
    spark.sql(f"ALTER TABLE {ts}.db.altered RENAME TO db.renamed")
    assert [r.tableName for r in spark.sql(f"SHOW TABLES IN {ts}.db").collect()] == ["renamed"]
    assert _catalog(spark, warehouse).tables("db") == ["db.renamed"]
    spark.sql(f"DROP TABLE {ts}.db.renamed PURGE")
    assert not (warehouse / "db.db" / "altered").exists()


def test_unset_tblproperties_as_spark_and_the_catalog_do(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    spark.sql(CREATE.format(ts=ts, name="db.unset"))
    parquet = f"pq_unset_{ts}"
    spark.sql(
        f"CREATE TABLE {parquet} (time TIMESTAMP, city STRING) USING parquet "
        f"LOCATION '{tmp_path / 'pq'}'"
    )
    try:
        for table in (f"{ts}.db.unset", parquet):
            spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('team' = 'ops', 'tier' = 'gold')")
            spark.sql(f"ALTER TABLE {table} UNSET TBLPROPERTIES ('team', 'absent')")
            spark.sql(f"ALTER TABLE {table} UNSET TBLPROPERTIES IF EXISTS ('absent')")
        user = {"team", "tier", "absent"}
        shown = [
            {
                r.key: r.value
                for r in spark.sql(f"SHOW TBLPROPERTIES {t}").collect()
                if r.key in user
            }
            for t in (f"{ts}.db.unset", parquet)
        ]
        assert shown[0] == shown[1] == {"tier": "gold"}
    finally:
        spark.sql(f"DROP TABLE {parquet}")
    catalog = _catalog(spark, warehouse)
    detail = catalog.sql("DESCRIBE DETAIL db.unset").collect()[0].properties
    assert (detail.get("tier"), "team" in detail) == ("gold", False)
    history = catalog.sql("DESCRIBE HISTORY db.unset").collect()
    assert [r.operation for r in history][:2] == ["UNSET TBLPROPERTIES"] * 2
    # The same refusal as Catalog.sql's for a table option; the properties the plugin adds
    # to Spark's view of the table are not the table's to unset either.
    with pytest.raises(Exception, match="'tagColumns' is a table option.*cannot be unset"):
        spark.sql(f"ALTER TABLE {ts}.db.unset UNSET TBLPROPERTIES ('tagColumns')")
    with pytest.raises(SqlError, match="'tagColumns' is a table option.*cannot be unset"):
        catalog.sql("ALTER TABLE db.unset UNSET TBLPROPERTIES ('tagColumns')")
    with pytest.raises(Exception, match="'tagColumns' is a table option.*cannot be changed"):
        spark.sql(f"ALTER TABLE {ts}.db.unset SET TBLPROPERTIES ('tagColumns' = 'temp')")
    with pytest.raises(Exception, match="'tsfile.version' is shown by the catalog"):
        spark.sql(f"ALTER TABLE {ts}.db.unset UNSET TBLPROPERTIES ('tsfile.version')")
    assert catalog.sql("DESCRIBE DETAIL db.unset").collect()[0].properties == detail


def test_create_over_a_dropped_tables_files_is_refused_not_skipped(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    # DROP TABLE without PURGE keeps the files at the name's default location. The name is
    # free, so CREATE TABLE IF NOT EXISTS must not succeed quietly with no table.
    spark.sql(CREATE.format(ts=ts, name="db.dropped"))
    spark.sql(f"DROP TABLE {ts}.db.dropped")
    for create in ("CREATE TABLE", "CREATE TABLE IF NOT EXISTS"):
        with pytest.raises(Exception, match=r"LocationError: CREATE TABLE db\.dropped: a table "):
            spark.sql(CREATE.format(ts=ts, name="db.dropped").replace("CREATE TABLE", create))
        assert "db.dropped" not in _catalog(spark, warehouse).tables()
    # The name itself taken is still Spark's "already exists", which IF NOT EXISTS skips.
    spark.sql(f"CREATE TABLE {ts}.db.dropped USING tsfile LOCATION '{warehouse}/db.db/dropped'")
    spark.sql(CREATE.format(ts=ts, name="db.dropped").replace("TABLE", "TABLE IF NOT EXISTS"))
    with pytest.raises(Exception, match="TABLE_OR_VIEW_ALREADY_EXISTS"):
        spark.sql(CREATE.format(ts=ts, name="db.dropped"))
    spark.sql(f"DROP TABLE {ts}.db.dropped PURGE")


def test_column_clauses_a_table_cannot_keep_are_refused(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    with pytest.raises(Exception, match="column 'temp' is declared NOT NULL"):
        spark.sql(
            f"CREATE TABLE {ts}.db.strict (time TIMESTAMP NOT NULL, city STRING NOT NULL, "
            "temp DOUBLE NOT NULL) USING tsfile TBLPROPERTIES ('tagColumns' = 'city')"
        )
    assert "db.strict" not in _catalog(spark, warehouse).tables()
    # NOT NULL on time and a TAG holds (a NULL TAG fails the write): accepted.
    spark.sql(
        f"CREATE TABLE {ts}.db.strict (time TIMESTAMP NOT NULL, city STRING NOT NULL, "
        "temp DOUBLE) USING tsfile TBLPROPERTIES ('tagColumns' = 'city')"
    )
    version = open_table(str(warehouse / "db.db" / "strict")).version
    for clause, shown in (
        ("rain INT NOT NULL", "NOT NULL"),
        ("rain INT DEFAULT 5", "DEFAULT"),
    ):
        with pytest.raises(Exception, match=f"column 'rain' has {shown}, which tsfile"):
            spark.sql(f"ALTER TABLE {ts}.db.strict ADD COLUMNS ({clause})")
    assert open_table(str(warehouse / "db.db" / "strict")).version == version
    assert [c.name for c in spark.table(f"{ts}.db.strict").schema] == ["time", "city", "temp"]
    spark.sql(f"DROP TABLE {ts}.db.strict PURGE")


def test_location_is_the_path_given(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    # Spark hands the catalog a LOCATION qualified as Hadoop does ('file:/...').
    empty, selected = tmp_path / "empty", tmp_path / "selected"
    spark.sql(
        f"CREATE TABLE {ts}.db.placed (time BIGINT, city STRING, temp DOUBLE) USING tsfile "
        f"LOCATION '{empty}' TBLPROPERTIES ('tagColumns' = 'city')"
    )
    spark.sql(f"INSERT INTO {ts}.db.placed VALUES (1, 'bj', 1.5)")
    assert open_table(str(empty)).scan().to_arrow().to_pylist() == [
        {"time": 1, "city": "bj", "temp": 1.5}
    ]
    spark.sql(
        f"CREATE TABLE {ts}.db.selected USING tsfile LOCATION '{selected}' "
        f"TBLPROPERTIES ('tagColumns' = 'city') AS SELECT * FROM {ts}.db.placed"
    )
    assert open_table(str(selected)).scan().count() == 1
    # A table's location registers it again, under another name once the first is dropped.
    spark.sql(f"DROP TABLE {ts}.db.placed")
    spark.sql(f"CREATE TABLE {ts}.db.again USING tsfile LOCATION '{empty}'")
    assert spark.table(f"{ts}.db.again").collect() == [(1, "bj", 1.5)]
    for name in ("again", "selected"):
        spark.sql(f"DROP TABLE {ts}.db.{name} PURGE")
    assert not empty.exists() and not selected.exists()


def test_what_the_catalog_shows_is_not_stored(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    spark.sql(CREATE.format(ts=ts, name="db.shown"))
    spark.sql(f"ALTER TABLE {ts}.db.shown SET TBLPROPERTIES ('team' = 'ops')")
    location = warehouse / "db.db" / "shown"
    before = open_table(str(location))
    # Spark hands SET LOCATION over as a SET of the 'location' property.
    with pytest.raises(Exception, match="SET LOCATION: a tsfile table's location cannot change"):
        spark.sql(f"ALTER TABLE {ts}.db.shown SET LOCATION '{warehouse / 'elsewhere'}'")
    with pytest.raises(Exception, match="'tsfile.version' is shown by the catalog"):
        spark.sql(f"ALTER TABLE {ts}.db.shown SET TBLPROPERTIES ('tsfile.version' = '7')")
    after = open_table(str(location))
    assert (after.version, after.properties) == (before.version, before.properties)
    # SHOW CREATE TABLE's statement registers the table again as it is, no commit made.
    statement = spark.sql(f"SHOW CREATE TABLE {ts}.db.shown").first()[0]
    assert "'tsfile.version' = " in statement
    spark.sql(f"DROP TABLE {ts}.db.shown")
    spark.sql(statement)
    again = open_table(str(location))
    assert (again.version, again.properties) == (before.version, before.properties)
    assert "tsfile.version" not in again.properties
    spark.sql(f"DROP TABLE {ts}.db.shown PURGE")


def test_each_query_sees_what_another_process_committed(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    # A query's analysis reuses the description of a version it described before (Spark
    # Connect analyses each query twice): another process's commits, and a table dropped and
    # recreated at the location with the same version number, show in the next query.
    spark.sql(
        f"CREATE TABLE {ts}.db.fresh (time BIGINT, city STRING, temp DOUBLE) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city')"
    )
    spark.sql(f"INSERT INTO {ts}.db.fresh VALUES (1, 'bj', 1.5)")
    query = f"SELECT * FROM {ts}.db.fresh ORDER BY time"
    for _ in range(2):
        assert spark.sql(query).collect() == [(1, "bj", 1.5)]
    location = str(warehouse / "db.db" / "fresh")
    version = open_table(location).version
    done = run_child("tests/spark_catalog/other_writer_child.py", "append", location)
    assert done.returncode == 0, done.stderr[-3000:]
    assert spark.sql(query).collect() == [(1, "bj", 1.5, None), (2, "sh", 2.5, None)]
    assert spark.sql(f"SELECT rain FROM {ts}.db.fresh").count() == 2
    assert spark.sql(f"SELECT count(*) FROM {ts}.db.fresh VERSION AS OF {version}").first()[0] == 1
    versions = open_table(location).version
    done = run_child("tests/spark_catalog/other_writer_child.py", "recreate", location)
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.split()[-1]) == versions  # the same version number, another table
    assert spark.sql(query).columns == ["time", "city", "hum"]
    assert spark.sql(query).collect() == []
    spark.sql(f"DROP TABLE {ts}.db.fresh PURGE")
