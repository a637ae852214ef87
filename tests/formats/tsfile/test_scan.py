"""Scans of real TsFiles: batches of the asked size, the time range exact (no Spark)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from tests.formats.tsfile.helpers import SCHEMA, weather_rows
from tsfile_catalog.formats.tsfile import TSFILE, WriteSettings, opened, scan_file
from tsfile_catalog.io import FileIO


def test_a_scan_hands_out_contiguous_tables_of_batch_rows_with_the_time_range_exact(
    tmp_path: Path,
) -> None:
    # The native reader yields one block per device; the scan re-cuts them into tables of at
    # least batch_rows rows (one chunk per column) and applies the time range to those.
    devices, per_device = 40, 30
    times = [t for _ in range(devices) for t in range(per_device)]
    cities = [f"c{d:02d}" for d in range(devices) for _ in range(per_device)]
    temps = [float(t) if t % 7 else None for t in times]
    data = weather_rows(times, cities, temps)
    path = str(tmp_path / "many.tsfile")
    TSFILE.write(path, data, SCHEMA, WriteSettings())
    with opened(FileIO(path), path) as reader:
        tables = list(
            scan_file(
                reader,
                "weather",
                ["city", "temp"],
                time_min=5,
                time_max=24,
                tag_values={},
                device_group=None,
                tag_names=["city"],
                batch_rows=100,
            )
        )
    assert all(t.num_rows >= 100 for t in tables[:-1])
    assert all(c.num_chunks == 1 for t in tables for c in t.columns)
    got = pa.concat_tables(tables).to_pylist()
    expected = [
        {"time": r["time"], "city": r["city"], "temp": r["temp"]}
        for r in data.to_pylist()
        if 5 <= r["time"] <= 24
    ]
    key = lambda r: (r["city"], r["time"])  # noqa: E731
    assert sorted(got, key=key) == sorted(expected, key=key)
    assert len(got) == devices * 20
