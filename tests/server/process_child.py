"""Run by tests/server/test_process.py in a fresh process: a PySpark driver that never
calls ``register``, so the JVM's own catalog process answers; the process is killed between
two queries; then ``register`` hands over the in-process delegate. One line per fact."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession

import tsfile_catalog

_MODULE = "tsfile_catalog.spark_catalog.process"


def catalog_processes(jvm_pid: int) -> list[int]:
    """The pids of the catalog processes the JVM ``jvm_pid`` started (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == jvm_pid and _MODULE in cmdline:
            found.append(int(entry.name))
    return found


def planning_ms(spark: SparkSession, query: str, runs: int = 20) -> float:
    """The median time Spark takes to plan ``query`` (analysis to physical plan), after as
    many runs to warm up."""
    times = []
    for _ in range(runs):
        spark.sql(query)._jdf.queryExecution().executedPlan()
    for _ in range(runs):
        start = time.perf_counter()
        spark.sql(query)._jdf.queryExecution().executedPlan()
        times.append((time.perf_counter() - start) * 1000)
    return sorted(times)[len(times) // 2]


def main(warehouse: str) -> None:
    builder = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
    spark = tsfile_catalog.configure(builder, warehouse=warehouse, name="ts").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    jvm = spark.sparkContext._jvm
    jvm_pid = int(jvm.java.lang.ProcessHandle.current().pid())
    try:
        print("BEFORE_FIRST_CALL", len(catalog_processes(jvm_pid)))
        spark.sql(
            "CREATE TABLE ts.db.w (time BIGINT, city STRING, temp DOUBLE) USING tsfile "
            "TBLPROPERTIES ('tagColumns' = 'city')"
        )
        spark.sql("INSERT INTO ts.db.w VALUES (1, 'bj', 1.5), (2, 'sh', 2.5)")
        first = catalog_processes(jvm_pid)
        print("PROCESSES", len(first))
        print("ROWS", spark.sql("SELECT count(*) FROM ts.db.w WHERE temp > 2").first()[0])
        print("PLAN_MS_PROCESS", round(planning_ms(spark, "SELECT count(*) FROM ts.db.w"), 1))
        os.kill(first[0], signal.SIGKILL)
        # Gone from /proc once the JVM reaped it (a zombie is still there).
        deadline = time.monotonic() + 30
        while Path(f"/proc/{first[0]}").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        print("AFTER_KILL", spark.sql("SELECT count(*) FROM ts.db.w").first()[0])
        second = catalog_processes(jvm_pid)
        print("RESTARTED", len(second) == 1 and second != first)
        tsfile_catalog.register(spark)
        print("PLAN_MS_IN_PROCESS", round(planning_ms(spark, "SELECT count(*) FROM ts.db.w"), 1))
        print("REGISTERED", spark.sql("SELECT count(*) FROM ts.db.w").first()[0])
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
