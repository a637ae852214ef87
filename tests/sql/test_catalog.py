"""The SQL Catalog end to end: real tables in a temporary warehouse, real Spark.

The metadata-count rules and the registry are also tested without Spark.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.testing import assertDataFrameEqual

from tests.datasource.helpers import write_rows
from tests.factories import part_file, table_schema, weather_schema
from tsfile_catalog import Catalog
from tsfile_catalog.exceptions import (
    OptionError,
    SqlError,
    TableExistsError,
    TableNotFoundError,
    TsFileCatalogError,
    VersionNotFoundError,
)
from tsfile_catalog.metadata.ownership import new_part_name
from tsfile_catalog.metadata.parts import DeviceStats, PartFile
from tsfile_catalog.metadata.scan import plan_scan
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.metadata.stats_aggregates import metadata_count
from tsfile_catalog.sql import TableName
from tsfile_catalog.sql.registry import Registry
from tsfile_catalog.sql.table_options import check_table_options

spark_test = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]

# weather after the fixture: version 0 = CREATE, 1 = first insert (4 rows), 2 = second (3 rows)
FIRST = [
    (1, "bj", "d1", 1.0),
    (2, "bj", "d1", 2.0),
    (3, "sh", "d2", 3.0),
    (4, "sh", "d2", 4.0),
]
SECOND = [
    (10, "bj", "d1", 5.0),
    (11, "gz", "d3", 6.0),
    (12, "gz", "d3", 7.0),
]


def _values(rows: list[tuple[int, str, str, float]]) -> str:
    return ", ".join(f"({t}, '{c}', '{d}', {v})" for t, c, d, v in rows)


def _rows(df: DataFrame) -> list[tuple[object, ...]]:
    return sorted(tuple(row) for row in df.collect())


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("warehouse")


@pytest.fixture(scope="module")
def catalog(spark: SparkSession, warehouse: Path) -> Iterator[Catalog]:
    catalog = Catalog(spark, str(warehouse))
    catalog.sql(
        "CREATE TABLE weather (time BIGINT, city STRING, device STRING, temp DOUBLE) "
        "USING tsfile OPTIONS (tagColumns 'city,device') TBLPROPERTIES ('owner' = 'ops')"
    )
    catalog.sql(f"INSERT INTO weather VALUES {_values(FIRST)}")
    catalog.sql(f"INSERT INTO weather VALUES {_values(SECOND)}")
    yield catalog


# -- pure: metadata count and registry ----------------------------------------------------------

_SCHEMA = table_schema("t", fields=[("v", DataType.DOUBLE)])


def _part(path: str, devices: list[tuple[str, int, int, int]] | None, rows: int = 0) -> PartFile:
    if devices is None:
        return part_file(path, size_bytes=100, row_count=rows, max_time=100)
    stats = tuple(DeviceStats((c,), n, lo, hi) for c, n, lo, hi in devices)
    return part_file(
        path,
        size_bytes=100,
        row_count=sum(d.row_count for d in stats),
        min_time=min(d.min_time for d in stats),
        max_time=max(d.max_time for d in stats),
        devices=stats,
    )


PARTS = [
    _part("a", [("bj", 10, 0, 9), ("sh", 5, 0, 4)]),
    _part("b", [("bj", 10, 10, 19)]),
    _part("c", None, rows=7),
]


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        (None, 32),
        ("city = 'bj'", None),  # part c has no device stats
        ("time >= 0 AND time <= 100", 32),
        ("time > 100", 0),
        ("city = 'zz' AND time < 5", None),
        ("v > 1", None),  # residual: rows must be read
    ],
)
def test_metadata_count_rules(where: str | None, expected: int | None) -> None:
    assert metadata_count(plan_scan(_SCHEMA, PARTS, where, key="keep")) == expected


def test_metadata_count_per_device() -> None:
    parts = PARTS[:2]
    assert metadata_count(plan_scan(_SCHEMA, parts, "city = 'bj'", key="keep")) == 20
    assert metadata_count(plan_scan(_SCHEMA, parts, "city IN ('sh', 'xx')", key="keep")) == 5
    assert metadata_count(plan_scan(_SCHEMA, parts, "time >= 10", key="keep")) == 10
    # a device straddling the range cannot be counted from stats
    assert metadata_count(plan_scan(_SCHEMA, parts, "time >= 5", key="keep")) is None


def test_registry_round_trip_and_exclusive_create(tmp_path: Path) -> None:
    registry = Registry(str(tmp_path))
    registry.create(TableName("t"), "/data/t", {"tagColumns": "a,b", "q": "it's; `x`"})
    registry.create(TableName("u", "db"), "/data/u", {})
    with pytest.raises(TableExistsError):
        registry.create(TableName("t"), "/elsewhere", {})
    entry = Registry(str(tmp_path)).require(TableName("t"))
    assert (entry.location, dict(entry.options)) == (
        "/data/t",
        {"tagColumns": "a,b", "q": "it's; `x`"},
    )
    assert [e.display_name for e in registry.entries()] == ["db.u", "t"]
    assert registry.default_location(TableName("u", "db")).endswith("/db.db/u")
    (tmp_path / "_catalog" / "tables" / "default" / "not a table.json").write_text("{}")
    assert [e.display_name for e in registry.entries("default")] == ["t"]
    registry.drop(TableName("t"))
    with pytest.raises(TableNotFoundError, match="'t'"):
        registry.require(TableName("t"))


def test_table_options_are_checked() -> None:
    assert check_table_options({"TAGCOLUMNS": "a", "fs.anon": "true"}) == {
        "tagColumns": "a",
        "fs.anon": "true",
    }
    with pytest.raises(OptionError, match="unknown table option 'tagColumn'"):
        check_table_options({"tagColumn": "a"})
    with pytest.raises(OptionError, match="'where' cannot be stored"):
        check_table_options({"where": "1 = 1"})
    with pytest.raises(OptionError, match="timestampAs"):
        check_table_options({"timestampAs": "seconds"})


# -- queries ------------------------------------------------------------------------------------


@spark_test
def test_select_filters_and_projects(catalog: Catalog) -> None:
    assert _rows(catalog.sql("SELECT * FROM weather")) == sorted(FIRST + SECOND)
    got = catalog.sql("SELECT time, temp FROM weather WHERE city = 'bj' AND time < 10")
    assert got.columns == ["time", "temp"]
    assert _rows(got) == [(1, 1.0), (2, 2.0)]


@spark_test
def test_filtered_then_unfiltered_select_on_the_same_table(catalog: Catalog) -> None:
    # Spark keeps a Python reader's pushed state per relation: each query must scan afresh.
    assert _rows(catalog.sql("SELECT time FROM weather WHERE city = 'sh'")) == [(3,), (4,)]
    assert catalog.sql("SELECT * FROM weather").count() == 7
    assert _rows(catalog.sql("SELECT time FROM weather WHERE temp > 5")) == [(11,), (12,)]
    assert len(catalog.sql("SELECT * FROM weather").collect()) == 7
    # the returned DataFrame outlives the per-query views
    df = catalog.sql("SELECT city, count(*) AS n FROM weather GROUP BY city")
    catalog.sql("SELECT * FROM weather WHERE city = 'gz'").collect()
    assert _rows(df) == [("bj", 3), ("gz", 2), ("sh", 2)]
    assert not [t for t in catalog.spark.catalog.listTables() if t.name.startswith("__tsfc_")]


@spark_test
def test_join_cte_alias_and_star(catalog: Catalog) -> None:
    got = catalog.sql(
        "WITH bj AS (SELECT * FROM weather WHERE city = 'bj') "
        "SELECT bj.*, w.temp AS prev FROM bj JOIN weather AS w "
        "ON w.device = bj.device AND w.time < bj.time WHERE w.time >= 1"
    )
    assert got.columns == ["time", "city", "device", "temp", "prev"]
    assert _rows(got) == [
        (2, "bj", "d1", 2.0, 1.0),
        (10, "bj", "d1", 5.0, 1.0),
        (10, "bj", "d1", 5.0, 2.0),
    ]
    union = catalog.sql(
        "SELECT time FROM weather WHERE city = 'gz' UNION ALL "
        "SELECT time FROM (SELECT * FROM weather) AS x WHERE x.time < 2"
    )
    assert _rows(union) == [(1,), (11,), (12,)]


@spark_test
def test_time_travel(catalog: Catalog) -> None:
    assert _rows(catalog.sql("SELECT * FROM weather VERSION AS OF 1")) == sorted(FIRST)
    assert catalog.sql("SELECT * FROM weather VERSION AS OF 0").count() == 0
    assert catalog.sql("SELECT count(*) FROM weather VERSION AS OF 1").collect()[0][0] == 4
    old = catalog.sql(
        "SELECT n.time FROM weather AS n LEFT JOIN weather VERSION AS OF 1 AS o "
        "ON n.time = o.time WHERE o.time IS NULL"
    )
    assert _rows(old) == [(10,), (11,), (12,)]
    assert catalog.table("weather", version=1).count() == 4
    future = "2999-01-01 00:00:00"
    assert catalog.sql(f"SELECT * FROM weather TIMESTAMP AS OF '{future}'").count() == 7
    with pytest.raises(VersionNotFoundError):
        catalog.sql("SELECT * FROM weather VERSION AS OF 99")


@spark_test
def test_timestamp_as_of_reads_history_times_in_the_session_time_zone(
    catalog: Catalog, spark: SparkSession
) -> None:
    zone_key = "spark.sql.session.timeZone"
    previous = spark.conf.get(zone_key)
    spark.conf.set(zone_key, "Asia/Shanghai")
    try:
        history = catalog.sql("DESCRIBE HISTORY weather").selectExpr(
            "version", "CAST(timestamp AS STRING) AS shown", "unix_millis(timestamp) AS ms"
        )
        first = next(row for row in history.collect() if row.version == 1)
        # The time exactly as DESCRIBE HISTORY prints it (session zone, no offset).
        shown = first.shown
        assert _rows(catalog.sql(f"SELECT * FROM weather TIMESTAMP AS OF '{shown}'")) == sorted(
            FIRST
        )
        parts = catalog.sql(f"SHOW PARTS weather TIMESTAMP AS OF '{shown}'").collect()
        assert sum(p.rows for p in parts) == len(FIRST)
        assert catalog.table("weather", timestamp=shown).count() == len(FIRST)
        # An explicit offset means what it says, whatever the session zone.
        utc = dt.datetime.fromtimestamp(first.ms / 1000, tz=dt.timezone.utc).isoformat()
        assert catalog.sql(f"SELECT * FROM weather TIMESTAMP AS OF '{utc}'").count() == len(FIRST)
    finally:
        spark.conf.set(zone_key, previous)


@spark_test
@pytest.mark.parametrize(
    ("where", "from_metadata"),
    [
        ("", True),
        ("WHERE city = 'bj'", True),
        ("WHERE time >= 2 AND time <= 10", True),
        ("WHERE city IN ('sh', 'gz') AND time > 3", True),
        ("WHERE (city = 'sh' OR city = 'gz') AND time > 3", True),
        ("WHERE city = 'nowhere'", True),
        ("WHERE temp > 2.5", False),  # not from stats: a scan
        # devices straddle the range: statistics plus their rows, read in the driver
        ("WHERE time BETWEEN 3 AND 11", True),
    ],
)
def test_metadata_count_matches_a_scan(catalog: Catalog, where: str, from_metadata: bool) -> None:
    counted = catalog.sql(f"SELECT count(*) AS n FROM weather {where}")
    assert counted.columns == ["n"]
    # SELECT * is no aggregate: Spark scans and counts the rows itself.
    assert counted.collect()[0][0] == catalog.sql(f"SELECT * FROM weather {where}").count()
    # An answer from the manifest is a local relation: collecting it runs no Spark job.
    plan = counted._jdf.queryExecution().executedPlan().toString()
    assert plan.startswith("LocalTableScan") is from_metadata


@spark_test
def test_explain_parts(catalog: Catalog) -> None:
    rows = catalog.sql("EXPLAIN PARTS SELECT temp FROM weather WHERE time >= 10").collect()
    assert {r.status for r in rows} == {"opened", "pruned"}
    opened = [r for r in rows if r.status == "opened"]
    assert sum(r.rows for r in opened) == 3
    assert all(r.min_time >= 10 for r in opened)
    assert {r.columns for r in rows} == {"time,temp"}
    assert {r.pushed_where for r in rows} == {"time >= 10"}


@spark_test
def test_explain_parts_prunes_by_an_or(catalog: Catalog) -> None:
    rows = catalog.sql(
        "EXPLAIN PARTS SELECT temp FROM weather WHERE time >= 10 OR NOT time > 0"
    ).collect()
    assert {r.pushed_where for r in rows} == {"(time >= 10 OR NOT time > 0)"}
    opened = [r for r in rows if r.status == "opened"]
    assert opened and any(r.status == "pruned" for r in rows)
    assert all(r.min_time <= 0 or r.max_time >= 10 for r in opened)
    count = catalog.sql("SELECT count(*) FROM weather WHERE time >= 10 OR NOT time > 0")
    assert (
        count.collect()[0][0]
        == catalog.sql("SELECT time FROM weather").where("time >= 10 OR time <= 0").count()
    )


# -- metadata statements ------------------------------------------------------------------------


@spark_test
def test_describe(catalog: Catalog) -> None:
    rows = [tuple(r) for r in catalog.sql("DESCRIBE weather").collect()]
    assert rows == [
        ("time", "bigint", "TIME"),
        ("city", "string", "TAG"),
        ("device", "string", "TAG"),
        ("temp", "double", "FIELD"),
    ]
    extended = {r.col_name: r.data_type for r in catalog.sql("DESCRIBE EXTENDED weather").collect()}
    assert extended["Current version"] == "2"
    assert extended["Rows"] == "7"
    assert extended["Parts"] == str(len(catalog.sql("SHOW PARTS weather").collect()))
    assert extended["Min time"] == "1" and extended["Max time"] == "12"
    assert "owner=ops" in extended["Table properties"]


@spark_test
def test_history_detail_parts_and_show_tables(catalog: Catalog, warehouse: Path) -> None:
    history = catalog.sql("DESCRIBE HISTORY weather").collect()
    assert [(h.version, h.operation, h.rows_added) for h in history] == [
        (2, "WRITE", 3),
        (1, "WRITE", 4),
        (0, "CREATE", 0),
    ]
    detail = catalog.sql("DESCRIBE DETAIL weather").collect()[0]
    assert detail.location == str(warehouse / "weather")
    assert (detail.format, detail.version, detail.num_rows, detail.num_devices) == (
        "tsfile",
        2,
        7,
        3,
    )
    assert (detail.min_time, detail.max_time) == (1, 12)
    assert detail.tag_columns == ["city", "device"]
    # The table records its time: ms, read as raw BIGINTs (time BIGINT).
    assert detail.properties == {
        "owner": "ops",
        "key.duplicates": "last",
        "time.unit": "ms",
        "time.type": "BIGINT",
    }
    parts = catalog.sql("SHOW PARTS weather VERSION AS OF 1").collect()
    assert sum(p.rows for p in parts) == 4
    assert {p.added_version for p in parts} == {1}
    assert "weather" in [r.tableName for r in catalog.sql("SHOW TABLES").collect()]
    assert "weather" in catalog.tables()


@spark_test
def test_unknown_tables_are_named(catalog: Catalog) -> None:
    for sql in (
        "DESCRIBE nope",
        "DESCRIBE HISTORY nope",
        "SHOW PARTS nope",
        "INSERT INTO nope VALUES (1, 'a', 'b', 1.0)",
        "DROP TABLE nope",
        "VACUUM nope",
    ):
        with pytest.raises(TableNotFoundError, match="'nope'"):
            catalog.sql(sql)
    catalog.sql("DROP TABLE IF EXISTS nope")
    with pytest.raises(TableNotFoundError):
        catalog.table("nope")


# -- changing tables ----------------------------------------------------------------------------


@spark_test
def test_create_insert_overwrite_alter_drop(catalog: Catalog, warehouse: Path) -> None:
    catalog.sql(
        "CREATE TABLE IF NOT EXISTS m (time TIMESTAMP, v INT, dev STRING, at TIMESTAMP) "
        "USING tsfile OPTIONS (tagColumns 'dev', compression 'snappy')"
    )
    catalog.sql(
        "CREATE TABLE IF NOT EXISTS m (time BIGINT, dev STRING) USING tsfile "
        "OPTIONS (tagColumns 'dev')"
    )  # already there: no-op
    with pytest.raises(TableExistsError):
        catalog.sql(
            "CREATE TABLE m (time BIGINT, dev STRING) USING tsfile OPTIONS (tagColumns 'dev')"
        )
    # Shown in the declared order (docs/sql.md, CREATE TABLE), as Spark on Parquet shows it.
    assert [tuple(r) for r in catalog.sql("DESCRIBE m").collect()] == [
        ("time", "timestamp", "TIME"),
        ("v", "int", "FIELD"),
        ("dev", "string", "TAG"),
        ("at", "timestamp", "FIELD"),
    ]
    # VALUES by position in the declared order; numbers into TIMESTAMP are raw milliseconds
    inserted = catalog.sql(
        "INSERT INTO m (time, v, dev, at) VALUES "
        "(TIMESTAMP '2024-01-01 00:00:00', 1, 'a', 1704067200000), "
        "(TIMESTAMP '2024-01-01 00:01:00', 2, 'a', NULL)"
    ).collect()[0]
    assert inserted.num_inserted_rows == 2
    got = catalog.sql("SELECT v, at FROM m WHERE time >= TIMESTAMP '2024-01-01 00:01:00'").collect()
    assert [(r.v, r.at) for r in got] == [(2, None)]
    first = catalog.sql("SELECT at FROM m WHERE v = 1").collect()[0].at
    assert first.isoformat().startswith("2024-01-01T00:00")
    catalog.sql("INSERT INTO m (time, dev) SELECT time + INTERVAL 1 DAY, dev FROM m")
    assert catalog.sql("SELECT count(*) FROM m WHERE v IS NULL").collect()[0][0] == 2
    catalog.sql("INSERT OVERWRITE TABLE m SELECT * FROM m WHERE v = 2")
    assert _rows(catalog.sql("SELECT v, dev FROM m")) == [(2, "a")]
    assert catalog.sql("SELECT count(*) FROM m VERSION AS OF 2").collect()[0][0] == 4
    with pytest.raises(SqlError, match="returns 2 columns but 4"):
        catalog.sql("INSERT INTO m SELECT time, dev FROM m")
    with pytest.raises(SqlError, match="missing dev"):
        catalog.sql("INSERT INTO m (time, v) VALUES (1, 1)")
    with pytest.raises(SqlError, match="no column 'zz'"):
        catalog.sql("INSERT INTO m (time, dev, zz) VALUES (1, 'a', 1)")

    version = catalog.sql("ALTER TABLE m SET TBLPROPERTIES ('retention' = '7d')").collect()[0][0]
    detail = catalog.sql("DESCRIBE DETAIL m").collect()[0]
    assert detail.version == version and detail.properties == {
        "retention": "7d",
        "key.duplicates": "last",
        "time.unit": "ms",
        "time.type": "TIMESTAMP",
    }
    assert detail.options["compression"] == "snappy"
    assert detail.options["timestampAs"] == "timestamp"
    # UNSET: absent keys are ignored with or without IF EXISTS (Spark 4); table options are
    # the catalog entry's and refused by name.
    catalog.sql("ALTER TABLE m SET TBLPROPERTIES ('owner' = 'ops')")
    unset = catalog.sql("ALTER TABLE m UNSET TBLPROPERTIES ('retention', 'absent')")
    assert unset.collect()[0][0] == version + 2
    catalog.sql("ALTER TABLE m UNSET TBLPROPERTIES IF EXISTS ('absent')")
    properties = catalog.sql("DESCRIBE DETAIL m").collect()[0].properties
    assert properties.get("owner") == "ops" and "retention" not in properties
    with pytest.raises(SqlError, match="'compression' is a table option.*cannot be unset"):
        catalog.sql("ALTER TABLE m UNSET TBLPROPERTIES ('owner', 'compression')")
    # SET of a table option would store a property that changes nothing: refused, nothing
    # committed
    with pytest.raises(SqlError, match="'tagColumns' is a table option.*cannot be changed"):
        catalog.sql("ALTER TABLE m SET TBLPROPERTIES ('owner' = 'x', 'tagColumns' = 'temp')")
    assert catalog.sql("DESCRIBE DETAIL m").collect()[0].properties == properties

    location = warehouse / "m"
    catalog.sql("DROP TABLE m")
    assert "m" not in catalog.tables() and location.exists()
    catalog.sql(f"CREATE TABLE m USING tsfile LOCATION '{location}'")  # re-register
    assert catalog.sql("SELECT count(*) FROM m").collect()[0][0] == 1
    catalog.sql("DROP TABLE m PURGE")
    assert not location.exists()


@spark_test
def test_create_as_select_and_adopt(catalog: Catalog, tmp_path: Path) -> None:
    catalog.sql(
        "CREATE TABLE hot USING tsfile OPTIONS (tagColumns 'city') "
        "TBLPROPERTIES ('source' = 'weather') AS "
        "SELECT time, city, max(temp) AS peak FROM weather WHERE temp > 2 GROUP BY time, city"
    )
    assert _rows(catalog.sql("SELECT time, peak FROM hot WHERE city = 'gz'")) == [
        (11, 6.0),
        (12, 7.0),
    ]
    assert catalog.sql("DESCRIBE DETAIL hot").collect()[0].properties == {
        "source": "weather",
        "key.duplicates": "last",
        "time.unit": "ms",
        "time.type": "BIGINT",
    }
    with pytest.raises(OptionError, match="tagColumns"):
        catalog.sql("CREATE TABLE hot2 USING tsfile AS SELECT * FROM weather")
    with pytest.raises(SqlError, match="no 'time' column"):
        catalog.sql(
            "CREATE TABLE hot2 USING tsfile OPTIONS (tagColumns 'city') AS SELECT city FROM weather"
        )

    # a plain directory of TsFiles is adopted in place
    plain = tmp_path / "plain"
    plain.mkdir()
    schema = weather_schema(("x", DataType.INT64), table="sensors")
    write_rows(
        str(plain / "a.tsfile"),
        schema,
        [{"time": t, "city": "bj", "device": "d", "x": t} for t in range(5)],
    )
    catalog.sql(f"CREATE TABLE sensors USING tsfile LOCATION '{plain}'")
    assert catalog.sql("SELECT sum(x) FROM sensors").collect()[0][0] == 10
    history = catalog.sql("DESCRIBE HISTORY sensors").collect()
    assert history[0].operation == "ADOPT"
    catalog.sql("INSERT INTO sensors VALUES (100, 'sh', 'e', 7)")
    assert catalog.sql("SELECT count(*) FROM sensors").collect()[0][0] == 6
    with pytest.raises(TableNotFoundError, match="no table and no directory"):
        catalog.sql(f"CREATE TABLE ghost USING tsfile LOCATION '{tmp_path / 'missing'}'")
    catalog.sql("DROP TABLE sensors")
    catalog.sql("DROP TABLE hot PURGE")


@spark_test
def test_vacuum(catalog: Catalog, tmp_path: Path) -> None:
    catalog.sql(
        f"CREATE TABLE v USING tsfile OPTIONS (tagColumns 'city') LOCATION "
        f"'{tmp_path / 'v'}' AS SELECT * FROM weather VERSION AS OF 1"
    )
    stray = tmp_path / "v" / new_part_name(0)  # a part a dead write published
    stray.write_bytes(b"TsFile\x04 not referenced")
    old = time.time() - 30 * 24 * 3600
    os.utime(stray, (old, old))
    dry = catalog.sql("VACUUM v DRY RUN").collect()
    assert [(Path(r.path).name, r.deleted) for r in dry] == [(stray.name, False)]
    assert stray.exists()
    assert [Path(r.path).name for r in catalog.sql("VACUUM v").collect()] == [stray.name]
    assert not stray.exists()
    assert catalog.sql("SELECT count(*) FROM v WHERE temp > 0").collect()[0][0] == 4
    catalog.sql("DROP TABLE v")


# -- errors and hostile input -------------------------------------------------------------------


@spark_test
def test_databases(catalog: Catalog, warehouse: Path) -> None:
    catalog.sql(
        "CREATE TABLE lab.probe (time BIGINT, site STRING, x FLOAT) USING tsfile "
        "OPTIONS (tagColumns 'site')"
    )
    assert (warehouse / "lab.db" / "probe" / "_tsfile_manifest").is_dir()
    assert [tuple(r) for r in catalog.sql("SHOW TABLES IN lab").collect()] == [
        ("lab", "probe", str(warehouse / "lab.db" / "probe"))
    ]
    assert "lab.probe" in catalog.tables()
    assert catalog.sql("SELECT count(*) FROM lab.probe").collect()[0][0] == 0
    assert catalog.sql("SELECT lab.probe.x FROM lab.probe").count() == 0
    assert catalog.table("lab.probe").columns == ["time", "site", "x"]
    with pytest.raises(TableNotFoundError, match="'probe'"):
        catalog.sql("DESCRIBE probe")  # another database
    catalog.sql("DROP TABLE lab.probe PURGE")
    assert catalog.tables("lab") == []


@spark_test
def test_create_errors(catalog: Catalog) -> None:
    with pytest.raises(SqlError, match="needs a time column"):
        catalog.sql("CREATE TABLE e (ts BIGINT, a STRING) USING tsfile OPTIONS (tagColumns 'a')")
    with pytest.raises(SqlError, match="declared INT"):
        catalog.sql("CREATE TABLE e (time INT, a STRING) USING tsfile OPTIONS (tagColumns 'a')")
    with pytest.raises(OptionError, match="'b', which is not a column"):
        catalog.sql("CREATE TABLE e (time BIGINT, a STRING) USING tsfile OPTIONS (tagColumns 'b')")
    with pytest.raises(OptionError, match="must be STRING"):
        catalog.sql("CREATE TABLE e (time BIGINT, a INT) USING tsfile OPTIONS (tagColumns 'a')")
    with pytest.raises(OptionError, match="'tagColumns' is required"):
        catalog.sql("CREATE TABLE e (time BIGINT, a STRING) USING tsfile")
    with pytest.raises(OptionError, match="unknown table option 'colour'"):
        catalog.sql(
            "CREATE TABLE e (time BIGINT, a STRING) USING tsfile "
            "OPTIONS (tagColumns 'a', colour 'red')"
        )
    assert "e" not in catalog.tables()


def test_create_reads_table_options_given_as_tblproperties_as_the_plugin_does(
    catalog: Catalog, warehouse: Path
) -> None:
    """``TBLPROPERTIES ('tagColumns' = …)``, as Delta and Iceberg users configure a table and
    as Spark's catalog plugin reads it, is the option in ``Catalog.sql`` too (it was a mere
    property before, and the CREATE refused for lacking ``tagColumns``); other keys stay
    properties, and an option given twice with two values is refused naming it."""
    from tsfile_catalog import open_table

    catalog.sql(
        "CREATE TABLE tp (time BIGINT, a STRING, v DOUBLE) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'a', 'compression' = 'zstd', 'owner' = 'ops')"
    )
    entry = Registry(str(warehouse)).require(TableName("tp"))
    assert entry.options == {"tagColumns": "a", "compression": "zstd"}
    table = open_table(entry.location)
    assert table.schema.tag_names == ("a",)
    assert table.properties["owner"] == "ops"
    assert not {"tagColumns", "compression"} & set(table.properties)
    with pytest.raises(OptionError) as twice:
        catalog.sql(
            "CREATE TABLE tq (time BIGINT, a STRING, b STRING) USING tsfile "
            "OPTIONS (tagColumns 'a') TBLPROPERTIES ('tagColumns' = 'b')"
        )
    assert str(twice.value) == (
        "CREATE TABLE tq: option 'tagColumns' is given twice, 'a' in OPTIONS and 'b' in "
        "TBLPROPERTIES"
    )
    assert "tq" not in catalog.tables()


@spark_test
def test_hostile_names_and_values(catalog: Catalog, tmp_path: Path) -> None:
    for sql in (
        "CREATE TABLE `a;b` (time BIGINT, a STRING) USING tsfile OPTIONS (tagColumns 'a')",
        "CREATE TABLE `x``y` (time BIGINT, a STRING) USING tsfile OPTIONS (tagColumns 'a')",
        "CREATE TABLE `../up` (time BIGINT, a STRING) USING tsfile OPTIONS (tagColumns 'a')",
        "CREATE TABLE h (time BIGINT, `a,b` STRING) USING tsfile OPTIONS (tagColumns 'a,b')",
        "SELECT * FROM weather; DROP TABLE weather",
        "DESCRIBE `weather'--`",
    ):
        with pytest.raises(TsFileCatalogError):
            catalog.sql(sql)
    for name in ("../up", "a;b", "weather`", "x.y.z"):
        with pytest.raises(SqlError):
            catalog.table(name)
    with pytest.raises(SqlError, match="relative"):
        catalog.sql(
            "CREATE TABLE h (time BIGINT, a STRING) USING tsfile "
            "OPTIONS (tagColumns 'a') LOCATION '../escape'"
        )
    # quotes, semicolons and backticks in values are data, never SQL
    odd = tmp_path / "it's; `odd`"
    catalog.sql(
        "CREATE TABLE h (time BIGINT, a STRING, note STRING) USING tsfile "
        f"OPTIONS (tagColumns 'a') LOCATION '{str(odd).replace(chr(39), chr(92) + chr(39))}' "
        "TBLPROPERTIES ('k' = 'x\\'); DROP TABLE weather; --')"
    )
    catalog.sql("INSERT INTO h VALUES (1, 'o\\'neil', 'a;b'), (2, 'x`y', '\\'')")
    got = catalog.sql("SELECT time, note FROM h WHERE a = 'o\\'neil'").collect()
    assert [(r.time, r.note) for r in got] == [(1, "a;b")]
    assert catalog.sql("SELECT count(*) FROM h WHERE a = 'x`y'").collect()[0][0] == 1
    detail = catalog.sql("DESCRIBE DETAIL h").collect()[0]
    assert detail.location == str(odd)
    assert detail.properties == {
        "k": "x'); DROP TABLE weather; --",
        "key.duplicates": "last",
        "time.unit": "ms",
        "time.type": "BIGINT",
    }
    assert "weather" in catalog.tables()
    catalog.sql("DROP TABLE h PURGE")
    assert not odd.exists()


@spark_test
def test_pass_through_and_plain_spark_views(
    catalog: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    catalog.sql("CREATE OR REPLACE TEMPORARY VIEW nums AS SELECT 1 AS time UNION SELECT 11")
    joined = catalog.sql("SELECT w.city FROM weather AS w JOIN nums USING (time)")
    assert _rows(joined) == [("bj",), ("gz",)]
    # Spark's own tables: CREATE/INSERT/DESCRIBE/DROP go to Spark, catalog sources still scan
    catalog.sql(
        f"CREATE TABLE sp (city STRING, n BIGINT) USING parquet LOCATION '{tmp_path / 'sp'}'"
    )
    catalog.sql("INSERT INTO sp SELECT city, count(*) FROM weather WHERE time < 10 GROUP BY city")
    assert _rows(catalog.sql("SELECT * FROM sp")) == [("bj", 2), ("sh", 2)]
    assert [r.col_name for r in catalog.sql("DESCRIBE sp").collect()][:2] == ["city", "n"]
    # UNSET TBLPROPERTIES of a Spark table is Spark's.
    spark.sql("ALTER TABLE sp SET TBLPROPERTIES ('team' = 'ops', 'tier' = 'gold')")
    catalog.sql("ALTER TABLE sp UNSET TBLPROPERTIES IF EXISTS ('team', 'absent')")
    shown = {r.key: r.value for r in spark.sql("SHOW TBLPROPERTIES sp").collect()}
    assert ("team" in shown, shown.get("tier")) == (False, "gold")
    catalog.sql("DROP TABLE sp")
    assert not spark.catalog.tableExists("sp")
    # every default-database table is a session view for plain spark.sql, at its last version
    assert spark.sql("SELECT count(*) FROM weather").collect()[0][0] == 7
    assertDataFrameEqual(
        spark.sql("SELECT * FROM weather WHERE city = 'sh'"),
        catalog.sql("SELECT * FROM weather WHERE city = 'sh'"),
    )


@spark_test
def test_registry_is_shared_by_a_new_catalog(
    catalog: Catalog, spark: SparkSession, warehouse: Path
) -> None:
    other = Catalog(spark, str(warehouse), register_views=False)
    assert "weather" in other.tables()
    assert other.sql("SELECT count(*) FROM weather WHERE city = 'bj'").collect()[0][0] == 3
    entry = json.loads((warehouse / "_catalog/tables/default/weather.json").read_text())
    assert entry["location"] == str(warehouse / "weather")
    assert entry["options"] == {"tagColumns": "city,device"}


@pytest.mark.slow
@spark_test
def test_registry_is_seen_by_a_new_process(catalog: Catalog, warehouse: Path) -> None:
    assert "weather" in catalog.tables()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, str(REPO / "tests/sql/catalog_child.py"), str(warehouse)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=REPO,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    facts = dict(line.split(" ", 1) for line in done.stdout.splitlines() if line[:1].isupper())
    assert "weather" in facts["TABLES"].split(",")
    assert facts["COUNT"] == "7"
    assert facts["SCANNED"] == "5"


def _recreate_elsewhere(warehouse: Path, name: str, rows: int) -> None:
    """Another process drops table ``name`` and recreates it at the same location."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "tests/sql/recreate_child.py"),
            str(warehouse),
            name,
            str(rows),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]


@spark_test
def test_a_table_recreated_by_another_process_is_seen_and_overwritten_safely(
    catalog: Catalog, spark: SparkSession, warehouse: Path
) -> None:
    catalog.sql(
        "CREATE TABLE reborn (time BIGINT, city STRING, device STRING, temp DOUBLE) "
        "USING tsfile OPTIONS (tagColumns 'city,device')"
    )
    catalog.sql("INSERT INTO reborn VALUES (1, 'bj', 'd1', 1.0), (2, 'bj', 'd1', 2.0)")
    assert catalog.sql("SELECT count(*) FROM reborn").collect()[0][0] == 2
    location = str(warehouse / "reborn")
    old_uuid = catalog.sql("DESCRIBE DETAIL reborn").collect()[0].asDict().get("table_uuid")

    def stored() -> list[tuple[object, ...]]:
        """What a fresh reader (no cached metadata) finds at the location."""
        df = spark.read.format("tsfile").option("useMetadataCache", "false").load(location)
        return _rows(df.select("time", "city", "device", "temp"))

    _recreate_elsewhere(warehouse, "reborn", rows=5)
    assert catalog.sql("SELECT count(*) FROM reborn").collect()[0][0] == 5
    assert _rows(catalog.sql("SELECT DISTINCT city, device FROM reborn")) == [("gz", "d9")]
    detail = catalog.sql("DESCRIBE DETAIL reborn").collect()[0]
    assert detail.table_uuid != old_uuid and detail.num_rows == 5

    catalog.sql("INSERT OVERWRITE reborn VALUES (7, 'sh', 'd2', 7.0)")
    assert stored() == [(7, "sh", "d2", 7.0)]
    latest = catalog.sql("DESCRIBE HISTORY reborn").collect()[0]
    assert (latest.operation, latest.parts_removed, latest.rows_removed) == ("OVERWRITE", 1, 5)

    _recreate_elsewhere(warehouse, "reborn", rows=3)
    (
        spark.createDataFrame(
            [(8, "sh", "d2", 8.0)], "time bigint, city string, device string, temp double"
        )
        .write.format("tsfile")
        .mode("overwrite")
        .option("tagColumns", "city,device")
        .save(location)
    )
    assert stored() == [(8, "sh", "d2", 8.0)]
    assert catalog.sql("SELECT count(*) FROM reborn").collect()[0][0] == 1
    catalog.sql("DROP TABLE reborn PURGE")
