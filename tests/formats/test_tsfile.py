"""The TsFile adapter through the FileFormat protocol, against real files (no Spark)."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa

from tests.formats.tsfile.helpers import SCHEMA, weather_rows
from tsfile_catalog.formats.base import ScanSlice
from tsfile_catalog.formats.tsfile import TSFILE, WriteSettings
from tsfile_catalog.io import FileIO


def test_the_adapter_reads_what_it_wrote_through_the_format_protocol(tmp_path: Path) -> None:
    # The table layer sees TsFile only through FileFormat: schema, part stats and a sliced
    # scan must agree with the file, and a column the file lacks is left out, not an error.
    path = str(tmp_path / "a.tsfile")
    TSFILE.write(
        path, weather_rows([5, 1, 7], ["b", "a", "b"], [None, 1.5, 3.0]), SCHEMA, WriteSettings()
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
