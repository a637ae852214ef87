"""SQL writes store exactly what was inserted, and CREATE TABLE stores only valid options."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tsfile_catalog import Catalog, open_table
from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.sql.table_options import check_table_options

spark_test = pytest.mark.spark
COLUMNS = "(time BIGINT, d STRING, v DOUBLE)"


@spark_test
def test_insert_values_with_a_repeated_device_and_time(catalog: Catalog, warehouse: Path) -> None:
    # Each row lands in its own Spark task: the commit must see both parts.
    catalog.sql(f"CREATE TABLE dup_error {COLUMNS} USING tsfile OPTIONS (tagColumns 'd')")
    with pytest.raises(Exception, match=r"duplicate rows for device \(d='a'\) at time 8"):
        catalog.sql("INSERT INTO dup_error VALUES (8, 'a', 1.0), (8, 'a', 2.0)")
    table = open_table(str(warehouse / "dup_error"))
    assert table.version == 0 and table.parts() == []
    assert not list((warehouse / "dup_error").rglob("*.tsfile"))  # staged files gone

    catalog.sql(
        f"CREATE TABLE dup_last {COLUMNS} USING tsfile OPTIONS (tagColumns 'd', onDuplicate 'last')"
    )
    inserted = catalog.sql(
        "INSERT INTO dup_last VALUES (8, 'a', 1.0), (9, 'a', 5.0), (8, 'a', 2.0), (8, 'b', 3.0)"
    ).collect()[0]
    assert inserted.num_inserted_rows == 3
    rows = sorted(tuple(r) for r in catalog.sql("SELECT * FROM dup_last").collect())
    assert rows == [(8, "a", 2.0), (8, "b", 3.0), (9, "a", 5.0)]
    assert catalog.sql("SELECT count(*) AS n FROM dup_last").collect()[0].n == 3


@spark_test
def test_table_without_field_columns_stores_its_rows(catalog: Catalog) -> None:
    catalog.sql(
        "CREATE TABLE seen (time BIGINT, city STRING, device STRING) USING tsfile "
        "OPTIONS (tagColumns 'city,device')"
    )
    inserted = catalog.sql(
        "INSERT INTO seen VALUES (1, 'bj', 'd1'), (2, 'bj', 'd1'), (1, 'sh', 'd2')"
    ).collect()[0]
    assert inserted.num_inserted_rows == 3
    rows = sorted(tuple(r) for r in catalog.sql("SELECT * FROM seen").collect())
    assert rows == [(1, "bj", "d1"), (1, "sh", "d2"), (2, "bj", "d1")]
    # count(*) is answered from part statistics, a filtered one from a pushed scan.
    assert catalog.sql("SELECT count(*) AS n FROM seen").collect()[0].n == 3
    assert catalog.sql("SELECT time FROM seen WHERE city = 'sh'").collect()[0].time == 1


@spark_test
def test_tag_value_with_nul_is_refused(catalog: Catalog) -> None:
    catalog.sql(f"CREATE TABLE nul {COLUMNS} USING tsfile OPTIONS (tagColumns 'd')")
    with pytest.raises(Exception, match="TAG column 'd' has a value containing a NUL"):
        catalog.sql("INSERT INTO nul VALUES (1, 'a\\0b', 1.0), (2, 'a', 2.0)")
    assert catalog.sql("SELECT count(*) AS n FROM nul").collect()[0].n == 0


@spark_test
@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("rowsPerPartition '0'", "option 'rowsPerPartition' = 0 must be at least 1"),
        ("compression 'BOGUS'", "option 'compression' = 'BOGUS' is not supported"),
        ("onDuplicate 'sometimes'", "option 'onDuplicate' = 'sometimes' is not valid"),
        ("encoding 'TS_2DIFF'", "'encoding' = 'TS_2DIFF' cannot be used for column 'v'"),
        ("encoding 'FANCY'", "option 'encoding' = 'FANCY' is not a TsFile encoding"),
        ("maxRowsPerFile 'many'", "option 'maxRowsPerFile' = 'many' is not an integer"),
        ("useMetadataCache 'perhaps'", "option 'useMetadataCache' = 'perhaps' is not a boolean"),
    ],
)
def test_invalid_create_options_leave_nothing_behind(
    catalog: Catalog, warehouse: Path, option: str, message: str
) -> None:
    with pytest.raises(OptionError, match=message):
        catalog.sql(f"CREATE TABLE bad {COLUMNS} USING tsfile OPTIONS (tagColumns 'd', {option})")
    assert "bad" not in catalog.tables()
    assert not (warehouse / "bad").exists()  # no version 0 either


@spark_test
def test_a_refused_table_property_leaves_nothing_behind(
    catalog: Catalog, spark: SparkSession, warehouse: Path, tmp_path: Path
) -> None:
    # The properties commit after the rows (AS SELECT) or the adoption: checked before either,
    # so a refused one leaves no table at the location and no name.
    bad = "TBLPROPERTIES ('watermark.interval' = '-1 hour')"
    with pytest.raises(OptionError, match="'watermark.interval' = '-1 hour'"):
        catalog.sql(
            f"CREATE TABLE bad_ctas USING tsfile OPTIONS (tagColumns 'd') {bad} "
            "AS SELECT 1L AS time, 'a' AS d, 1.0D AS v"
        )
    assert "bad_ctas" not in catalog.tables()
    assert not (warehouse / "bad_ctas").exists()
    location = tmp_path / "plain_props"
    spark.createDataFrame([(1, "a", 1.0)], "time bigint, d string, v double").write.format(
        "tsfile"
    ).options(table="plain_props", tagColumns="d").mode("append").save(str(location))
    shutil.rmtree(location / "_tsfile_manifest")  # a plain folder of TsFiles
    with pytest.raises(OptionError, match="'watermark.interval' = '-1 hour'"):
        catalog.sql(f"CREATE TABLE plain_props USING tsfile LOCATION '{location}' {bad}")
    assert "plain_props" not in catalog.tables()
    assert not (location / "_tsfile_manifest").exists()


@spark_test
def test_invalid_options_are_refused_before_adopting(
    catalog: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    # The encoding check needs the adopted files' schema; it must run before version 0.
    location = tmp_path / "plain"
    spark.createDataFrame([(1, "a", 1.0)], "time bigint, d string, v double").write.format(
        "tsfile"
    ).options(table="plain", tagColumns="d").mode("append").save(str(location))
    shutil.rmtree(location / "_tsfile_manifest")  # a plain folder of TsFiles
    with pytest.raises(OptionError, match="cannot be used for column 'v'"):
        catalog.sql(
            f"CREATE TABLE plain USING tsfile OPTIONS (encoding 'TS_2DIFF') LOCATION '{location}'"
        )
    assert "plain" not in catalog.tables()
    assert not (location / "_tsfile_manifest").exists()


def test_table_option_values_are_checked_without_spark() -> None:
    assert check_table_options({"rowsPerPartition": "10", "onDuplicate": "LAST"}) == {
        "rowsPerPartition": "10",
        "onDuplicate": "LAST",
    }
    with pytest.raises(OptionError, match="'mergeSchema' = 'maybe' is not a boolean"):
        check_table_options({"mergeSchema": "maybe"})


@spark_test
def test_writes_through_the_views_plain_spark_sql_sees(spark: SparkSession, tmp_path: Path) -> None:
    # Catalog registers a temporary view per table: Spark hands a write into it the view's
    # scan options (partitions, rowsPerPartition, ...), which are no write options.
    catalog = Catalog(spark, str(tmp_path / "warehouse"))
    catalog.sql(
        f"CREATE TABLE viewed {COLUMNS} USING tsfile "
        "OPTIONS (tagColumns 'd', onDuplicate 'last', rowsPerPartition '1000')"
    )
    location = str(tmp_path / "warehouse" / "viewed")
    schema = "time bigint, d string, v double"

    # The stored onDuplicate 'last' applies, as in Catalog's own INSERT: one row at (a, 1).
    spark.sql("INSERT INTO viewed VALUES (1, 'a', 1.0), (1, 'a', 1.5), (2, 'b', 2.0)")
    assert open_table(location).version == 1, "one commit"
    spark.createDataFrame([(3, "a", 3.0)], schema).write.insertInto("viewed")
    spark.createDataFrame([(4, "c", 4.0)], schema).writeTo("viewed").append()

    table = open_table(location)
    assert table.version == 3 and [h.operation for h in table.history()][:3] == ["WRITE"] * 3
    assert sorted(tuple(r) for r in catalog.sql("SELECT * FROM viewed").collect()) == [
        (1, "a", 1.5),
        (2, "b", 2.0),
        (3, "a", 3.0),
        (4, "c", 4.0),
    ]
    # The view itself reads the version it was registered at, until refreshed.
    assert spark.sql("SELECT count(*) FROM viewed").collect()[0][0] == 0
    catalog.refresh_views()
    assert spark.sql("SELECT count(*) FROM viewed").collect()[0][0] == 4
    # The same checks as every write: a row without its TAG is refused, nothing committed.
    with pytest.raises(Exception, match=r"must not be null \(nullTagPolicy=error\)"):
        spark.sql("INSERT INTO viewed VALUES (5, NULL, 5.0)")
    assert open_table(location).version == 3


def test_insert_table_copies_every_row_of_the_other_table(catalog: Catalog) -> None:
    """Spark's ``INSERT INTO t TABLE u`` (it was refused with "does not support SOURCE")."""
    for name in ("copy_from", "copy_to"):
        catalog.sql(f"CREATE TABLE {name} {COLUMNS} USING tsfile OPTIONS (tagColumns 'd')")
    try:
        catalog.sql("INSERT INTO copy_from VALUES (1, 'a', 1.5), (2, 'b', 2.5)")
        catalog.sql("INSERT INTO copy_to TABLE copy_from")
        rows = sorted(tuple(r) for r in catalog.sql("SELECT * FROM copy_to").collect())
        assert rows == [(1, "a", 1.5), (2, "b", 2.5)]
    finally:
        for name in ("copy_from", "copy_to"):
            catalog.sql(f"DROP TABLE {name}")
