"""``python -m bench.peers [--smoke]``: our commits and planning against delta-rs and pyiceberg.

The table formats users would otherwise pick, embedded in this process on the same disk in
the same run (deltalake 1.6, pyiceberg 0.12 with its SQL catalog on sqlite):

(a) **Appends** — ``appends`` sequential appends of one small file (the same 100 rows: a
    long ``time``, a string ``device``, a double ``value``), each its own commit. Two
    variants per engine, timed per append:

    * *write + commit*: ours writes a TsFile part (``stage_part``, the writer's path) and
      commits it with ``append_parts``; delta-rs ``write_deltalake(mode="append")``;
      pyiceberg ``table.append``. Each writes its own data file format.
    * *commit only*: registering a file that already exists — ours ``append_parts`` of the
      part just written; delta-rs ``create_write_transaction`` with one ``AddAction`` (its
      statistics given); pyiceberg ``table.add_files`` (reads the Parquet footer for them).

(b) **Planning** — ``files`` data files, each with min/max statistics of ``time``, ``device``
    and ``value``, committed in 100-file commits; a scan filtered on a time range that keeps
    5% of them, planned cold (a new table object: the engine reads its log/metadata from
    disk) and warm (the same object again), median wall clock and median process CPU time
    (all threads) over 7 runs; on a shared machine the CPU time is the one to compare.
    Ours: ``open_table(path).plan(where)`` (cold: metadata cache cleared); delta-rs:
    ``DeltaTable(path).file_uris(file_pruning_predicate)``
    (its stats-based file pruning); pyiceberg: ``catalog.load_table(...).scan(row_filter=...)
    .plan_files()``. Ours and delta-rs plan from metadata alone, so their files are not
    written; pyiceberg's ``add_files`` needs real Parquet files, so 100-row files are written.

Results go to ``bench/out/peers.json`` and the generated "Peers" section of
``docs/benchmarks.md`` (ratios: peer time / our time, above 1 means we are faster).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.stamp import measured_at

__all__ = ["bench_peers", "main"]

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DOCS = REPO / "docs" / "benchmarks.md"
_ROWS = 100
_COMMIT_FILES = 100
_WIDTH_MS = 1_000_000  # each planning file covers its own time range


def _rows(i: int) -> Any:
    import pyarrow as pa

    start = i * _ROWS
    return pa.table(
        {
            "time": pa.array(range(start, start + _ROWS), pa.int64()),
            "device": pa.array([f"d{j % 10}" for j in range(_ROWS)], pa.string()),
            "value": pa.array([float(j) for j in range(_ROWS)], pa.float64()),
        }
    )


def _schema() -> Any:
    from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema

    return TableSchema.of(
        "peers",
        [
            Column("device", DataType.STRING, Category.TAG),
            Column("value", DataType.DOUBLE, Category.FIELD),
        ],
    )


def _latency(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "median_s": statistics.median(ordered),
        "p95_s": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))],
        "count": len(ordered),
    }


def _catalog(work: str) -> Any:
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog(
        "bench", uri=f"sqlite:///{work}/iceberg.db", warehouse=f"file://{work}/warehouse"
    )
    catalog.create_namespace_if_not_exists("bench")
    return catalog


def _delta_stats(lo: int, hi: int, rows: int, dmin: str, dmax: str) -> str:
    return json.dumps(
        {
            "numRecords": rows,
            "minValues": {"time": lo, "device": dmin, "value": 0.0},
            "maxValues": {"time": hi, "device": dmax, "value": float(rows - 1)},
            "nullCount": {"time": 0, "device": 0, "value": 0},
        }
    )


# -- (a) appends -------------------------------------------------------------------------------


def _ours_appends(work: str, n: int) -> dict[str, list[float]]:
    from tsfile_catalog.formats.tsfile import WriteSettings
    from tsfile_catalog.io import FileIO, join_url
    from tsfile_catalog.table import STAGING_DIR, append_parts
    from tsfile_catalog.table.rewrite import stage_part

    root = os.path.join(work, "ours_appends")
    os.makedirs(root)
    io, schema = FileIO(root), _schema()
    staging = join_url(root, STAGING_DIR, "0123456789ab", "00000-0")
    both, commit_only = [], []
    with tempfile.TemporaryDirectory() as local:
        for i in range(n):
            t0 = time.perf_counter()
            data = _rows(i).select(["time", "device", "value"])
            staged = stage_part(io, data, schema, WriteSettings(), staging=staging, local_dir=local)
            io.move(staged.staged_url, join_url(root, staged.part.path))
            t1 = time.perf_counter()
            append_parts(root, [staged.part], schema)
            t2 = time.perf_counter()
            both.append(t2 - t0)
            commit_only.append(t2 - t1)
    return {"write_commit": both, "commit_only": commit_only}


def _delta_appends(work: str, n: int) -> dict[str, list[float]]:
    import pyarrow.parquet as pq
    from deltalake import DeltaTable, write_deltalake
    from deltalake.transaction import AddAction

    both = []
    path = os.path.join(work, "delta_appends")
    for i in range(n):
        t0 = time.perf_counter()
        write_deltalake(path, _rows(i), mode="append")
        both.append(time.perf_counter() - t0)
    commit_only = []
    path = os.path.join(work, "delta_adds")
    table = DeltaTable.create(path, schema=_rows(0).schema)
    for i in range(n):
        name = f"part-{i:05d}.parquet"
        pq.write_table(_rows(i), os.path.join(path, name))
        size = os.path.getsize(os.path.join(path, name))
        action = AddAction(
            name,
            size,
            {},
            int(time.time() * 1000),
            True,
            _delta_stats(i * _ROWS, i * _ROWS + _ROWS - 1, _ROWS, "d0", "d9"),
        )
        t0 = time.perf_counter()
        table.create_write_transaction([action], mode="append", schema=table.schema())
        commit_only.append(time.perf_counter() - t0)
    return {"write_commit": both, "commit_only": commit_only}


def _iceberg_appends(work: str, n: int) -> dict[str, list[float]]:
    import pyarrow.parquet as pq

    catalog = _catalog(work)
    table = catalog.create_table("bench.appends", schema=_rows(0).schema)
    both = []
    for i in range(n):
        t0 = time.perf_counter()
        table.append(_rows(i))
        both.append(time.perf_counter() - t0)
    adds = catalog.create_table("bench.adds", schema=_rows(0).schema)
    folder = os.path.join(work, "iceberg_files")
    os.makedirs(folder)
    commit_only = []
    for i in range(n):
        path = os.path.join(folder, f"part-{i:05d}.parquet")
        pq.write_table(_rows(i), path)
        t0 = time.perf_counter()
        adds.add_files([path])
        commit_only.append(time.perf_counter() - t0)
    return {"write_commit": both, "commit_only": commit_only}


# -- (b) planning ------------------------------------------------------------------------------


def _ours_table(work: str, files: int) -> tuple[str, Callable[[], int], Callable[[], int]]:
    from tsfile_catalog.metadata.parts import DeviceStats, FieldStats, PartFile, TagStats
    from tsfile_catalog.table import append_parts, clear_cache, open_table

    path = os.path.join(work, "ours_plan")
    schema = _schema()
    for start in range(0, files, _COMMIT_FILES):
        batch = []
        for i in range(start, min(files, start + _COMMIT_FILES)):
            lo, hi = i * _WIDTH_MS, i * _WIDTH_MS + _WIDTH_MS - 1
            batch.append(
                PartFile(
                    path=f"part-{i:06d}.tsfile",
                    format="tsfile",
                    size_bytes=4_000,
                    row_count=_ROWS,
                    min_time=lo,
                    max_time=hi,
                    devices=(DeviceStats(("d0",), _ROWS, lo, hi),),
                    tags={"device": TagStats(None, "d0", "d9")},
                    fields={"value": FieldStats(0.0, float(_ROWS - 1), 0)},
                )
            )
        append_parts(path, batch, schema)
    where = _where(files)
    table = open_table(path)

    def cold() -> int:
        clear_cache()
        return len(open_table(path).plan(where=where).parts)

    def warm() -> int:
        return len(table.plan(where=where).parts)

    return path, cold, warm


def _where(files: int) -> str:
    lo = files // 2 * _WIDTH_MS
    return f"time >= {lo} AND time < {lo + files // 20 * _WIDTH_MS}"


def _delta_table(work: str, files: int) -> tuple[str, Callable[[], int], Callable[[], int]]:
    from deltalake import DeltaTable
    from deltalake.transaction import AddAction, RemoveAction

    path = os.path.join(work, "delta_plan")
    table = DeltaTable.create(path, schema=_rows(0).schema)
    stamp = int(time.time() * 1000)
    for start in range(0, files, _COMMIT_FILES):
        actions: list[AddAction | RemoveAction] = [
            AddAction(
                f"part-{i:06d}.parquet",
                4_000,
                {},
                stamp,
                True,
                _delta_stats(i * _WIDTH_MS, i * _WIDTH_MS + _WIDTH_MS - 1, _ROWS, "d0", "d9"),
            )
            for i in range(start, min(files, start + _COMMIT_FILES))
        ]
        table.create_write_transaction(actions, mode="append", schema=table.schema())
    where = _where(files)
    warm_table = DeltaTable(path)

    def cold() -> int:
        return len(DeltaTable(path).file_uris(file_pruning_predicate=where))

    def warm() -> int:
        return len(warm_table.file_uris(file_pruning_predicate=where))

    return path, cold, warm


def _iceberg_table(work: str, files: int) -> tuple[str, Callable[[], int], Callable[[], int]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    catalog = _catalog(work)
    table = catalog.create_table("bench.planning", schema=_rows(0).schema)
    folder = os.path.join(work, "iceberg_plan_files")
    os.makedirs(folder)
    for start in range(0, files, _COMMIT_FILES):
        paths = []
        for i in range(start, min(files, start + _COMMIT_FILES)):
            lo = i * _WIDTH_MS
            data = _rows(0).set_column(
                0, "time", pa.array(range(lo, lo + _WIDTH_MS, _WIDTH_MS // _ROWS), pa.int64())
            )
            paths.append(os.path.join(folder, f"part-{i:06d}.parquet"))
            pq.write_table(data, paths[-1])
        table.add_files(paths)
    row_filter = _where(files)  # pyiceberg parses the same SQL-like predicate
    warm_table = catalog.load_table("bench.planning")

    def cold() -> int:
        fresh = _catalog(work).load_table("bench.planning")
        return len(list(fresh.scan(row_filter=row_filter).plan_files()))

    def warm() -> int:
        return len(list(warm_table.scan(row_filter=row_filter).plan_files()))

    return folder, cold, warm


def _time(fn: Callable[[], int], runs: int) -> tuple[float, float, int]:
    """Median wall clock and median process CPU time (every thread's: delta-rs plans on a
    thread pool) of ``fn``, and what it returned."""
    fn()  # once untimed: module imports and first-use setup are no plan's cost
    times, cpu, kept = [], [], 0
    for _ in range(runs):
        gc.collect()
        t0, c0 = time.perf_counter(), time.process_time()
        kept = fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(times), statistics.median(cpu), kept


def bench_peers(
    work: str, *, appends: int = 200, files: int = 10_000, runs: int = 7
) -> dict[str, Any]:
    """Both benchmarks for the three engines (see the module docstring)."""
    import pyarrow.parquet  # noqa: F401  (every engine here needs it: not part of a timing)

    measured_commit = measured_at()  # the commit whose code is measured (bench/stamp.py)
    results: dict[str, Any] = {"appends": appends, "files": files, "engines": {}}
    builders = {
        "tsfile-catalog": (_ours_appends, _ours_table),
        "delta-rs": (_delta_appends, _delta_table),
        "pyiceberg": (_iceberg_appends, _iceberg_table),
    }
    for engine, (appender, planner) in builders.items():
        folder = os.path.join(work, engine)
        os.makedirs(folder)
        times = appender(folder, appends)
        started = time.perf_counter()
        _, cold, warm = planner(folder, files)
        build_s = time.perf_counter() - started
        cold_s, cold_cpu_s, cold_kept = _time(cold, runs)
        warm_s, warm_cpu_s, warm_kept = _time(warm, max(runs, 5))
        results["engines"][engine] = {
            "write_commit": _latency(times["write_commit"]),
            "commit_only": _latency(times["commit_only"]),
            "plan_cold_s": cold_s,
            "plan_warm_s": warm_s,
            "plan_cold_cpu_s": cold_cpu_s,
            "plan_warm_cpu_s": warm_cpu_s,
            "kept_files": cold_kept,
            "kept_files_warm": warm_kept,
            "build_s": build_s,
        }
    results["cpu_count"] = os.cpu_count()
    results["load_average"] = os.getloadavg()
    results["measured_at"] = measured_commit
    import deltalake
    import pyiceberg

    results["versions"] = {"deltalake": deltalake.__version__, "pyiceberg": pyiceberg.__version__}
    return results


def main(argv: Sequence[str] | None = None) -> int:
    from bench.report import render_peers_section, splice_section

    parser = argparse.ArgumentParser(prog="python -m bench.peers", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="seconds, not minutes; no docs")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out")
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        if args.smoke:
            results = bench_peers(work, appends=3, files=100, runs=1)
        else:
            results = bench_peers(work)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "peers.json").write_text(json.dumps(results, indent=2))
    section = render_peers_section(results)
    print(section)
    if not args.smoke:
        splice_section(args.docs, "peers", section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
