"""The benchmark's engines on a tiny table: the spark_sql engine runs every query through
plain ``spark.sql`` on the catalog plugin's table and gets Parquet's answers."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from bench.datagen import Scale, build_frame, write_parquet, write_tsfile
from bench.queries import SQL_TABLE, build_queries, frame, plugin_table, run_query, same_rows

pytestmark = pytest.mark.spark


@pytest.mark.slow
def test_spark_sql_engine_answers_every_query_through_the_plugin_as_parquet_does(
    spark: SparkSession, tmp_path: Path
) -> None:
    from py4j.java_gateway import JavaClass

    from tsfile_catalog import Catalog

    jvm = spark.sparkContext._jvm
    assert jvm is not None
    if not isinstance(jvm.io.tsfilecatalog.spark.Client, JavaClass):
        pytest.skip("the catalog plugin's jar could not be built here (no JDK's javac)")
    scale = replace(Scale.smoke(), regions=2, devices_per_region=3, timestamps=400, parts=2)
    rows = build_frame(spark, scale)
    tsfile, parquet = str(tmp_path / "tsfile"), str(tmp_path / "parquet")
    write_tsfile(rows, tsfile)
    write_parquet(rows, parquet)
    warehouse = str(tmp_path / "warehouse")
    # Registered through the Catalog only: the plugin finds it in the same registry.
    Catalog(spark, warehouse, register_views=False).sql(
        f"CREATE TABLE {SQL_TABLE} USING tsfile LOCATION '{tsfile}'"
    )
    table = plugin_table(spark, warehouse)
    assert table.endswith(f".default.{SQL_TABLE}")
    assert plugin_table(spark, warehouse) != table  # a fresh catalog per call on a given session

    queries = build_queries(scale)
    for query in queries:
        got = run_query(spark, "spark_sql", tsfile, query, spark_table=table)
        want = run_query(spark, "parquet", parquet, query)
        assert same_rows(got, want), (query.id, got[:3], want[:3])
    # It is the plugin's scan Spark runs, not a view over the data source: Q1's count(*)
    # comes from the manifest's statistics as a local relation, with no scan of the table.
    q1 = next(q for q in queries if q.id == "Q1")
    plan = str(frame(spark, "spark_sql", tsfile, q1, spark_table=table)._jdf.queryExecution())
    assert "LocalTableScan" in plan and "BatchScan" not in plan.split("== Physical Plan ==")[1]
    assert run_query(spark, "spark_sql", tsfile, q1, spark_table=table) == [[scale.rows]]


@pytest.mark.slow
def test_path_engines_answer_every_query_as_parquet_does(
    spark: SparkSession, tmp_path: Path
) -> None:
    """``tsfile`` is ``load(path).where(...)`` as a user writes it, read through the plugin's
    scan of the path; ``tsfile_nojar`` is the same code on the Python source alone."""
    from py4j.java_gateway import JavaClass

    from bench.queries import PATH_READS
    from tsfile_catalog.spark_catalog.session import register

    jvm = spark.sparkContext._jvm
    assert jvm is not None
    if not isinstance(jvm.io.tsfilecatalog.spark.Client, JavaClass):
        pytest.skip("the catalog plugin's jar could not be built here (no JDK's javac)")
    register(spark)  # the delegate the plugin's scan of a path asks
    scale = replace(Scale.smoke(), regions=2, devices_per_region=3, timestamps=400, parts=2)
    rows = build_frame(spark, scale)
    tsfile, parquet = str(tmp_path / "tsfile"), str(tmp_path / "parquet")
    write_tsfile(rows, tsfile)
    write_parquet(rows, parquet)
    before = spark.conf.get(PATH_READS, None)
    for query in build_queries(scale):
        want = run_query(spark, "parquet", parquet, query)
        for engine in ("tsfile", "tsfile_nojar"):
            got = run_query(spark, engine, tsfile, query)
            assert same_rows(got, want), (engine, query.id, got[:3], want[:3])
    assert spark.conf.get(PATH_READS, None) == before  # each run leaves the session as it was
    q1 = next(q for q in build_queries(scale) if q.id == "Q1")
    spark.conf.set(PATH_READS, "true")
    try:
        plan = str(frame(spark, "tsfile", tsfile, q1)._jdf.queryExecution())
    finally:
        spark.conf.set(PATH_READS, before or "true")
    # Q1's count(*) from the manifest's statistics: a local relation, no scan of the table.
    assert "LocalTableScan" in plan and "BatchScan" not in plan.split("== Physical Plan ==")[1]
