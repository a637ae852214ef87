"""bench.mixed end to end at smoke scale on the shared test session: a half-Parquet table,
Q2/Q3 both ways, equal answers, a generated report."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from bench.datagen import Scale
from bench.mixed import WAYS, run_mixed

pytestmark = pytest.mark.spark


@pytest.mark.slow
def test_mixed_run_times_q2_q3_both_ways_with_equal_answers(
    spark: SparkSession, tmp_path: Path
) -> None:
    docs = tmp_path / "external-parts-bench.md"
    # Smaller than Scale.smoke(): the run is a handful of Spark jobs whatever the size.
    scale = replace(Scale.smoke(), regions=2, devices_per_region=3, timestamps=400, parts=2)
    run_mixed(spark, scale=scale, out_dir=tmp_path / "out", docs_path=docs)
    results = json.loads((tmp_path / "out" / "mixed.json").read_text())
    assert results["parts"]["tsfile"] > 0 and results["parts"]["parquet"] > 0
    assert [q["id"] for q in results["queries"]] == ["Q2", "Q3"]
    for query in results["queries"]:
        assert query["same_answer"], query["answers"]
        assert query["answers"]["python"][0] > 0, f"{query['id']} matched no rows"
        assert all(query["median_s"][way] > 0 for way in WAYS)
    assert "| Q3: one device" in docs.read_text()
