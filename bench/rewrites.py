"""``python -m bench.rewrites [--parts 200] [--rows 10000]``: rewrites on executors vs in-process.

Issue 26's bench of distributed rewrites. For two table sizes, ``--parts`` small parts of
``--rows`` rows (N) and of ``--factor`` times as many (4N by default), written as
``bench.optimize`` writes its table (one part and one commit per append), it runs on a fresh
copy of the table each time:

* ``OPTIMIZE`` with a target of a quarter of the table's bytes (:data:`GROUPS` groups, so
  two tasks per executor, and a group's rows grow with the table as they do under the
  128 MiB default on any table smaller than four times that);
* ``DELETE WHERE value < 10``, a FIELD predicate matching 10% of the rows of every part, so
  every part is rewritten, none dropped in metadata; distributed, the parts are packed into
  tasks of about the target file size, at least one per executor core
  (:func:`~tsfile_catalog.metadata.compaction.plan_batches`: here two tasks of 100 parts);

once distributed (``runner=SparkTasks(spark)``, what ``Catalog.sql`` does with
``spark.tsfile.distributedRewrites.enabled`` on, here on ``local-cluster[2,1,1024]``: two
executor JVMs, each with its own Python workers) and once in-process (no runner: the
Python API without a session, and ``Catalog.sql`` with the conf off).

Measured per run: wall time, and the driver Python process's peak RSS during the operation
(Linux's ``VmHWM``, reset through ``/proc/self/clear_refs`` just before; a 1 ms sampling
thread where that is refused) and its growth above the RSS just before, after a
``gc.collect``, Arrow's ``release_unused`` and glibc's ``malloc_trim`` gave back what earlier
runs freed. RSS, not ``tracemalloc``: the rows a rewrite holds are Arrow buffers and the
TsFile writer's native memory, which ``tracemalloc`` does not see (it traces Python objects
only), and tracing would slow the timed run. The driver JVM is not counted: it only relays
the tasks' answers (a few KiB of JSON per task).

Checked per size and operation: both paths leave the same rows (count and the sum of every
row's ``xxhash64``, read by Spark) and the same part layout, and every distributed task ran
in a process other than the driver (the ``host:pid`` each task reports). Targets
(:data:`MEMORY_TARGET`): the distributed driver's peak RSS at 4N is at most 1.2x its peak at
N. Writes ``<out>/rewrites.json`` and ``docs/benchmarks-rewrites.md`` (numbers generated,
never typed).

:func:`run` takes an existing SparkSession, so the smoke test reuses the test session.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime as dt
import gc
import json
import os
import shlex
import shutil
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.optimize import _append, timed
from bench.report import _fmt_bytes, _fmt_s, _load
from bench.run import machine_info

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from tsfile_catalog.table.rewrite_tasks import TaskRunner

__all__ = ["CLUSTER_MASTER", "MEMORY_TARGET", "judge", "run", "render_markdown", "main"]

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "bench" / "out"
DEFAULT_DOCS = REPO / "docs" / "benchmarks-rewrites.md"

CLUSTER_MASTER = "local-cluster[2,1,1024]"
EXECUTORS = 2
GROUPS = 4
DELETE_WHERE = "value < 10"  # value is (i % 1000) / 10: a tenth of every part's rows
MEMORY_TARGET = 1.2
"""Issue 26: the distributed driver's peak RSS at the larger size is at most this times its
peak at the smaller one."""

OPERATIONS = ("optimize", "delete")
MODES = ("distributed", "in_process")


def _log(message: str) -> None:
    print(f"[bench.rewrites {dt.datetime.now():%H:%M:%S}] {message}", flush=True)


# -- the driver's memory ----------------------------------------------------------------------


def _status_bytes(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/self/status has no {field}")


def _settle() -> int:
    """Give back what earlier runs freed (Python, Arrow's pool, glibc's heap); the RSS after."""
    import pyarrow as pa

    gc.collect()
    pa.default_memory_pool().release_unused()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: the RSS before may then hold freed memory, and growth reads lower
    return _status_bytes("VmRSS")


@contextmanager
def _peak_rss() -> Iterator[dict[str, int]]:
    """``{"before", "peak"}``: this process's RSS before the block and its high-water mark
    during it."""
    out = {"before": _settle()}
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # Linux >= 4.0: VmHWM := the current RSS
        sampler = None
    except OSError:
        sampler = _Sampler()
        sampler.start()
    try:
        yield out
    finally:
        if sampler is None:
            out["peak"] = _status_bytes("VmHWM")
        else:
            out["peak"] = sampler.stop()


class _Sampler(threading.Thread):
    """The RSS high-water mark by sampling every millisecond, where ``clear_refs`` is refused."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self._done = threading.Event()
        self.peak = _status_bytes("VmRSS")

    def run(self) -> None:
        while not self._done.wait(0.001):
            self.peak = max(self.peak, _status_bytes("VmRSS"))

    def stop(self) -> int:
        self._done.set()
        self.join()
        return max(self.peak, _status_bytes("VmRSS"))


# -- the cluster ------------------------------------------------------------------------------


def cluster_session() -> SparkSession:
    """A SparkSession on :data:`CLUSTER_MASTER`, as tests/cluster/conftest.py starts it: two
    executor JVMs with their own Python workers (this interpreter: ``local_session`` sets
    ``spark.pyspark.python``), started only once both executors registered."""
    from tsfile_catalog import local_session

    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = local_session(
        "bench-rewrites",
        master=CLUSTER_MASTER,
        config={
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": str(EXECUTORS),
            "spark.scheduler.minRegisteredResourcesRatio": "1.0",
            "spark.scheduler.maxRegisteredResourcesWaitingTime": "180s",
            "spark.ui.showConsoleProgress": "false",
        },
    )
    spark.sparkContext.setLogLevel("ERROR")
    status = spark.sparkContext._jsc.sc().getExecutorMemoryStatus()  # type: ignore[union-attr]
    deadline = time.monotonic() + 180
    while status.size() < EXECUTORS + 1:  # the driver's block manager counts too
        if time.monotonic() > deadline:
            spark.stop()
            raise RuntimeError(f"{CLUSTER_MASTER}: the executors did not come up in 180 s")
        time.sleep(0.5)
        status = spark.sparkContext._jsc.sc().getExecutorMemoryStatus()  # type: ignore[union-attr]
    return spark


def _stop_cluster(spark: SparkSession) -> None:
    """Stop ``spark`` and remove the executors' logs the workers wrote under SPARK_HOME."""
    from pyspark.find_spark_home import _find_spark_home

    app_id = spark.sparkContext.applicationId
    spark.stop()
    work = Path(_find_spark_home()) / "work"
    shutil.rmtree(work / app_id, ignore_errors=True)
    if work.is_dir() and not any(work.iterdir()):
        work.rmdir()


# -- one run ----------------------------------------------------------------------------------


def _rows_digest(spark: SparkSession, path: str) -> dict[str, Any]:
    """The table's row count and the sum of its rows' ``xxhash64(time, device, value)``,
    an order-free checksum, computed by a Spark read on the executors: the check must not
    hold the rows in the driver, whose memory the next run measures."""
    row = (
        spark.read.format("tsfile")
        .load(path)
        .selectExpr(
            "count(*) AS n", "sum(cast(xxhash64(time, device, value) AS decimal(38, 0))) AS h"
        )
        .collect()[0]
    )
    return {"rows": int(row["n"]), "checksum": str(row["h"])}


def _layout(path: str) -> list[tuple[int, int, int]]:
    from tsfile_catalog import open_table

    parts = open_table(path).parts()
    return sorted((p.row_count, p.min_time, p.max_time) for p in parts)


def _operate(operation: str, path: str, target: int, runner: TaskRunner | None) -> dict[str, Any]:
    from tsfile_catalog import open_table

    table = open_table(path)
    if operation == "optimize":
        done = table.maintenance.optimize(target_file_size=target, runner=runner)
        return {"files_removed": done.files_removed, "files_added": done.files_added}
    deleted = table.delete(DELETE_WHERE, runner=runner)
    return {
        "files_removed": deleted.files_removed,
        "files_added": deleted.files_added,
        "files_rewritten": deleted.files_rewritten,
        "files_dropped": deleted.files_dropped,
        "rows_deleted": deleted.num_deleted_rows,
    }


def _measure(
    spark: SparkSession, operation: str, mode: str, pristine: str, work: str, target: int
) -> dict[str, Any]:
    """``operation`` on a fresh copy of ``pristine`` at ``work``, run ``mode``'s way."""
    from tsfile_catalog.datasource.rewrite_tasks import SparkTasks

    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(pristine, work)
    tasks = SparkTasks(spark) if mode == "distributed" else None
    with _peak_rss() as memory:
        started = time.perf_counter()
        outcome = _operate(operation, work, target, tasks)
        seconds = time.perf_counter() - started
    workers = sorted(set(tasks.workers)) if tasks is not None else []
    return {
        "seconds": seconds,
        "rss_before": memory["before"],
        "rss_peak": memory["peak"],
        "growth": memory["peak"] - memory["before"],
        **outcome,
        "tasks": len(tasks.workers) if tasks is not None else 0,
        "workers": workers,
        # Every task in a process of its own, none in this one.
        "on_executors": bool(workers)
        and all(int(w.rsplit(":", 1)[1]) != os.getpid() for w in workers),
        **_rows_digest(spark, work),
        "layout": _layout(work),
    }


def _build(path: str, parts: int, rows: int) -> int:
    """``parts`` appends of ``rows`` rows each; the table's bytes."""
    from tsfile_catalog import open_table

    for i in range(parts):
        _append(path, i, rows)
    return sum(p.size_bytes for p in open_table(path).parts())


def run(
    spark: SparkSession | None = None,
    *,
    parts: int = 200,
    rows: int = 10_000,
    factor: int = 4,
    out_dir: str | Path = DEFAULT_OUT,
    docs_path: str | Path | None = None,
    command: str | None = None,
) -> dict[str, Any]:
    """Build both tables, run each operation both ways on copies of them, write the results.

    Without ``spark``, starts (and stops) a :func:`cluster_session`."""
    if rows < 1_000:
        # Part i holds times i * rows on, and value cycles every 1,000 rows: a shorter part
        # misses some values, so the DELETE would drop or skip parts instead of rewriting.
        raise ValueError(f"rows must be at least 1000 (every part then holds every value): {rows}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = out / "rewrites-data"
    shutil.rmtree(data, ignore_errors=True)
    own_session = spark is None
    if spark is None:
        _log(f"starting {CLUSTER_MASTER}")
        spark = cluster_session()
    started = time.time()
    load = {"start": list(os.getloadavg())}
    try:
        # Untimed: the executors' Python workers start and import the read and write paths.
        _log(f"warm-up on a table of {min(parts, 4)} parts")
        warm = str(data / "warm")
        _build(warm, min(parts, 4), 1_000)
        for operation in OPERATIONS:
            for mode in MODES:
                _measure(
                    spark, operation, mode, warm, str(data / f"warm-{operation}-{mode}"), 1 << 20
                )
        # Both tables first: what building them leaves in this process is then the same
        # for every measured run.
        sizes = []
        for rows_per_part in (rows, rows * factor):
            pristine = str(data / f"table-{rows_per_part}")
            _log(f"writing {parts} parts of {rows_per_part:,} rows")
            build_s, table_bytes = timed(lambda p=pristine, n=rows_per_part: _build(p, parts, n))
            sizes.append(
                {
                    "parts": parts,
                    "rows_per_part": rows_per_part,
                    "rows": parts * rows_per_part,
                    "bytes": table_bytes,
                    "target_file_size": -(-table_bytes // GROUPS),
                    "build_s": build_s,
                    "runs": {},
                }
            )
        # Every distributed run before any in-process one: what an in-process rewrite leaves
        # in this process (freed memory the allocators keep) must not raise the RSS the
        # distributed runs start from.
        for mode in MODES:
            for size in sizes:
                for operation in OPERATIONS:
                    _log(f"{operation} {mode}, {size['rows_per_part']:,} rows per part")
                    size["runs"].setdefault(operation, {})[mode] = _measure(
                        spark,
                        operation,
                        mode,
                        str(data / f"table-{size['rows_per_part']}"),
                        # A location of its own per run: a cached snapshot of another
                        # run's version must never stand for this one's.
                        str(data / f"run-{size['rows_per_part']}-{operation}-{mode}"),
                        size["target_file_size"],
                    )
        load["end"] = list(os.getloadavg())
        results: dict[str, Any] = {
            "generated": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "duration_s": round(time.time() - started),
            "command": command or "python -m bench.rewrites",
            "machine": machine_info(spark),
            "load_average": load,
            "driver_pid": os.getpid(),
            "delete_where": DELETE_WHERE,
            "groups": GROUPS,
            "sizes": sizes,
        }
    finally:
        if own_session:
            _stop_cluster(spark)
    results["judged"] = judge(results)
    shutil.rmtree(data, ignore_errors=True)
    (out / "rewrites.json").write_text(json.dumps(results, indent=2, default=str))
    if docs_path is not None:
        Path(docs_path).parent.mkdir(parents=True, exist_ok=True)
        Path(docs_path).write_text(render_markdown(results))
    return results


def judge(results: dict[str, Any]) -> dict[str, Any]:
    """Per operation: whether both paths agree at every size and the distributed tasks ran on
    executors; the driver's peak RSS ratio (largest size / smallest) of both paths, the
    distributed one judged against :data:`MEMORY_TARGET`; the time ratios distributed /
    in-process, one per size."""
    small, large = results["sizes"][0], results["sizes"][-1]
    out: dict[str, Any] = {}
    for operation in OPERATIONS:
        entry: dict[str, Any] = {"same_rows": True, "on_executors": True, "time_ratio": []}
        for size in results["sizes"]:
            spread, local = (size["runs"][operation][m] for m in MODES)
            entry["same_rows"] &= all(
                spread[k] == local[k] for k in ("rows", "checksum", "layout", "files_added")
            )
            entry["on_executors"] &= spread["on_executors"]
            entry["time_ratio"].append(spread["seconds"] / local["seconds"])
        for mode in MODES:
            a, b = small["runs"][operation][mode], large["runs"][operation][mode]
            entry[f"{mode}_peak_ratio"] = b["rss_peak"] / a["rss_peak"]
        entry["met"] = (
            entry["same_rows"]
            and entry["on_executors"]
            and entry["distributed_peak_ratio"] <= MEMORY_TARGET
        )
        out[operation] = entry
    return out


def render_markdown(results: dict[str, Any]) -> str:
    machine = results["machine"]
    sizes = results["sizes"]
    judged = results["judged"]
    small, large = sizes[0], sizes[-1]
    factor = large["rows"] / small["rows"]
    lines = [
        "# Benchmark: OPTIMIZE and DELETE on Spark executors vs in the driver",
        "",
        "<!-- Generated by `python -m bench.rewrites` (bench/rewrites.py) from "
        "bench/out/rewrites.json. Do not edit numbers by hand. -->",
        "",
        f"Generated {results['generated']} in {results['duration_s']} s by:",
        "",
        "```",
        results["command"],
        "```",
        "",
        f"Two tables of {small['parts']} small parts (one append and one commit each, "
        f"{small['rows_per_part']:,} and {large['rows_per_part']:,} rows per part: "
        f"{small['rows']:,} and {large['rows']:,} rows). Each operation runs on a fresh copy, "
        "once **distributed** (`runner=SparkTasks(spark)`, what `Catalog.sql` does with "
        f"`spark.tsfile.distributedRewrites.enabled` on) on `{machine.get('spark_master')}`, "
        "and once **in-process** (no runner: the Python API without a session, or the conf "
        "off). `OPTIMIZE` uses a target file size of a quarter of the table's bytes, so both "
        f"sizes compact into about {results['groups']} files (tasks) and what one group holds "
        f"grows with the table; `DELETE WHERE {results['delete_where']}` matches a tenth of "
        "every part's rows, so every part is rewritten, none dropped; distributed, the parts "
        "are packed into tasks of about the table's target file size (128 MiB), at least one "
        "per executor core (`plan_batches`), each part still rewritten into its own new part.",
        "",
        "Driver memory is the driver Python process's resident set: its high-water mark "
        "during the operation (`VmHWM`, reset just before), and the growth above the RSS just "
        "before (after freed memory was given back). The peak also counts what the process "
        "held before (interpreter, pyspark, pyarrow, and what the allocators kept of earlier "
        "runs: every distributed run goes first); the growth is the operation's own. Not "
        "`tracemalloc`: the rows a rewrite "
        "holds are Arrow buffers and the TsFile writer's native memory, which it does not "
        "see. The driver JVM is not counted (it relays a few KiB of JSON per task). Same rows = "
        "equal row count, sum of every row's `xxhash64(time, device, value)` (read by Spark "
        "on the executors, so the check holds no rows in the driver), and part layout; "
        "on executors = every task reported a process other than the driver's "
        f"(pid {results['driver_pid']}).",
        "",
        f"Machine: {machine.get('cpu_model') or 'unknown CPU'} "
        f"({machine.get('cpu_count')} cores), Spark {machine.get('spark')}, "
        f"Python {machine.get('python')}. Load average (1/5/15 min): {_load(results)} "
        "(other work shared the machine: compare the columns, not absolute times).",
        "",
        "| Operation | Rows | Mode | Time | Driver peak RSS | Growth | Files removed / added "
        "| Tasks (worker processes) | Rows after | Same rows |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for operation in OPERATIONS:
        for size in sizes:
            for mode in MODES:
                both = size["runs"][operation]
                r = both[mode]
                same = both["distributed"]["checksum"] == both["in_process"]["checksum"]
                tasks = f"{r['tasks']} ({len(r['workers'])})" if mode == "distributed" else "-"
                lines.append(
                    f"| {operation.upper()} | {size['rows']:,} | {mode.replace('_', '-')} | "
                    f"{_fmt_s(r['seconds'])} | {_fmt_bytes(r['rss_peak'])} | "
                    f"{_fmt_bytes(r['growth'])} | {r['files_removed']} / {r['files_added']} | "
                    f"{tasks} | {r['rows']:,} | {'yes' if same else 'NO'} |"
                )
    lines += [
        "",
        f"Target: the distributed driver's peak RSS at {large['rows']:,} rows ({factor:.0f}x) "
        f"is at most {MEMORY_TARGET}x its peak at {small['rows']:,}, with the same rows as "
        "in-process and every task on an executor. The in-process path's peak and growth are "
        "beside it; time ratios are distributed / in-process at each size.",
        "",
        f"| Operation | Distributed peak ratio (target ≤ {MEMORY_TARGET}x) | Distributed growth "
        "| In-process peak ratio | In-process growth | Time distributed / in-process | "
        "Same rows | On executors | Met |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for operation in OPERATIONS:
        j = judged[operation]
        growth = {
            mode: " → ".join(_fmt_bytes(size["runs"][operation][mode]["growth"]) for size in sizes)
            for mode in MODES
        }
        lines.append(
            f"| {operation.upper()} | {j['distributed_peak_ratio']:.2f}x | "
            f"{growth['distributed']} | {j['in_process_peak_ratio']:.2f}x | "
            f"{growth['in_process']} | "
            f"{' / '.join(f'{t:.2f}x' for t in j['time_ratio'])} | "
            f"{'yes' if j['same_rows'] else 'NO'} | {'yes' if j['on_executors'] else 'NO'} | "
            f"{'**met**' if j['met'] else '**not met**'} |"
        )
    per_part = [
        (
            size["runs"]["delete"]["distributed"]["tasks"],
            size["runs"]["delete"]["distributed"]["seconds"] / size["parts"],
            size["runs"]["delete"]["in_process"]["seconds"] / size["parts"],
        )
        for size in sizes
        if size["runs"]["delete"]["distributed"]["tasks"]
    ]
    if per_part:
        lines += [
            "",
            f"A distributed DELETE packs its {small['parts']} parts into "
            + ", ".join(str(tasks) for tasks, _, _ in per_part)
            + f" tasks ({EXECUTORS} run at a time); its wall time per part is "
            + ", ".join(_fmt_s(d) for _, d, _ in per_part)
            + ", against "
            + ", ".join(_fmt_s(p) for _, _, p in per_part)
            + " per part in-process (smaller table first). With one task per part, what a "
            "Spark task costs (about 100 ms here), not the rewrite, set the time.",
        ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.rewrites", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--parts", type=int, default=200, help="small parts (default 200)")
    parser.add_argument(
        "--rows",
        type=int,
        default=10_000,
        help="rows per part of the smaller table (default 10000, at least 1000)",
    )
    parser.add_argument("--factor", type=int, default=4, help="the larger table's rows / smaller")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="results directory")
    parser.add_argument("--docs", default=str(DEFAULT_DOCS), help="Markdown report path")
    parser.add_argument(
        "--render", metavar="JSON", help="only re-render --docs from a results file, no run"
    )
    args = parser.parse_args(argv)
    if args.render:
        results = json.loads(Path(args.render).read_text())
        Path(args.docs).write_text(render_markdown(results))
        return 0
    given = list(argv) if argv is not None else sys.argv[1:]
    results = run(
        parts=args.parts,
        rows=args.rows,
        factor=args.factor,
        out_dir=args.out,
        docs_path=args.docs,
        command=shlex.join(["python", "-m", "bench.rewrites", *given]),
    )
    bad = [op for op, j in results["judged"].items() if not (j["same_rows"] and j["on_executors"])]
    if bad:
        print(f"distributed and in-process runs disagree: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
