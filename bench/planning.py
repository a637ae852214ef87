"""Planning cost on big manifests: 1k / 10k synthetic parts, cold (cache cleared) and warm.

Parts need no data files for planning, so the manifest is synthesized: each part is one time
bucket holding ``devices_per_part`` devices, with the same TAG/FIELD stats shape the writer
records for the benchmark table, committed like a table that grew by 100-part appends
(so a cold load reads the latest checkpoint plus the commits after it).
"""

from __future__ import annotations

import gc
import os
import statistics
import time
from collections.abc import Sequence
from typing import Any

from bench.datagen import FIELD_COLUMNS, STEP_MS, T0_MS, TABLE, TAG_COLUMNS

__all__ = ["bench_planning", "synthesize_table"]

_COMMIT_PARTS = 100
_ROWS_PER_DEVICE = 1_000


def _schema() -> Any:
    from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema

    types = {
        "f_double": DataType.DOUBLE,
        "f_float": DataType.FLOAT,
        "f_long": DataType.INT64,
        "f_bool": DataType.BOOLEAN,
        "f_str": DataType.STRING,
    }
    columns = [Column(t, DataType.STRING, Category.TAG) for t in TAG_COLUMNS]
    columns += [Column(f, types[f], Category.FIELD) for f in FIELD_COLUMNS]
    return TableSchema.of(TABLE, columns)


def _parts(start: int, count: int, devices_per_part: int, regions: int) -> list[Any]:
    from tsfile_catalog.metadata.parts import (
        DeviceStats,
        FieldStats,
        PartFile,
        tag_stats_from_devices,
    )

    per_region = max(1, devices_per_part // regions)
    width = _ROWS_PER_DEVICE * STEP_MS
    out = []
    for i in range(start, start + count):
        lo = T0_MS + i * width
        hi = lo + width - STEP_MS
        devices = tuple(
            DeviceStats((f"r{d // per_region:02d}", f"d{d:03d}"), _ROWS_PER_DEVICE, lo, hi)
            for d in range(devices_per_part)
        )
        rows = _ROWS_PER_DEVICE * devices_per_part
        out.append(
            PartFile(
                path=f"part-{i:06d}.tsfile",
                format="tsfile",
                size_bytes=rows * 12,
                row_count=rows,
                min_time=lo,
                max_time=hi,
                devices=devices,
                tags=tag_stats_from_devices(TAG_COLUMNS, (d.tags for d in devices)),
                fields={
                    "f_double": FieldStats(9.0, 31.0, 0),
                    "f_float": FieldStats(0.0, 100.0, rows // 3),
                    "f_long": FieldStats(i * 10_000, i * 10_000 + 9_999, 0),
                    "f_bool": FieldStats(None, None, 0),
                    "f_str": FieldStats("error", "warn", rows - rows // 10),
                },
            )
        )
    return out


def synthesize_table(path: str, parts: int, devices_per_part: int, regions: int = 10) -> None:
    from tsfile_catalog.table import append_parts

    schema = _schema()
    for start in range(0, parts, _COMMIT_PARTS):
        batch = _parts(start, min(_COMMIT_PARTS, parts - start), devices_per_part, regions)
        append_parts(path, batch, schema)


def _manifest_bytes(path: str) -> int:
    root = os.path.join(path, "_tsfile_manifest")
    return sum(os.path.getsize(os.path.join(root, n)) for n in os.listdir(root))


def bench_planning(
    workdir: str, sizes: Sequence[int], devices_per_part: int, repetitions: int
) -> list[dict[str, Any]]:
    """Median seconds of ``open_table(path).plan(where)`` per size, cold and warm.

    Cold runs ``repetitions`` times (once above 5k parts), warm ``repetitions`` times.
    """
    from tsfile_catalog.table import clear_cache, open_table

    results = []
    for parts in sizes:
        path = os.path.join(workdir, f"planning_{parts}")
        started = time.perf_counter()
        synthesize_table(path, parts, devices_per_part)
        build_s = time.perf_counter() - started
        span = parts * _ROWS_PER_DEVICE * STEP_MS
        lo = T0_MS + span // 2
        predicates = {
            "device+time": f"device = 'd001' AND time >= {lo} AND time < {lo + span // 100}",
            "time": f"time >= {lo} AND time < {lo + span // 20}",
            "none": None,
        }
        # A cold load of a 10k-part manifest takes seconds: fewer cold runs there.
        cold_runs = 1 if parts > 5_000 else repetitions
        for label, where in predicates.items():
            cold, warm = [], []
            for _ in range(cold_runs):
                clear_cache()
                gc.collect()
                t0 = time.perf_counter()
                open_table(path).plan(where=where)
                cold.append(time.perf_counter() - t0)
            for _ in range(repetitions):
                t0 = time.perf_counter()
                plan = open_table(path).plan(where=where)
                warm.append(time.perf_counter() - t0)
            kept = len(plan.parts)
            results.append(
                {
                    "parts": parts,
                    "devices_per_part": devices_per_part,
                    "predicate": label,
                    "where": where,
                    "kept_parts": kept,
                    "cold_s": statistics.median(cold),
                    "warm_s": statistics.median(warm),
                    "manifest_bytes": _manifest_bytes(path),
                    "build_s": build_s,
                }
            )
    return results
