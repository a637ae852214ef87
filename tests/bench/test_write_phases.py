"""The write-phase timings: every phase of staging a part is timed, as one task and split."""

from __future__ import annotations

from bench.datagen import REALISTIC_TABLE, REALISTIC_TAGS, realistic_arrow
from bench.report import _write_phase_lines
from bench.write_phases import PHASES, bench_write_phases


def test_every_phase_is_timed_for_one_task_and_for_the_split_tasks() -> None:
    data = realistic_arrow(devices=3, seconds=200)
    result = bench_write_phases(
        data, table=REALISTIC_TABLE, tags=REALISTIC_TAGS, tasks=4, repetitions=1
    )

    assert result["rows"] == 600
    assert result["one_task"]["tasks"] == 1 and result["spark_tasks"]["tasks"] == 4
    for run in (result["one_task"], result["spark_tasks"]):
        assert set(run["seconds"]) == {key for key, _ in PHASES}
        assert all(seconds > 0 for seconds in run["seconds"].values()), run
        assert run["total_s"] == sum(run["seconds"].values())
    table = "\n".join(_write_phase_lines({"phases": result, "partitions": 4}))
    assert "| 1 task x 600 rows | 4 tasks x 150 rows |" in table
    for _, label in PHASES:
        assert f"| {label} |" in table
