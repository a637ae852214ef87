"""The native-writer traps, each guarded, tested against real TsFile files (no Spark)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.formats.tsfile.helpers import SCHEMA, read_all, weather_rows
from tests.table.helpers import CHILD_ENV
from tsfile_catalog.exceptions import DataError, OptionError
from tsfile_catalog.formats.tsfile import WriteSettings, validate_encoding, write_file


def test_unsorted_input_is_sorted_by_device_then_time(tmp_path: Path) -> None:
    path = str(tmp_path / "a.tsfile")
    write_file(
        path,
        weather_rows([3, 1, 2, 1], ["b", "a", "a", "b"], [4.0, 1.0, 2.0, 3.0]),
        SCHEMA,
        WriteSettings(),
    )
    rows = read_all(path)
    assert [(r["city"], r["time"], r["temp"]) for r in rows] == [
        ("a", 1, 1.0),
        ("a", 2, 2.0),
        ("b", 1, 3.0),
        ("b", 3, 4.0),
    ]


def test_duplicates_fail_by_default_and_write_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "dup.tsfile")
    with pytest.raises(DataError, match=r"duplicate rows for device \(city='a'\) at time 1"):
        write_file(path, weather_rows([1, 1], ["a", "a"], [1.0, 2.0]), SCHEMA, WriteSettings())
    assert not os.path.exists(path)


def test_on_duplicate_last_keeps_the_last_written_row(tmp_path: Path) -> None:
    path = str(tmp_path / "dup.tsfile")
    data = weather_rows([1, 2, 1, 1], ["a", "a", "a", "b"], [1.0, 2.0, 3.0, 9.0])
    write_file(path, data, SCHEMA, WriteSettings(on_duplicate="last"))
    rows = read_all(path)
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
        weather_rows(times, ["a"] * n, [float(t) for t in times]),
        SCHEMA,
        WriteSettings(),
        chunk_rows=4096,
    )
    rows = read_all(path)
    assert len(rows) == n
    assert [r["time"] for r in rows] == sorted(times)
    assert all(r["temp"] == float(r["time"]) for r in rows)  # type: ignore[arg-type]


def test_existing_path_is_refused_and_kept(tmp_path: Path) -> None:
    path = str(tmp_path / "a.tsfile")
    write_file(path, weather_rows([1], ["a"], [1.0]), SCHEMA, WriteSettings())
    before = Path(path).read_bytes()
    with pytest.raises(DataError, match="already exists"):
        write_file(path, weather_rows([2], ["a"], [2.0]), SCHEMA, WriteSettings())
    assert Path(path).read_bytes() == before


def test_lossy_or_unsupported_encodings_are_refused() -> None:
    validate_encoding(SCHEMA, WriteSettings(encoding="PLAIN"))
    with pytest.raises(OptionError, match="'temp' of type DOUBLE.*lossy"):
        validate_encoding(SCHEMA, WriteSettings(encoding="TS_2DIFF"))
    with pytest.raises(OptionError, match="'note' of type STRING"):
        validate_encoding(SCHEMA, WriteSettings(encoding="GORILLA"))


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
