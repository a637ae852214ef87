"""The only package that talks to the ``tsfile`` library: schemas, statistics, scans, writes.

Everything the native library gets wrong silently (unsorted rows, duplicates, upper-case
names, TEXT tags, loose Arrow types, process-global config) is handled here, once:
:mod:`.read` (schema and statistics), :mod:`.scan` (rows of one query), :mod:`.sort`
(device/time order and duplicates) and :mod:`.write` (encodings, native config, the writer).
This module holds the :class:`~tsfile_catalog.formats.base.FileFormat` adapter over them and
re-exports their public names. The adapter calls :func:`opened` through this module's
namespace, so a test that replaces ``tsfile_catalog.formats.tsfile.opened`` sees every file
the adapter opens, as before the split.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from tsfile_catalog.formats.base import FileFormat, ScanSlice
from tsfile_catalog.formats.tsfile.read import (
    opened,
    part_and_devices,
    part_from_reader,
    read_table_schema,
    series_stats,
)
from tsfile_catalog.formats.tsfile.scan import scan_file
from tsfile_catalog.formats.tsfile.sort import duplicate_error, sort_and_dedupe, split_duplicates
from tsfile_catalog.formats.tsfile.write import (
    COMPRESSIONS,
    DEFAULT_COMPRESSION,
    DEFAULT_ENCODINGS,
    ENCODINGS,
    WriteSettings,
    native_encodings,
    validate_encoding,
    write_file,
)
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import TableSchema

__all__ = [
    "ENCODINGS",
    "COMPRESSIONS",
    "DEFAULT_ENCODINGS",
    "DEFAULT_COMPRESSION",
    "WriteSettings",
    "native_encodings",
    "validate_encoding",
    "read_table_schema",
    "series_stats",
    "part_from_reader",
    "part_and_devices",
    "opened",
    "scan_file",
    "write_file",
    "sort_and_dedupe",
    "split_duplicates",
    "duplicate_error",
    "TsFileFormat",
    "TSFILE",
]


class TsFileFormat:
    """The :class:`~tsfile_catalog.formats.base.FileFormat` adapter for TsFile."""

    name = "tsfile"
    extension = ".tsfile"

    def read_schema(self, io: FileIO, url: str, *, table: str | None = None) -> TableSchema:
        with opened(io, url) as reader:
            return read_table_schema(reader, url, table)

    def read_part(
        self, io: FileIO, url: str, *, path: str, size_bytes: int, table: str | None = None
    ) -> tuple[TableSchema, PartFile]:
        with opened(io, url) as reader:
            schema = read_table_schema(reader, url, table)
            return schema, part_from_reader(reader, schema, path, size_bytes, fmt=self.name)

    def scan(self, io: FileIO, url: str, table: str, piece: ScanSlice) -> Iterator[pa.Table]:
        with opened(io, url, size_bytes=piece.size_bytes) as reader:
            # A part written before a FIELD column was added lacks it; the caller fills nulls.
            file_schema = read_table_schema(reader, url, table)
            present = [c for c in piece.columns if file_schema.column(c) is not None]
            yield from scan_file(
                reader,
                table,
                present,
                time_min=piece.time_min,
                time_max=piece.time_max,
                tag_values=piece.tag_values,
                device_group=piece.devices,
                tag_names=piece.tag_names,
                batch_rows=piece.batch_rows,
            )

    def write(
        self, local_path: str, data: pa.Table, schema: TableSchema, settings: WriteSettings
    ) -> None:
        write_file(local_path, data, schema, settings)


TSFILE: FileFormat[WriteSettings] = TsFileFormat()
