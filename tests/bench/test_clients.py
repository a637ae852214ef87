"""bench/clients.py: the section judges each client against in-process by its worst query, and
(``-m server``: three JVMs) the smallest run times every path and gets the same answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.clients import CLIENTS, QUERIES, TARGET, bench_clients, render_section
from bench.datagen import Scale


def _results(ratios: dict[str, list[float]]) -> dict[str, Any]:
    queries = []
    for i, qid in enumerate(QUERIES):
        inprocess = 0.2 + i / 10
        medians = {"inprocess": inprocess, **{c: inprocess * ratios[c][i] for c in CLIENTS}}
        queries.append(
            {
                "id": qid,
                "title": f"query {qid}",
                "best_s": medians,
                "median_s": medians,
                "ratios": {c: medians[c] / inprocess for c in CLIENTS},
                "net_ratios": {c: medians[c] / inprocess for c in CLIENTS},
                "result_rows": i + 1,
                "same_answer": dict.fromkeys(CLIENTS, True),
            }
        )
    return {
        "scale": Scale.smoke().to_json(),
        "master": "local[2]",
        "cpu_count": 2,
        "load_average": [1.0, 1.0, 1.0],
        "elapsed_s": 60.0,
        "queries": queries,
    }


def test_the_worst_query_decides_each_clients_target() -> None:
    within, beyond = [1.0, 1.1, TARGET, 0.9], [1.0, TARGET + 0.05, 1.1, 1.0]
    text = render_section(_results({"connect": within, "jdbc": beyond}))
    connect = next(line for line in text.splitlines() if line.startswith("| Spark Connect /"))
    jdbc = next(line for line in text.splitlines() if line.startswith("| JDBC (Thrift"))
    assert f"{TARGET:.2f}x" in connect and "**met**" in connect
    assert f"{TARGET + 0.05:.2f}x" in jdbc and "**not met**" in jdbc
    rows = [line.split(" ")[1] for line in text.splitlines() if line.startswith("| Q")]
    assert rows == ["Query", *QUERIES]


@pytest.mark.server
def test_the_smallest_run_times_every_path_with_the_same_answers(tmp_path: Path) -> None:
    pytest.importorskip("pyhive.hive", reason="the test extra's PyHive is not installed")
    results = bench_clients(str(tmp_path), Scale.smoke())
    assert [q["id"] for q in results["queries"]] == list(QUERIES)
    for query in results["queries"]:
        assert all(query["same_answer"].values()), query["id"]
        assert query["result_rows"] > 0
        assert all(len(times) == Scale.smoke().repetitions for times in query["times_s"].values())
    assert set(results["floor"]["median_s"]) == {"inprocess", *CLIENTS}
    assert "| Q9 (" in render_section(results)
