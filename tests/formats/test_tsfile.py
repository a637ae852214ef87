"""The native-writer traps, each guarded, tested against real TsFile files (no Spark)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.factories import table_schema
from tests.table.helpers import CHILD_ENV
from tsfile_catalog.exceptions import DataError, OptionError, TableNotFoundError
from tsfile_catalog.formats.base import ScanSlice
from tsfile_catalog.formats.tsfile import (
    TSFILE,
    WriteSettings,
    opened,
    part_from_reader,
    read_table_schema,
    scan_file,
    validate_encoding,
    write_file,
)
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema

SCHEMA = table_schema("weather", fields=[("temp", DataType.DOUBLE), ("note", DataType.STRING)])


def _table(times: list[int], cities: list[str], temps: list[float | None]) -> pa.Table:
    return pa.table(
        {
            "time": pa.array(times, pa.int64()),
            "city": pa.array(cities),
            "temp": pa.array(temps, pa.float64()),
            "note": pa.array([f"n{i}" for i in range(len(times))]),
        }
    )


def _read_all(path: str) -> list[dict[str, object]]:
    with opened(FileIO(path), path) as reader:
        tables = list(
            scan_file(
                reader,
                "weather",
                ["city", "temp", "note"],
                time_min=-(2**63),
                time_max=2**63 - 1,
                tag_values={},
                device_group=None,
                tag_names=["city"],
                batch_rows=1024,
            )
        )
    return pa.concat_tables(tables).to_pylist() if tables else []


def test_unsorted_input_is_sorted_by_device_then_time(tmp_path: Path) -> None:
    path = str(tmp_path / "a.tsfile")
    write_file(
        path,
        _table([3, 1, 2, 1], ["b", "a", "a", "b"], [4.0, 1.0, 2.0, 3.0]),
        SCHEMA,
        WriteSettings(),
    )
    rows = _read_all(path)
    assert [(r["city"], r["time"], r["temp"]) for r in rows] == [
        ("a", 1, 1.0),
        ("a", 2, 2.0),
        ("b", 1, 3.0),
        ("b", 3, 4.0),
    ]


def test_duplicates_fail_by_default_and_write_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "dup.tsfile")
    with pytest.raises(DataError, match=r"duplicate rows for device \(city='a'\) at time 1"):
        write_file(path, _table([1, 1], ["a", "a"], [1.0, 2.0]), SCHEMA, WriteSettings())
    assert not os.path.exists(path)


def test_on_duplicate_last_keeps_the_last_written_row(tmp_path: Path) -> None:
    path = str(tmp_path / "dup.tsfile")
    data = _table([1, 2, 1, 1], ["a", "a", "a", "b"], [1.0, 2.0, 3.0, 9.0])
    write_file(path, data, SCHEMA, WriteSettings(on_duplicate="last"))
    rows = _read_all(path)
    assert [(r["city"], r["time"], r["temp"]) for r in rows] == [
        ("a", 1, 3.0),
        ("a", 2, 2.0),
        ("b", 1, 9.0),
    ]


def test_large_unsorted_input_survives_internal_flushes(tmp_path: Path) -> None:
    # The native order check stops after an internal flush; sorting first keeps big files
    # correct even when written in many chunks.
    n = 50_000
    times = list(range(n, 0, -1))
    path = str(tmp_path / "big.tsfile")
    write_file(
        path,
        _table(times, ["a"] * n, [float(t) for t in times]),
        SCHEMA,
        WriteSettings(),
        chunk_rows=4096,
    )
    rows = _read_all(path)
    assert len(rows) == n
    assert [r["time"] for r in rows] == sorted(times)
    assert all(r["temp"] == float(r["time"]) for r in rows)  # type: ignore[arg-type]


def test_existing_path_is_refused_and_kept(tmp_path: Path) -> None:
    path = str(tmp_path / "a.tsfile")
    write_file(path, _table([1], ["a"], [1.0]), SCHEMA, WriteSettings())
    before = Path(path).read_bytes()
    with pytest.raises(DataError, match="already exists"):
        write_file(path, _table([2], ["a"], [2.0]), SCHEMA, WriteSettings())
    assert Path(path).read_bytes() == before


def test_lossy_or_unsupported_encodings_are_refused() -> None:
    validate_encoding(SCHEMA, WriteSettings(encoding="PLAIN"))
    with pytest.raises(OptionError, match="'temp' of type DOUBLE.*lossy"):
        validate_encoding(SCHEMA, WriteSettings(encoding="TS_2DIFF"))
    with pytest.raises(OptionError, match="'note' of type STRING"):
        validate_encoding(SCHEMA, WriteSettings(encoding="GORILLA"))


def test_stats_come_from_metadata(tmp_path: Path) -> None:
    path = str(tmp_path / "a.tsfile")
    write_file(path, _table([5, 1, 7], ["b", "a", "b"], [None, 1.5, 3.0]), SCHEMA, WriteSettings())
    with opened(FileIO(path), path) as reader:
        schema = read_table_schema(reader, path, None)
        part = part_from_reader(reader, schema, "a.tsfile", os.path.getsize(path))
    assert schema == SCHEMA
    assert (part.row_count, part.min_time, part.max_time) == (3, 1, 7)
    assert part.devices is not None
    assert [(d.tags, d.row_count, d.min_time, d.max_time) for d in part.devices] == [
        (("a",), 1, 1, 1),
        (("b",), 2, 5, 7),
    ]
    assert part.tags["city"].values == frozenset({"a", "b"})
    temp = part.fields["temp"]
    assert (temp.min, temp.max, temp.null_count) == (1.5, 3.0, 1)


def test_multi_table_and_attribute_files_fail_clearly(tmp_path: Path) -> None:
    import tsfile

    path = str(tmp_path / "attr.tsfile")
    native = tsfile.TableSchema(
        "t",
        [
            tsfile.ColumnSchema("tag", tsfile.TSDataType.STRING, tsfile.ColumnCategory.TAG),
            tsfile.ColumnSchema("at", tsfile.TSDataType.STRING, tsfile.ColumnCategory.ATTRIBUTE),
            tsfile.ColumnSchema("v", tsfile.TSDataType.INT32, tsfile.ColumnCategory.FIELD),
        ],
    )
    writer = tsfile.TsFileTableWriter(path, native)
    writer.write_arrow_batch(
        pa.table(
            {
                "time": pa.array([1], pa.int64()),
                "tag": ["a"],
                "at": ["x"],
                "v": pa.array([1], pa.int32()),
            }
        )
    )
    writer.close()
    with opened(FileIO(path), path) as reader:
        with pytest.raises(Exception, match=r"column 'at' in .*attr.tsfile has category ATTRIBUTE"):
            read_table_schema(reader, path, None)
        with pytest.raises(TableNotFoundError, match="table 'nope' is not in .*it holds: t"):
            read_table_schema(reader, path, "nope")


def test_rows_of_a_table_without_fields_round_trip_with_their_stats(tmp_path: Path) -> None:
    # tsfile 2.5 stores time + TAG rows and returns them from queries, but its metadata lists
    # no series (hence no statistics) for such devices: the stats come from the time column.
    schema = TableSchema.of(
        "events",
        [
            Column("city", DataType.STRING, Category.TAG),
            Column("kind", DataType.STRING, Category.TAG),
        ],
    )
    path = str(tmp_path / "events.tsfile")
    data = pa.table(
        {
            "time": pa.array([5, 1, 3, 2], pa.int64()),
            "city": ["a", "a", "b", "a"],
            "kind": ["x", "x", "y", "z"],
        }
    )
    write_file(path, data, schema, WriteSettings())
    with opened(FileIO(path), path) as reader:
        assert read_table_schema(reader, path, None) == schema
        part = part_from_reader(reader, schema, "events.tsfile", os.path.getsize(path))
        rows = pa.concat_tables(
            list(
                scan_file(
                    reader,
                    "events",
                    ["city", "kind"],
                    time_min=-(2**63),
                    time_max=2**63 - 1,
                    tag_values={},
                    device_group=None,
                    tag_names=["city", "kind"],
                    batch_rows=1024,
                )
            )
        ).to_pylist()
    assert sorted((r["time"], r["city"], r["kind"]) for r in rows) == [
        (1, "a", "x"),
        (2, "a", "z"),
        (3, "b", "y"),
        (5, "a", "x"),
    ]
    assert (part.row_count, part.min_time, part.max_time) == (4, 1, 5)
    assert part.devices is not None
    assert [(d.tags, d.row_count, d.min_time, d.max_time) for d in part.devices] == [
        (("a", "x"), 2, 1, 5),
        (("a", "z"), 1, 2, 2),
        (("b", "y"), 1, 3, 3),
    ]


def test_the_adapter_reads_what_it_wrote_through_the_format_protocol(tmp_path: Path) -> None:
    # The table layer sees TsFile only through FileFormat: schema, part stats and a sliced
    # scan must agree with the file, and a column the file lacks is left out, not an error.
    path = str(tmp_path / "a.tsfile")
    TSFILE.write(
        path, _table([5, 1, 7], ["b", "a", "b"], [None, 1.5, 3.0]), SCHEMA, WriteSettings()
    )
    io = FileIO(path)
    assert TSFILE.read_schema(io, path) == SCHEMA
    schema, part = TSFILE.read_part(io, path, path="a.tsfile", size_bytes=os.path.getsize(path))
    assert schema == SCHEMA
    assert (part.format, part.path, part.row_count, part.min_time, part.max_time) == (
        "tsfile",
        "a.tsfile",
        3,
        1,
        7,
    )
    piece = ScanSlice(
        columns=("temp", "missing"), tag_names=("city",), time_min=2, devices=(("b",),)
    )
    rows = pa.concat_tables(list(TSFILE.scan(io, path, "weather", piece))).to_pylist()
    assert rows == [{"time": 5, "temp": None}, {"time": 7, "temp": 3.0}]


# Writes the same rows three times in one fresh process: with the settings under test (JSON
# WriteSettings fields), again with them, then with the other settings; prints the sizes.
FIRST_WRITES = """
import json, os, sys
import pyarrow as pa
from tests.factories import table_schema
from tsfile_catalog.formats.tsfile import WriteSettings, write_file
from tsfile_catalog.metadata.schema import DataType

def settings(text):
    given = json.loads(text)
    pairs = tuple(tuple(p) for p in given.pop("column_encodings", []))
    return WriteSettings(**given, column_encodings=pairs)

out, chosen, other = sys.argv[1], settings(sys.argv[2]), settings(sys.argv[3])
schema = table_schema("weather", fields=[("temp", DataType.DOUBLE), ("note", DataType.STRING)])
n = 5000
data = pa.table({
    "time": pa.array(range(n), pa.int64()),
    "city": pa.array(["a"] * n),
    "temp": pa.array([float(i % 7) + i / 1000 for i in range(n)], pa.float64()),
    "note": pa.array(["the same note"] * n),
})
sizes = []
for i, settings in enumerate([chosen, chosen, other]):
    path = os.path.join(out, f"{i}.tsfile")
    write_file(path, data, schema, settings)
    sizes.append(os.path.getsize(path))
print(json.dumps(sizes))
"""


def _first_writes(tmp_path: Path, chosen: dict[str, Any], other: dict[str, Any]) -> list[int]:
    done = subprocess.run(
        [sys.executable, "-c", FIRST_WRITES, str(tmp_path), json.dumps(chosen), json.dumps(other)],
        capture_output=True,
        text=True,
        timeout=120,
        env=CHILD_ENV,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return list(json.loads(done.stdout))


def test_the_first_file_a_fresh_process_writes_uses_the_chosen_settings(tmp_path: Path) -> None:
    # The native library resets its configuration when it initialises, lazily, in the first
    # writer a process creates; only a fresh process (like a new Spark Python worker) shows it.
    first, second, zstd = _first_writes(
        tmp_path, {"compression": "UNCOMPRESSED", "encoding": "PLAIN"}, {"compression": "ZSTD"}
    )
    # The settings visibly change the file, so equal sizes below are not a coincidence.
    assert second > 10 * zstd
    assert first == second, "the first file ignored compression/encoding (native defaults)"


@pytest.mark.parametrize(
    ("chosen", "other"),
    [
        # The per-type defaults (PLAIN for DOUBLE) against a GORILLA override, both ways.
        ({}, {"column_encodings": [["temp", "GORILLA"]]}),
        ({"column_encodings": [["temp", "GORILLA"]]}, {}),
    ],
)
def test_the_first_file_honours_defaults_and_column_encodings(
    tmp_path: Path, chosen: dict[str, Any], other: dict[str, Any]
) -> None:
    first, second, different = _first_writes(tmp_path, chosen, other)
    assert second != different, "the settings under test do not change the file"
    assert first == second, "the first file of a fresh process ignored the encodings"


def test_a_scan_hands_out_contiguous_tables_of_batch_rows_with_the_time_range_exact(
    tmp_path: Path,
) -> None:
    # The native reader yields one block per device; the scan re-cuts them into tables of at
    # least batch_rows rows (one chunk per column) and applies the time range to those.
    devices, per_device = 40, 30
    times = [t for _ in range(devices) for t in range(per_device)]
    cities = [f"c{d:02d}" for d in range(devices) for _ in range(per_device)]
    temps = [float(t) if t % 7 else None for t in times]
    data = _table(times, cities, temps)
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
