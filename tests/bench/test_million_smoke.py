"""Issue 26's million-part benchmark: the synthetic table is a valid table (its checkpoint and
commits open to the parts the generator made), the query prunes to one device's day, and the
targets are judged and rendered; at full size (``--run-long``) the targets hold."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.million import (
    COMMITS_AFTER,
    GROUPS,
    TARGETS,
    SyntheticParts,
    bench_million,
    make_part,
    one_device_one_day,
    synthesize_million,
)
from bench.report import render_million_plan, render_million_section, splice_section
from tsfile_catalog.table import clear_cache, open_table


def test_the_synthetic_log_opens_to_the_generated_parts(tmp_path: Path) -> None:
    parts = 3 * GROUPS
    path = str(tmp_path / "t")
    synthesize_million(path, parts)
    clear_cache()
    table = open_table(path)
    opened = list(table.snapshot.parts)
    assert len(opened) == parts + COMMITS_AFTER * GROUPS
    # The checkpoint holds the generated parts as made (the last hour added by its commit).
    assert opened[:5] == list(SyntheticParts(5))
    assert opened[parts - 1].path == make_part(parts - 1, added_version=0).path
    assert [p.path for p in opened[parts:]] == [
        make_part(i, added_version=0).path for i in range(parts, len(opened))
    ]
    # One device, one day: the day's hours of that device's group, nothing else.
    plan = table.plan(where=one_device_one_day(parts))
    device = re.search(r"device = '(\w+)'", one_device_one_day(parts))
    assert device is not None
    assert plan.parts and len(plan.parts) < len(opened)
    for part in plan.parts:
        assert part.tags["device"].values is not None
        assert device.group(1) in part.tags["device"].values


def test_million_bench_measures_and_renders_its_targets(tmp_path: Path) -> None:
    results = bench_million(str(tmp_path), parts=2 * GROUPS, runs=1)
    assert {t["measure"] for t in results["targets"]} == set(TARGETS)
    for target in results["targets"]:
        assert target["met"] == (target["value"] <= target["limit"])
    (plan,) = results["plans"]
    assert 0 < plan["kept_parts"] < plan["parts"]
    assert plan["peak_rss_bytes"] >= plan["base_rss_bytes"] > 0
    (write,) = results["writes"]
    assert write["checkpoint_bytes"] > 0 and write["write_s"] > 0
    docs = tmp_path / "benchmarks.md"
    docs.write_text("# Benchmarks\n\nkept\n")
    splice_section(docs, "million", render_million_section(results))
    splice_section(docs, "million", render_million_section(results))  # replaced, not added
    text = docs.read_text()
    assert text.count("## A million parts") == 1 and "kept" in text
    assert "| cold open + plan, CPU | <= 3.00 s |" in text
    assert "Linear at 7,000 parts" in render_million_plan(results)


@pytest.mark.long
def test_a_million_parts_meet_issue_26s_targets(tmp_path: Path) -> None:
    results = bench_million(str(tmp_path), runs=1)
    assert all(t["met"] for t in results["targets"]), results["targets"]
