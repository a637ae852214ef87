"""Reading a table's parts into Arrow without Spark: the one scan path every reader shares.

The Spark reader (:mod:`tsfile_catalog.datasource.reader`), Spark-free scans and table
maintenance all turn planned :class:`~tsfile_catalog.metadata.slices.FileSlice` queries
into Arrow tables here, so pruning, pushed TAG/time ranges and the exact residual filter mean
the same thing on every path. Output is in the table's *raw* domain (``time`` and TIMESTAMP
columns as int64 in the table's precision); converting to Spark's types is the caller's job.

A :class:`~tsfile_catalog.metadata.slices.MergeSlice` (rows of several writes that may share
a key) is read whole with the key terms of the predicate only, resolved by key
(:func:`~tsfile_catalog.exec.key_merge.latest_rows`), and only then filtered by the rest: an
old row that passes a FIELD filter is hidden by the newer row that replaced it even when the
newer one does not pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Protocol

import pyarrow as pa

from tsfile_catalog.exec.arrow_filter import apply_filter
from tsfile_catalog.exec.key_merge import latest_rows
from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.exec.stamps import io_for
from tsfile_catalog.formats.base import NORMALIZED_ARROW, ScanSlice
from tsfile_catalog.formats.registry import external_format
from tsfile_catalog.formats.tsfile import TSFILE
from tsfile_catalog.metadata.expressions import ScanPushdown, columns_of
from tsfile_catalog.metadata.key_reads import key_predicate
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import TIME_COLUMN, TableSchema
from tsfile_catalog.metadata.slices import MergeSlice

__all__ = [
    "NORMALIZED_ARROW",
    "SliceQuery",
    "normalize",
    "read_slices",
    "scan_columns",
]

# Metadata requests in flight at once when checking many external parts on an object store.


def normalize(raw: pa.Table, target: TableSchema, columns: Sequence[str]) -> pa.Table:
    """Raw TsFile Arrow data as ``columns`` of ``target`` in the raw domain.

    Columns the file lacks (an older schema) become nulls; INT32/FLOAT parts of a widened
    column are cast up; TIMESTAMP values are raw int64 (the native reader hands them out as
    ``timestamp[ns]`` whatever their real unit).
    """
    arrays = []
    fields = []
    for name in columns:
        if name == TIME_COLUMN:
            array = raw.column(TIME_COLUMN)
            arrow_type = pa.int64()
        else:
            col = target.column(name)
            assert col is not None
            arrow_type = NORMALIZED_ARROW[col.type]
            if name in raw.column_names:
                array = raw.column(name)
                if pa.types.is_timestamp(array.type):
                    array = array.cast(pa.int64())
                elif array.type != arrow_type:
                    array = array.cast(arrow_type)
            else:
                array = pa.nulls(raw.num_rows, arrow_type)
        arrays.append(array)
        fields.append(pa.field(name, arrow_type))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def scan_columns(schema: TableSchema, columns: Iterable[str], pushdown: ScanPushdown) -> list[str]:
    """``time`` plus the columns a scan must read: the output's and the residual's, in table
    order."""
    wanted = set(columns) | columns_of(pushdown.residual)
    return [TIME_COLUMN] + [c for c in schema.names[1:] if c in wanted]


class SliceQuery(Protocol):
    """Where one slice of a part lies in time and devices (a ``FileSlice`` or equivalent)."""

    @property
    def path(self) -> str: ...

    @property
    def time_min(self) -> int: ...

    @property
    def time_max(self) -> int: ...

    @property
    def devices(self) -> tuple[tuple[str | None, ...], ...] | None: ...

    @property
    def size_bytes(self) -> int | None: ...


def read_slices(
    scan: ResolvedScan,
    slices: Iterable[SliceQuery | MergeSlice],
    pushdown: ScanPushdown,
    columns: Sequence[str],
    *,
    batch_rows: int = 65_536,
) -> Iterator[pa.Table]:
    """Rows of ``slices`` that satisfy ``pushdown`` (ranges, TAG sets and the residual,
    evaluated exactly), as ``columns`` of ``scan.schema`` in the raw domain, read through
    ``scan.io``; merged slices resolved by key first; empty tables are skipped."""
    needed = scan_columns(scan.schema, columns, pushdown)
    parts = {p.path: p for p in scan.parts}
    for piece in slices:
        if isinstance(piece, MergeSlice):
            yield from _read_merged(scan, parts, piece, pushdown, columns, batch_rows)
            continue
        for table in _read_normalized(scan, parts, piece, pushdown, needed, batch_rows):
            table = apply_filter(table, pushdown.residual)
            if table.num_rows:
                yield table.select(list(columns))


def _read_merged(
    scan: ResolvedScan,
    parts: Mapping[str, PartFile],
    piece: MergeSlice,
    pushdown: ScanPushdown,
    columns: Sequence[str],
    batch_rows: int,
) -> Iterator[pa.Table]:
    """``piece``'s rows after the key resolution, then filtered as :func:`read_slices` does."""
    schema = scan.schema
    keys = [*schema.tag_names, TIME_COLUMN]
    needed = scan_columns(schema, [*columns, *keys], pushdown)
    # Key terms hold or fail alike for every row of a key: filtering by them first is exact.
    keyed = replace(pushdown, residual=key_predicate(pushdown.residual, schema.tag_names))
    writes = []
    for query, sequence in zip(piece.slices, piece.sequences, strict=True):
        tables = [
            apply_filter(t, keyed.residual)
            for t in _read_normalized(scan, parts, query, keyed, needed, batch_rows)
        ]
        if tables:
            writes.append((pa.concat_tables(tables), sequence))
    if not writes:
        return
    merged = apply_filter(latest_rows(writes, keys), pushdown.residual).select(list(columns))
    for start in range(0, merged.num_rows, batch_rows):
        yield merged.slice(start, batch_rows)


def _read_normalized(
    scan: ResolvedScan,
    parts: Mapping[str, PartFile],
    piece: SliceQuery,
    pushdown: ScanPushdown,
    needed: Sequence[str],
    batch_rows: int,
) -> Iterator[pa.Table]:
    """One slice's rows in the pushed range and TAG sets, as ``needed`` (``time`` first) of
    ``scan.schema`` in the raw domain, before the residual."""
    # A slice may have been planned without the session time zone; the binding used here
    # may be narrower.
    time_min = max(piece.time_min, pushdown.time_min)
    time_max = min(piece.time_max, pushdown.time_max)
    if time_min > time_max:
        return
    query = ScanSlice(
        columns=tuple(needed[1:]),
        tag_names=scan.schema.tag_names,
        time_min=time_min,
        time_max=time_max,
        tag_values=pushdown.tag_dict(),
        devices=piece.devices,
        batch_rows=batch_rows,
        size_bytes=piece.size_bytes,
    )
    part = parts.get(piece.path)
    io = scan.io
    if part is None or part.format == TSFILE.name:
        raws = _tsfile_rows(scan, piece.path, query)
    else:
        # External parts (Parquet, ORC, CSV added in place) map their own columns, time
        # representation and partition folders to the table's raw domain.
        adapter = external_format(part.format, part=part.path)
        raws = adapter.scan(io_for(io, part.path), part, scan.schema, query)
    for raw in raws:
        yield normalize(raw, scan.schema, needed)


def _tsfile_rows(scan: ResolvedScan, path: str, query: ScanSlice) -> Iterator[pa.Table]:
    """A TsFile part's rows of ``query`` (columns by table name), read by the physical names
    the file holds them under and named back (a renamed column reads its own data; a column
    added back after a drop has a new physical name, which older parts lack: null)."""
    names = scan.schema.physical_names()
    if not names:
        yield from TSFILE.scan(scan.io, scan.url_of(path), scan.schema.table, query)
        return
    physical = replace(query, columns=tuple(names.get(c, c) for c in query.columns))
    back = {p: n for n, p in names.items()}
    for raw in TSFILE.scan(scan.io, scan.url_of(path), scan.schema.table, physical):
        yield raw.rename_columns([back.get(c, c) for c in raw.column_names])
