"""The table-key benchmark end to end at a tiny size, on the shared test session."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pyspark.sql import SparkSession

from bench.key import MERGE_TARGET, run

# Both share one module fixture (a bench run, ~55 s): slow together.
pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def results(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("key-bench")
    run(spark, appends=12, rows=100, repetitions=1, out_dir=out, docs_path=out / "key.md")
    return {"json": json.loads((out / "key.json").read_text()), "md": (out / "key.md").read_text()}


def test_key_bench_resends_a_tenth_and_optimize_removes_every_overlap(
    results: dict[str, Any],
) -> None:
    data = results["json"]
    tables = data["tables"]
    assert data["rows_resent"] == 12 * 100 // 10
    assert tables["overlap"]["key"] == "last" and tables["overlap"]["merged_slices"] > 0
    assert tables["base"]["merged_slices"] == 0
    assert tables["overlap"]["rows_stored"] == 12 * 100 + data["rows_resent"]
    # After OPTIMIZE the re-sent rows replaced the first ones: as many rows as without them.
    assert tables["optimized"]["merged_slices"] == 0
    assert tables["optimized"]["rows_stored"] == tables["base_optimized"]["rows_stored"] == 1200
    for query in data["queries"]:
        assert query["merge_ratio"] > 0 and query["optimized_ratio"] > 0
        assert query["optimized"]["answer"][0][0] == query["base"]["answer"][0][0] > 0
    full = next(q for q in data["queries"] if q["id"] == "full")
    # The corrections add 0.5 to each re-sent value: the key's sum is the base's plus that.
    assert full["optimized"]["answer"][0][1] == full["base"]["answer"][0][1] + 5 * 120
    assert data["target"]["limit"] == MERGE_TARGET
    text = results["md"]
    assert "Target: merge-on-read" in text
    # Each statement is timed or listed as not measured, with Spark's reason.
    for entry in data["dml"].values():
        assert ("seconds" in entry) != ("not_measured" in entry)
        shown = "not measured" if "not_measured" in entry else ""
        assert f"| {entry['description']} | {shown}" in text


def test_key_bench_reads_the_same_answers_with_overlap_as_after_optimize(
    results: dict[str, Any],
) -> None:
    assert all(q["same_answer"] for q in results["json"]["queries"])
