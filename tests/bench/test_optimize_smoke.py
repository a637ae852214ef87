"""The OPTIMIZE benchmark end to end at a tiny size, on the shared test session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from bench.optimize import run

pytestmark = pytest.mark.spark


def test_optimize_bench_compacts_and_times_the_same_answers(
    spark: SparkSession, tmp_path: Path
) -> None:
    docs = tmp_path / "benchmarks-optimize.md"
    run(spark, appends=3, rows=100, repetitions=1, out_dir=tmp_path / "out", docs_path=docs)

    results = json.loads((tmp_path / "out" / "optimize.json").read_text())
    assert (results["parts_before"], results["parts_after"]) == (3, 1)
    for query in results["queries"]:
        assert query["same_answer"], query
        assert query["before"]["answer"][0][0] > 0, f"{query['id']} matched no rows"
        assert query["speedup"] > 0
        assert query["after"]["parts_opened"] <= query["before"]["parts_opened"]
    total = results["queries"][0]["before"]["answer"][0][0]
    assert total == 3 * 100
    text = docs.read_text()
    assert "| device |" in text and "Generated" in text and "Load average" in text
