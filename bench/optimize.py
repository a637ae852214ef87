"""``python -m bench.optimize [--appends 200] [--rows 2000] [--out bench/out]``: what OPTIMIZE buys.

Builds a table from many small appends (one part and one commit each, as a table fed by small
INSERTs ends up), times the same queries before and after ``OPTIMIZE``
(median of the repetitions, answers compared), and writes ``<out>/optimize.json`` and the
Markdown report ``docs/benchmarks-optimize.md`` (numbers generated, never typed).

:func:`run` takes an existing SparkSession, so the smoke test reuses the test session.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shlex
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.report import _fmt_bytes, _fmt_s, _load
from bench.run import machine_info

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession

__all__ = ["run", "render_markdown", "main"]

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "bench" / "out"
DEFAULT_DOCS = REPO / "docs" / "benchmarks-optimize.md"
DEVICES = 20

# (id, description, where, columns, aggregate): each ends in a small aggregate so the scan
# is what is timed.
QUERIES: tuple[tuple[str, str, str | None, str, str], ...] = (
    # Sums an exact integer: a double sum depends on the order rows arrive in.
    (
        "full",
        "count and sum over every row",
        None,
        "time,value",
        "count(*), sum(cast(value * 10 AS bigint))",
    ),
    (
        "device",
        "one device, the last tenth of the time range",
        "device = 'd07' AND time >= {recent}",
        "time,device,value",
        "count(*), max(value)",
    ),
)


def _log(message: str) -> None:
    print(f"[bench.optimize {dt.datetime.now():%H:%M:%S}] {message}", flush=True)


def _batch(index: int, rows: int) -> pa.Table:
    """Append ``index``'s rows: times ``index * rows`` on, spread over every device."""
    import pyarrow as pa

    ids = pa.array(range(index * rows, (index + 1) * rows), pa.int64())
    return pa.table(
        {
            "time": ids,
            "device": pa.array([f"d{i % DEVICES:02d}" for i in ids.to_pylist()]),
            "value": pa.array([(i % 1000) / 10 for i in ids.to_pylist()], pa.float64()),
        }
    )


def _append(path: str, index: int, rows: int) -> None:
    """One small append of ``rows`` rows spread over every device: one part, one commit."""
    _write(path, _batch(index, rows))


def _write(path: str, data: pa.Table) -> None:
    """Commit ``data`` (time, device, value) as one part and one commit.

    Written with the table layer's own write path (the part staging the Spark writer's tasks
    use, then ``append_parts``): the same files and commits as a one-task Spark append,
    without a Spark job each, which would time the cluster rather than the table.
    """
    import tempfile

    from tsfile_catalog.formats.tsfile import WriteSettings
    from tsfile_catalog.io import FileIO, join_url
    from tsfile_catalog.metadata.ownership import STAGING_DIR, new_job_id, task_dir_name
    from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema
    from tsfile_catalog.table import append_parts
    from tsfile_catalog.table.rewrite import stage_part

    schema = TableSchema.of(
        "metrics",
        [
            Column("device", DataType.STRING, Category.TAG),
            Column("value", DataType.DOUBLE, Category.FIELD),
        ],
    )
    io = FileIO(path)
    job = join_url(path, STAGING_DIR, new_job_id())
    with tempfile.TemporaryDirectory() as local:
        staged = stage_part(
            io,
            data,
            schema,
            WriteSettings(),
            staging=join_url(job, task_dir_name(0, 0)),
            local_dir=local,
        )
        io.move(staged.staged_url, join_url(path, staged.part.path))
    io.delete(job, recursive=True)
    append_parts(path, [staged.part], schema)


def _query(spark: SparkSession, path: str, where: str | None, columns: str, agg: str) -> list[Any]:
    options = {"columns": columns}
    if where is not None:
        options["where"] = where
    frame = spark.read.format("tsfile").options(**options).load(path)
    return [tuple(r) for r in frame.selectExpr(*agg.split(", ")).collect()]


def _time_queries(
    spark: SparkSession, path: str, repetitions: int, recent: int
) -> dict[str, dict[str, Any]]:
    from tsfile_catalog import open_table

    table = open_table(path)
    out: dict[str, dict[str, Any]] = {}
    for qid, _, where, columns, agg in QUERIES:
        text = None if where is None else where.format(recent=recent)
        opened = len(table.plan(text).parts)
        answer = _query(spark, path, text, columns, agg)  # warm-up, and the answer
        times = []
        for _ in range(repetitions):
            started = time.perf_counter()
            _query(spark, path, text, columns, agg)
            times.append(time.perf_counter() - started)
        out[qid] = {
            "answer": answer,
            "times": times,
            "median_s": statistics.median(times),
            "parts_opened": opened,
        }
    return out


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds ``fn`` took and its value."""
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def run(
    spark: SparkSession | None = None,
    *,
    appends: int = 200,
    rows: int = 2_000,
    repetitions: int = 3,
    out_dir: str | Path = DEFAULT_OUT,
    docs_path: str | Path | None = None,
    command: str | None = None,
) -> dict[str, Any]:
    """Build the table, time the queries before and after OPTIMIZE, write the results."""
    from tsfile_catalog import open_table

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = out / "optimize-data"
    shutil.rmtree(data, ignore_errors=True)
    path = str(data / "metrics")
    own_session = spark is None
    if spark is None:
        from tsfile_catalog import local_session

        spark = local_session("bench-optimize", config={"spark.sql.shuffle.partitions": "2"})
    started = time.time()
    load = {"start": list(os.getloadavg())}
    try:
        _log(f"writing {appends} appends of {rows} rows")
        write_s, _ = timed(lambda: [_append(path, i, rows) for i in range(appends)])
        recent = appends * rows * 9 // 10
        before_table = open_table(path)
        _log(f"{len(before_table.parts())} parts; timing queries before OPTIMIZE")
        before = _time_queries(spark, path, repetitions, recent)
        optimize_s, result = timed(lambda: open_table(path).maintenance.optimize())
        after_table = open_table(path)
        _log(f"OPTIMIZE: {result.files_removed} -> {result.files_added} parts; timing again")
        after = _time_queries(spark, path, repetitions, recent)
        load["end"] = list(os.getloadavg())
        results: dict[str, Any] = {
            "generated": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "duration_s": round(time.time() - started),
            "command": command or "python -m bench.optimize",
            "machine": machine_info(spark),
            "load_average": load,
            "appends": appends,
            "rows_per_append": rows,
            "devices": DEVICES,
            "repetitions": repetitions,
            "write_s": write_s,
            "optimize_s": optimize_s,
            "parts_before": len(before_table.parts()),
            "parts_after": len(after_table.parts()),
            "bytes_before": sum(p.size_bytes for p in before_table.parts()),
            "bytes_after": sum(p.size_bytes for p in after_table.parts()),
            "queries": [
                {
                    "id": qid,
                    "description": description,
                    "where": where,
                    "before": before[qid],
                    "after": after[qid],
                    "speedup": before[qid]["median_s"] / after[qid]["median_s"],
                    "same_answer": before[qid]["answer"] == after[qid]["answer"],
                }
                for qid, description, where, _, _ in QUERIES
            ],
        }
    finally:
        if own_session:
            spark.stop()
    (out / "optimize.json").write_text(json.dumps(results, indent=2, default=str))
    if docs_path is not None:
        Path(docs_path).parent.mkdir(parents=True, exist_ok=True)
        Path(docs_path).write_text(render_markdown(results))
    return results


def render_markdown(results: dict[str, Any]) -> str:
    machine = results["machine"]
    lines = [
        "# Benchmark: queries before and after OPTIMIZE",
        "",
        "<!-- Generated by `python -m bench.optimize` (bench/optimize.py) from "
        "bench/out/optimize.json. Do not edit numbers by hand. -->",
        "",
        f"Generated {results['generated']} in {results['duration_s']} s by:",
        "",
        "```",
        results["command"],
        "```",
        "",
        f"A table built from {results['appends']} appends of {results['rows_per_append']:,} rows "
        f"each ({results['devices']} devices; one part and one commit per append, written "
        f"in-process in {_fmt_s(results['write_s'])}). `OPTIMIZE` (default target "
        f"128 MiB) took {_fmt_s(results['optimize_s'])}: {results['parts_before']} parts "
        f"({_fmt_bytes(results['bytes_before'])}) became {results['parts_after']} "
        f"({_fmt_bytes(results['bytes_after'])}). Each query is timed "
        f"{results['repetitions']} time(s) after one untimed run (median reported), through "
        '`spark.read.format("tsfile")` with the `where`/`columns` options; the answers '
        "before and after are compared.",
        "",
        f"Machine: {machine.get('cpu_model') or 'unknown CPU'} "
        f"({machine.get('cpu_count')} cores), Spark {machine.get('spark')}, "
        f"Python {machine.get('python')}. Load average (1/5/15 min): {_load(results)} "
        "(other work shared the machine; compare the two columns, not absolute times).",
        "",
        "| Query | What | Parts opened before / after | Before | After | Speed-up | Same answer |",
        "|---|---|---|---|---|---|---|",
    ]
    for q in results["queries"]:
        lines.append(
            f"| {q['id']} | {q['description']} | {q['before']['parts_opened']} / "
            f"{q['after']['parts_opened']} | {_fmt_s(q['before']['median_s'])} | "
            f"{_fmt_s(q['after']['median_s'])} | {q['speedup']:.1f}x | "
            f"{'yes' if q['same_answer'] else 'NO'} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.optimize", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--appends", type=int, default=200, help="small appends (default 200)")
    parser.add_argument("--rows", type=int, default=2_000, help="rows per append (default 2000)")
    parser.add_argument("--repetitions", type=int, default=3, help="timed runs per query")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="results directory")
    parser.add_argument("--docs", default=str(DEFAULT_DOCS), help="Markdown report path")
    args = parser.parse_args(argv)
    given = list(argv) if argv is not None else sys.argv[1:]
    results = run(
        appends=args.appends,
        rows=args.rows,
        repetitions=args.repetitions,
        out_dir=args.out,
        docs_path=args.docs,
        command=shlex.join(["python", "-m", "bench.optimize", *given]),
    )
    bad = [q["id"] for q in results["queries"] if not q["same_answer"]]
    if bad:
        print(f"answers differ after OPTIMIZE: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
