"""Relative local paths: the tsfile source resolves them where Spark's own file sources do."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.testing import assertDataFrameEqual

import tsfile_catalog
from tsfile_catalog.datasource.source import TsFileDataSource
from tsfile_catalog.options import DRIVER_CWD_ENV

pytestmark = pytest.mark.spark

DDL = "time bigint, city string, temp double"


def _jvm_cwd(spark: SparkSession) -> str:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    return str(jvm.java.lang.System.getProperty("user.dir"))


def test_relative_paths_mean_what_they_mean_for_parquet(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same relative paths for both sources, relative to the driver JVM's directory; this
    # Python process moved elsewhere meanwhile, which Spark's own sources ignore.
    def rel(name: str) -> str:
        return os.path.relpath(tmp_path / name, _jvm_cwd(spark))

    python_cwd = tmp_path / "python-cwd"
    python_cwd.mkdir()
    monkeypatch.chdir(python_cwd)
    df = spark.createDataFrame([(1, "a", 1.5), (2, "b", 2.5)], DDL)
    df.write.parquet(rel("pq"))
    assert list((tmp_path / "pq").glob("*.parquet"))
    df.write.format("tsfile").options(table="w", tagColumns="city").mode("append").save(rel("t"))
    assert tsfile_catalog.open_table(str(tmp_path / "t")).snapshot.parts
    assert list(python_cwd.iterdir()) == []
    assertDataFrameEqual(spark.read.format("tsfile").load(rel("t")), spark.read.parquet(rel("pq")))


@pytest.mark.slow
def test_workers_resolve_against_the_registered_driver_directory_not_their_own(
    spark: SparkSession, tmp_path: Path
) -> None:
    # A driver whose working directory is not the workers' (a cluster's executors): register()
    # hands it over; here a stand-in directory, registered the same way.
    driver = tmp_path / "driver"
    spark.sparkContext.environment[DRIVER_CWD_ENV] = str(driver)
    spark.dataSource.register(TsFileDataSource)
    try:
        df = spark.createDataFrame([(1, "a", 1.5)], DDL)
        df.write.format("tsfile").options(table="w", tagColumns="city").mode("append").save("rel/t")
        assert tsfile_catalog.open_table(str(driver / "rel" / "t")).snapshot.parts
        assert spark.read.format("tsfile").load("rel/t").count() == 1
        assert not os.path.exists(os.path.join(_jvm_cwd(spark), "rel", "t"))
    finally:
        tsfile_catalog.register(spark)
    assert spark.sparkContext.environment[DRIVER_CWD_ENV] == _jvm_cwd(spark)
