"""External parts end to end: one table holding TsFile, Parquet, ORC and CSV parts (one of
them a Hive-partitioned directory), read through Catalog.sql, the data source and a temp view.

The expected answers are Spark's own: the same rows, as written into the files, loaded into a
plain Spark DataFrame and queried with the same SQL.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from pyspark.testing import assertDataFrameEqual

from tests.factories import table_schema
from tsfile_catalog import Catalog, open_table
from tsfile_catalog.exceptions import DataError, OptionError, SchemaMismatchError
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.table import add_files, create_table

spark_test = pytest.mark.spark

# (time ms, city, temp, hum) per source; None = null.
TSFILE_ROWS = [(1, "ts", 1.0, 10), (2, "ts", 2.0, 20)]
PARQUET_ROWS = [(100, "pq", 1.5, 1), (101, "pq", 2.5, None), (300, "pq2", 3.5, 3)]
ORC_ROWS = [(5_000, "orc", 9.0, None), (6_000, "orc", 8.0, None)]
CSV_ROWS = [(7, "csv", 1.25, None), (8, "csv", None, 7)]
HIVE_ROWS = [(50, "bj", 4.0, None), (51, "sh", 5.0, None)]
COLUMNS = "time bigint, city string, temp double, hum bigint"


def _write_sources(root: Path) -> dict[str, Path]:
    """The rows above as the files a user already has: other names, cases and types."""
    root.mkdir(parents=True, exist_ok=True)
    parquet = root / "old.parquet"
    pq.write_table(
        pa.table(
            {
                "Time": pa.array([r[0] for r in PARQUET_ROWS], pa.int64()),
                "CITY": [r[1] for r in PARQUET_ROWS],
                "temp": pa.array([r[2] for r in PARQUET_ROWS], pa.float32()),
                "hum": pa.array([r[3] for r in PARQUET_ROWS], pa.int32()),
            }
        ),
        parquet,
        row_group_size=2,
    )
    orc_file = root / "old.orc"
    orc.write_table(
        pa.table(
            {
                "ts": pa.array([r[0] // 1000 for r in ORC_ROWS], pa.timestamp("s", "UTC")),
                "city": [r[1] for r in ORC_ROWS],
                "temp": [r[2] for r in ORC_ROWS],
            }
        ),
        orc_file,
    )
    csv_file = root / "old.csv"
    csv_file.write_text("time;city;temp;hum\n7;csv;1.25;NA\n8;csv;NA;7\n")
    hive = root / "hive"
    for t, city, temp, _ in HIVE_ROWS:
        folder = hive / f"city={city}"
        folder.mkdir(parents=True)
        pq.write_table(pa.table({"time": [t], "temp": [temp]}), folder / "part-0.parquet")
    (hive / "_SUCCESS").write_text("")
    return {"parquet": parquet, "orc": orc_file, "csv": csv_file, "hive": hive}


def _digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def mixed(catalog: Catalog, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Table ``mixed``: v0 CREATE, v1 INSERT (TsFile), v2-v5 ADD PART of each source."""
    files = _write_sources(tmp_path_factory.mktemp("external"))
    catalog.sql(
        "CREATE TABLE mixed (time BIGINT, city STRING, temp DOUBLE, hum BIGINT) USING tsfile "
        "OPTIONS (tagColumns 'city')"
    )
    values = ", ".join(f"({t}, '{c}', {v}, {h})" for t, c, v, h in TSFILE_ROWS)
    catalog.sql(f"INSERT INTO mixed VALUES {values}")
    versions = [
        catalog.sql(sql).collect()[0].version
        for sql in (
            f"ALTER TABLE mixed ADD PART OPTIONS (path '{files['parquet']}', format 'parquet')",
            f"ALTER TABLE mixed ADD PART OPTIONS ('PATH' = '{files['orc']}', 'Format' = 'orc', "
            "'timeColumn' = 'TS')",
            f"ALTER TABLE mixed ADD PART OPTIONS (path '{files['csv']}', format 'csv', "
            "delimiter ';', nullValue 'NA')",
            f"ALTER TABLE mixed ADD PART OPTIONS (path '{files['hive']}', format 'parquet', "
            "partition 'city:string')",
        )
    ]
    assert versions == [2, 3, 4, 5]
    return files


def _expected(spark: SparkSession, *sources: list[tuple[object, ...]]) -> None:
    rows = [r for source in sources for r in source]
    spark.createDataFrame(rows, COLUMNS).createOrReplaceTempView("mixed_expected")


@spark_test
def test_mixed_formats_read_together_with_filters_and_projection(
    spark: SparkSession, catalog: Catalog, mixed: dict[str, Path]
) -> None:
    _expected(spark, TSFILE_ROWS, PARQUET_ROWS, ORC_ROWS, CSV_ROWS, HIVE_ROWS)
    for query in (
        "SELECT * FROM {t}",
        "SELECT city, temp FROM {t} WHERE time BETWEEN 2 AND 5000 AND city IN ('pq', 'bj', 'ts')",
        "SELECT time, hum FROM {t} WHERE temp > 2.0 OR hum IS NULL",
        "SELECT city, count(*) AS n, max(temp) AS t FROM {t} GROUP BY city",
    ):
        assertDataFrameEqual(
            catalog.sql(query.format(t="mixed")), spark.sql(query.format(t="mixed_expected"))
        )
    # count(*) from statistics counts every format alike.
    assert catalog.sql("SELECT count(*) AS n FROM mixed").collect()[0].n == 11


@spark_test
def test_time_travel_across_the_add(
    spark: SparkSession, catalog: Catalog, mixed: dict[str, Path]
) -> None:
    _expected(spark, TSFILE_ROWS, PARQUET_ROWS)
    assertDataFrameEqual(
        catalog.sql("SELECT * FROM mixed VERSION AS OF 2"),
        spark.sql("SELECT * FROM mixed_expected"),
    )
    assert catalog.sql("SELECT count(*) AS n FROM mixed VERSION AS OF 1").collect()[0].n == 2


@spark_test
def test_data_source_and_temp_view_read_external_parts(
    spark: SparkSession, catalog: Catalog, mixed: dict[str, Path], warehouse: Path
) -> None:
    _expected(spark, TSFILE_ROWS, PARQUET_ROWS, ORC_ROWS, CSV_ROWS, HIVE_ROWS)
    loaded = (
        spark.read.format("tsfile")
        .option("where", "city = 'orc' OR time < 8")
        .load(str(warehouse / "mixed"))
    )
    loaded.createOrReplaceTempView("mixed_view")
    assertDataFrameEqual(
        spark.sql("SELECT time, city, temp FROM mixed_view"),
        spark.sql("SELECT time, city, temp FROM mixed_expected WHERE city = 'orc' OR time < 8"),
    )


@spark_test
def test_show_parts_detail_and_history_name_formats(
    catalog: Catalog, mixed: dict[str, Path]
) -> None:
    parts = {p.path: p for p in catalog.sql("SHOW PARTS mixed").collect()}
    external = {path: p.format for path, p in parts.items() if p.external}
    assert external == {
        str(mixed["parquet"]): "parquet",
        str(mixed["orc"]): "orc",
        str(mixed["csv"]): "csv",
        str(mixed["hive"] / "city=bj" / "part-0.parquet"): "parquet",
        str(mixed["hive"] / "city=sh" / "part-0.parquet"): "parquet",
    }
    assert {p.format for p in parts.values() if not p.external} == {"tsfile"}
    detail = catalog.sql("DESCRIBE DETAIL mixed").collect()[0]
    tsfiles = sum(1 for p in parts.values() if not p.external)
    assert detail.parts_by_format == {"csv": 1, "orc": 1, "parquet": 3, "tsfile": tsfiles}
    assert detail.format_version == 2
    history = catalog.sql("DESCRIBE HISTORY mixed").collect()
    assert [h.operation for h in history][:4] == ["ADD PART"] * 4
    assert history[0].operation_parameters["partition"] == "city"


@spark_test
def test_failed_add_part_commits_nothing(catalog: Catalog, warehouse: Path, tmp_path: Path) -> None:
    catalog.sql(
        "CREATE TABLE strict (time BIGINT, city STRING, temp DOUBLE) USING tsfile "
        "OPTIONS (tagColumns 'city')"
    )
    good = tmp_path / "a.parquet"
    pq.write_table(pa.table({"time": [1], "city": ["x"], "temp": [1.0]}), good)
    pq.write_table(pa.table({"time": [2], "city": ["y"], "wind": [3.0]}), tmp_path / "b.parquet")
    with pytest.raises(SchemaMismatchError, match=r"b\.parquet: column 'wind' is not in table"):
        catalog.sql(f"ALTER TABLE strict ADD PART OPTIONS (path '{tmp_path}', format 'parquet')")
    assert open_table(str(warehouse / "strict")).version == 0
    with pytest.raises(OptionError, match="invalid partition option"):
        catalog.sql(
            f"ALTER TABLE strict ADD PART OPTIONS (path '{good}', format 'parquet', "
            "partition 'day=20211123,hour=12')"
        )
    merged = catalog.sql(
        f"ALTER TABLE strict ADD PART OPTIONS (path '{tmp_path}', format 'parquet', "
        "mergeSchema 'true')"
    ).collect()[0]
    assert merged.version == 1
    rows = catalog.sql("SELECT time, city, temp, wind FROM strict").collect()
    assert sorted(tuple(r) for r in rows) == [(1, "x", 1.0, None), (2, "y", None, 3.0)]


@spark_test
def test_drop_part_drop_table_purge_and_vacuum_keep_external_files(
    catalog: Catalog, warehouse: Path, tmp_path: Path
) -> None:
    files = _write_sources(tmp_path / "src")
    before = _digest(tmp_path / "src")
    catalog.sql(
        "CREATE TABLE keep (time BIGINT, city STRING, temp DOUBLE, hum BIGINT) "
        "USING tsfile OPTIONS (tagColumns 'city')"
    )
    catalog.sql("INSERT INTO keep VALUES (1, 'ts', 1.0, 1)")
    catalog.sql(f"ALTER TABLE keep ADD PART OPTIONS (path '{files['parquet']}', format 'parquet')")
    catalog.sql(
        f"ALTER TABLE keep ADD PART OPTIONS (path '{files['hive']}/*/*.parquet', "
        "format 'parquet', partition 'city:string')"
    )
    dropped = catalog.sql(f"ALTER TABLE keep DROP PART '{files['hive']}/city=bj/*'").collect()[0]
    assert dropped.version == 4
    cities = {r.city for r in catalog.sql("SELECT DISTINCT city FROM keep").collect()}
    assert cities == {"ts", "pq", "pq2", "sh"}
    # Time travel still sees the dropped part.
    assert catalog.sql("SELECT count(*) AS n FROM keep VERSION AS OF 3").collect()[0].n == 6
    catalog.sql("VACUUM keep")
    catalog.sql("DROP TABLE keep PURGE")
    assert not (warehouse / "keep").exists() or not list((warehouse / "keep").rglob("*.tsfile"))
    assert _digest(tmp_path / "src") == before


def test_timestamp_time_column_converts_with_the_table_precision() -> None:
    # 5 s after the epoch in microseconds is what an ORC TIMESTAMP of 5 s reads as at 'us'.
    from tsfile_catalog.formats.external import raw_time

    array = pa.array([dt.datetime(1970, 1, 1, 0, 0, 5)], pa.timestamp("ms"))
    assert raw_time(array, "us").to_pylist() == [5_000_000]
    assert raw_time(pa.array([dt.date(1970, 1, 2)]), "ms").to_pylist() == [86_400_000]


@spark_test
def test_hive_partition_values_read_as_sparks_partition_discovery(
    spark: SparkSession, tmp_path: Path
) -> None:
    awkward = ["a/b", "50%", "a b", "北京", "x=y:?", "#1", "%2F", "tab\tend"]
    columns = "time bigint, city string, temp double"
    written = tmp_path / "hive"
    rows = [(i, city, float(i)) for i, city in enumerate(awkward)]
    spark.createDataFrame(rows, columns).write.partitionBy("city").parquet(str(written))
    url = str(tmp_path / "t")
    create_table(url, table_schema("w", tags=("city",), fields=[("temp", DataType.DOUBLE)]))
    add_files(url, str(written), format="parquet", options={"partition": "city:string"})
    assertDataFrameEqual(
        spark.read.format("tsfile").load(url).select("time", "city", "temp"),
        spark.read.parquet(str(written)).select("time", "city", "temp"),
    )
    # Spark writes a null and an empty value as __HIVE_DEFAULT_PARTITION__ and reads it as
    # null; a TAG cannot be null, so the folder is refused by name.
    nulls = tmp_path / "nulls"
    spark.createDataFrame([(1, None, 1.0), (2, "", 2.0)], columns).write.partitionBy(
        "city"
    ).parquet(str(nulls))
    assert spark.read.parquet(str(nulls)).where("city IS NULL").count() == 2
    with pytest.raises(DataError, match="city=__HIVE_DEFAULT_PARTITION__ folder holds a null"):
        add_files(url, str(nulls), format="parquet", options={"partition": "city:string"})


@spark_test
def test_statistics_answers_fail_once_an_external_file_changed(
    spark: SparkSession, warehouse: Path, tmp_path: Path
) -> None:
    """count(*), min(time) and max(v) BY a TAG are answered from the manifest, without
    opening the file: once the file is rewritten (more rows, a new device) they fail as a
    read does, naming the file and the fix, instead of answering for the old file."""
    import os

    from tsfile_catalog.errors import unwrap

    # small_scan_rows=0: the tables are tiny; a small scan would read (and check) the file.
    local = Catalog(spark, str(warehouse), register_views=False, small_scan_rows=0)
    local.sql(
        "CREATE TABLE stamped (time BIGINT, city STRING, temp DOUBLE) USING tsfile "
        "OPTIONS (tagColumns 'city')"
    )
    local.sql("INSERT INTO stamped VALUES (1, 'ts', 1.0)")
    file = tmp_path / "a.parquet"
    pq.write_table(pa.table({"time": [10, 11], "city": ["pq", "pq"], "temp": [2.0, 3.0]}), file)
    local.sql(f"ALTER TABLE stamped ADD PART OPTIONS (path '{file}', format 'parquet')")
    queries = {
        "SELECT count(*) AS n FROM stamped": [(3,)],
        "SELECT min(time) AS t FROM stamped": [(1,)],
        "SELECT city, max(temp) AS m FROM stamped GROUP BY city": [("pq", 3.0), ("ts", 1.0)],
        # Not a statistics answer (ORDER BY): a partial aggregate, whose planning answers the
        # devices wholly inside the WHERE from statistics.
        "SELECT city, count(*) AS n FROM stamped GROUP BY city ORDER BY city": [
            ("pq", 2),
            ("ts", 1),
        ],
    }
    for query, rows in queries.items():
        assert sorted(tuple(r) for r in local.sql(query).collect()) == rows, query
    added = file.stat()
    pq.write_table(
        pa.table({"time": [10, 11, 12], "city": ["pq", "pq", "new"], "temp": [2.0, 3.0, 9.0]}),
        file,
    )
    # The modification time it had when added: its size alone tells.
    os.utime(file, ns=(added.st_atime_ns, added.st_mtime_ns))
    for query in queries:
        with pytest.raises(Exception) as failed:  # noqa: PT011 - unwrapped below
            local.sql(query).collect()
        error = unwrap(failed.value)
        assert isinstance(error, DataError), (query, failed.value)
        assert re.search(r"a\.parquet \(parquet\) changed after ADD PART.*re-add it", str(error))
    # Filters that the old statistics say skip the file fail too: the rewrite may have added
    # rows they match (here: time 12, city 'new'), which a skipped file would silently lose.
    for query in (
        "SELECT * FROM stamped WHERE time >= 12",
        "SELECT * FROM stamped WHERE city = 'new'",
        "SELECT count(*) AS n FROM stamped WHERE city = 'ts'",
    ):
        with pytest.raises(Exception) as failed:  # noqa: PT011 - unwrapped below
            local.sql(query).collect()
        assert re.search(
            r"a\.parquet \(parquet\) changed after ADD PART", str(unwrap(failed.value))
        )
    with pytest.raises(DataError, match=r"a\.parquet \(parquet\) changed after ADD PART"):
        open_table(str(warehouse / "stamped")).scan(where="time >= 12").to_arrow()
    local.sql(f"ALTER TABLE stamped DROP PART '{file}'")
    local.sql(f"ALTER TABLE stamped ADD PART OPTIONS (path '{file}', format 'parquet')")
    assert local.sql("SELECT count(*) AS n FROM stamped").collect()[0].n == 4
    assert [tuple(r) for r in local.sql("SELECT * FROM stamped WHERE time >= 12").collect()] == [
        (12, "new", 9.0)
    ]
    local.sql("DROP TABLE stamped")
