"""The change feed benchmark end to end at a tiny size (Spark-free): its correction is read
back as exactly one pre- and one post-image per corrected row, and its report is generated."""

from __future__ import annotations

import json
from pathlib import Path

from bench.change_feed import run


def test_change_feed_bench_reads_back_its_correction(tmp_path: Path) -> None:
    docs = tmp_path / "benchmarks-change-feed.md"
    results = run(rows=4_000, parts=4, out_dir=tmp_path / "out", docs_path=docs)
    assert results["rows"] == 4_000 and results["corrected_rows"] == 40
    assert results["change_rows"] == 80 and results["parts_after"] == 5
    assert json.loads((tmp_path / "out" / "change_feed.json").read_text()) == results
    assert f"{results['changes_s']:.2f} s" in docs.read_text()
