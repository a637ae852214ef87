"""What the Parquet, ORC and CSV adapters share: Arrow types to table types, the time column
to raw table time, part statistics, and a scan that returns the table's columns.

An external file keeps its own column names, types and time representation; every read maps
it to the table here (case-insensitive names, TIMESTAMP/DATE time to raw values in the part's
recorded precision, Hive partition values as TAG columns), so the rest of the read path
(:mod:`tsfile_catalog.exec.read`) treats it like a TsFile part. The format modules only say
how to read a schema, read columns (with a pushed filter where the format has row-group
statistics) and what their footers know. No Spark here.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.fs as pafs

from tsfile_catalog.exceptions import SchemaMismatchError, TsFileCatalogError
from tsfile_catalog.formats.base import ScanSlice
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.expressions import INT64_MAX, INT64_MIN
from tsfile_catalog.metadata.external import AddPartOptions, ColumnMapping, FileColumn, map_columns
from tsfile_catalog.metadata.parts import (
    MAX_DEVICES,
    DeviceStats,
    FieldStats,
    PartFile,
    tag_stats_from_devices,
)
from tsfile_catalog.metadata.schema import TIME_COLUMN, DataType, TableSchema

__all__ = [
    "ExternalFormat",
    "table_type",
    "file_columns",
    "raw_time",
    "arrow_filesystem",
]

_PER_SECOND = {"ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_PER_DAY_SECONDS = 86_400
_NULL_KEY = "\x00null\x00"


def table_type(arrow: pa.DataType) -> DataType | None:
    """The table type an Arrow column maps to (None: TsFile cannot hold it).

    Small integers (8/16-bit, unsigned 8/16-bit) become INT32, unsigned 32-bit INT64, half
    floats FLOAT; dictionary columns map by their value type.
    """
    if pa.types.is_dictionary(arrow):
        return table_type(arrow.value_type)
    if pa.types.is_boolean(arrow):
        return DataType.BOOLEAN
    if arrow in (pa.int8(), pa.int16(), pa.int32(), pa.uint8(), pa.uint16()):
        return DataType.INT32
    if arrow in (pa.int64(), pa.uint32()):
        return DataType.INT64
    if arrow in (pa.float16(), pa.float32()):
        return DataType.FLOAT
    if arrow == pa.float64():
        return DataType.DOUBLE
    if pa.types.is_string(arrow) or pa.types.is_large_string(arrow):
        return DataType.STRING
    if pa.types.is_binary(arrow) or pa.types.is_large_binary(arrow):
        return DataType.BLOB
    if pa.types.is_date(arrow):
        return DataType.DATE
    if pa.types.is_timestamp(arrow):
        return DataType.TIMESTAMP
    return None


def file_columns(schema: pa.Schema) -> list[FileColumn]:
    return [FileColumn(f.name, table_type(f.type), str(f.type)) for f in schema]


def _check_time_type(where: str, name: str, arrow: pa.DataType) -> None:
    if pa.types.is_integer(arrow) or pa.types.is_timestamp(arrow) or pa.types.is_date(arrow):
        return
    raise SchemaMismatchError(
        f"{where}: time column '{name}' has type {arrow}; it must hold BIGINT raw times, "
        "TIMESTAMP or DATE values: cast it in the file, or name another column with timeColumn"
    )


def raw_time(array: pa.ChunkedArray | pa.Array, unit: str) -> pa.ChunkedArray | pa.Array:
    """A time column as raw int64 values in ``unit``: integers as they are, TIMESTAMPs (any
    unit, any zone: they are instants) and DATEs (midnight UTC) converted, truncating finer
    units."""
    arrow = array.type
    if pa.types.is_timestamp(arrow):
        return array.cast(pa.timestamp(unit, arrow.tz), safe=False).cast(pa.int64())
    if pa.types.is_date(arrow):
        days = array.cast(pa.date32()).cast(pa.int32()).cast(pa.int64())
        return pc.multiply(days, _PER_DAY_SECONDS * _PER_SECOND[unit])
    return array.cast(pa.int64())


def _to_table_column(array: pa.ChunkedArray, type_: DataType, unit: str) -> pa.ChunkedArray:
    """A FIELD column in the raw domain ``normalize`` expects (TIMESTAMP as raw int64)."""
    if type_ is DataType.TIMESTAMP:
        return raw_time(array, unit)
    if pa.types.is_dictionary(array.type):
        return array.cast(array.type.value_type)
    if type_ is DataType.DATE and array.type != pa.date32():
        return array.cast(pa.date32())
    return array


def _file_bounds(arrow: pa.DataType, unit: str, lo: int, hi: int) -> tuple[Any, Any]:
    """Raw bounds ``[lo, hi]`` as (inclusive) bounds in the file column's own domain, rounded
    outward: a coarse filter for row-group pruning; rows are filtered exactly afterwards."""

    def scale(value: int, per: int, up: bool) -> int:
        return -((-value) // per) if up else value // per

    if pa.types.is_timestamp(arrow):
        file_per = {"s": 1, **_PER_SECOND}[arrow.unit]
        raw_per = _PER_SECOND[unit]
        low = scale(lo * file_per, raw_per, False) if lo > INT64_MIN else None
        high = scale(hi * file_per, raw_per, True) if hi < INT64_MAX else None
        return (
            None if low is None else pa.scalar(low, pa.timestamp(arrow.unit, arrow.tz)),
            None if high is None else pa.scalar(high, pa.timestamp(arrow.unit, arrow.tz)),
        )
    if pa.types.is_date(arrow):
        per_day = _PER_DAY_SECONDS * _PER_SECOND[unit]
        low_d = scale(lo, per_day, False) if lo > INT64_MIN else None
        high_d = scale(hi, per_day, True) if hi < INT64_MAX else None
        epoch = dt.date(1970, 1, 1)
        return (
            None if low_d is None else _date_or_none(epoch, low_d),
            None if high_d is None else _date_or_none(epoch, high_d),
        )
    return (lo if lo > INT64_MIN else None, hi if hi < INT64_MAX else None)


def _date_or_none(epoch: dt.date, days: int) -> dt.date | None:
    try:
        return epoch + dt.timedelta(days=days)
    except OverflowError:
        return None


class ExternalFormat:
    """An external (read-only) file format: subclasses read schemas and columns.

    ``scan`` and ``read_part`` are shared; a subclass gives :meth:`arrow_schema`, where its
    footer has them :meth:`footer_stats`, and :meth:`read` when ``pyarrow.dataset`` cannot
    read it by :attr:`name`.
    """

    name = ""
    extensions: tuple[str, ...] = ()

    # -- what a subclass provides ----------------------------------------------------------

    def arrow_schema(
        self, io: FileIO, url: str, options: Mapping[str, str], schema: TableSchema
    ) -> pa.Schema:
        """The file's columns and Arrow types (CSV infers them, the table's types as targets)."""
        raise NotImplementedError

    def read(
        self,
        io: FileIO,
        url: str,
        columns: Sequence[str],
        options: Mapping[str, str],
        schema: TableSchema,
        filter: ds.Expression | None = None,
    ) -> pa.Table:
        """The file's ``columns`` (its own names), rows narrowed by ``filter`` at least
        where the format can (a coarse filter: callers filter exactly).

        By default through ``pyarrow.dataset`` with the format named :attr:`name`, so the
        pushed time/TAG filter skips Parquet row groups and ORC stripes by their statistics.
        """
        filesystem, path = arrow_filesystem(io, url)
        dataset = ds.dataset(path, format=self.name, filesystem=filesystem)
        return dataset.to_table(columns=list(columns), filter=filter)

    def footer_stats(
        self, io: FileIO, url: str, sources: Mapping[str, str], schema: TableSchema
    ) -> dict[str, FieldStats]:
        """FIELD statistics the footer gives exactly (table column -> stats); the rest are
        computed from a columnar read."""
        return {}

    # -- shared -------------------------------------------------------------------------------

    def read_part(
        self,
        io: FileIO,
        url: str,
        *,
        table: TableSchema,
        options: AddPartOptions,
        partition_values: Mapping[str, str],
        size_bytes: int,
    ) -> tuple[TableSchema, PartFile]:
        """Validate the file against ``table`` and compute its part statistics.

        Returns the table schema the file needs (``mergeSchema`` may add FIELDs) and the
        part, recorded under the absolute ``url``.
        """
        read_options = options.read_options
        try:
            arrow = self.arrow_schema(io, url, read_options, table)
        except TsFileCatalogError:
            raise
        except (OSError, pa.ArrowException, ValueError) as e:
            raise TsFileCatalogError(f"cannot read {url} as {self.name}: {e}") from e
        mapping = map_columns(
            url,
            file_columns(arrow),
            table,
            time_column=options.time_column,
            partition=tuple(partition_values),
            merge_schema=options.merge_schema,
        )
        _check_time_type(url, mapping.time_source, arrow.field(mapping.time_source).type)
        schema = mapping.schema
        tag_names = schema.tag_names
        footer = self.footer_stats(
            io, url, {k: v for k, v in mapping.sources.items() if v is not None}, schema
        )
        computed = [
            c.name
            for c in schema.fields
            if c.name not in footer and mapping.sources.get(c.name) is not None
        ]
        # One columnar read: time, the TAGs (devices) and the FIELDs the footer left open.
        data = self._read_mapped(
            io, url, arrow, mapping, read_options, schema, [*tag_names, *computed], partition_values
        )
        for tag in tag_names:
            if tag not in partition_values and data.column(tag).null_count:
                raise SchemaMismatchError(
                    f"{url}: TAG column '{mapping.sources[tag]}' holds nulls; every row needs "
                    "its TAG values: fill them in the file, or leave those rows out"
                )
        devices = _devices(data, tag_names)
        fields: dict[str, FieldStats] = {}
        for col in schema.fields:
            if col.name in footer:
                fields[col.name] = footer[col.name]
            elif col.name in computed:
                fields[col.name] = _field_stats(data.column(col.name), col.type)
            else:  # a FIELD the file lacks: every row reads null
                fields[col.name] = FieldStats(None, None, data.num_rows)
        part = PartFile(
            path=url,
            format=self.name,
            size_bytes=size_bytes,
            row_count=data.num_rows,
            min_time=min((d.min_time for d in devices), default=None),
            max_time=max((d.max_time for d in devices), default=None),
            devices=tuple(devices) if len(devices) <= MAX_DEVICES else None,
            tags=tag_stats_from_devices(tag_names, (d.tags for d in devices)),
            fields=fields,
            external=True,
            read_options=read_options,
            partition_values=dict(partition_values),
        )
        return schema, part

    def _read_mapped(
        self,
        io: FileIO,
        url: str,
        arrow: pa.Schema,
        mapping: ColumnMapping,
        options: Mapping[str, str],
        schema: TableSchema,
        columns: Sequence[str],
        partition_values: Mapping[str, str],
        *,
        time_min: int = INT64_MIN,
        time_max: int = INT64_MAX,
        tag_values: Mapping[str, frozenset[str]] | None = None,
    ) -> pa.Table:
        """``time`` (raw, in the part's precision) and ``columns`` of ``schema`` (table
        names; TIMESTAMP FIELDs raw) from one read; columns the file lacks are left out."""
        unit = options.get("timestampPrecision", "ms")
        wanted = [c for c in columns if c not in partition_values]
        present = [c for c in wanted if mapping.sources.get(c) is not None]
        file_names = [mapping.time_source] + [
            s for s in (mapping.sources[c] for c in present) if s is not None
        ]
        conditions = []
        lo, hi = _file_bounds(arrow.field(mapping.time_source).type, unit, time_min, time_max)
        if lo is not None:
            conditions.append(ds.field(mapping.time_source) >= lo)
        if hi is not None:
            conditions.append(ds.field(mapping.time_source) <= hi)
        for tag, values in (tag_values or {}).items():
            source = mapping.sources.get(tag)
            if source is not None and tag not in partition_values:
                conditions.append(ds.field(source).isin(sorted(values)))
        condition = None
        for term in conditions:
            condition = term if condition is None else condition & term
        raw = self.read(io, url, _unique(file_names), options, schema, condition)
        arrays = [raw_time(raw.column(mapping.time_source), unit)]
        names = [TIME_COLUMN]
        for name in columns:
            col = schema.column(name)
            assert col is not None
            if name in partition_values:
                value = pa.array([partition_values[name]] * raw.num_rows, pa.string())
                arrays.append(pa.chunked_array([value]))
                names.append(name)
            elif name in present:
                source = mapping.sources[name]
                assert source is not None
                arrays.append(_to_table_column(raw.column(source), col.type, unit))
                names.append(name)
        return pa.Table.from_arrays(arrays, names=names)

    def scan(
        self, io: FileIO, part: PartFile, schema: TableSchema, piece: ScanSlice
    ) -> Iterator[pa.Table]:
        """Rows of one external part in ``piece``'s time range, TAG sets and devices, as
        ``time`` plus those of ``piece.columns`` the file holds (table names, raw domain)."""
        values = part.partition_values
        for tag, allowed in piece.tag_values.items():
            if tag in values and values[tag] not in allowed:
                return
        try:
            arrow = self.arrow_schema(io, part.path, part.read_options, schema)
            table = self._read_mapped(
                io,
                part.path,
                arrow,
                _mapping_at_read(arrow, schema, part.read_options),
                part.read_options,
                schema,
                piece.columns,
                values,
                time_min=piece.time_min,
                time_max=piece.time_max,
                tag_values=_pushed_tags(piece),
            )
        except TsFileCatalogError:
            raise
        except (OSError, pa.ArrowException, ValueError, KeyError) as e:
            raise TsFileCatalogError(
                f"cannot read external part {part.path} ({self.name}): {e}; was the file "
                "changed or removed after ADD PART? DROP PART it, then add it again"
            ) from e
        table = _exact(table, piece, values)
        if table.num_rows:
            yield table


def arrow_filesystem(io: FileIO, url: str) -> tuple[pafs.FileSystem | None, str]:
    """The Arrow file system and path for ``url``: Arrow's own for local files, the
    FileIO's fsspec file system otherwise (credentials and endpoints included)."""
    if io.is_local:
        return None, io.normalize(url)
    return pafs.PyFileSystem(pafs.FSSpecHandler(io.fs)), io.fs._strip_protocol(url)


def _pushed_tags(piece: ScanSlice) -> dict[str, frozenset[str]]:
    """The slice's TAG sets, narrowed by its device group (each TAG to the values its devices
    have), so a slice of a few devices skips the row groups of the others: a coarse filter,
    the exact device list is applied after the read."""
    pushed = dict(piece.tag_values)
    if piece.devices is None:
        return pushed
    for i, name in enumerate(piece.tag_names):
        values = {d[i] for d in piece.devices if i < len(d)}
        if None in values:
            continue  # a null TAG cannot be written as an IN list
        narrowed = frozenset(v for v in values if v is not None)
        pushed[name] = pushed[name] & narrowed if name in pushed else narrowed
    return pushed


def _unique(names: Sequence[str]) -> list[str]:
    out: list[str] = []
    for name in names:
        if name not in out:
            out.append(name)
    return out


def _mapping_at_read(
    arrow: pa.Schema, schema: TableSchema, options: Mapping[str, str]
) -> ColumnMapping:
    """The file's columns for the table's, by case-insensitive name (validated at ADD)."""
    by_name = {f.name.lower(): f.name for f in arrow}
    time_column = options.get("timeColumn", TIME_COLUMN)
    if time_column not in by_name:
        raise TsFileCatalogError(f"the file has no time column '{time_column}' any more")
    sources = {c.name: by_name.get(c.name) for c in schema.columns}
    return ColumnMapping(by_name[time_column], sources, schema)


def _exact(table: pa.Table, piece: ScanSlice, partition_values: Mapping[str, str]) -> pa.Table:
    """The slice's time range, TAG sets and device list, applied exactly."""
    times = table.column(TIME_COLUMN)
    mask = pc.and_(pc.greater_equal(times, piece.time_min), pc.less_equal(times, piece.time_max))
    for tag, allowed in piece.tag_values.items():
        if tag in table.column_names and tag not in partition_values:
            values = pa.array(sorted(allowed), pa.string())
            mask = pc.and_(mask, pc.is_in(table.column(tag), values))
    if piece.devices is not None:
        tags = list(piece.tag_names)
        if tags:
            keys = _device_keys(table, tags)
            wanted = pa.array(
                ["\x1f".join(_NULL_KEY if t is None else t for t in d) for d in piece.devices],
                pa.string(),
            )
            mask = pc.and_(mask, pc.is_in(keys, wanted))
    mask = pc.fill_null(mask, False)
    if pc.all(mask).as_py():
        return table
    return table.filter(mask)


def _device_keys(table: pa.Table, tags: Sequence[str]) -> pa.ChunkedArray:
    columns = [pc.fill_null(table.column(t), _NULL_KEY) for t in tags]
    return pc.binary_join_element_wise(*columns, "\x1f")


def _devices(data: pa.Table, tag_names: Sequence[str]) -> list[DeviceStats]:
    if data.num_rows == 0:
        return []
    if not tag_names:
        times = data.column(TIME_COLUMN)
        bounds = pc.min_max(times).as_py()
        return [DeviceStats((), data.num_rows, int(bounds["min"]), int(bounds["max"]))]
    grouped = data.group_by(list(tag_names)).aggregate(
        [(TIME_COLUMN, "count"), (TIME_COLUMN, "min"), (TIME_COLUMN, "max")]
    )
    out = [
        DeviceStats(
            tuple(row[name] for name in tag_names),
            int(row["time_count"]),
            int(row["time_min"]),
            int(row["time_max"]),
        )
        for row in grouped.to_pylist()
    ]
    out.sort(key=lambda d: tuple("" if t is None else t for t in d.tags))
    return out


def _field_stats(array: pa.ChunkedArray, type_: DataType) -> FieldStats:
    """min/max/null count of one FIELD column, as TsFile parts keep them: no bounds for
    BLOB and BOOLEAN, and none for a float column holding NaN (Spark orders NaN above every
    number, so no finite max bounds such a column)."""
    nulls = array.null_count
    if type_ in (DataType.BLOB, DataType.BOOLEAN) or nulls == len(array):
        return FieldStats(None, None, nulls)
    if type_ in (DataType.FLOAT, DataType.DOUBLE) and pc.any(pc.is_nan(array)).as_py():
        return FieldStats(None, None, nulls)
    bounds = pc.min_max(array).as_py()
    lo, hi = bounds["min"], bounds["max"]
    if type_ in (DataType.FLOAT, DataType.DOUBLE):
        lo, hi = float(lo), float(hi)
        if math.isinf(lo) or math.isinf(hi):
            return FieldStats(lo, hi, nulls)
    return FieldStats(lo, hi, nulls)
