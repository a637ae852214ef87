"""The distributed-rewrites benchmark end to end at a tiny size, on the shared test session
(its tasks run in Spark's Python workers, processes other than the driver), and its verdict
on a run whose two paths disagree."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from bench.rewrites import judge, main, render_markdown, run


@pytest.mark.slow
@pytest.mark.spark
def test_rewrites_bench_runs_both_ways_with_the_same_rows(
    spark: SparkSession, tmp_path: Path
) -> None:
    docs = tmp_path / "benchmarks-rewrites.md"
    run(spark, parts=8, rows=1_000, factor=2, out_dir=tmp_path / "out", docs_path=docs)

    results = json.loads((tmp_path / "out" / "rewrites.json").read_text())
    assert [s["rows"] for s in results["sizes"]] == [8_000, 16_000]
    for size in results["sizes"]:
        optimize, delete = size["runs"]["optimize"], size["runs"]["delete"]
        for mode in ("distributed", "in_process"):
            assert optimize[mode]["rows"] == size["rows"]
            assert optimize[mode]["files_removed"] == 8
            assert 2 <= optimize[mode]["files_added"] <= 4
            assert delete[mode]["rows_deleted"] == size["rows"] // 10
            assert delete[mode]["files_rewritten"] == 8 and delete[mode]["files_dropped"] == 0
            assert delete[mode]["rows"] == size["rows"] - size["rows"] // 10
            assert optimize[mode]["rss_peak"] >= optimize[mode]["rss_before"] > 0
        # Eight small parts packed into one task per core (plan_batches).
        assert delete["distributed"]["tasks"] == spark.sparkContext.defaultParallelism < 8
        assert delete["distributed"]["on_executors"]
        assert delete["in_process"]["workers"] == []
    for verdict in results["judged"].values():
        assert verdict["same_rows"] and verdict["on_executors"]
    text = docs.read_text()
    assert "| DELETE | 16,000 | distributed |" in text
    assert "Generated" in text and "Load average" in text
    again = tmp_path / "again.md"
    assert main(["--render", str(tmp_path / "out" / "rewrites.json"), "--docs", str(again)]) == 0
    assert again.read_text() == text

    broken = copy.deepcopy(results)
    broken["sizes"][1]["runs"]["delete"]["distributed"]["checksum"] = "0"
    verdict = judge(broken)["delete"]
    assert not verdict["same_rows"] and not verdict["met"]
    broken["judged"] = judge(broken)
    assert "| DELETE | 16,000 | distributed |" in render_markdown(broken)
    assert "| NO |" in render_markdown(broken)
