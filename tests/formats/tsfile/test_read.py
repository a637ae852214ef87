"""Schemas and part statistics read from real TsFile metadata (no Spark)."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

from tests.formats.tsfile.helpers import SCHEMA, weather_rows
from tsfile_catalog.exceptions import TableNotFoundError
from tsfile_catalog.formats.tsfile import (
    WriteSettings,
    opened,
    part_from_reader,
    read_table_schema,
    scan_file,
    write_file,
)
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema


def test_stats_come_from_metadata(tmp_path: Path) -> None:
    path = str(tmp_path / "a.tsfile")
    write_file(
        path, weather_rows([5, 1, 7], ["b", "a", "b"], [None, 1.5, 3.0]), SCHEMA, WriteSettings()
    )
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
