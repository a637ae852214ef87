"""Maintenance and schema evolution through ``catalog.sql`` on real tables written by Spark:
VACUUM, EXPIRE SNAPSHOTS, RESTORE, ALTER TABLE columns and RENAME, SHOW CREATE TABLE."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.testing import assertDataFrameEqual

from tsfile_catalog import Catalog, open_table
from tsfile_catalog.exceptions import (
    OptionError,
    SchemaError,
    TableNotFoundError,
    VersionNotFoundError,
)
from tsfile_catalog.sql import CreateTable, TableName, parse_statement
from tsfile_catalog.sql.catalog import RETENTION_CHECK

spark_test = pytest.mark.spark
COLUMNS = "(time BIGINT, city STRING, temp DOUBLE)"


def _create(catalog: Catalog, name: str, columns: str = COLUMNS) -> None:
    catalog.sql(f"CREATE TABLE {name} {columns} USING tsfile OPTIONS (tagColumns 'city')")


def _parts(catalog: Catalog, name: str, version: int) -> set[str]:
    rows = catalog.sql(f"SHOW PARTS {name} VERSION AS OF {version}").collect()
    return {r.path for r in rows}


@spark_test
def test_vacuum_after_overwrites(catalog: Catalog, warehouse: Path, spark: SparkSession) -> None:
    _create(catalog, "vac")
    catalog.sql("INSERT INTO vac VALUES (1, 'bj', 1.0), (2, 'sh', 2.0)")  # version 1
    catalog.sql("INSERT OVERWRITE vac VALUES (3, 'bj', 3.0)")  # version 2
    catalog.sql("INSERT OVERWRITE vac VALUES (4, 'sz', 4.0)")  # version 3
    replaced = _parts(catalog, "vac", 1) | _parts(catalog, "vac", 2)
    # Within the default retention of 7 days nothing goes and time travel still reads.
    assert catalog.sql("VACUUM vac").collect() == []
    assert sorted(tuple(r) for r in catalog.sql("SELECT * FROM vac VERSION AS OF 1").collect()) == [
        (1, "bj", 1.0),
        (2, "sh", 2.0),
    ]
    with pytest.raises(OptionError, match="0 ms is below the table's deletedFileRetention"):
        catalog.sql("VACUUM vac RETAIN 0 HOURS")
    spark.conf.set(RETENTION_CHECK, "false")
    try:
        dry = catalog.sql("VACUUM vac RETAIN 0 HOURS DRY RUN").collect()
        assert {Path(r.path).name for r in dry} == replaced and not any(r.deleted for r in dry)
        assert all((warehouse / "vac" / p).exists() for p in replaced)
        done = catalog.sql("VACUUM vac RETAIN 0 HOURS").collect()
    finally:
        spark.conf.unset(RETENTION_CHECK)
    assert {Path(r.path).name for r in done} == replaced and all(r.deleted for r in done)
    assert not any((warehouse / "vac" / p).exists() for p in replaced)
    assert [tuple(r) for r in catalog.sql("SELECT * FROM vac").collect()] == [(4, "sz", 4.0)]
    with pytest.raises(VersionNotFoundError, match="version 1 .*part .* was deleted by VACUUM"):
        catalog.sql("SELECT * FROM vac VERSION AS OF 1")
    catalog.sql("DROP TABLE vac")


@spark_test
def test_expire_snapshots_and_restore(catalog: Catalog) -> None:
    _create(catalog, "res")
    catalog.sql("INSERT INTO res VALUES (1, 'bj', 1.0)")  # version 1
    catalog.sql("INSERT INTO res VALUES (2, 'sh', 2.0)")  # version 2
    catalog.sql("INSERT OVERWRITE res VALUES (3, 'sz', 3.0)")  # version 3
    removed, back = _parts(catalog, "res", 3), _parts(catalog, "res", 2)
    restored = catalog.sql("RESTORE TABLE res TO VERSION AS OF 2").collect()[0]
    assert tuple(restored) == (4, 2, len(removed), len(back))
    assert _parts(catalog, "res", 4) == back
    assertDataFrameEqual(
        catalog.sql("SELECT * FROM res"), catalog.sql("SELECT * FROM res VERSION AS OF 2")
    )
    history = catalog.sql("DESCRIBE HISTORY res").collect()
    assert [(h.version, h.operation) for h in history[:2]] == [(4, "RESTORE"), (3, "OVERWRITE")]

    expired = catalog.sql("EXPIRE SNAPSHOTS res RETAIN 0 HOURS RETAIN LAST 2").collect()[0]
    assert tuple(expired) == (3, 3, 0, True)
    assert [h.version for h in catalog.sql("DESCRIBE HISTORY res").collect()] == [4, 3]
    with pytest.raises(VersionNotFoundError, match="oldest available version is 3"):
        catalog.sql("SELECT * FROM res VERSION AS OF 1")
    with pytest.raises(VersionNotFoundError, match="oldest available version is 3"):
        catalog.sql("RESTORE TABLE res TO VERSION AS OF 2")
    assert catalog.sql("SELECT count(*) FROM res VERSION AS OF 3").collect()[0][0] == 1
    catalog.sql("DROP TABLE res")


@spark_test
def test_add_and_widen_columns_with_time_travel(catalog: Catalog, warehouse: Path) -> None:
    _create(catalog, "evo", "(time BIGINT, city STRING, temp FLOAT, n INT)")
    catalog.sql("INSERT INTO evo VALUES (1, 'bj', 1.1, 7)")  # version 1
    assert tuple(catalog.sql("ALTER TABLE evo ADD COLUMNS (rain DOUBLE)").collect()[0]) == (2,)
    catalog.sql("ALTER TABLE evo ALTER COLUMN temp TYPE DOUBLE")  # version 3
    catalog.sql("ALTER TABLE evo ALTER COLUMN n TYPE BIGINT")  # version 4
    catalog.sql("INSERT INTO evo VALUES (2, 'sh', 2.5, 8, 0.5)")  # version 5
    latest = catalog.sql("SELECT * FROM evo ORDER BY time")
    assert latest.schema.simpleString() == (
        "struct<time:bigint,city:string,temp:double,n:bigint,rain:double>"
    )
    old = catalog.sql("SELECT * FROM evo VERSION AS OF 1")
    assert old.schema.simpleString() == "struct<time:bigint,city:string,temp:float,n:int>"
    # The old part reads as Spark widens its values, with the new column null.
    expected = catalog.sql(
        "SELECT time, city, CAST(temp AS DOUBLE) AS temp, CAST(n AS BIGINT) AS n, "
        "CAST(NULL AS DOUBLE) AS rain FROM evo VERSION AS OF 1 "
        "UNION ALL SELECT 2L, 'sh', 2.5D, 8L, 0.5D"
    )
    assertDataFrameEqual(latest, expected)
    with pytest.raises(SchemaError, match="cannot drop TAG column 'city'"):
        catalog.sql("ALTER TABLE evo DROP COLUMN city")
    with pytest.raises(SchemaError, match="TAG column 'city'"):
        catalog.sql("ALTER TABLE evo ALTER COLUMN city TYPE STRING")
    with pytest.raises(SchemaError, match="'temp' .*DOUBLE to FLOAT"):
        catalog.sql("ALTER TABLE evo ALTER COLUMN temp TYPE FLOAT")
    assert open_table(str(warehouse / "evo")).version == 5, "refusals commit nothing"
    catalog.sql("DROP TABLE evo")


@spark_test
def test_rename_moves_the_catalog_entry_and_its_view(spark: SparkSession, warehouse: Path) -> None:
    catalog = Catalog(spark, str(warehouse))  # with the per-table views
    _create(catalog, "before_name")
    catalog.sql("INSERT INTO before_name VALUES (1, 'bj', 1.0)")
    assert spark.catalog.tableExists("before_name")
    row = catalog.sql("ALTER TABLE before_name RENAME TO after_name").collect()[0]
    assert tuple(row) == ("after_name", str(warehouse / "before_name"))
    assert "after_name" in catalog.tables() and "before_name" not in catalog.tables()
    assert not spark.catalog.tableExists("before_name")
    assert spark.sql("SELECT count(*) FROM after_name").collect()[0][0] == 1
    assert catalog.sql("SELECT temp FROM after_name").collect()[0].temp == 1.0
    with pytest.raises(TableNotFoundError, match="'before_name' is not in the catalog"):
        catalog.sql("DESCRIBE HISTORY before_name")
    catalog.sql("DROP TABLE after_name")


@spark_test
@pytest.mark.parametrize(
    ("name", "columns", "options", "row"),
    [
        ("rt_long", "time BIGINT, city STRING, temp DOUBLE", "", "1, 'bj', 1.5"),
        (
            "rt_ts",
            "time TIMESTAMP, city STRING, temp DOUBLE",
            "",
            "TIMESTAMP'2024-01-01', 'bj', 1.5",
        ),
        (
            "rt_field",
            "time BIGINT, city STRING, seen TIMESTAMP",
            ", timestampAs 'long'",
            "1, 'bj', 2",
        ),
    ],
)
def test_show_create_table_round_trips_exactly(
    catalog: Catalog, name: str, columns: str, options: str, row: str
) -> None:
    """Running SHOW CREATE TABLE's output after DROP TABLE gives back the same table: the
    same statement, options, properties and details (it added ``timestampAs`` before)."""
    catalog.sql(
        f"CREATE TABLE {name} ({columns}) USING tsfile OPTIONS (tagColumns 'city'{options}) "
        "TBLPROPERTIES ('owner' = 'ops')"
    )
    catalog.sql(f"INSERT INTO {name} VALUES ({row})")

    def state() -> tuple[str, dict[str, object], dict[str, str]]:
        shown = catalog.sql(f"SHOW CREATE TABLE {name}").collect()[0].createtab_stmt
        detail = catalog.sql(f"DESCRIBE DETAIL {name}").collect()[0].asDict(recursive=True)
        return shown, detail, dict(open_table(str(detail["location"])).properties)

    before = state()
    try:
        catalog.sql(f"DROP TABLE {name}")  # the files stay
        catalog.sql(before[0])
        assert state() == before
    finally:
        catalog.sql(f"DROP TABLE IF EXISTS {name}")


@spark_test
def test_show_create_table_recreates_the_table(
    spark: SparkSession, catalog: Catalog, warehouse: Path, tmp_path: Path
) -> None:
    catalog.sql(
        "CREATE TABLE shown (time TIMESTAMP, city STRING, dev STRING, temp DOUBLE, ok BOOLEAN) "
        "USING tsfile OPTIONS (tagColumns 'dev,city', compression 'snappy') "
        "TBLPROPERTIES ('owner' = 'ops')"
    )
    text = catalog.sql("SHOW CREATE TABLE shown").collect()[0].createtab_stmt
    original = open_table(str(warehouse / "shown"))
    describe = sorted(tuple(r) for r in catalog.sql("DESCRIBE shown").collect())
    # In a fresh catalog it registers the table where it is ...
    fresh = Catalog(spark, str(tmp_path / "other"), register_views=False)
    fresh.sql(text)
    assert sorted(tuple(r) for r in fresh.sql("DESCRIBE shown").collect()) == describe
    assert open_table(str(warehouse / "shown")).version == original.version
    # ... and elsewhere it creates an equal, empty table.
    statement = parse_statement(text)
    assert isinstance(statement, CreateTable)
    elsewhere = dataclasses.replace(
        statement, table=TableName("copied"), location=str(tmp_path / "copy")
    )
    fresh.sql(elsewhere.to_sql())
    copy = open_table(str(tmp_path / "copy"))
    assert copy.schema.columns == original.schema.columns
    assert copy.properties == original.properties
    assert sorted(tuple(r) for r in fresh.sql("DESCRIBE copied").collect()) == describe
    catalog.sql("DROP TABLE shown")
