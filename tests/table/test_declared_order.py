"""Without Spark, a table created by ``write_table`` keeps the Arrow data's column order (as
``pyarrow.parquet`` and Delta's ``write_deltalake`` do), ``create_table`` the order of the
schema it is given (:meth:`TableSchema.declared`); only a non-canonical order is recorded
(``format_version`` 4), and appends match by name whatever their order."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from tsfile_catalog import write_table
from tsfile_catalog.exceptions import SchemaError
from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema
from tsfile_catalog.table import open_table
from tsfile_catalog.table.create import create_table

ROWS = {
    "temp": [1.5, 2.5, None],
    "time": [1, 2, 3],
    "dev": ["a", "b", "a"],
    "rain": [10, None, 30],
}


def _format_version(url: str) -> int:
    first = sorted((Path(url) / "_tsfile_manifest").glob("*.json"))[0]
    return int(json.loads(first.read_text())["format_version"])


def test_write_table_creates_the_table_in_the_data_order(tmp_path: Path) -> None:
    url = str(tmp_path / "t")
    write_table(url, pa.table(ROWS), table="t", tag_columns=["dev"])
    table = open_table(url)
    assert table.schema.names == ("time", "dev", "temp", "rain")  # part files' order
    assert table.schema.display_names == ("temp", "time", "dev", "rain")
    read = table.scan().to_arrow()
    assert read.column_names == ["temp", "time", "dev", "rain"]
    assert read.sort_by("time").to_pydict() == ROWS
    assert _format_version(url) == 4
    # An append in another order matches by name, and the table keeps its order.
    more = pa.table({"time": [9], "dev": ["c"], "rain": [90], "temp": [9.5]})
    write_table(url, more, mode="append")
    read = open_table(url).scan().to_arrow()
    assert read.column_names == ["temp", "time", "dev", "rain"]
    assert read.sort_by("time").to_pylist()[-1] == {"temp": 9.5, "time": 9, "dev": "c", "rain": 90}


def test_a_renamed_time_column_is_shown_where_it_was(tmp_path: Path) -> None:
    url = str(tmp_path / "t")
    data = pa.table({"v": [1.0], "ts": [5], "dev": ["a"]})
    write_table(url, data, table="t", tag_columns=["dev"], options={"timeColumn": "ts"})
    read = open_table(url).scan().to_arrow()
    assert read.column_names == ["v", "time", "dev"]
    assert read.to_pylist() == [{"v": 1.0, "time": 5, "dev": "a"}]


def test_data_in_the_canonical_order_keeps_the_format(tmp_path: Path) -> None:
    url = str(tmp_path / "t")
    data = pa.table({k: ROWS[k] for k in ("time", "dev", "temp", "rain")})
    write_table(url, data, table="t", tag_columns=["dev"])
    assert open_table(url).schema.order is None
    assert _format_version(url) == 1


def test_create_table_records_the_declared_order(tmp_path: Path) -> None:
    columns = [
        Column("dev", DataType.STRING, Category.TAG),
        Column("temp", DataType.DOUBLE, Category.FIELD),
    ]
    schema = TableSchema.declared("t", columns, ["temp", "time", "dev"])
    url = str(tmp_path / "t")
    create_table(url, schema)
    assert open_table(url).schema.display_names == ("temp", "time", "dev")
    assert _format_version(url) == 4
    canonical = TableSchema.declared("t", columns, ["time", "dev", "temp"])
    assert canonical.order is None
    with pytest.raises(SchemaError, match="lists 2 of the 3 columns"):
        TableSchema.declared("t", columns, ["temp", "dev"])
