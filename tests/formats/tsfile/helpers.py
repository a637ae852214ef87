"""A schema, its rows as Arrow, and a TsFile read back whole, for the TsFile tests."""

from __future__ import annotations

import pyarrow as pa

from tests.factories import table_schema
from tsfile_catalog.formats.tsfile import opened, scan_file
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.schema import DataType

SCHEMA = table_schema("weather", fields=[("temp", DataType.DOUBLE), ("note", DataType.STRING)])


def weather_rows(times: list[int], cities: list[str], temps: list[float | None]) -> pa.Table:
    return pa.table(
        {
            "time": pa.array(times, pa.int64()),
            "city": pa.array(cities),
            "temp": pa.array(temps, pa.float64()),
            "note": pa.array([f"n{i}" for i in range(len(times))]),
        }
    )


def read_all(path: str) -> list[dict[str, object]]:
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
