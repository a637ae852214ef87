"""Scans of real TsFiles: batches of the asked size, the time range exact (no Spark)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.factories import table_schema
from tests.formats.tsfile.helpers import SCHEMA, weather_rows
from tsfile_catalog.formats.tsfile import TSFILE, WriteSettings, opened, scan_file
from tsfile_catalog.formats.tsfile.scan import NATIVE_BLOCK_ROWS
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.schema import DataType


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


_TAGS = ("a", "b")
_FIELDS = (("v", DataType.DOUBLE), ("s", DataType.STRING), ("t", DataType.TEXT))
_PROPERTY_SCHEMA = table_schema("prop", tags=_TAGS, fields=_FIELDS)
# Devices by their TAG values; a null TAG is part of a device's identity.
_DEVICES = (("x", "1"), ("x", None), (None, "1"), ("y", "2"), ("z", None))


@st.composite
def _files(draw: st.DrawFn) -> pa.Table:
    """Rows of a few devices: sizes from one row to more than a native block, null FIELDs."""
    devices = draw(st.lists(st.sampled_from(_DEVICES), min_size=1, max_size=4, unique=True))
    columns: dict[str, list[Any]] = {"time": [], "a": [], "b": [], "v": [], "s": [], "t": []}
    for a, b in devices:
        rows = draw(st.sampled_from([1, 3, 40, NATIVE_BLOCK_ROWS + 7]))
        start, step = draw(st.integers(-50, 50)), draw(st.integers(1, 3))
        seed = draw(st.integers(0, 2**16))
        for i in range(rows):
            columns["time"].append(start + i * step)
            columns["a"].append(a)
            columns["b"].append(b)
            columns["v"].append(None if (i + seed) % 3 == 0 else float(i))
            columns["s"].append(None if (i + seed) % 4 == 1 else f"s{(i + seed) % 5}")
            columns["t"].append(None if (i + seed) % 5 == 2 else f"text {i}")
    return pa.table(
        {
            "time": pa.array(columns["time"], pa.int64()),
            **{name: pa.array(columns[name], pa.string()) for name in ("a", "b", "s", "t")},
            "v": pa.array(columns["v"], pa.float64()),
        }
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=_files(),
    columns=st.lists(st.sampled_from(["a", "b", "v", "s", "t"]), unique=True),
    # Narrow ranges too: the native time filter is loose when a range falls between two rows.
    bounds=st.integers(-60, 200).flatmap(
        lambda low: st.tuples(
            st.just(low), st.integers(low - 1, low + 2) | st.integers(low, 20_000)
        )
    ),
    tag_a=st.none() | st.sets(st.sampled_from(["x", "y", "z", "w"]), min_size=1),
    group=st.none() | st.lists(st.sampled_from(_DEVICES), min_size=1, unique=True),
    batch_rows=st.sampled_from([5, 1_000, 65_536]),
)
def test_a_scan_returns_exactly_the_rows_and_columns_asked_for(
    data: pa.Table,
    columns: list[str],
    bounds: tuple[int, int],
    tag_a: set[str] | None,
    group: list[tuple[str | None, ...]] | None,
    batch_rows: int,
) -> None:
    # Any column subset (TAGs only, FIELDs only, none at all for count(*)), null TAGs and
    # FIELDs, devices longer than a native block, the time range and TAG filters pushed
    # into the native reader: exactly the written rows that match, in every batch size.
    low, high = bounds
    with tempfile.TemporaryDirectory() as scratch:
        path = str(Path(scratch) / "prop.tsfile")
        TSFILE.write(path, data, _PROPERTY_SCHEMA, WriteSettings())
        with opened(FileIO(path), path) as reader:
            tables = list(
                scan_file(
                    reader,
                    "prop",
                    columns,
                    time_min=low,
                    time_max=high,
                    tag_values={} if tag_a is None else {"a": frozenset(tag_a)},
                    device_group=group,
                    tag_names=list(_TAGS),
                    batch_rows=batch_rows,
                )
            )
    assert all(t.num_rows >= batch_rows for t in tables[:-1])
    assert all(t.column_names == ["time", *columns] for t in tables)
    got = [row for t in tables for row in t.to_pylist()]
    expected = [
        {"time": row["time"], **{c: row[c] for c in columns}}
        for row in data.to_pylist()
        if low <= row["time"] <= high
        and (tag_a is None or row["a"] in tag_a)
        and (group is None or (row["a"], row["b"]) in group)
    ]
    # The same rows as a multiset (devices come out in the file's device order).
    assert sorted(got, key=repr) == sorted(expected, key=repr)
