"""``python -m bench.run [--scale N] [--smoke] [--out bench/out]``: the whole benchmark.

Generates the data, writes it as a tsfile table and as Parquet, times the eight queries on
every engine of :mod:`bench.queries` in one SparkSession (alternating order, median of the
repetitions, answers compared), measures write throughput, bytes on disk, planning on
1k/10k-part manifests, the bytes VACUUM reclaims after an overwrite and the in-process read
throughput, then writes ``results.json`` and the report (``docs/benchmarks.md`` +
``docs/benchmarks.png`` for a full run).

:func:`run` takes an existing SparkSession, so the smoke test reuses the test session. The
``spark_sql`` engine needs the Spark catalog plugin's jar on the session's classpath (a
session :func:`run` starts has it, with the catalog ``bench`` configured); on a session
given without a plugin catalog over the run's warehouse, one is configured at run time.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import json
import os
import platform
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.datagen import (
    FIELD_COLUMNS,
    REALISTIC_TABLE,
    REALISTIC_TAGS,
    TAG_COLUMNS,
    Scale,
    build_frame,
    realistic_arrow,
    write_parquet,
    write_tsfile,
)
from bench.queries import (
    ENGINES,
    SPARK_CATALOG,
    SQL_TABLE,
    Engine,
    Query,
    build_queries,
    plugin_table,
    run_query,
    same_rows,
    sql_text,
)
from bench.stamp import measured_at

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["run", "main"]

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "bench" / "out"
DEFAULT_DOCS = REPO / "docs" / "benchmarks.md"
DEFAULT_SCALE_MILLIONS = 10.0


def _log(message: str) -> None:
    print(f"[bench {dt.datetime.now():%H:%M:%S}] {message}", flush=True)


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def _files_bytes(root: str, suffix: str) -> tuple[int, int]:
    """(count, bytes) of the data files under ``root`` (manifests and markers excluded)."""
    count = size = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(("_", "."))]
        for name in files:
            if name.endswith(suffix) and not name.startswith(("_", ".")):
                count += 1
                size += os.path.getsize(os.path.join(folder, name))
    return count, size


def _dir_bytes(root: str) -> int:
    return sum(
        os.path.getsize(os.path.join(folder, name))
        for folder, _, files in os.walk(root)
        for name in files
    )


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def machine_info(spark: SparkSession) -> dict[str, Any]:
    memory = None
    cpu_model = platform.processor() or None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    memory = int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu_model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    conf = spark.sparkContext.getConf()
    return {
        "platform": platform.platform(),
        "cpu_model": cpu_model,
        "cpu_count": os.cpu_count(),
        "affinity_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory_bytes": memory,
        "python": platform.python_version(),
        "spark": spark.version,
        "spark_master": spark.sparkContext.master,
        "spark_driver_memory": conf.get("spark.driver.memory", "default (1g)"),
        "tsfile": _version("tsfile"),
        "tsfile_catalog": _version("tsfile-catalog"),
        "pyarrow": _version("pyarrow"),
        "pyspark": _version("pyspark"),
        "java": os.environ.get("JAVA_HOME") or shutil.which("java"),
    }


# -- phases -----------------------------------------------------------------------------------


def _bench_writes(spark: SparkSession, scale: Scale, data_dir: str) -> dict[str, Any]:
    tsfile_path = os.path.join(data_dir, "tsfile")
    parquet_path = os.path.join(data_dir, "parquet")
    if scale.warmup:
        # Warm the JVM and the Python workers on a tiny write per engine before timing.
        warm = build_frame(spark, Scale.smoke()).limit(1_000).coalesce(1)
        write_tsfile(warm, os.path.join(data_dir, "warmup_tsfile"))
        write_parquet(warm, os.path.join(data_dir, "warmup_parquet"))
        shutil.rmtree(os.path.join(data_dir, "warmup_tsfile"), ignore_errors=True)
        shutil.rmtree(os.path.join(data_dir, "warmup_parquet"), ignore_errors=True)

    frame = build_frame(spark, scale)
    _log(f"writing {scale.rows:,} rows as tsfile ({scale.parts} tasks)")
    tsfile_s, _ = _timed(lambda: write_tsfile(frame, tsfile_path))
    _log(f"  tsfile write {tsfile_s:.1f}s; writing the same frame as Parquet")
    parquet_s, _ = _timed(lambda: write_parquet(frame, parquet_path))
    _log(f"  parquet write {parquet_s:.1f}s; again with zstd")
    zstd_path = os.path.join(data_dir, "parquet_zstd")
    zstd_s, _ = _timed(lambda: write_parquet(frame, zstd_path, "zstd"))
    ts_files, ts_bytes = _files_bytes(tsfile_path, ".tsfile")
    pq_files, pq_bytes = _files_bytes(parquet_path, ".parquet")
    zstd_files, zstd_bytes = _files_bytes(zstd_path, ".parquet")
    return {
        "paths": {
            "tsfile": tsfile_path,
            "tsfile_nojar": tsfile_path,
            "tsfile_sql": tsfile_path,
            "spark_sql": tsfile_path,
            "parquet": parquet_path,
            "parquet_zstd": zstd_path,
        },
        "rows": scale.rows,
        "parquet_zstd": {
            "seconds": zstd_s,
            "rows_per_s": scale.rows / zstd_s,
            "files": zstd_files,
            "data_bytes": zstd_bytes,
        },
        "tsfile": {
            "seconds": tsfile_s,
            "rows_per_s": scale.rows / tsfile_s,
            "files": ts_files,
            "data_bytes": ts_bytes,
            "manifest_bytes": _dir_bytes(os.path.join(tsfile_path, "_tsfile_manifest")),
        },
        "parquet": {
            "seconds": parquet_s,
            "rows_per_s": scale.rows / parquet_s,
            "files": pq_files,
            "data_bytes": pq_bytes,
        },
    }


def _bench_realistic(
    spark: SparkSession, scale: Scale, data_dir: str, warehouse: str
) -> dict[str, Any]:
    """Write the realistic data set as tsfile and as Parquet snappy and zstd: seconds, rows/s,
    bytes, and a read-back count per engine (all must hold every row); then the same frame
    into a Python writer that drops its batches (Spark's hand-off alone), and the tsfile
    writer's phases without Spark.

    tsfile is written twice: ``tsfile`` with ``df.write.format("tsfile")`` (the frame's own
    partitions, one part each), ``tsfile_catalog`` with ``df.writeTo`` into a catalog table
    through the plugin (rows clustered by device first: tsfile_catalog/sql/
    write_distribution.py); the table is created before the clock starts.
    """
    from bench.floor import write_floor
    from bench.write_phases import bench_write_phases
    from tsfile_catalog import Catalog

    data = realistic_arrow(scale.realistic_devices, scale.realistic_seconds)
    frame = spark.createDataFrame(data).cache()
    rows = frame.count()  # materialised once, so each write times the writer alone
    out: dict[str, Any] = {"rows": rows, "partitions": frame.rdd.getNumPartitions()}
    catalog_path = os.path.join(data_dir, "realistic_tsfile_catalog")
    columns = ", ".join(f"{f.name} {f.dataType.simpleString()}" for f in frame.schema)
    Catalog(spark, warehouse, register_views=False).sql(
        f"CREATE TABLE {REALISTIC_TABLE} ({columns}) USING tsfile "
        f"OPTIONS (tagColumns '{','.join(REALISTIC_TAGS)}') LOCATION '{catalog_path}'"
    )
    catalog_table = plugin_table(spark, warehouse, REALISTIC_TABLE)
    writers: dict[str, Callable[[str], None]] = {
        "tsfile": lambda path: write_tsfile(frame, path, REALISTIC_TABLE),
        "tsfile_catalog": lambda path: frame.writeTo(catalog_table).append(),
        "parquet": lambda path: write_parquet(frame, path),
        "parquet_zstd": lambda path: write_parquet(frame, path, "zstd"),
    }
    for engine, write in writers.items():
        path = os.path.join(data_dir, f"realistic_{engine}")
        seconds, _ = _timed(lambda w=write, p=path: w(p))  # type: ignore[misc]
        if engine == "tsfile_catalog":
            path = catalog_path
        tsfile = engine.startswith("tsfile")
        files, size = _files_bytes(path, ".tsfile" if tsfile else ".parquet")
        reader = spark.read.format("tsfile") if tsfile else spark.read.format("parquet")
        out[engine] = {
            "seconds": seconds,
            "rows_per_s": rows / seconds,
            "files": files,
            "data_bytes": size,
            "rows_read_back": reader.load(path).count(),
        }
        _log(f"  realistic {engine}: {seconds:.1f}s, {size:,} bytes")
    seconds, _ = _timed(lambda: write_floor(frame))
    out["floor"] = {"seconds": seconds, "rows_per_s": rows / seconds}
    _log(f"  realistic Spark write floor (a writer that drops its batches): {seconds:.1f}s")
    frame.unpersist()
    out["phases"] = bench_write_phases(
        data, table=REALISTIC_TABLE, tags=REALISTIC_TAGS, tasks=out["partitions"]
    )
    return out


def _bench_queries(
    spark: SparkSession,
    paths: dict[str, str],
    warehouse: str,
    queries: Sequence[Query],
    repetitions: int,
    warmup: bool,
) -> list[dict[str, Any]]:
    """Median times per query and engine; the first run's answers are compared."""
    from tsfile_catalog import Catalog
    from tsfile_catalog.metadata.time_top import TimeTop, keep_time_top
    from tsfile_catalog.table import open_table

    table = open_table(paths["tsfile"])
    # The tsfile_sql engine: the same table registered in a catalog, queried with SQL text.
    catalog = Catalog(spark, warehouse, register_views=False)
    catalog.sql(f"CREATE TABLE {SQL_TABLE} USING tsfile LOCATION '{paths['tsfile']}'")
    # The spark_sql engine: the catalog plugin over the same warehouse (one registry).
    spark_table = plugin_table(spark, warehouse)

    def execute(engine: Engine, query: Query) -> list[list[Any]]:
        return run_query(spark, engine, paths[engine], query, catalog, spark_table=spark_table)

    out: dict[str, dict[str, Any]] = {}
    answers: dict[str, dict[str, list[list[Any]]]] = {q.id: {} for q in queries}
    for query in queries:
        plan = table.plan(where=query.where)
        total = len(plan.parts) + len(plan.pruned)
        if query.latest is not None:
            plan, _ = keep_time_top(plan, TimeTop(query.latest, descending=True))
        out[query.id] = {
            **query.to_json(),
            "sql": sql_text(query),
            "parts_opened": len(plan.parts),
            "parts_total": total,
            "rows_in_opened_parts": sum(p.row_count for p in plan.parts),
            "times": {engine: [] for engine in ENGINES},
        }
        if warmup:  # untimed
            for engine in ENGINES:
                answers[query.id][engine] = execute(engine, query)
    for rep in range(repetitions):
        for query in queries:
            order = ENGINES if rep % 2 == 0 else ENGINES[::-1]
            for engine in order:
                seconds, answer = _timed(
                    lambda e=engine, q=query: execute(e, q)  # type: ignore[misc]
                )
                out[query.id]["times"][engine].append(seconds)
                answers[query.id].setdefault(engine, answer)
        _log(f"  repetition {rep + 1}/{repetitions} done")
    results = []
    for query in queries:
        entry = out[query.id]
        got = answers[query.id]
        # The first row per engine (grouped queries: the first group) and the row count.
        entry["answers"] = {engine: rows[0] for engine, rows in got.items()}
        entry["result_rows"] = len(got["parquet"])
        differ = [e for e in ENGINES if not same_rows(got[e], got["parquet"])]
        entry["same_answer"] = not differ
        if differ:
            _log(
                f"  {query.id}: ANSWERS DIFFER from Parquet on {', '.join(differ)}: "
                f"{ {e: got[e][:3] for e in ENGINES} }"
            )
        medians = {e: statistics.median(entry["times"][e]) for e in ENGINES}
        entry["median_s"] = medians
        entry["ratio"] = medians["tsfile"] / medians["parquet"]
        entry["ratios"] = {
            f"{ours}/{peer}": medians[ours] / medians[peer]
            for ours in ("tsfile", "tsfile_nojar", "tsfile_sql", "spark_sql")
            for peer in ("parquet", "parquet_zstd")
        }
        results.append(entry)
        _log(
            f"  {query.id}: "
            + ", ".join(f"{e} {medians[e]:.3f}s" for e in ENGINES)
            + f"; parts {entry['parts_opened']}/{entry['parts_total']}"
        )
    return results


def _tsfile_partitions(results: dict[str, Any]) -> int:
    """Spark partitions of the full tsfile scan (default ``rowsPerPartition`` 1,000,000), so
    the floor runs as many tasks."""
    return max(1, -(-int(results["write"]["rows"]) // 1_000_000))


def _bench_inprocess(path: str, slowest: Query) -> dict[str, Any]:
    from bench.rawread import datasource_scan, native_scan

    all_columns = [*TAG_COLUMNS, *FIELD_COLUMNS]
    slowest_options = slowest.source_options()
    return {
        "native_all_columns": native_scan(path, all_columns),
        "native_all_columns_optimized": _native_after_optimize(path, all_columns),
        "native_all_fields": native_scan(path, list(FIELD_COLUMNS)),
        "native_f_double": native_scan(path, ["f_double"]),
        "datasource_f_double": datasource_scan(path, {"columns": "f_double"}),
        "datasource_slowest_query": {"query": slowest.id, **datasource_scan(path, slowest_options)},
    }


def _native_after_optimize(path: str, columns: Sequence[str]) -> dict[str, Any]:
    """The native full-row read of a copy of the table at ``path`` after an in-process
    ``OPTIMIZE`` at the default target file size: the same rows in fewer, longer chunks per
    device (the written table has one chunk per device per part, a thousand rows each)."""
    from bench.rawread import native_scan
    from tsfile_catalog.table import open_table
    from tsfile_catalog.table.optimize import optimize

    with tempfile.TemporaryDirectory(prefix="bench-optimized-") as scratch:
        copy = os.path.join(scratch, "tsfile")
        shutil.copytree(path, copy)
        seconds, result = _timed(lambda: optimize(open_table(copy)))
        read = native_scan(copy, columns)
    return {
        **read,
        "optimize_seconds": seconds,
        "parts_before": result.files_removed,
        "parts_after": result.files_added,
    }


def _profile(path: str, query: Query, out_dir: Path) -> dict[str, Any] | None:
    """pyinstrument over the data source's read path for ``query``, run in-process."""
    try:
        from pyinstrument import Profiler
    except ImportError:
        _log("pyinstrument is not installed: skipping the profile (pip install pyinstrument)")
        return None
    from bench.rawread import datasource_scan

    options = query.source_options()
    profiler = Profiler(interval=0.001)
    profiler.start()
    scan = datasource_scan(path, options)
    profiler.stop()
    text = profiler.output_text(unicode=False, color=False, show_all=False)
    (out_dir / "profile.txt").write_text(text)
    (out_dir / "profile.html").write_text(profiler.output_html())
    return {"query": query.id, "options": options, "scan": scan, "text": text}


# -- the whole run ----------------------------------------------------------------------------


def run(
    spark: SparkSession | None = None,
    *,
    scale: Scale,
    out_dir: str | os.PathLike[str] = DEFAULT_OUT,
    data_dir: str | os.PathLike[str] | None = None,
    docs_path: str | os.PathLike[str] | None = None,
    command: str | None = None,
    profile: bool = True,
    planning: bool = True,
) -> dict[str, Any]:
    """Run every phase and write ``<out_dir>/results.json`` (and the report, if ``docs_path``).

    Args:
        spark: a session to reuse; None starts a local one (and stops it at the end).
        data_dir: where the tables go (default ``<out_dir>/data``); it is emptied first.
        docs_path: where to write the Markdown report (its PNG goes next to it).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = Path(data_dir) if data_dir is not None else out / "data"
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    # The tsfile_sql and spark_sql engines' warehouse: one registry for both.
    warehouse = os.path.abspath(data / "warehouse")
    own_session = spark is None
    if spark is None:
        from tsfile_catalog import local_session
        from tsfile_catalog.spark_catalog.session import catalog_config

        spark = local_session(
            "tsfile-catalog-bench",
            config={
                # The catalog plugin (the spark_sql engine): jar and catalog before the JVM.
                **catalog_config(warehouse, name=SPARK_CATALOG),
                "spark.driver.memory": "4g",
                "spark.ui.showConsoleProgress": "false",
                "spark.sql.shuffle.partitions": "4",
            },
        )
        spark.sparkContext.setLogLevel("ERROR")
    started = time.perf_counter()
    try:
        results: dict[str, Any] = {
            "generated_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            # The commit measured, stamped on the report (bench/stamp.py).
            "measured_at": measured_at(),
            "command": command,
            "scale": scale.to_json(),
            "machine": machine_info(spark),
            # Other work on the machine skews timings: record the load around the phases.
            "load_average": {"start": os.getloadavg()},
        }
        _log(
            f"scale {scale.name}: {scale.rows:,} rows, {scale.devices} devices, {scale.parts} parts"
        )
        writes = _bench_writes(spark, scale, str(data))
        results["write"] = writes
        _log(
            f"realistic data set: {scale.realistic_devices} devices x "
            f"{scale.realistic_seconds:,} s, tsfile and Parquet snappy/zstd"
        )
        results["realistic"] = _bench_realistic(spark, scale, str(data), warehouse)
        queries = build_queries(scale)
        _log(f"queries: {scale.repetitions} repetitions, alternating engine order")
        results["queries"] = _bench_queries(
            spark, writes["paths"], warehouse, queries, scale.repetitions, scale.warmup
        )
        slowest_id = max(results["queries"], key=lambda q: q["median_s"]["tsfile"])["id"]
        slowest = next(q for q in queries if q.id == slowest_id)
        from bench.floor import bench_floor

        _log("Spark Python data source floor (a source that reads nothing)")
        results["floor"] = bench_floor(
            spark,
            scale.rows,
            _tsfile_partitions(results),
            scale.repetitions,
            warmup=scale.warmup,
        )
        # The fixed cost of any query on a Python data source: one row, one partition.
        results["floor_fixed"] = bench_floor(spark, 1, 1, scale.repetitions, warmup=scale.warmup)
        results["load_average"]["after_queries"] = os.getloadavg()
        _log("in-process read throughput")
        results["inprocess"] = _bench_inprocess(writes["paths"]["tsfile"], slowest)
        if planning:
            from bench.planning import bench_planning

            _log(f"planning on {', '.join(map(str, scale.planning_parts))}-part manifests")
            results["planning"] = bench_planning(
                str(data),
                scale.planning_parts,
                scale.planning_devices_per_part,
                3,
            )
        from bench.vacuum import bench_vacuum

        _log("VACUUM after an overwrite (bytes reclaimed)")
        results["vacuum"] = bench_vacuum(spark, str(data))
        if profile:
            _log(f"profiling the slowest tsfile query ({slowest.id}) in-process")
            results["profile"] = _profile(writes["paths"]["tsfile"], slowest, out)
        results["load_average"]["end"] = os.getloadavg()
        results["elapsed_s"] = time.perf_counter() - started
        from bench.report import (
            evaluate_path_targets,
            evaluate_scan_targets,
            evaluate_spark_sql_targets,
            evaluate_sql_targets,
            evaluate_targets,
        )

        results["targets"] = evaluate_targets(results)
        results["sql_targets"] = evaluate_sql_targets(results)
        results["spark_sql_targets"] = evaluate_spark_sql_targets(results)
        results["scan_targets"] = evaluate_scan_targets(results)
        results["path_targets"] = evaluate_path_targets(results)
        (out / "results.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
        if docs_path is not None:
            from bench.report import write_report

            write_report(results, Path(docs_path))
        _log(f"done in {results['elapsed_s']:.0f}s; results in {out / 'results.json'}")
        return results
    finally:
        if own_session:
            spark.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--scale",
        type=float,
        default=DEFAULT_SCALE_MILLIONS,
        help="millions of rows (100 devices, 10 parts per million rows); default 10",
    )
    parser.add_argument("--smoke", action="store_true", help="tiny data, one repetition (<1 min)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="results directory")
    parser.add_argument("--data", default=None, help="table directory (default <out>/data)")
    parser.add_argument(
        "--docs",
        default=None,
        help="Markdown report path (default docs/benchmarks.md; <out>/benchmarks.md for --smoke)",
    )
    parser.add_argument("--no-profile", action="store_true", help="skip the pyinstrument profile")
    parser.add_argument("--no-planning", action="store_true", help="skip the planning benchmark")
    args = parser.parse_args(argv)
    scale = Scale.smoke() if args.smoke else Scale.millions(args.scale)
    docs = args.docs or (str(Path(args.out) / "benchmarks.md") if args.smoke else str(DEFAULT_DOCS))
    given = list(argv) if argv is not None else sys.argv[1:]
    command = shlex.join(["python", "-m", "bench.run", *given])
    results = run(
        scale=scale,
        out_dir=args.out,
        data_dir=args.data,
        docs_path=docs,
        command=command,
        profile=not args.no_profile,
        planning=not args.no_planning,
    )
    bad = [q["id"] for q in results["queries"] if not q["same_answer"]]
    if bad:
        print(f"engines disagree on {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
