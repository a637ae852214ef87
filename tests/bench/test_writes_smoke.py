"""bench.writes at smoke scale on the shared test session: every path writes, the floor and
the levers run, the targets are judged against Parquet in the same run, and the CPU time of
the process tree is counted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from bench.writes import PATHS, TARGETS, bench_writes, render_writes_section, tree_cpu_seconds


def test_the_process_tree_cpu_counts_children() -> None:
    before = tree_cpu_seconds()
    # A child burning about 0.3 s of CPU, reaped by this process (cutime).
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass",
        ],
        check=True,
    )
    assert tree_cpu_seconds() - before >= 0.25


@pytest.mark.spark
def test_every_path_writes_and_is_judged_against_parquet(
    spark: SparkSession, tmp_path: Path
) -> None:
    from bench.queries import plugin_table

    work = tmp_path / "work"
    work.mkdir()
    try:
        plugin_table(spark, str(work / "warehouse"))
    except Exception as e:  # noqa: BLE001 - the jar needs a JDK
        pytest.skip(f"the catalog plugin is not available here: {e}")
    # The shared session is warm; the levers are the same writes under other settings.
    results = bench_writes(
        spark, str(work), devices=2, seconds=500, repetitions=1, warmup=False, levers=False
    )
    assert results["rows"] == 1_000
    assert set(results["medians"]) == set(PATHS)
    for path in PATHS:
        (run,) = results["runs"][path]
        assert run["wall_s"] > 0 and run["cpu_s"] > 0, path
    assert {t["path"] for t in results["targets"]} == set(TARGETS)
    for target in results["targets"]:
        parquet, ours = results["medians"]["parquet"], results["medians"][target["path"]]
        assert target["value"] == pytest.approx(parquet["wall_s"] / ours["wall_s"])
        assert target["met"] == (target["value"] >= target["limit"])
    assert results["levers"] == {}
    section = render_writes_section(results)
    assert "| tsfile_catalog |" in section and "Share of the floor" in section
    assert "<!-- measured-at: " in section or "<!-- measured-at: unknown -->" in section
