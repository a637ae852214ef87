"""What a file format offers the table layer: its schema, a part's statistics, scans, writes.

One adapter per format implements :class:`FileFormat` (today :mod:`tsfile_catalog.formats.tsfile`);
discovery, adoption, the Spark reader and a future CLI go through it instead of a format's own
library, so a new format is one module beside the others. The read-only formats of external
parts (Parquet, ORC, CSV, added in place with ``ADD PART``) share
:class:`~tsfile_catalog.formats.external.ExternalFormat`, which also maps a foreign file's
columns and time representation to the table's. Modelled on pyiceberg's
``io/fileformat`` split: the table layer knows ``PartFile`` statistics and Arrow tables, never a
format's native reader.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

import pyarrow as pa

from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.expressions import INT64_MAX, INT64_MIN
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import DataType, TableSchema

__all__ = ["FileFormat", "NORMALIZED_ARROW", "ScanSlice", "coalesce_tables"]

# The Arrow type each TsFile type is read as on every scan path (TIMESTAMP as its raw int64);
# formats convert their own types to these.
NORMALIZED_ARROW: Mapping[DataType, pa.DataType] = {
    DataType.BOOLEAN: pa.bool_(),
    DataType.INT32: pa.int32(),
    DataType.INT64: pa.int64(),
    DataType.FLOAT: pa.float32(),
    DataType.DOUBLE: pa.float64(),
    DataType.TEXT: pa.string(),
    DataType.STRING: pa.string(),
    DataType.DATE: pa.date32(),
    DataType.TIMESTAMP: pa.int64(),
    DataType.BLOB: pa.binary(),
}


SettingsT_contra = TypeVar("SettingsT_contra", contravariant=True)


@dataclass(frozen=True, slots=True)
class ScanSlice:
    """One query on one file: ``time`` plus ``columns``, inside a time range and device set.

    ``tag_values`` keeps rows whose TAG is one of the given values; ``devices`` (TAG tuples in
    ``tag_names`` order, ``None`` for a null TAG) keeps only those devices. ``size_bytes`` is
    the file's size as the manifest records it: a TsFile part of another size is not the file
    the table wrote, and fails its read (None: not checked; external parts have their stamp).
    """

    columns: tuple[str, ...]
    tag_names: tuple[str, ...]
    time_min: int = INT64_MIN
    time_max: int = INT64_MAX
    tag_values: Mapping[str, frozenset[str]] = field(default_factory=dict)
    devices: tuple[tuple[str | None, ...], ...] | None = None
    batch_rows: int = 65_536
    size_bytes: int | None = None


class FileFormat(Protocol[SettingsT_contra]):
    """A file format as the table layer sees it. ``SettingsT_contra`` is what its writer takes.

    ``url`` is where the file is (through ``io``); ``path`` is the name a part records for it
    (relative to the table). Errors come from :mod:`tsfile_catalog.exceptions` and name the file.
    """

    @property
    def name(self) -> str:
        """The ``PartFile.format`` value of this format's parts."""
        ...

    @property
    def extension(self) -> str:
        """The file-name suffix that marks this format's files in a directory (``.tsfile``)."""
        ...

    def read_schema(self, io: FileIO, url: str, *, table: str | None = None) -> TableSchema:
        """The schema of ``table`` (or of the file's only table)."""
        ...

    def read_part(
        self, io: FileIO, url: str, *, path: str, size_bytes: int, table: str | None = None
    ) -> tuple[TableSchema, PartFile]:
        """The file's schema and its part statistics, from one open of the file."""
        ...

    def scan(self, io: FileIO, url: str, table: str, piece: ScanSlice) -> Iterator[pa.Table]:
        """Arrow tables of ``time`` and those of ``piece.columns`` that the file holds, in
        the format's raw Arrow types (callers normalize them to the table schema)."""
        ...

    def write(
        self, local_path: str, data: pa.Table, schema: TableSchema, settings: SettingsT_contra
    ) -> None:
        """Write ``data`` to a new local file; nothing is left behind on failure."""
        ...


def coalesce_tables(tables: Iterable[pa.Table], rows: int) -> Iterator[pa.Table]:
    """``tables`` re-cut into tables of at least ``rows`` rows (the last may hold fewer), each
    column one contiguous chunk; empty tables are dropped.

    The native TsFile reader hands out one block per device (about a thousand rows in a
    typical part), and every Arrow call on a block has a fixed cost (a filter through Acero
    about a millisecond): work is done per coalesced table instead. A table that is already
    large enough and contiguous passes through without a copy.
    """
    pending: list[pa.Table] = []
    count = 0
    for table in tables:
        if not table.num_rows:
            continue
        pending.append(table)
        count += table.num_rows
        if count >= rows:
            yield _contiguous(pending)
            pending, count = [], 0
    if pending:
        yield _contiguous(pending)


def _contiguous(tables: list[pa.Table]) -> pa.Table:
    if len(tables) == 1 and all(c.num_chunks == 1 for c in tables[0].columns):
        return tables[0]
    schema = tables[0].schema
    if all(t.schema.equals(schema) for t in tables[1:]):
        # The common case, concatenated without the type promotion (about half the cost).
        return pa.concat_tables(tables).combine_chunks()
    # A block whose column is all null may come typed ``null``: unify such types.
    return pa.concat_tables(tables, promote_options="default").combine_chunks()
