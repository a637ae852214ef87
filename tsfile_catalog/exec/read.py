"""Reading a table's parts into Arrow without Spark: the one scan path every reader shares.

The Spark reader (:mod:`tsfile_catalog.datasource.reader`), Spark-free scans and table
maintenance all turn planned :class:`~tsfile_catalog.metadata.slices.FileSlice` queries
into Arrow tables here, so pruning, pushed TAG/time ranges and the exact residual filter mean
the same thing on every path. Output is in the table's *raw* domain (``time`` and TIMESTAMP
columns as int64 in the table's precision); converting to Spark's types is the caller's job.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

import pyarrow as pa

from tsfile_catalog.exec.arrow_filter import apply_filter
from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.exec.stamps import io_for
from tsfile_catalog.formats.base import NORMALIZED_ARROW, ScanSlice
from tsfile_catalog.formats.registry import external_format
from tsfile_catalog.formats.tsfile import TSFILE
from tsfile_catalog.metadata.expressions import ScanPushdown, columns_of
from tsfile_catalog.metadata.schema import TIME_COLUMN, TableSchema

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
    slices: Iterable[SliceQuery],
    pushdown: ScanPushdown,
    columns: Sequence[str],
    *,
    batch_rows: int = 65_536,
) -> Iterator[pa.Table]:
    """Rows of ``slices`` that satisfy ``pushdown`` (ranges, TAG sets and the residual,
    evaluated exactly), as ``columns`` of ``scan.schema`` in the raw domain, read through
    ``scan.io``; empty tables are skipped."""
    io = scan.io
    needed = scan_columns(scan.schema, columns, pushdown)
    by_path = {p.path: p for p in scan.parts}
    for piece in slices:
        # A slice may have been planned without the session time zone; the binding used
        # here may be narrower.
        time_min = max(piece.time_min, pushdown.time_min)
        time_max = min(piece.time_max, pushdown.time_max)
        if time_min > time_max:
            continue
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
        part = by_path.get(piece.path)
        if part is None or part.format == TSFILE.name:
            raws = TSFILE.scan(io, scan.url_of(piece.path), scan.schema.table, query)
        else:
            # External parts (Parquet, ORC, CSV added in place) map their own columns, time
            # representation and partition folders to the table's raw domain.
            adapter = external_format(part.format, part=part.path)
            raws = adapter.scan(io_for(io, part.path), part, scan.schema, query)
        for raw in raws:
            table = apply_filter(normalize(raw, scan.schema, needed), pushdown.residual)
            if table.num_rows:
                yield table.select(list(columns))
