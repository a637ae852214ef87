"""OPTIMIZE, DELETE and UPDATE spread over a two-executor cluster, tables on local disk and
S3: each group's rewrite (a DELETE's or UPDATE's batch of parts, an UPDATE's new rows) runs
as a Spark task in an executor process (started without storage credentials: the task's
file IO carries them), the driver commits once, and the result equals the in-process
rewrite of the same table; a task that fails on every attempt commits nothing."""

from __future__ import annotations

import os
from typing import Any

import pytest
from pyspark.sql import SparkSession

from tests.cluster.helpers import CLUSTER_TESTS, ClusterTable
from tests.jobs import both_ways
from tests.table.helpers import SCHEMA, fill_small_parts, key_change_layout, key_view
from tsfile_catalog import Catalog
from tsfile_catalog.datasource.rewrite_tasks import SparkTasks, job_group
from tsfile_catalog.io import FileIO, join_url
from tsfile_catalog.table import STAGING_DIR, create_table, open_table

pytestmark = CLUSTER_TESTS


def _layout(url: str, options: dict[str, Any]) -> list[tuple[Any, ...]]:
    parts = open_table(url, storage_options=options).parts()
    return sorted((p.row_count, p.min_time, p.max_time, p.key_sequence) for p in parts)


def _twin(where: ClusterTable, name: str, key: str) -> str:
    url = where.url(name)
    create_table(
        url, SCHEMA, properties={"key.duplicates": key}, storage_options=where.storage_options
    )
    fill_small_parts(url, where.storage_options)
    return url


def _catalog_twins(spark: SparkSession, where: ClusterTable) -> tuple[Catalog, str, str]:
    """A catalog with keep tables ``t`` and ``u`` of :func:`fill_small_parts`'s rows: the
    statement under test runs on ``t`` distributed, and on ``u`` with the conf off."""
    options = where.storage_options
    catalog = Catalog(spark, where.url("warehouse"), storage_options=options, register_views=False)
    create = (
        "CREATE TABLE {} (time BIGINT, city STRING, temp FLOAT) USING tsfile "
        "OPTIONS (tagColumns 'city') TBLPROPERTIES ('key.duplicates' = 'keep')"
    )
    catalog.sql(create.format("t"))
    catalog.sql(create.format("u"))
    spread, local = where.url("warehouse/t"), where.url("warehouse/u")
    fill_small_parts(spread, options)
    fill_small_parts(local, options)
    return catalog, spread, local


@pytest.mark.parametrize("key", ["last", "keep"])
def test_optimize_tasks_run_on_executors_and_equal_the_driver_rewrite(
    cluster_spark: SparkSession, cluster_table: ClusterTable, key: str
) -> None:
    options = cluster_table.storage_options
    spread, local = _twin(cluster_table, "spread", key), _twin(cluster_table, "local", key)
    before = key_view(spread, storage_options=options)

    runner = SparkTasks(cluster_spark)
    done = open_table(spread, storage_options=options).maintenance.optimize(runner=runner)
    same = open_table(local, storage_options=options).maintenance.optimize()

    assert done.version is not None and done.files_added >= 3
    assert (done.files_removed, done.files_added, done.rows) == (
        same.files_removed,
        same.files_added,
        same.rows,
    )
    assert key_view(spread, storage_options=options) == before
    assert key_view(local, storage_options=options) == before
    assert _layout(spread, options) == _layout(local, options)
    assert len(runner.workers) >= 3
    assert all(int(w.rsplit(":", 1)[1]) != os.getpid() for w in runner.workers)
    assert not FileIO(spread, options).exists(join_url(spread, STAGING_DIR))


def test_catalog_optimize_on_executors(
    cluster_spark: SparkSession, cluster_table: ClusterTable
) -> None:
    options = cluster_table.storage_options
    catalog = Catalog(
        cluster_spark, cluster_table.url("warehouse"), storage_options=options, register_views=False
    )
    catalog.sql(
        "CREATE TABLE t (time BIGINT, city STRING, temp FLOAT) USING tsfile "
        "OPTIONS (tagColumns 'city') TBLPROPERTIES ('key.duplicates' = 'last')"
    )
    url = cluster_table.url("warehouse/t")
    fill_small_parts(url, options)
    local = _twin(cluster_table, "local", "last")
    before = key_view(url, storage_options=options)

    row = catalog.sql("OPTIMIZE t").collect()[0]
    same = open_table(local, storage_options=options).maintenance.optimize()

    assert (row.num_files_removed, row.num_files_added) == (same.files_removed, same.files_added)
    assert key_view(url, storage_options=options) == before
    assert _layout(url, options) == _layout(local, options)
    job = open_table(url, storage_options=options).history(limit=1)[0]
    tracker = cluster_spark.sparkContext.statusTracker()
    assert len(tracker.getJobIdsForGroup(job_group(job.operation_parameters["job"]))) == 1


def test_a_task_failing_every_attempt_commits_nothing(
    cluster_spark: SparkSession, cluster_table: ClusterTable
) -> None:
    options = cluster_table.storage_options
    url = _twin(cluster_table, "broken", "keep")
    table = open_table(url, storage_options=options)
    io = FileIO(url, options)
    files = sorted(io.list_names(url))
    broken = join_url(url, table.parts()[-1].path)
    io.write_bytes(broken, b"\0" * io.size(broken))

    with pytest.raises(Exception, match="(?s)tsfile|TsFile|magic|Job aborted"):
        table.maintenance.optimize(runner=SparkTasks(cluster_spark))

    assert open_table(url, storage_options=options).version == table.version
    assert sorted(io.list_names(url)) == files, "nothing published, no staging left"


def test_catalog_delete_on_executors(
    cluster_spark: SparkSession, cluster_table: ClusterTable
) -> None:
    options = cluster_table.storage_options
    catalog = Catalog(
        cluster_spark, cluster_table.url("warehouse"), storage_options=options, register_views=False
    )
    catalog.sql(
        "CREATE TABLE t (time BIGINT, city STRING, temp FLOAT) USING tsfile "
        "OPTIONS (tagColumns 'city') TBLPROPERTIES ('key.duplicates' = 'keep')"
    )
    url = cluster_table.url("warehouse/t")
    fill_small_parts(url, options)
    local = _twin(cluster_table, "local", "keep")
    where = "(temp >= 300 AND city <> 'c1') OR time >= 1100"

    row = catalog.sql(f"DELETE FROM t WHERE {where}").collect()[0]
    same = open_table(local, storage_options=options).delete(where)

    assert row.num_affected_rows == same.num_deleted_rows > 0
    assert row.num_files_rewritten == same.files_rewritten > 0
    assert key_view(url, storage_options=options) == key_view(local, storage_options=options)
    assert _layout(url, options) == _layout(local, options)
    job = open_table(url, storage_options=options).history(limit=1)[0]
    tracker = cluster_spark.sparkContext.statusTracker()
    (spark_job,) = tracker.getJobIdsForGroup(job_group(job.operation_parameters["job"]))
    # The parts it rewrote were packed into a task per executor core, not one task each.
    info = tracker.getJobInfo(spark_job)
    assert info is not None
    stages = [tracker.getStageInfo(s) for s in info.stageIds]
    tasks = sum(s.numCompletedTasks for s in stages if s is not None)
    assert cluster_spark.sparkContext.defaultParallelism <= tasks < row.num_files_rewritten


def test_catalog_update_on_executors(
    cluster_spark: SparkSession, cluster_table: ClusterTable
) -> None:
    options = cluster_table.storage_options
    catalog, spread, local = _catalog_twins(cluster_spark, cluster_table)
    update = "UPDATE {} SET temp = temp + 1000 WHERE city = 'c1' AND time % 100 < 5"

    row, same = both_ways(cluster_spark, catalog, update)

    assert row.num_affected_rows == same.num_affected_rows > 0
    assert key_view(spread, storage_options=options) == key_view(local, storage_options=options)
    assert key_change_layout(_layout(spread, options)) == key_change_layout(_layout(local, options))
    job = open_table(spread, storage_options=options).history(limit=1)[0]
    tracker = cluster_spark.sparkContext.statusTracker()
    # The parts' rewrite, then the new rows' staging: Spark jobs of the commit's group.
    spark_jobs = tracker.getJobIdsForGroup(job_group(job.operation_parameters["job"]))
    assert len(spark_jobs) >= 2
    infos = [tracker.getJobInfo(j) for j in spark_jobs]
    assert all(i is not None and i.status == "SUCCEEDED" for i in infos)
    stages = [tracker.getStageInfo(s) for i in infos if i is not None for s in i.stageIds]
    assert sum(s.numCompletedTasks for s in stages if s is not None) >= 3
    assert not FileIO(spread, options).exists(join_url(spread, STAGING_DIR))


def test_catalog_replace_where_on_executors(
    cluster_spark: SparkSession, cluster_table: ClusterTable
) -> None:
    """INSERT ... REPLACE WHERE: the parts its predicate straddles are rewritten as Spark tasks
    on the executors before the write, and the write's commit takes them; the same rows as
    with distributed rewrites off (the commit rewrites them in its own process)."""
    options = cluster_table.storage_options
    catalog, spread, local = _catalog_twins(cluster_spark, cluster_table)
    # Straddles the parts of times 100-119 and 400-419; those of 200-319 are wholly inside.
    insert = (
        "INSERT INTO {} REPLACE WHERE time >= 105 AND time < 410 "
        "SELECT * FROM VALUES (150L, 'c1', 1.5F), (405L, 'c2', 2.5F) AS v(time, city, temp)"
    )

    row, same = both_ways(cluster_spark, catalog, insert)

    assert row.num_inserted_rows == same.num_inserted_rows == 2
    assert key_view(spread, storage_options=options) == key_view(local, storage_options=options)
    assert _layout(spread, options) == _layout(local, options)
    done = open_table(spread, storage_options=options).history(limit=1)[0]
    twin = open_table(local, storage_options=options).history(limit=1)[0]
    assert "rewriteJob" not in twin.operation_parameters
    tracker = cluster_spark.sparkContext.statusTracker()
    spark_jobs = tracker.getJobIdsForGroup(job_group(done.operation_parameters["rewriteJob"]))
    infos = [tracker.getJobInfo(j) for j in spark_jobs]
    assert infos and all(i is not None and i.status == "SUCCEEDED" for i in infos)
    assert not FileIO(spread, options).exists(join_url(spread, STAGING_DIR))
