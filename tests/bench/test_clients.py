"""bench/clients.py: the section judges each client against in-process by its worst query, and
(``-m server``: three JVMs) the smallest run times every path and gets the same answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.clients import (
    CLIENTS,
    EAGER,
    PATHS,
    PREPARED,
    QUERIES,
    QUERY_FLOOR,
    TARGET,
    bench_clients,
    render_section,
)
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


def test_the_breakdown_times_connects_eager_sql_and_its_collect_apart() -> None:
    results = _results({"connect": [3.0, 2.0, 3.0, 1.5], "jdbc": [1.0] * 4})
    for i, query in enumerate(results["queries"]):
        inprocess = query["best_s"]["inprocess"]  # 200, 300, 400, 500 ms
        query["best_s"][EAGER] = 0.030 + i / 1000
        query["best_s"][PREPARED] = inprocess * (1.1 + i / 10)
    text = render_section(results)
    q1 = next(line for line in text.splitlines() if line.startswith("| Q1 | "))
    assert q1.split(" | ")[1:5] == ["200 ms", "30 ms", "220 ms", "1.10x |"]
    assert "The eager `spark.sql` costs 30 to 33 ms a query" in text
    assert "alone is at worst 1.40x in-process (beyond the 1.3x target)" in text


def test_the_floor_query_bounds_the_in_process_time_a_query_within_the_target_needs() -> None:
    # Connect adds 30 ms to a query of no table and no job: a query within 1.3x through
    # Connect must take at least 100 ms in-process, whatever the catalog's part costs.
    results = _results({"connect": [3.0, 2.0, 1.5, 1.2], "jdbc": [1.0] * 4})
    for query in results["queries"]:
        best = query["best_s"]
        query["net_ratios"] = {
            c: (best[c] - {"connect": 0.030, "jdbc": 0.002}[c]) / best["inprocess"] for c in CLIENTS
        }
    best = {"inprocess": 0.010, "connect": 0.040, "jdbc": 0.012, EAGER: 0.008, PREPARED: 0.025}
    results[QUERY_FLOOR] = {"sql": "SELECT * FROM VALUES (1, 'x') AS v(a, b)", "best_s": best}
    text = render_section(results)
    row = next(line for line in text.splitlines() if line.startswith("| floor query: "))
    assert row.split(" | ")[1:6] == ["10 ms", "40 ms", "12 ms", "4.00x", "1.20x"]
    assert "the floor query costs 30 ms more than in-process (4.00x)" in text
    assert "takes at least 100 ms in-process, whatever the catalog costs" in text
    assert "the fastest here takes 200 ms" in text
    # Q1 (200 ms in-process, 600 ms through Connect) less 30 ms: 2.85x.
    assert "the worst query is 2.85x in-process through Spark Connect and 1.00x" in text


def test_the_parquet_baseline_shows_each_clients_ratio_next_to_the_catalogs() -> None:
    results = _results({"connect": [1.5] * 4, "jdbc": [1.0] * 4})
    results["parquet"] = [
        {
            "id": q["id"],
            "best_s": {"inprocess": 0.100, "connect": 0.120 + i / 100, "jdbc": 0.090},
            "ratios": {"connect": 1.2 + i / 10, "jdbc": 0.9},
            "same_answer": dict.fromkeys(CLIENTS, True),
        }
        for i, q in enumerate(results["queries"])
    ]
    text = render_section(results)
    q2 = next(line for line in text.splitlines() if line.startswith("| Q2 | 100 ms"))
    assert q2.split(" | ")[1:7] == ["100 ms", "130 ms", "90 ms", "1.30x", "0.90x", "1.50x / 1.00x"]
    assert "worst query is 1.50x in-process through Spark Connect and 0.90x through JDBC" in text


@pytest.mark.server
def test_the_smallest_run_times_every_path_with_the_same_answers(tmp_path: Path) -> None:
    pytest.importorskip("pyhive.hive", reason="the test extra's PyHive is not installed")
    results = bench_clients(str(tmp_path), Scale.smoke())
    assert [q["id"] for q in results["queries"]] == list(QUERIES)
    for query in results["queries"]:
        assert all(query["same_answer"].values()), query["id"]
        assert query["result_rows"] > 0
        assert all(len(times) == Scale.smoke().repetitions for times in query["times_s"].values())
    assert set(results["floor"]["median_s"]) == set(PATHS)
    assert set(results[QUERY_FLOOR]["median_s"]) == set(PATHS)
    assert results[QUERY_FLOOR]["best_s"]["connect"] > 0
    assert [q["id"] for q in results["parquet"]] == list(QUERIES)
    assert all(all(q["same_answer"].values()) for q in results["parquet"])
    assert "| Q9 (" in render_section(results)
