"""Scans of real TsFiles: batches of the asked size, the time range exact (no Spark)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from tests.formats.tsfile.helpers import SCHEMA, weather_rows
from tsfile_catalog.formats.tsfile import TSFILE, WriteSettings, opened, scan_file
from tsfile_catalog.formats.tsfile.scan import NATIVE_BLOCK_ROWS
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


def test_devices_longer_than_a_native_block_come_out_whole_in_batches_of_batch_rows(
    tmp_path: Path,
) -> None:
    # The native block size is the scan's own (NATIVE_BLOCK_ROWS), not batch_rows: a device
    # spans several native blocks, and batches larger than a block are stitched from them.
    per_device = 3 * NATIVE_BLOCK_ROWS + 17
    cities = ["a", "b", "c"]
    times = [t for _ in cities for t in range(per_device)]
    names = [c for c in cities for _ in range(per_device)]
    temps = [float(t) if t % 5 else None for t in times]
    data = weather_rows(times, names, temps)
    path = str(tmp_path / "long.tsfile")
    TSFILE.write(path, data, SCHEMA, WriteSettings())
    low, high = 100, per_device - 100
    batch_rows = 2 * NATIVE_BLOCK_ROWS + 1
    with opened(FileIO(path), path) as reader:
        tables = list(
            scan_file(
                reader,
                "weather",
                ["city", "temp", "note"],
                time_min=low,
                time_max=high,
                tag_values={"city": frozenset({"a", "c"})},
                device_group=None,
                tag_names=["city"],
                batch_rows=batch_rows,
            )
        )
    assert all(t.num_rows >= batch_rows for t in tables[:-1])
    assert all(c.num_chunks == 1 for t in tables for c in t.columns)
    got = pa.concat_tables(tables)
    expected = data.filter(
        pc.and_(
            pc.is_in(data.column("city"), pa.array(["a", "c"])),
            pc.and_(
                pc.greater_equal(data.column("time"), low), pc.less_equal(data.column("time"), high)
            ),
        )
    )
    assert got.column_names == ["time", "city", "temp", "note"]
    assert got.to_pylist() == expected.to_pylist()
