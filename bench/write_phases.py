"""Where a write task's time goes without Spark: the phases of staging rows as one part.

A Spark write task converts the batches it is handed to the raw types the native writer takes,
orders them by device and time, encodes them with the native writer, reads the statistics
the manifest keeps back from the new file's footer, and moves the file into the job's
staging folder (``tsfile_catalog.write.staging.stage_task``). This times each phase with the
same functions, once for all the rows as one task and once split as Spark splits the
benchmark's DataFrame, so the report can set the writer's own cost beside Spark's hand-off
(bench/floor.py ``bench_write_floor``) and the per-file costs beside the per-row ones.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["PHASES", "bench_write_phases"]

# The phases in the order a task runs them, with what the report calls them.
PHASES: tuple[tuple[str, str], ...] = (
    ("convert", "convert to raw types"),
    ("order", "order by device, time (and check)"),
    ("encode", "native encode + close"),
    ("statistics", "read statistics back from the footer"),
    ("stage", "move into staging"),
)


def bench_write_phases(
    data: pa.Table, *, table: str, tags: tuple[str, ...], tasks: int, repetitions: int = 3
) -> dict[str, Any]:
    """Seconds per phase (the best of ``repetitions``) to stage ``data`` as one task and as
    ``tasks`` tasks of equal shares, as the tsfile writer's tasks do."""
    out: dict[str, Any] = {"rows": data.num_rows}
    for label, count in (("one_task", 1), ("spark_tasks", max(1, tasks))):
        best: dict[str, float] = {}
        for _ in range(repetitions):
            spent = _stage_in_phases(data, table, tags, count)
            best = {k: min(v, best.get(k, v)) for k, v in spent.items()}
        out[label] = {"tasks": count, "seconds": best, "total_s": sum(best.values())}
    return out


def _stage_in_phases(
    data: pa.Table, table: str, tags: tuple[str, ...], tasks: int
) -> dict[str, float]:
    # Imported here: bench modules import without the package's heavy parts.
    from tsfile_catalog.formats.tsfile import opened, part_and_devices, sort_and_dedupe
    from tsfile_catalog.formats.tsfile.write import write_file
    from tsfile_catalog.io import FileIO
    from tsfile_catalog.options import parse_write_options
    from tsfile_catalog.table.rewrite import to_writer_types
    from tsfile_catalog.write.arrow import arrow_columns, raw_table
    from tsfile_catalog.write.plan import plan_write

    spent = {name: 0.0 for name, _ in PHASES}
    root = tempfile.mkdtemp(prefix="bench-write-phases-")
    try:
        options = parse_write_options(
            {"path": os.path.join(root, "table"), "table": table, "tagColumns": ",".join(tags)}
        )
        plan = plan_write(arrow_columns(data.schema), options, None)
        settings = options.settings()
        io = FileIO(options.path)
        staging = os.path.join(options.path, "_staging", "job")
        share = -(-data.num_rows // tasks)
        for task in range(tasks):
            rows = data.slice(task * share, share)
            local_dir = tempfile.mkdtemp(dir=root)
            local = os.path.join(local_dir, f"part-{task}.tsfile")
            started = time.perf_counter()
            raw = to_writer_types(raw_table(rows, plan.schema, options.precision), plan.schema)
            converted = time.perf_counter()
            ordered = sort_and_dedupe(raw, plan.schema, settings.on_duplicate)
            sorted_at = time.perf_counter()
            write_file(local, ordered, plan.schema, settings)
            encoded = time.perf_counter()
            with opened(FileIO(local), local) as reader:
                part_and_devices(reader, plan.schema, local, os.path.getsize(local))
            read_back = time.perf_counter()
            io.put_file(local, os.path.join(staging, os.path.basename(local)))
            shutil.rmtree(local_dir)
            staged = time.perf_counter()
            spent["convert"] += converted - started
            spent["order"] += sorted_at - converted
            spent["encode"] += encoded - sorted_at
            spent["statistics"] += read_back - encoded
            spent["stage"] += staged - read_back
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return spent
