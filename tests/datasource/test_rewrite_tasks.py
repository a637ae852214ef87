"""OPTIMIZE's groups and the batches of parts DELETE and UPDATE rewrite (from Python and from
Catalog.sql), the new rows of Catalog.sql's UPDATE and MERGE, and the parts an INSERT ...
REPLACE WHERE straddles, as Spark tasks on the shared local session: the same parts and rows
as the in-process rewrite, the work in Spark's Python workers, fewer tasks than parts for a
DELETE of many small parts, and a failed task commits nothing."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pytest
from pyspark.sql import SparkSession

from tests.jobs import both_ways
from tests.table.helpers import (
    SCHEMA,
    fill_small_parts,
    key_change_layout,
    key_view,
)
from tsfile_catalog import Catalog
from tsfile_catalog.datasource.rewrite_tasks import DISTRIBUTED_REWRITES, SparkTasks, job_group
from tsfile_catalog.exceptions import DataError
from tsfile_catalog.table import STAGING_DIR, create_table, open_table
from tsfile_catalog.table.rewrite import RewriteJob, TableParts
from tsfile_catalog.table.rewrite_tasks import TaskOutcome

pytestmark = pytest.mark.spark

_CREATE = (
    "CREATE TABLE t (time BIGINT, city STRING, temp FLOAT) USING tsfile "
    "OPTIONS (tagColumns 'city') TBLPROPERTIES ('key.duplicates' = '{}')"
)


def _layout(url: str) -> list[tuple[Any, ...]]:
    """Each part's rows, time range and key sequence: what two equal rewrites share (the
    file names differ)."""
    return sorted(
        (p.row_count, p.min_time, p.max_time, p.key_sequence) for p in open_table(url).parts()
    )


def _twin(tmp_path: Path, name: str, key: str) -> str:
    url = str(tmp_path / name)
    create_table(url, SCHEMA, properties={"key.duplicates": key})
    fill_small_parts(url)
    return url


@pytest.mark.parametrize("key", ["last", "keep"])
def test_spark_tasks_rewrite_as_the_driver_does(
    spark: SparkSession, tmp_path: Path, key: str
) -> None:
    spread, local = _twin(tmp_path, "spread", key), _twin(tmp_path, "local", key)
    before = key_view(spread)
    assert before == key_view(local) and len(open_table(spread).parts()) == 14

    runner = SparkTasks(spark)
    done = open_table(spread).maintenance.optimize(runner=runner)
    same = open_table(local).maintenance.optimize()

    assert done.version is not None and same.version is not None
    assert (done.files_removed, done.files_added, done.rows) == (
        same.files_removed,
        same.files_added,
        same.rows,
    )
    assert done.files_added >= 3, "several groups, so several tasks"
    assert key_view(spread) == key_view(local) == before
    assert _layout(spread) == _layout(local)
    # One task per group, each in a Python worker, not in this process.
    assert len(runner.workers) >= 3
    assert all(int(w.rsplit(":", 1)[1]) != os.getpid() for w in runner.workers)
    assert not (tmp_path / "spread" / STAGING_DIR).exists()


def test_catalog_optimize_runs_in_spark_tasks(spark: SparkSession, tmp_path: Path) -> None:
    catalog = Catalog(spark, str(tmp_path / "warehouse"), register_views=False)
    catalog.sql(_CREATE.format("last"))
    url = str(tmp_path / "warehouse" / "t")
    fill_small_parts(url)
    local = _twin(tmp_path, "local", "last")
    before = key_view(url)

    row = catalog.sql("OPTIMIZE t").collect()[0]
    same = open_table(local).maintenance.optimize()

    assert (row.num_files_removed, row.num_files_added) == (same.files_removed, same.files_added)
    assert key_view(url) == key_view(local) == before
    assert _layout(url) == _layout(local)
    # The commit names its job; the job's Spark tasks ran under the job's group.
    job = open_table(url).history(limit=1)[0].operation_parameters["job"]
    tracker = spark.sparkContext.statusTracker()
    jobs = tracker.getJobIdsForGroup(job_group(job))
    assert len(jobs) == 1
    info = tracker.getJobInfo(jobs[0])
    assert info is not None and info.status == "SUCCEEDED"
    stages = [tracker.getStageInfo(s) for s in info.stageIds]
    assert sum(s.numCompletedTasks for s in stages if s is not None) >= 3


def test_catalog_optimize_in_process_when_switched_off(spark: SparkSession, tmp_path: Path) -> None:
    catalog = Catalog(spark, str(tmp_path / "warehouse"), register_views=False)
    catalog.sql(_CREATE.format("last"))
    url = str(tmp_path / "warehouse" / "t")
    fill_small_parts(url)
    spark.conf.set(DISTRIBUTED_REWRITES, "false")
    try:
        catalog.sql("OPTIMIZE t")
    finally:
        spark.conf.unset(DISTRIBUTED_REWRITES)
    job = open_table(url).history(limit=1)[0].operation_parameters["job"]
    assert spark.sparkContext.statusTracker().getJobIdsForGroup(job_group(job)) == []


def test_a_failed_task_leaves_the_table_unchanged(spark: SparkSession, tmp_path: Path) -> None:
    catalog = Catalog(spark, str(tmp_path / "warehouse"), register_views=False)
    catalog.sql(_CREATE.format("keep"))
    url = str(tmp_path / "warehouse" / "t")
    fill_small_parts(url)
    table = open_table(url)
    files = sorted(p.name for p in Path(url).iterdir())
    # The last group's part turns to garbage of its recorded size: that group's task fails
    # on reading it (every attempt), while the other groups' tasks stage their parts.
    broken = Path(url) / table.parts()[-1].path
    broken.write_bytes(b"\0" * broken.stat().st_size)

    with pytest.raises(Exception, match="(?s)tsfile|TsFile|magic|Job aborted"):
        catalog.sql("OPTIMIZE t")

    after = open_table(url)
    assert after.version == table.version
    assert sorted(p.name for p in Path(url).iterdir()) == files, "nothing published or staged"


def test_a_failed_job_removes_its_staging_only_after_its_other_tasks_stopped(
    spark: SparkSession, tmp_path: Path
) -> None:
    # One task fails; the other is still running then, and stages a file a second later.
    # Spark fails the job on the first failure while the other task runs on (Spark stops a
    # Python task it kills only after 2 s): its staging must go too, so the driver waits
    # for the job's tasks to stop before it cleans up.
    url = str(tmp_path / "t")
    create_table(url, SCHEMA)
    table = open_table(url)
    parts = TableParts.of(table)
    failed = tmp_path / "failed"

    class Task:  # defined here: pickled by value to Spark's Python workers
        def __init__(self, job: str, index: int, late: bool) -> None:
            self.table, self.job, self.index, self.late = parts, job, index, late

        def run(self, attempt: int = 0) -> TaskOutcome:
            if not self.late:
                failed.touch()
                raise RuntimeError("task 1 broke")
            for _ in range(600):
                if failed.exists():
                    break
                time.sleep(0.05)
            time.sleep(1.0)
            folder = Path(url) / STAGING_DIR / self.job / f"{self.index}-{attempt}"
            folder.mkdir(parents=True)
            (folder / "late.tsfile").write_bytes(b"staged")
            return TaskOutcome(self.index, True, (), "late")

    with pytest.raises(Exception, match="task 1 broke"), RewriteJob(table) as job:
        first = job.reserve_tasks(2)
        SparkTasks(spark)([Task(job.job, first, True), Task(job.job, first + 1, False)])

    assert failed.exists()
    time.sleep(2.0)  # past the late task's staging, had it run on after the cleanup
    assert sorted(p.name for p in Path(url).iterdir()) == ["_tsfile_manifest"]


def test_delete_rewrites_parts_in_spark_tasks_as_the_driver_does(
    spark: SparkSession, tmp_path: Path
) -> None:
    spread, local = _twin(tmp_path, "spread", "keep"), _twin(tmp_path, "local", "keep")
    # Two cities' rows from time 300 on (parts rewritten), and every row of the last append
    # (a part dropped by its statistics).
    where = "(temp >= 300 AND city <> 'c1') OR time >= 1100"

    runner = SparkTasks(spark)
    done = open_table(spread).delete(where, runner=runner)
    same = open_table(local).delete(where)

    assert done.version is not None and done.files_rewritten >= 3 and done.files_dropped == 1
    assert (done.num_deleted_rows, done.files_dropped, done.files_rewritten) == (
        same.num_deleted_rows,
        same.files_dropped,
        same.files_rewritten,
    )
    assert key_view(spread) == key_view(local)
    assert all(r[0] < 300 or (r[1] == "c1" and r[0] < 1100) for r in key_view(spread))
    assert _layout(spread) == _layout(local)
    assert all(int(w.rsplit(":", 1)[1]) != os.getpid() for w in runner.workers)
    assert not (tmp_path / "spread" / STAGING_DIR).exists()


def test_a_delete_of_many_parts_runs_fewer_tasks_than_parts(
    spark: SparkSession, tmp_path: Path
) -> None:
    spread, local = _twin(tmp_path, "spread", "keep"), _twin(tmp_path, "local", "keep")
    # Every part holds some of c2's rows and others: all 14 are rewritten.
    where = "city = 'c2'"

    runner = SparkTasks(spark)
    done = open_table(spread).delete(where, runner=runner)
    same = open_table(local).delete(where)

    assert done.files_rewritten == same.files_rewritten == 14
    assert done.num_deleted_rows == same.num_deleted_rows > 0
    assert key_view(spread) == key_view(local)
    assert _layout(spread) == _layout(local)
    # Batches of about targetFileSize (four parts' bytes), one per core at least: 4 tasks.
    assert spark.sparkContext.defaultParallelism <= len(runner.workers) < done.files_rewritten
    job = open_table(spread).history(limit=1)[0].operation_parameters["job"]
    tracker = spark.sparkContext.statusTracker()
    (spark_job,) = tracker.getJobIdsForGroup(job_group(job))
    info = tracker.getJobInfo(spark_job)
    assert info is not None
    stages = [tracker.getStageInfo(s) for s in info.stageIds]
    assert sum(s.numCompletedTasks for s in stages if s is not None) == len(runner.workers)
    assert all(int(w.rsplit(":", 1)[1]) != os.getpid() for w in runner.workers)
    assert not (tmp_path / "spread" / STAGING_DIR).exists()


def test_catalog_delete_as_in_process(spark: SparkSession, tmp_path: Path) -> None:
    catalog = Catalog(spark, str(tmp_path / "warehouse"), register_views=False)
    catalog.sql(_CREATE.format("keep"))
    url = str(tmp_path / "warehouse" / "t")
    fill_small_parts(url)
    local = _twin(tmp_path, "local", "keep")

    row = catalog.sql("DELETE FROM t WHERE temp > 300.2 AND city <> 'c1'").collect()[0]
    same = open_table(local).delete("temp > 300.2 AND city <> 'c1'")

    assert row.num_affected_rows == same.num_deleted_rows > 0
    assert row.num_files_rewritten == same.files_rewritten > 0
    assert key_view(url) == key_view(local)
    assert _layout(url) == _layout(local)
    job = open_table(url).history(limit=1)[0].operation_parameters["job"]
    assert len(spark.sparkContext.statusTracker().getJobIdsForGroup(job_group(job))) == 1


def test_an_update_rewrites_parts_in_spark_tasks_as_the_driver_does(
    spark: SparkSession, tmp_path: Path
) -> None:
    spread, local = _twin(tmp_path, "spread", "keep"), _twin(tmp_path, "local", "keep")
    # The pyarrow expression travels to the Python workers inside each task.
    set = {"temp": pc.field("temp") * -1}

    runner = SparkTasks(spark)
    done = open_table(spread).update(set, "city = 'c2'", runner=runner)
    same = open_table(local).update(set, "city = 'c2'")

    assert done == same and done.files_removed == 14
    assert key_view(spread) == key_view(local)
    assert sorted(r[2] for r in key_view(spread) if r[1] == "c2")[-1] <= 0
    assert _layout(spread) == _layout(local)
    assert spark.sparkContext.defaultParallelism <= len(runner.workers) < done.files_removed
    assert all(int(w.rsplit(":", 1)[1]) != os.getpid() for w in runner.workers)
    assert not (tmp_path / "spread" / STAGING_DIR).exists()


def _catalog_twins(spark: SparkSession, tmp_path: Path, key: str) -> tuple[Catalog, str, str]:
    """A catalog with tables ``t`` and ``u`` of :func:`fill_small_parts`'s rows: the
    statement under test runs on ``t`` distributed, and on ``u`` with the conf off."""
    catalog = Catalog(spark, str(tmp_path / "warehouse"), register_views=False)
    catalog.sql(_CREATE.format(key))
    catalog.sql(_CREATE.format(key).replace("TABLE t ", "TABLE u "))
    spread, local = str(tmp_path / "warehouse" / "t"), str(tmp_path / "warehouse" / "u")
    fill_small_parts(spread)
    fill_small_parts(local)
    return catalog, spread, local


def _group_jobs(spark: SparkSession, url: str) -> list[int]:
    """The Spark jobs of the rewrite job that made ``url``'s latest commit, each checked
    to have succeeded."""
    job = open_table(url).history(limit=1)[0].operation_parameters["job"]
    tracker = spark.sparkContext.statusTracker()
    ids = list(tracker.getJobIdsForGroup(job_group(job)))
    for spark_job in ids:
        info = tracker.getJobInfo(spark_job)
        assert info is not None and info.status == "SUCCEEDED"
    return ids


def _completed_tasks(spark: SparkSession, jobs: list[int]) -> int:
    tracker = spark.sparkContext.statusTracker()
    infos = [tracker.getJobInfo(j) for j in jobs]
    stages = [tracker.getStageInfo(s) for i in infos if i is not None for s in i.stageIds]
    return sum(s.numCompletedTasks for s in stages if s is not None)


def test_catalog_update_rewrites_parts_in_spark_tasks(spark: SparkSession, tmp_path: Path) -> None:
    """Catalog.sql's UPDATE of a keep table: the parts holding the changed keys (the
    replayed ones in two parts each) are rewritten in Spark tasks, and the new rows staged
    by Spark tasks, with the same rows and parts as with the conf off (all in the driver)."""
    catalog, spread, local = _catalog_twins(spark, tmp_path, "keep")
    update = "UPDATE {} SET temp = temp + 1000 WHERE city = 'c1' AND time % 100 < 5"

    row, same = both_ways(spark, catalog, update)

    assert row.num_affected_rows == same.num_affected_rows == 70
    assert key_view(spread) == key_view(local)
    assert key_change_layout(_layout(spread)) == key_change_layout(_layout(local))
    assert _group_jobs(spark, local) == []
    # The parts' rewrite, then the new rows' staging.
    jobs = _group_jobs(spark, spread)
    assert len(jobs) >= 2 and _completed_tasks(spark, jobs) >= 3
    assert not (Path(spread) / STAGING_DIR).exists()


@pytest.mark.slow
@pytest.mark.parametrize("key", ["last", "keep"])
def test_catalog_merge_stages_its_new_rows_in_spark_tasks(
    spark: SparkSession, tmp_path: Path, key: str
) -> None:
    """Catalog.sql's MERGE (updates, deletes and inserts) with its new rows staged by Spark
    tasks: the same rows, counts and history as with the conf off, where the driver
    collects and stages them; a refused row (a null TAG) fails the statement with the
    driver's error and leaves the table as it was."""
    catalog, spread, local = _catalog_twins(spark, tmp_path, key)
    source = (
        "SELECT time, city, temp FROM t2 WHERE time % 50 = 0 "
        "UNION ALL SELECT time + 100000 AS time, city, temp FROM t2 WHERE time % 40 = 0"
    )
    merge = (
        "MERGE INTO {} t USING ({}) s ON t.city = s.city AND t.time = s.time "
        "WHEN MATCHED AND s.temp > 300 THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET temp = s.temp * 2 "
        "WHEN NOT MATCHED THEN INSERT *"
    )
    # The source holds one row per key (a last table's read).
    catalog.sql(_CREATE.format("last").replace("TABLE t ", "TABLE t2 "))
    fill_small_parts(str(tmp_path / "warehouse" / "t2"))

    row, same = both_ways(spark, catalog, merge.format("{}", source))

    assert tuple(row) == tuple(same)
    assert row.num_updated_rows > 0 and row.num_deleted_rows > 0 and row.num_inserted_rows > 0
    assert key_view(spread) == key_view(local)
    history = [open_table(u).history(limit=1)[0] for u in (spread, local)]
    assert history[0].rows_added == history[1].rows_added
    assert history[0].rows_removed == history[1].rows_removed
    assert _group_jobs(spark, local) == [] and _group_jobs(spark, spread)
    assert not (Path(spread) / STAGING_DIR).exists()

    version = open_table(spread).version
    files = sorted(p for p in Path(spread).rglob("*") if p.is_file())
    bad = "SELECT time + 200000 AS time, CAST(NULL AS STRING) AS city, temp FROM t2"
    with pytest.raises(DataError, match="city"):
        catalog.sql(merge.format("t", bad))
    assert open_table(spread).version == version
    assert sorted(p for p in Path(spread).rglob("*") if p.is_file()) == files


# -- replaceWhere ---------------------------------------------------------------------------------

# Straddles the parts of times 100-119 and 400-419, holds those of 200-219 and 300-319 whole.
_REPLACED = "time >= 105 AND time < 410"


def _replacement(spark: SparkSession) -> Any:
    return spark.createDataFrame(
        [(150, "c1", 1.5), (405, "c2", 2.5)], "time long, city string, temp float"
    )


# A keep table's: tests/cluster/test_cluster_rewrites.py.
@pytest.mark.parametrize("key", ["last"])
def test_catalog_replace_where_rewrites_straddling_parts_in_spark_tasks(
    spark: SparkSession, tmp_path: Path, key: str
) -> None:
    """INSERT ... REPLACE WHERE rewrites the parts straddling its predicate as Spark tasks
    before the write, whose commit takes them: the same rows and history as with the conf
    off (the write's commit rewrites them), and the Spark job group is in the history."""
    catalog, spread, local = _catalog_twins(spark, tmp_path, key)
    _replacement(spark).createOrReplaceTempView("replacement")
    insert = f"INSERT INTO {{}} REPLACE WHERE {_REPLACED} SELECT * FROM replacement"

    row, same = both_ways(spark, catalog, insert)

    assert row.num_inserted_rows == same.num_inserted_rows == 2
    assert key_view(spread) == key_view(local)
    assert _layout(spread) == _layout(local)
    done, twin = (open_table(u).history(limit=1)[0] for u in (spread, local))
    assert (
        done.operation_parameters["numDeletedRows"] == twin.operation_parameters["numDeletedRows"]
    )
    assert (done.rows_removed, done.rows_added) == (twin.rows_removed, twin.rows_added)
    assert "rewriteJob" not in twin.operation_parameters
    tracker = spark.sparkContext.statusTracker()
    jobs = tracker.getJobIdsForGroup(job_group(done.operation_parameters["rewriteJob"]))
    assert jobs and all(tracker.getJobInfo(j).status == "SUCCEEDED" for j in jobs)
    assert not (Path(spread) / STAGING_DIR).exists()
