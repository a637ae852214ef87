"""The CLI tests' tables: real TsFiles written by the project, ten one-minute rows per device."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from tests.datasource.helpers import write_rows
from tests.factories import weather_schema
from tests.table.helpers import append_rows
from tsfile_catalog.formats.tsfile import TSFILE
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.table import append_parts

SCHEMA = weather_schema(("temp", DataType.DOUBLE))
T0 = 1_700_000_000_000
MINUTE = 60_000

# file -> (city, device, first minute) of its devices; ten one-minute rows each.
FILES = {
    "a.tsfile": [("bj", "d1", 0), ("bj", "d2", 0)],
    "b.tsfile": [("sh", "d1", 0)],
}
APPENDED = {"c.tsfile": [("bj", "d1", 5)]}
# One append each, as the writer names parts: bj's two devices, then sh's.
WRITTEN = [[("bj", "d1", 0)], [("bj", "d2", 0)], [("sh", "d1", 0)]]


def write_file(root: Path, name: str, devices: list[tuple[str, str, int]]) -> None:
    write_rows(str(root / name), SCHEMA, rows_of(devices))


def append_file(root: Path, name: str, devices: list[tuple[str, str, int]]) -> int:
    """Write ``name`` into the table at ``root`` and commit it as the next version."""
    write_file(root, name, devices)
    url = str(root / name)
    _, part = TSFILE.read_part(FileIO(url), url, path=name, size_bytes=(root / name).stat().st_size)
    return append_parts(str(root), [part], SCHEMA)


def rows_of(devices: list[tuple[str, str, int]]) -> list[dict[str, object]]:
    return [
        {"time": T0 + (start + k) * MINUTE, "city": city, "device": device, "temp": float(k)}
        for city, device, start in devices
        for k in range(10)
    ]


def write_appends(root: Path, appends: list[list[tuple[str, str, int]]]) -> None:
    """A table the project's writer made: one writer-named part (and version) per append."""
    for devices in appends:
        append_rows(str(root), pa.Table.from_pylist(rows_of(devices)), SCHEMA)
