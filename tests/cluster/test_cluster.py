"""Reads, batch writes and catalog SQL on a two-executor cluster, tables on local disk and S3.

Every task runs in an executor process of its own, started without storage credentials: the
tests pass only if the pickled source, reader, partitions and writer carry everything needed
and reopen storage themselves. Expected answers are Spark's own evaluation of the same rows.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.testing import assertDataFrameEqual

import tsfile_catalog
from tests.cluster.helpers import CLUSTER_MASTER, CLUSTER_TESTS, EXECUTORS, ClusterTable
from tests.datasource.helpers import write_rows
from tests.factories import weather_schema
from tsfile_catalog import Catalog, open_table
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.schema import DataType

pytestmark = CLUSTER_TESTS

COLUMNS = "time bigint, city string, device string, temp double"
ROWS = [(t, ["bj", "sh"][t % 2], f"d{t % 3}", t * 0.5) for t in range(60)]


def _expected(spark: SparkSession, rows: list[tuple[Any, ...]]) -> DataFrame:
    """``rows`` as a plain Spark DataFrame: what a query on them should return."""
    return spark.createDataFrame(rows, COLUMNS)


def _source(spark: SparkSession, rows: list[tuple[Any, ...]]) -> DataFrame:
    """``rows`` to write, in two partitions: one task on each executor."""
    return _expected(spark, rows).repartition(EXECUTORS)


def _put(table: ClusterTable, local: Path, name: str) -> str:
    """Copy a local file to ``name`` under the test's root; its URL."""
    url = table.url(name)
    with open(local, "rb") as src, fsspec.open(url, "wb", **table.storage_options) as dst:
        dst.write(src.read())
    return url


def test_tasks_run_in_executors_with_this_code_and_no_credentials(
    cluster_spark: SparkSession,
) -> None:
    sc = cluster_spark.sparkContext
    assert sc.master == CLUSTER_MASTER

    def where_am_i(_: int) -> tuple[int, str, list[str]]:
        import os

        import tsfile_catalog

        leaked = sorted(k for k in os.environ if k.startswith(("AWS_", "FSSPEC_")))
        return os.getpid(), tsfile_catalog.__file__, leaked

    seen = sc.parallelize(range(8), 8).map(where_am_i).collect()
    assert {file for _, file, _ in seen} == {tsfile_catalog.__file__}
    assert {tuple(leaked) for _, _, leaked in seen} == {()}
    assert os.getpid() not in {pid for pid, _, _ in seen}


def test_read_a_file_and_a_directory(
    cluster_spark: SparkSession, tmp_path: Path, cluster_table: ClusterTable
) -> None:
    schema = weather_schema(("temp", DataType.DOUBLE))
    halves = {"a.tsfile": ROWS[:30], "b.tsfile": ROWS[30:]}
    for name, rows in halves.items():
        local = tmp_path / "src" / name
        local.parent.mkdir(exist_ok=True)
        write_rows(
            str(local),
            schema,
            [{"time": t, "city": c, "device": d, "temp": v} for t, c, d, v in rows],
        )
        _put(cluster_table, local, f"files/{name}")
    reader = cluster_spark.read.format("tsfile").options(**cluster_table.fs_options)

    one = reader.load(cluster_table.url("files/a.tsfile"))
    assertDataFrameEqual(one, _expected(cluster_spark, halves["a.tsfile"]))
    # (the DataFrameReader keeps options: `where` last)
    both = reader.option("where", "city = 'sh' AND temp > 10").load(cluster_table.url("files"))
    assertDataFrameEqual(both, _expected(cluster_spark, ROWS).where("city = 'sh' AND temp > 10"))


def test_append_overwrite_time_travel_and_pruning(
    cluster_spark: SparkSession, cluster_table: ClusterTable
) -> None:
    url, fs = cluster_table.url("weather"), cluster_table.fs_options
    first, second = ROWS[:40], [(t + 1000, "gz", "d9", 1.0) for t in range(20)]
    for rows in (first, second):
        (
            _source(cluster_spark, rows)
            .write.format("tsfile")
            .options(table="weather", tagColumns="city,device", **fs)
            .mode("append")
            .save(url)
        )
    table = open_table(url, storage_options=cluster_table.storage_options)
    # each write: two tasks staged a part each, the driver committed them once
    assert table.version == 1 and len(table.parts()) == 2 * EXECUTORS
    assert [h.operation for h in table.history()] == ["WRITE", "WRITE"]
    io = FileIO(url, cluster_table.storage_options)
    assert not io.exists(f"{url}/_staging")

    def read(**options: str) -> DataFrame:
        return cluster_spark.read.format("tsfile").options(**fs, **options).load(url)

    assertDataFrameEqual(
        read(where="temp < 5"),
        _expected(cluster_spark, first + second).where("temp < 5"),
    )

    _source(cluster_spark, second).write.format("tsfile").options(**fs).mode("overwrite").save(url)
    assertDataFrameEqual(read(), _expected(cluster_spark, second))

    # Version 1 again, with its first write's files gone: the read succeeds only if the
    # tasks never open the parts the pushed `where` prunes.
    where = "city = 'gz' AND time >= 1010"
    gone = [p for p in table.parts() if p.added_version == 0]
    assert {p.path for p in gone} <= {p.path for p in table.plan(where=where).pruned}
    for part in gone:
        io.delete(f"{url}/{part.path}")
    assertDataFrameEqual(
        read(versionAsOf="1", where=where),
        _expected(cluster_spark, second).where(where),
    )


def test_catalog_sql_with_an_external_part(
    cluster_spark: SparkSession, tmp_path: Path, cluster_table: ClusterTable
) -> None:
    catalog = Catalog(
        cluster_spark,
        cluster_table.url("warehouse"),
        storage_options=cluster_table.storage_options,
        register_views=False,
    )
    catalog.sql(
        "CREATE TABLE weather (time BIGINT, city STRING, device STRING, temp DOUBLE) "
        "USING tsfile OPTIONS (tagColumns 'city,device')"
    )
    _source(cluster_spark, ROWS).createOrReplaceTempView("cluster_source")
    catalog.sql("INSERT INTO weather SELECT * FROM cluster_source")
    old = [(5000 + t, "old", "d0", float(t)) for t in range(10)]
    local = tmp_path / "old.parquet"
    pq.write_table(
        pa.Table.from_pylist(
            [dict(zip(("time", "city", "device", "temp"), r, strict=True)) for r in old]
        ),
        local,
    )
    parquet = _put(cluster_table, local, "external/old.parquet")
    catalog.sql(f"ALTER TABLE weather ADD PART OPTIONS (path '{parquet}', format 'parquet')")

    everything = _expected(cluster_spark, ROWS + old)
    query = "SELECT time, city, temp FROM weather WHERE city IN ('sh', 'old') AND temp >= 4"
    assertDataFrameEqual(
        catalog.sql(query),
        everything.where("city IN ('sh', 'old') AND temp >= 4").select("time", "city", "temp"),
    )
    assert catalog.sql("SELECT count(*) FROM weather").collect()[0][0] == len(ROWS) + len(old)
    parts = catalog.sql("SHOW PARTS weather").collect()
    location = open_table(
        cluster_table.url("warehouse/weather"), storage_options=cluster_table.storage_options
    )
    # The INSERT's clustered parts (whole devices each) and the one external part.
    assert len(parts) == len(location.parts()) >= 2
    assert [p.format for p in location.parts()].count("parquet") == 1
