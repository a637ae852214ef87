"""Run by tests/sql/test_catalog.py in another process: drop a catalog table and recreate it
at the same location, as ``DROP TABLE t PURGE``, ``CREATE TABLE t (...) LOCATION '<same>'``
and an ``INSERT`` do to storage, without starting a JVM.

Usage: ``recreate_child.py <warehouse> <table> <rows>``; the new table holds ``rows`` rows of
device (``gz``, ``d9``) at times 0..rows-1.
"""

from __future__ import annotations

import os
import sys

from tests.datasource.helpers import write_rows
from tsfile_catalog.formats.tsfile import opened, part_from_reader
from tsfile_catalog.io import FileIO
from tsfile_catalog.sql import TableName
from tsfile_catalog.sql.registry import Registry
from tsfile_catalog.table import append_parts, create_table, open_table


def main(warehouse: str, name: str, rows: int) -> None:
    registry = Registry(warehouse)
    table = TableName(name)
    entry = registry.require(table)
    schema = open_table(entry.location).schema
    registry.drop(table)
    FileIO(entry.location).delete(entry.location, recursive=True)
    create_table(entry.location, schema)
    registry.create(table, entry.location, entry.options)
    file_name = "part-recreated.tsfile"
    path = os.path.join(entry.location, file_name)
    write_rows(
        path,
        schema,
        [{"time": t, "city": "gz", "device": "d9", "temp": float(t)} for t in range(rows)],
    )
    with opened(FileIO(path), path) as reader:
        part = part_from_reader(reader, schema, file_name, os.path.getsize(path))
    append_parts(entry.location, [part], schema)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
