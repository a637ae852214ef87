"""``python -m bench.writes [--smoke]``: Spark writes of the realistic data set against Parquet
and against Spark's own floor, in one run (issue 40).

The realistic readings (:func:`bench.datagen.realistic_arrow`, 10M rows by default: 100 devices
x 100,000 seconds) are cached in Spark once, then written :data:`REPETITIONS` times by each
path, the paths in a rotated order each round (drift in the machine's load spreads over all
of them); each number is the median:

* ``parquet``: Parquet snappy, each file sorted by device then time (``bench.datagen``);
* ``tsfile_catalog``: ``df.writeTo(<plugin table>).append()``, a fresh catalog table per round
  (the plugin clusters rows by device first: ``sql/write_distribution.py``);
* ``tsfile``: ``df.write.format("tsfile")``, unclustered, a fresh path per round;
* ``floor``: the same frame into a Python ``DataSourceArrowWriter`` that drops its batches
  (``bench.floor``): Spark's hand-off to Python alone, nothing encoded or stored;
* ``floor_rows``: into a row-based ``DataSourceWriter`` that drops its rows: whether the
  Arrow writer (Spark 4.0+) moves the floor at all.

Then the levers on the floor and on the tsfile write, one round each: larger Arrow batches
(``spark.sql.execution.arrow.maxRecordsPerBatch``, Spark's default 10,000) and fewer, larger
tasks (the frame in one partition; the plugin's shuffle into fewer partitions), and the
plugin's write without its clustering by device (``spark.tsfile.write.clustered=false``).

The frame has about :data:`ROWS_PER_PARTITION` rows per partition, as one read from files
would (``createDataFrame`` alone makes one per 10,000 rows, and Spark's fixed cost per task
then dominates every path: measured at 2M rows, the floor took 26.5 s in 200 partitions
against 6.5 s in one).

Each write records its wall clock and the CPU time of the whole process tree (this driver,
the JVM, Spark's Python workers: ``/proc``), since on a shared machine the wall clock also
counts waiting for a core. Targets (issue 40), judged on the wall-clock medians as a user
sees them, and reported on CPU too: ``tsfile_catalog`` at least 0.8x Parquet's rows/s,
``tsfile`` at least 0.6x.

Results go to ``bench/out/writes.json`` and, except with ``--smoke``, the generated "Writes"
section of ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.datagen import REALISTIC_TABLE, REALISTIC_TAGS, realistic_arrow, write_parquet
from bench.stamp import measured_at

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["REPETITIONS", "TARGETS", "bench_writes", "main", "render_writes_section"]

REPO = Path(__file__).resolve().parent.parent
REPETITIONS = 3
# Issue 40: a path's rows/s over Parquet snappy's, in the same run.
TARGETS = {"tsfile_catalog": 0.8, "tsfile": 0.6}
BATCH_CONF = "spark.sql.execution.arrow.maxRecordsPerBatch"
SHUFFLE_CONF = "spark.sql.shuffle.partitions"
# Rows per input partition: about a 128 MB Parquet file of these readings' rows in Spark.
ROWS_PER_PARTITION = 1_000_000
PATHS = ("parquet", "tsfile_catalog", "tsfile", "floor", "floor_rows")


# -- CPU time of the Spark process tree -------------------------------------------------------


def tree_cpu_seconds(root: int | None = None) -> float:
    """User + system CPU seconds of process ``root`` (default: this one) and every process
    below it, alive or reaped by a live parent (``cutime``/``cstime``): the driver, its JVM
    and Spark's Python workers. 0.0 where ``/proc`` is missing."""
    root = os.getpid() if root is None else root
    ticks = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    cpu: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0.0
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                text = f.read()
        except OSError:
            continue  # gone meanwhile
        # The command may hold spaces and parentheses: fields start after the last ')'.
        fields = text[text.rfind(")") + 2 :].split()
        pid = int(entry)
        parents[pid] = int(fields[1])
        cpu[pid] = sum(int(v) for v in fields[11:15])  # utime, stime, cutime, cstime
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += cpu.get(pid, 0)
        stack.extend(children.get(pid, ()))
    return total / ticks


def _timed(write: Callable[[], None]) -> dict[str, float]:
    cpu, wall = tree_cpu_seconds(), time.perf_counter()
    write()
    return {"wall_s": time.perf_counter() - wall, "cpu_s": tree_cpu_seconds() - cpu}


# -- the row-based floor ----------------------------------------------------------------------


def _row_sink() -> Any:
    """A data source whose (row-based) writer drops every row."""
    from pyspark.sql.datasource import DataSource, DataSourceWriter, WriterCommitMessage

    class _DropRows(DataSourceWriter):
        def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
            for _ in iterator:
                pass
            return WriterCommitMessage()

    class RowDiscardSink(DataSource):
        @classmethod
        def name(cls) -> str:
            return "bench_discard_rows"

        def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
            return _DropRows()

    return RowDiscardSink


def _write_row_floor(frame: DataFrame) -> None:
    sink = _row_sink()
    frame.sparkSession.dataSource.register(sink)
    frame.write.format(sink.name()).mode("append").save()


# -- the run ----------------------------------------------------------------------------------


class _Writers:
    """Each path's write of ``frame``; every call writes somewhere new."""

    def __init__(self, spark: SparkSession, frame: DataFrame, work: str, warehouse: str) -> None:
        self.spark, self.frame, self.work, self.warehouse = spark, frame, work, warehouse
        self._count = 0

    def _fresh(self, name: str) -> str:
        self._count += 1
        return os.path.join(self.work, f"{name}_{self._count}")

    def write(self, path: str, frame: DataFrame | None = None) -> None:
        from bench.floor import write_floor
        from bench.queries import plugin_table
        from tsfile_catalog import Catalog

        frame = self.frame if frame is None else frame
        if path == "parquet":
            write_parquet(frame, self._fresh("parquet"))
        elif path == "tsfile":
            (
                frame.write.format("tsfile")
                .option("table", REALISTIC_TABLE)
                .option("tagColumns", ",".join(REALISTIC_TAGS))
                .mode("append")
                .save(self._fresh("tsfile"))
            )
        elif path == "tsfile_catalog":
            # A fresh table per write, created before the clock starts would be fairer still;
            # CREATE TABLE is a metadata commit of a few ms against a write of seconds.
            location = self._fresh("catalog")
            name = f"{REALISTIC_TABLE}_{self._count}"
            columns = ", ".join(f"{f.name} {f.dataType.simpleString()}" for f in frame.schema)
            Catalog(self.spark, self.warehouse, register_views=False).sql(
                f"CREATE TABLE {name} ({columns}) USING tsfile "
                f"OPTIONS (tagColumns '{','.join(REALISTIC_TAGS)}') LOCATION '{location}'"
            )
            frame.writeTo(plugin_table(self.spark, self.warehouse, name)).append()
        elif path == "floor":
            write_floor(frame)
        elif path == "floor_rows":
            _write_row_floor(frame)
        else:
            raise ValueError(path)


def _with_conf(spark: SparkSession, key: str, value: str, run: Callable[[], Any]) -> Any:
    before = spark.conf.get(key, None)
    spark.conf.set(key, value)
    try:
        return run()
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


def bench_writes(
    spark: SparkSession,
    work: str,
    *,
    devices: int,
    seconds: int,
    repetitions: int = REPETITIONS,
    warmup: bool = True,
    levers: bool = True,
    rows_per_partition: int = ROWS_PER_PARTITION,
) -> dict[str, Any]:
    """Write the realistic data set by every path ``repetitions`` times, then once per lever
    (see the module docstring); ``warmup`` first writes 1,000 rows by every path, untimed
    (a fresh session's JVM, workers and catalog process)."""
    measured_commit = measured_at()
    load_start = os.getloadavg()
    warehouse = os.path.join(work, "warehouse")
    data = realistic_arrow(devices, seconds)
    # createDataFrame makes one partition per Arrow batch of maxRecordsPerBatch rows (10,000):
    # 1,000 tasks for 10M rows, each paying Spark's fixed hand-off to a Python worker (at 2M
    # rows the floor took 26.5 s in 200 partitions and 6.5 s in one). A DataFrame read from
    # files has partitions of ~128 MB; the frame is coalesced (order kept) to about that.
    created = spark.createDataFrame(data)
    wanted = max(1, -(-data.num_rows // rows_per_partition))
    created_partitions = created.rdd.getNumPartitions()
    if created_partitions > wanted:
        created = created.coalesce(wanted)
    frame = created.cache()
    rows = frame.count()
    del data
    writers = _Writers(spark, frame, work, warehouse)
    # Untimed: the JVM, the Python workers, the plugin's catalog process and every code path.
    if warmup:
        small = frame.limit(1_000)
        for path in PATHS:
            writers.write(path, small)
    runs: dict[str, list[dict[str, float]]] = {path: [] for path in PATHS}
    for round_ in range(repetitions):
        order = PATHS[round_ % len(PATHS) :] + PATHS[: round_ % len(PATHS)]
        for path in order:
            runs[path].append(_timed(lambda p=path: writers.write(p)))  # type: ignore[misc]
            _clean(work)
    lever_runs: dict[str, dict[str, float]] = {}
    one = frame.coalesce(1)
    for path in ("floor", "tsfile") if levers else ():

        def write(path: str = path) -> None:
            writers.write(path)

        def write_one(path: str = path) -> None:
            writers.write(path, one)

        def timed(write: Callable[[], None] = write) -> dict[str, float]:
            return _timed(write)

        lever_runs[f"{path}, {BATCH_CONF}=100000"] = _with_conf(spark, BATCH_CONF, "100000", timed)
        _clean(work)
        lever_runs[f"{path}, one partition"] = _timed(write_one)
        _clean(work)
    for partitions in ("2", "8") if levers else ():
        lever_runs[f"tsfile_catalog, {SHUFFLE_CONF}={partitions}"] = _with_conf(
            spark,
            SHUFFLE_CONF,
            partitions,
            lambda: _timed(lambda: writers.write("tsfile_catalog")),
        )
        _clean(work)
    # What the plugin's clustering by device (a shuffle Parquet does not pay) costs a write.
    if levers:
        from tsfile_catalog.sql.write_distribution import CLUSTERED_WRITES

        lever_runs[f"tsfile_catalog, {CLUSTERED_WRITES}=false"] = _with_conf(
            spark,
            CLUSTERED_WRITES,
            "false",
            lambda: _timed(lambda: writers.write("tsfile_catalog")),
        )
        _clean(work)
    frame.unpersist()
    medians = {
        path: {k: statistics.median(r[k] for r in times) for k in ("wall_s", "cpu_s")}
        for path, times in runs.items()
    }
    parquet = medians["parquet"]
    targets: list[dict[str, Any]] = [
        {
            "path": path,
            "limit": limit,
            "value": parquet["wall_s"] / medians[path]["wall_s"],
            "value_cpu": parquet["cpu_s"] / medians[path]["cpu_s"] if medians[path]["cpu_s"] else 0,
        }
        for path, limit in TARGETS.items()
    ]
    for target in targets:
        target["met"] = target["value"] >= target["limit"]
    return {
        "measured_at": measured_commit,
        "rows": rows,
        "devices": devices,
        "seconds": seconds,
        "partitions": frame.rdd.getNumPartitions(),
        "created_partitions": created_partitions,
        "repetitions": repetitions,
        "spark": spark.version,
        "shuffle_partitions": spark.conf.get(SHUFFLE_CONF),
        "runs": runs,
        "medians": medians,
        "levers": lever_runs,
        "targets": targets,
        "cpu_count": os.cpu_count(),
        "load_average_start": load_start,
        "load_average": os.getloadavg(),
    }


def _clean(work: str) -> None:
    """Drop what the last write left (keeps the disk and the page cache out of later ones);
    the warehouse keeps its registry."""
    for name in os.listdir(work):
        if name != "warehouse":
            shutil.rmtree(os.path.join(work, name), ignore_errors=True)


# -- the report -------------------------------------------------------------------------------


def render_writes_section(results: dict[str, Any]) -> str:
    from bench.report import _fmt_s
    from bench.stamp import stamp

    medians, rows = results["medians"], results["rows"]
    floor = medians["floor"]
    lines = [
        "## Writes: the realistic data set against Parquet and Spark's floor",
        "",
        stamp(results.get("measured_at")),
        "",
        f"Generated by `python -m bench.writes` (bench/writes.py): {rows:,} realistic readings "
        f"({results['devices']} devices x {results['seconds']:,} s, in "
        f"{results['partitions']} partitions, coalesced from the "
        f"{results.get('created_partitions', '?')} createDataFrame makes), cached in Spark "
        f"{results['spark']}, written "
        f"{results['repetitions']} times by each path in a rotated order; medians. Wall clock "
        "is what a user waits; CPU is the whole process tree's (driver, JVM, Python workers), "
        "the fairer measure on this machine, whose "
        f"{results['cpu_count']} cores are shared with other jobs (load average "
        f"{'/'.join(f'{v:.1f}' for v in results['load_average_start'])} at the start, "
        f"{'/'.join(f'{v:.1f}' for v in results['load_average'])} at the end). The floor is "
        "the same frame into a Python Arrow writer that drops its batches.",
        "",
        "| Path | Wall | CPU | Rows/s (wall) | vs Parquet (wall) | vs Parquet (CPU) | "
        "Share of the floor (wall) | Target | Met |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    targets = {t["path"]: t for t in results["targets"]}
    parquet = medians["parquet"]
    for path, m in medians.items():
        target = targets.get(path)
        lines.append(
            f"| {path} | {_fmt_s(m['wall_s'])} | {_fmt_s(m['cpu_s'])} | "
            f"{rows / m['wall_s']:,.0f} | {parquet['wall_s'] / m['wall_s']:.2f}x | "
            f"{parquet['cpu_s'] / m['cpu_s'] if m['cpu_s'] else 0:.2f}x | "
            f"{floor['wall_s'] / m['wall_s']:.2f} | "
            + (
                f">= {target['limit']:.1f}x | {'**met**' if target['met'] else '**not met**'} |"
                if target
                else "| |"
            )
        )
    lines += [
        "",
        "Levers, one write each (compare with the medians above):",
        "",
        "| Write | Wall | CPU |",
        "|---|---|---|",
    ]
    for name, m in results["levers"].items():
        lines.append(f"| {name} | {_fmt_s(m['wall_s'])} | {_fmt_s(m['cpu_s'])} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    from bench.report import splice_section

    parser = argparse.ArgumentParser(prog="python -m bench.writes", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="200,000 rows, 1 round, no docs")
    parser.add_argument("--devices", type=int, default=100)
    parser.add_argument("--seconds", type=int, default=100_000)
    parser.add_argument("--repetitions", type=int, default=REPETITIONS)
    parser.add_argument("--rows-per-partition", type=int, default=ROWS_PER_PARTITION)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out")
    parser.add_argument("--docs", type=Path, default=REPO / "docs" / "benchmarks.md")
    args = parser.parse_args(argv)
    devices, seconds, reps = (
        (10, 20_000, 1) if args.smoke else (args.devices, args.seconds, args.repetitions)
    )
    from bench.queries import SPARK_CATALOG
    from tsfile_catalog import local_session
    from tsfile_catalog.spark_catalog.session import catalog_config

    with tempfile.TemporaryDirectory(prefix="bench-writes-") as work:
        spark = local_session(
            "tsfile-catalog-bench-writes",
            config={
                # The catalog plugin (writeTo) over the run's warehouse, as bench.run has it.
                **catalog_config(os.path.join(work, "warehouse"), name=SPARK_CATALOG),
                "spark.driver.memory": "4g",
                "spark.ui.showConsoleProgress": "false",
                SHUFFLE_CONF: "4",
            },
        )
        spark.sparkContext.setLogLevel("ERROR")
        try:
            results = bench_writes(
                spark,
                work,
                devices=devices,
                seconds=seconds,
                repetitions=reps,
                rows_per_partition=args.rows_per_partition,
            )
        finally:
            spark.stop()
    args.out.mkdir(parents=True, exist_ok=True)
    name = "writes_smoke.json" if args.smoke else "writes.json"
    (args.out / name).write_text(json.dumps(results, indent=2))
    section = render_writes_section(results)
    print(section)
    if not args.smoke:
        splice_section(args.docs, "writes", section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
