"""Run by tests/spark_catalog/test_tables.py in a process of its own, without Spark: another
writer of a table the test's session has queried. ``append <location>`` appends a row and adds
a FIELD column (two commits); ``recreate <location>`` purges the table and creates another
one at the same location, with as many versions as the old one had. Prints the table's
latest version."""

from __future__ import annotations

import sys

import pyarrow as pa

from tsfile_catalog import open_table
from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema
from tsfile_catalog.table.create import create_table
from tsfile_catalog.table.purge import purge


def main(command: str, location: str) -> None:
    if command == "append":
        table = open_table(location)
        schema = pa.schema([("time", pa.int64()), ("city", pa.string()), ("temp", pa.float64())])
        table.append(pa.table({"time": [2], "city": ["sh"], "temp": [2.5]}, schema=schema))
        table.alter.add_columns([("rain", DataType.INT32)])
    elif command == "recreate":
        versions = open_table(location).version
        purge(location)
        schema = TableSchema.of(
            "fresh",
            [
                Column("city", DataType.STRING, Category.TAG),
                Column("hum", DataType.DOUBLE, Category.FIELD),
            ],
        )
        table = create_table(location, schema)
        while table.version < versions:  # the old table's version number, reached again
            table.alter.set_properties({"round": str(table.version)})
            table = table.latest()
    print(open_table(location).version)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
