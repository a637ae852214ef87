"""SQL's deleting statements touch only what a table owns, and CREATE refuses locations that
would give files two owners: real tables, real Spark, a temporary warehouse."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tests.datasource.helpers import age
from tsfile_catalog import Catalog
from tsfile_catalog.exceptions import LocationError, SqlError, TableExistsError
from tsfile_catalog.metadata.ownership import new_part_name

pytestmark = pytest.mark.spark

COLUMNS = "(time BIGINT, city STRING, temp DOUBLE) USING tsfile OPTIONS (tagColumns 'city')"


def _write_table(spark: SparkSession, path: Path) -> None:
    """What ``df.write`` into a folder does: there is no catalog name involved."""
    spark.createDataFrame([(1, "x", 9.0)], "time bigint, city string, temp double").coalesce(
        1
    ).write.format("tsfile").options(table="inner", tagColumns="city").mode("append").save(
        str(path)
    )


def _tsfiles(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.suffix == ".tsfile")


def _sum(catalog: Catalog, table: str) -> float:
    return float(catalog.sql(f"SELECT sum(temp) FROM {table}").collect()[0][0])


def test_vacuum_spares_nested_tables_and_user_files(
    catalog: Catalog, spark: SparkSession, warehouse: Path
) -> None:
    catalog.sql(f"CREATE TABLE host {COLUMNS}")
    catalog.sql("INSERT INTO host VALUES (1, 'bj', 1.0), (2, 'sh', 2.0)")
    root = warehouse / "host"
    _write_table(spark, root / "inner")  # a table someone wrote below this one
    part = _tsfiles(root)[0]
    archive = root / ".archive" / "2019.tsfile"  # a user's own TsFile, hidden from reads
    archive.parent.mkdir()
    shutil.copy(root / part, archive)
    dead = root / new_part_name(0)  # what a write that died before its commit leaves
    shutil.copy(root / part, dead)
    age(root)

    rows = catalog.sql("VACUUM host").collect()

    assert [(r.path, r.deleted) for r in rows] == [(str(dead), True)]
    assert archive.exists() and not dead.exists()
    assert spark.read.format("tsfile").load(str(root / "inner")).count() == 1
    assert _sum(catalog, "host") == 3.0
    catalog.sql("DROP TABLE host PURGE")


def test_purge_keeps_user_files_and_nested_tables(
    catalog: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    folder = tmp_path / "projects"
    catalog.sql(f"CREATE TABLE p {COLUMNS} LOCATION '{folder}'")
    catalog.sql("INSERT INTO p VALUES (1, 'bj', 1.0)")
    catalog.sql("INSERT OVERWRITE TABLE p SELECT time + 1, city, temp FROM p")
    assert len(_tsfiles(folder)) == 2  # the overwritten part stays for time travel
    (folder / "notes.txt").write_text("mine")
    (folder / "photos").mkdir()
    (folder / "photos" / "cat.jpg").write_bytes(b"\xff\xd8")
    _write_table(spark, folder / "inner")

    assert catalog.sql("DROP TABLE p PURGE").collect()[0].purged

    assert "p" not in catalog.tables()
    assert _tsfiles(folder) == [] and not (folder / "_tsfile_manifest").exists()
    assert (folder / "notes.txt").read_text() == "mine"
    assert (folder / "photos" / "cat.jpg").exists()
    assert spark.read.format("tsfile").load(str(folder / "inner")).count() == 1


def test_one_location_has_one_name(catalog: Catalog, warehouse: Path, tmp_path: Path) -> None:
    location = tmp_path / "shared"
    catalog.sql(f"CREATE TABLE a1 {COLUMNS} LOCATION '{location}'")
    catalog.sql("INSERT INTO a1 VALUES (1, 'bj', 1.5)")
    with pytest.raises(TableExistsError, match="already registered as a1"):
        catalog.sql(f"CREATE TABLE a2 USING tsfile LOCATION '{location}'")
    assert "a2" not in catalog.tables()

    # A second name registered before the rule existed: its purge would take a1's data.
    entries = warehouse / "_catalog" / "tables" / "default"
    entry = json.loads((entries / "a1.json").read_text())
    (entries / "a2.json").write_text(json.dumps({**entry, "name": "a2"}))
    with pytest.raises(SqlError, match="also registered as a1"):
        catalog.sql("DROP TABLE a2 PURGE")
    assert "a2" in catalog.tables() and _sum(catalog, "a1") == 1.5
    catalog.sql("DROP TABLE a2")
    catalog.sql("DROP TABLE a1 PURGE")
    assert not location.exists()


def test_create_refuses_locations_with_another_owner(
    catalog: Catalog, spark: SparkSession, warehouse: Path, tmp_path: Path
) -> None:
    registry = warehouse / "_catalog"
    catalog.sql(f"CREATE TABLE keeper {COLUMNS}")
    before = sorted(registry.rglob("*"))
    for location, message in [
        (registry / "x", "inside the catalog's registry"),
        (registry / "tables" / "default", "inside the catalog's registry"),
        (warehouse, "holds the warehouse"),
        (warehouse.parent, "holds the warehouse"),
        (warehouse / "keeper" / "sub", f"inside the table at {warehouse / 'keeper'}"),
    ]:
        with pytest.raises(LocationError, match=message):
            catalog.sql(f"CREATE TABLE x {COLUMNS} LOCATION '{location}'")
    with pytest.raises(SqlError, match="'_catalog' is reserved"):
        catalog.sql(f"CREATE TABLE _catalog {COLUMNS}")
    with pytest.raises(SqlError, match="reserved"):
        catalog.sql(f"CREATE TABLE _tsfile_manifest {COLUMNS}")
    assert sorted(registry.rglob("*")) == before, "the registry is untouched"

    # A folder with files in it is adopted explicitly, never taken over by a new table.
    user = tmp_path / "user"
    user.mkdir()
    (user / "notes.txt").write_text("mine")
    with pytest.raises(LocationError, match=r"not empty \(it holds notes.txt\)"):
        catalog.sql(f"CREATE TABLE x {COLUMNS} LOCATION '{user}'")
    with pytest.raises(LocationError, match="not empty"):
        catalog.sql(
            f"CREATE TABLE x USING tsfile OPTIONS (tagColumns 'city') LOCATION '{user}' "
            "AS SELECT 1 AS time, 'bj' AS city"
        )
    assert [p.name for p in user.iterdir()] == ["notes.txt"]
    assert catalog.tables() == ["keeper"]
    catalog.sql("DROP TABLE keeper PURGE")


def test_create_table_location_refuses_a_folder_holding_a_table(
    spark: SparkSession, catalog: Catalog, tmp_path: Path
) -> None:
    # Adopting the parent would take the inner table's parts, the removed ones too.
    parent = tmp_path / "parent"
    inner = parent / "a" / "inner"
    _write_table(spark, inner)
    before = sorted(parent.rglob("*"))
    with pytest.raises(LocationError, match=f"{parent} holds the table at {inner} "):
        catalog.sql(f"CREATE TABLE adopter USING tsfile LOCATION '{parent}'")
    assert sorted(parent.rglob("*")) == before
    assert "adopter" not in catalog.tables()
