"""The only module that talks to the ``tsfile`` package: schemas, statistics, reads, writes.

Everything the native library gets wrong silently (unsorted rows, duplicates, upper-case
names, TEXT tags, loose Arrow types, process-global config) is handled here, once.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import math
import os
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

import pyarrow as pa
import pyarrow.compute as pc

from tsfile_catalog.exceptions import (
    DataError,
    OptionError,
    SchemaError,
    TableNotFoundError,
    TsFileCatalogError,
    UnsupportedTypeError,
)
from tsfile_catalog.formats.base import FileFormat, ScanSlice, coalesce_tables
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.expressions import INT64_MAX, INT64_MIN
from tsfile_catalog.metadata.parts import (
    MAX_DEVICES,
    DeviceStats,
    FieldStats,
    PartFile,
    SeriesStats,
    kept_double_sum,
    tag_stats_from_devices,
)
from tsfile_catalog.metadata.schema import (
    TIME_COLUMN,
    Category,
    Column,
    DataType,
    TableSchema,
)

__all__ = [
    "ENCODINGS",
    "COMPRESSIONS",
    "DEFAULT_ENCODINGS",
    "DEFAULT_COMPRESSION",
    "WriteSettings",
    "native_encodings",
    "validate_encoding",
    "read_table_schema",
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

# Encodings the native writer accepts and round-trips losslessly, per TsFile type (measured on
# tsfile 2.5: TS_2DIFF/SPRINTZ/CAMEL lose precision on DOUBLE, ZIGZAG/SPRINTZ fail on DATE and
# TIMESTAMP, RLE is refused for BOOLEAN, DICTIONARY for BLOB).
_INT_ENCODINGS = ("PLAIN", "RLE", "TS_2DIFF", "GORILLA", "ZIGZAG", "CHIMP", "SPRINTZ", "RLBE")
ENCODINGS: Mapping[DataType, tuple[str, ...]] = {
    DataType.BOOLEAN: ("PLAIN",),
    DataType.INT32: _INT_ENCODINGS,
    DataType.INT64: _INT_ENCODINGS,
    DataType.DATE: ("PLAIN", "RLE", "TS_2DIFF", "GORILLA", "CHIMP", "RLBE"),
    DataType.TIMESTAMP: ("PLAIN", "RLE", "TS_2DIFF", "GORILLA", "CHIMP", "RLBE"),
    DataType.FLOAT: ("PLAIN", "GORILLA", "CHIMP", "RLBE"),
    DataType.DOUBLE: ("PLAIN", "GORILLA", "CHIMP", "RLBE"),
    DataType.TEXT: ("PLAIN", "DICTIONARY"),
    DataType.STRING: ("PLAIN", "DICTIONARY"),
    DataType.BLOB: ("PLAIN",),
}
# Per-type defaults and the ZSTD default are the smallest lossless choices measured on the
# realistic sensor data set (``python -m bench.encodings`` -> docs/benchmarks-encodings.md):
# PLAIN beats GORILLA on random-walk FLOAT/DOUBLE once ZSTD compresses the bytes; TS_2DIFF is
# smallest for counters and times; DICTIONARY for low-cardinality strings. TEXT/STRING share
# one native setting with BLOB, which cannot use DICTIONARY (see native_encodings).
DEFAULT_ENCODINGS: Mapping[DataType, str] = {
    DataType.BOOLEAN: "PLAIN",
    DataType.INT32: "TS_2DIFF",
    DataType.INT64: "TS_2DIFF",
    DataType.DATE: "TS_2DIFF",
    DataType.TIMESTAMP: "TS_2DIFF",
    DataType.FLOAT: "PLAIN",
    DataType.DOUBLE: "PLAIN",
    DataType.TEXT: "DICTIONARY",
    DataType.STRING: "DICTIONARY",
    DataType.BLOB: "PLAIN",
}
DEFAULT_COMPRESSION = "ZSTD"
COMPRESSIONS = ("UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "LZ4", "ZSTD", "LZMA2")

# The native config is keyed by physical type, so DATE shares INT32's encoding and TIMESTAMP
# INT64's; a DATE column therefore constrains what INT32 columns may use and vice versa.
_CONFIG_KEY: Mapping[DataType, str] = {
    DataType.BOOLEAN: "boolean_encoding_type_",
    DataType.INT32: "int32_encoding_type_",
    DataType.DATE: "int32_encoding_type_",
    DataType.INT64: "int64_encoding_type_",
    DataType.TIMESTAMP: "int64_encoding_type_",
    DataType.FLOAT: "float_encoding_type_",
    DataType.DOUBLE: "double_encoding_type_",
    DataType.TEXT: "string_encoding_type_",
    DataType.STRING: "string_encoding_type_",
    DataType.BLOB: "string_encoding_type_",
}

# set_tsfile_config is process-global; one writer configures and writes at a time.
_CONFIG_LOCK = threading.Lock()
# Whether this process has run the native library's one-time init (see _init_native).
_native_ready = False


@contextlib.contextmanager
def opened(io: FileIO, url: str) -> Iterator[Any]:
    """An open native reader on ``url``: a plain path locally (native I/O), otherwise a
    seekable fsspec file object, so remote files are read without a local copy."""
    import tsfile

    handle: IO[bytes] | None = None
    try:
        if io.is_local:
            reader = tsfile.TsFileReader(io.normalize(url))
        else:
            handle = io.open_input(url)
            reader = tsfile.TsFileReader(handle)
    except Exception as e:  # the native layer raises its own hierarchy (and plain ones)
        if handle is not None:
            handle.close()
        raise TsFileCatalogError(f"cannot open {url} as a TsFile: {e}") from e
    try:
        yield reader
    finally:
        reader.close()
        if handle is not None:
            handle.close()


def read_table_schema(reader: Any, where: str, table: str | None) -> TableSchema:
    """The schema of ``table`` (or the only table) in an open TsFile, validated.

    Raises:
        TableNotFoundError: the file has no such table / no table at all.
        OptionError: several tables and no ``table`` option.
        UnsupportedTypeError: ATTRIBUTE/TIME-category columns, non-string TAGs, bad types.
    """
    try:
        schemas = reader.get_all_table_schemas()
    except Exception as e:
        raise UnsupportedTypeError(f"cannot read the table schemas of {where}: {e}") from e
    by_name = {str(name).lower(): s for name, s in schemas.items()}
    if not by_name:
        raise TableNotFoundError(f"{where} holds no table-model data")
    if table is None:
        if len(by_name) > 1:
            raise OptionError(
                f"{where} holds several tables ({', '.join(sorted(by_name))}); choose one with "
                "the 'table' option"
            )
        ((name, native),) = by_name.items()
    else:
        name = table.lower()
        if name not in by_name:
            raise TableNotFoundError(
                f"table '{table}' is not in {where}; it holds: {', '.join(sorted(by_name))}"
            )
        native = by_name[name]
    columns = []
    for col in native.get_columns():
        col_name = str(col.get_column_name())
        category = col.get_category().name
        if category == "TIME":
            continue
        if category not in ("TAG", "FIELD"):
            raise UnsupportedTypeError(
                f"column '{col_name}' in {where} has category {category}, which is not "
                "supported (only TAG and FIELD columns are)"
            )
        type_ = DataType.parse(col.get_data_type().name, column=col_name, where=where)
        if category == "TAG" and not type_.is_string:
            raise UnsupportedTypeError(
                f"TAG column '{col_name}' in {where} has type {type_.value}; TAG columns must "
                "be STRING"
            )
        columns.append(Column(col_name.lower(), type_, Category(category)))
    try:
        return TableSchema.of(name, columns)
    except SchemaError as e:
        raise type(e)(f"{where}: {e}") from e


def _stat_min_max(type_: DataType, stat: Any) -> tuple[Any, Any]:
    if not getattr(stat, "has_statistic", False):
        return None, None
    if type_ in (DataType.INT32, DataType.INT64, DataType.TIMESTAMP) and hasattr(stat, "min_int64"):
        return int(stat.min_int64), int(stat.max_int64)
    if type_ is DataType.DATE and hasattr(stat, "min_int64"):
        try:
            return _yyyymmdd(stat.min_int64), _yyyymmdd(stat.max_int64)
        except ValueError:
            # A DATE statistic that is not a yyyymmdd value is unusable, not an error.
            return None, None
    if type_ in (DataType.FLOAT, DataType.DOUBLE) and hasattr(stat, "min_float64"):
        return float(stat.min_float64), float(stat.max_float64)
    if type_ is DataType.STRING and getattr(stat, "str_min", None) is not None:
        return stat.str_min, stat.str_max
    return None, None


# A sum TsFile accumulated in a double is exact while no partial sum leaves +-2**53.
_EXACT_DOUBLE_INT = 2**53


def series_stats(type_: DataType, stat: Any) -> SeriesStats:
    """One device's statistics of one FIELD, keeping only what is exact under Spark's
    semantics (see :class:`~tsfile_catalog.metadata.parts.SeriesStats`)."""
    count = int(stat.row_count)
    if count == 0:
        return SeriesStats(0)
    first_time, last_time = int(stat.start_time), int(stat.end_time)
    if type_ is DataType.BOOLEAN and hasattr(stat, "first_bool"):
        # TsFile keeps the number of true values as the sum: min/max follow from it.
        trues = float(stat.sum)
        return SeriesStats(
            count,
            sum=int(trues),
            min=trues == count,
            max=trues > 0,
            first=bool(stat.first_bool),
            first_time=first_time,
            last=bool(stat.last_bool),
            last_time=last_time,
        )
    if type_ in (DataType.INT32, DataType.INT64, DataType.TIMESTAMP) and hasattr(
        stat, "first_int64"
    ):
        lo, hi = int(stat.min_int64), int(stat.max_int64)
        total = float(stat.sum)
        exact = count * max(abs(lo), abs(hi)) <= _EXACT_DOUBLE_INT and math.isfinite(total)
        return SeriesStats(
            count,
            sum=int(total) if exact else None,
            min=lo,
            max=hi,
            first=int(stat.first_int64),
            first_time=first_time,
            last=int(stat.last_int64),
            last_time=last_time,
        )
    if type_ is DataType.DATE and hasattr(stat, "first_int64"):
        try:
            return SeriesStats(
                count,
                min=_yyyymmdd(stat.min_int64),
                max=_yyyymmdd(stat.max_int64),
                first=_yyyymmdd(stat.first_int64),
                first_time=first_time,
                last=_yyyymmdd(stat.last_int64),
                last_time=last_time,
            )
        except ValueError:
            return SeriesStats(count)
    if type_ in (DataType.FLOAT, DataType.DOUBLE) and hasattr(stat, "first_float64"):
        low, high = float(stat.min_float64), float(stat.max_float64)
        # TsFile's min/max skip a NaN unless it came first, and Spark orders NaN above every
        # number: min/max are exact only when no value is NaN, which a non-NaN sum proves (a
        # NaN propagates through the sum; an inf - inf NaN only makes this conservative).
        total = float(stat.sum)
        no_nan = not (math.isnan(total) or math.isnan(low) or math.isnan(high))
        first, last = float(stat.first_float64), float(stat.last_float64)
        # The sum (see SeriesStats.sum_double) only when no value is infinite or NaN and no
        # order of additions can overflow: then it differs from Spark's by rounding alone.
        return SeriesStats(
            count,
            min=low if no_nan else None,
            max=high if no_nan else None,
            first=None if math.isnan(first) else first,
            first_time=None if math.isnan(first) else first_time,
            last=None if math.isnan(last) else last,
            last_time=None if math.isnan(last) else last_time,
            sum_double=kept_double_sum(count, total, low, high),
        )
    if type_ in (DataType.STRING, DataType.TEXT) and hasattr(stat, "str_first"):
        has_range = type_ is DataType.STRING and getattr(stat, "str_min", None) is not None
        return SeriesStats(
            count,
            min=stat.str_min if has_range else None,
            max=stat.str_max if has_range else None,
            first=stat.str_first,
            first_time=first_time,
            last=stat.str_last,
            last_time=last_time,
        )
    return SeriesStats(count)


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _yyyymmdd(value: int) -> dt.date:
    return dt.date(value // 10_000, value // 100 % 100, value % 100)


def part_from_reader(
    reader: Any, schema: TableSchema, path: str, size_bytes: int, *, fmt: str = "tsfile"
) -> PartFile:
    """Per-part statistics from TsFile metadata (device index and chunk statistics)."""
    return part_and_devices(reader, schema, path, size_bytes, fmt=fmt)[0]


def part_and_devices(
    reader: Any, schema: TableSchema, path: str, size_bytes: int, *, fmt: str = "tsfile"
) -> tuple[PartFile, tuple[DeviceStats, ...]]:
    """The part's statistics and its complete device list.

    ``PartFile.devices`` is dropped above :data:`MAX_DEVICES`; the writer still needs every
    device's time range to find duplicates across the parts of one write.
    """
    devices: list[DeviceStats] = []
    timeless: list[tuple[str | None, ...]] = []
    mins: dict[str, Any] = {}
    maxs: dict[str, Any] = {}
    non_null: dict[str, int] = {}
    known: dict[str, bool] = {c.name: True for c in schema.fields}
    bounded: dict[str, bool] = dict(known)
    types = {c.name: c.type for c in schema.fields}
    for group in reader.get_timeseries_metadata(None).values():
        if (group.table_name or "").lower() != schema.table:
            continue
        if not group.timeseries:
            timeless.append(_device_key(group.segments[1:], schema))
            continue
        timeline = group.timeseries[0].timeline_statistic
        rows = int(timeline.row_count)
        series: dict[str, SeriesStats] = {}
        for ts in group.timeseries:
            name = str(ts.measurement_name).lower()
            if name not in types:
                continue
            stat = ts.statistic
            if not getattr(stat, "has_statistic", False):
                known[name] = False
                continue
            series[name] = series_stats(types[name], stat)
            non_null[name] = non_null.get(name, 0) + int(stat.row_count)
            if int(stat.row_count) == 0:
                continue  # an all-null chunk carries no meaningful min/max
            lo, hi = _stat_min_max(types[name], stat)
            if lo is None or _is_nan(lo) or _is_nan(hi):
                # A chunk whose first value is NaN keeps NaN as both bounds (every later
                # comparison is false), so its numbers are unbounded; and min()/max() across
                # chunks would drop a NaN bound silently. The null count stays exact.
                bounded[name] = False
            else:
                mins[name] = lo if name not in mins else min(mins[name], lo)
                maxs[name] = hi if name not in maxs else max(maxs[name], hi)
        # A FIELD the device index lists no series for holds no value in this device.
        absent = {n: SeriesStats(0) for n in types if n not in series and known[n]}
        devices.append(
            DeviceStats(
                tuple(group.segments[1:]),
                rows,
                int(timeline.start_time),
                int(timeline.end_time),
                fields={**series, **absent},
            )
        )
    if timeless:
        devices.extend(_device_stats_from_data(reader, schema, set(timeless)))
    total = sum(d.row_count for d in devices)
    fields = {}
    for col in schema.fields:
        name = col.name
        complete = known[name] and bounded[name] and name in mins
        nulls = total - non_null.get(name, 0) if known[name] else None
        fields[name] = FieldStats(
            min=mins[name] if complete else None,
            max=maxs[name] if complete else None,
            null_count=nulls,
        )
    devices.sort(key=lambda d: tuple("" if t is None else t for t in d.tags))
    part = PartFile(
        path=path,
        format=fmt,
        size_bytes=size_bytes,
        row_count=total,
        min_time=min((d.min_time for d in devices), default=None),
        max_time=max((d.max_time for d in devices), default=None),
        devices=tuple(devices) if len(devices) <= MAX_DEVICES else None,
        tags=tag_stats_from_devices(schema.tag_names, (d.tags for d in devices)),
        fields=fields,
    )
    return part, tuple(devices)


def _device_key(tags: Sequence[str | None], schema: TableSchema) -> tuple[str | None, ...]:
    """TAG values padded to every TAG column (the device index may omit trailing nulls)."""
    padded = tuple(tags)
    return padded + (None,) * (len(schema.tag_names) - len(padded))


def _device_stats_from_data(
    reader: Any, schema: TableSchema, wanted: set[tuple[str | None, ...]]
) -> list[DeviceStats]:
    """Row counts and time ranges of ``wanted`` devices from a scan of time and the TAGs.

    A table without FIELD columns keeps its rows in the time column alone; tsfile 2.5 stores
    and queries them, but its metadata API lists no series, hence no statistics, for such
    devices. Only those devices pay for this scan; every other part's stats stay
    metadata-only.
    """
    tag_names = list(schema.tag_names)
    tables = list(
        scan_file(
            reader,
            schema.table,
            tag_names,
            time_min=INT64_MIN,
            time_max=INT64_MAX,
            tag_values={},
            device_group=None,
            tag_names=tag_names,
            batch_rows=65_536,
        )
    )
    if not tables:
        return []
    grouped = (
        pa.concat_tables(tables)
        .group_by(tag_names)
        .aggregate([(TIME_COLUMN, "count"), (TIME_COLUMN, "min"), (TIME_COLUMN, "max")])
    )
    out = []
    for row in grouped.to_pylist():
        key = tuple(row[name] for name in tag_names)
        if key in wanted:
            out.append(
                DeviceStats(
                    key,
                    int(row["time_count"]),
                    int(row["time_min"]),
                    int(row["time_max"]),
                    fields={c.name: SeriesStats(0) for c in schema.fields},
                )
            )
    return out


def _tag_filter(
    tag_values: Mapping[str, frozenset[str]],
    device_group: Sequence[tuple[str | None, ...]] | None,
    tag_names: Sequence[str],
) -> Any:
    import tsfile

    terms = []
    for name, values in sorted(tag_values.items()):
        ors = None
        for value in sorted(values):
            eq = tsfile.tag_eq(name, value)
            ors = eq if ors is None else ors | eq
        terms.append(ors)
    if device_group is not None:
        group = None
        for tags in device_group:
            one = None
            for name, tag in zip(tag_names, tags, strict=False):
                term = tsfile.tag_is_null(name) if tag is None else tsfile.tag_eq(name, tag)
                one = term if one is None else one & term
            if one is not None:
                group = one if group is None else group | one
        if group is not None:
            terms.append(group)
    result = None
    for term in terms:
        result = term if result is None else result & term
    return result


def scan_file(
    reader: Any,
    table: str,
    columns: Sequence[str],
    *,
    time_min: int,
    time_max: int,
    tag_values: Mapping[str, frozenset[str]],
    device_group: Sequence[tuple[str | None, ...]] | None,
    tag_names: Sequence[str],
    batch_rows: int,
) -> Iterator[pa.Table]:
    """Arrow tables of ``time`` + ``columns`` for one query on an open reader.

    The native reader's time filter is not exact (2.5 returns the next row of a device when
    ``[time_min, time_max]`` falls between two of its rows), so the range is applied again
    here: the pushdown must never decide which rows a scan returns.
    """
    bounded = time_min > -(2**63) or time_max < 2**63 - 1
    result = reader.query_table(
        table,
        list(columns),
        start_time=time_min,
        end_time=time_max,
        tag_filter=_tag_filter(tag_values, device_group, tag_names),
        batch_size=batch_rows,
    )

    def blocks() -> Iterator[pa.Table]:
        while (batch := result.read_arrow_batch()) is not None:
            yield batch

    try:
        # The time range is re-applied per ``batch_rows`` rows, not per native block.
        for batch in coalesce_tables(blocks(), batch_rows):
            if bounded:
                batch = _within(batch, time_min, time_max)
            if batch.num_rows:
                yield batch
    finally:
        result.close()


def _within(batch: pa.Table, time_min: int, time_max: int) -> pa.Table:
    times = batch.column(TIME_COLUMN)
    if not pa.types.is_integer(times.type):
        times = times.cast(pa.int64())
    inside = pc.and_(pc.greater_equal(times, time_min), pc.less_equal(times, time_max))
    if pc.all(inside).as_py():
        return batch
    return batch.filter(inside)


@dataclass(frozen=True)
class WriteSettings:
    compression: str = DEFAULT_COMPRESSION
    encoding: str | None = None
    on_duplicate: str = "error"
    # ``encoding.<column>`` overrides as sorted (column, ENCODING) pairs: hashable, and in
    # the same order however the options were spelled.
    column_encodings: tuple[tuple[str, str], ...] = ()

    def encoding_for(self, type_: DataType) -> str:
        return self.encoding or DEFAULT_ENCODINGS[type_]


def validate_encoding(schema: TableSchema, settings: WriteSettings) -> None:
    """Refuse encodings a column's type cannot use, or would store lossily, and per-column
    overrides the native writer cannot honour.

    Unknown compression and encoding names are refused earlier, by ``parse_write_options``.
    """
    native_encodings(schema, settings)


def native_encodings(schema: TableSchema, settings: WriteSettings) -> dict[str, str]:
    """The encoding per native config key (``double_encoding_type_``, ...) for ``schema``'s
    FIELD columns under ``settings``.

    TsFile 2.5 takes encodings per *physical type*, not per column, so an ``encoding.<c>``
    override sets the encoding of every FIELD column sharing ``c``'s physical type (DATE
    shares INT32's, TIMESTAMP INT64's, the string types one): two overrides that disagree on
    one physical type, or an override another column of that physical type cannot use, are
    refused rather than silently ignored.

    Raises:
        OptionError: naming the option, the column(s) and their types.
    """
    overrides = dict(settings.column_encodings)
    fields = {col.name: col for col in schema.fields}
    for name in overrides:
        if name not in fields:
            kind = "a TAG column" if schema.column(name) is not None else "no column"
            raise OptionError(
                f"option 'encoding.{name}' names {kind} of table '{schema.table}'; per-column "
                f"encodings apply to FIELD columns: {', '.join(fields) or '(none)'}"
            )
    # The explicit choice per config key, and the column that made it.
    chosen: dict[str, tuple[str, str]] = {}
    for name, encoding in overrides.items():
        col = fields[name]
        _check_allowed(col, encoding, f"encoding.{name}")
        key = _CONFIG_KEY[col.type]
        if key in chosen and chosen[key][1] != encoding:
            other = chosen[key][0]
            raise OptionError(
                f"option 'encoding.{name}' = {encoding!r} conflicts with 'encoding.{other}' = "
                f"{chosen[key][1]!r}: TsFile 2.5 sets one encoding per physical type, and "
                f"columns '{name}' ({col.type.value}) and '{other}' ({fields[other].type.value}) "
                "share one; give them the same encoding"
            )
        chosen[key] = (name, encoding)
    out: dict[str, str] = {}
    for col in schema.fields:
        key = _CONFIG_KEY[col.type]
        if key in chosen:
            source, encoding = chosen[key]
            if source != col.name:
                _check_allowed(
                    col,
                    encoding,
                    f"encoding.{source}",
                    why=f" (it also applies to '{col.name}', which shares the physical type of "
                    f"'{source}' in TsFile 2.5)",
                )
        elif settings.encoding is not None:
            encoding = settings.encoding
            _check_allowed(col, encoding, "encoding")
        else:
            # Per-type defaults of types sharing a key may differ (DICTIONARY for strings,
            # which BLOB cannot use): then every column of that key gets PLAIN, which all allow.
            encoding = DEFAULT_ENCODINGS[col.type]
            if out.get(key, encoding) != encoding:
                encoding = "PLAIN"
        out[key] = encoding
    return out


def _check_allowed(col: Column, encoding: str, option: str, why: str = "") -> None:
    allowed = ENCODINGS[col.type]
    if encoding not in allowed:
        raise OptionError(
            f"option '{option}' = {encoding!r} cannot be used for column '{col.name}' of type "
            f"{col.type.value} (it is unsupported or lossy there){why}; {col.type.value} allows "
            f"{', '.join(allowed)}"
        )


def _init_native() -> None:
    """Run the native library's one-time init before anyone configures it.

    The 2.5 library initialises lazily, inside the first writer (or reader) a process
    creates, and that init overwrites the whole configuration with its defaults. Left alone,
    the first part every fresh process (each Spark Python worker) writes would silently use
    the native compression and encodings instead of the ones ``_configure`` just set. A
    throwaway writer forces the init once, so later ``set_tsfile_config`` calls stick. Call
    with ``_CONFIG_LOCK`` held.
    """
    global _native_ready
    if _native_ready:
        return
    import tsfile

    with tempfile.TemporaryDirectory(prefix="tsfile-catalog-init-") as scratch:
        tsfile.TsFileWriter(os.path.join(scratch, "init.tsfile")).close()
    _native_ready = True


def _configure(schema: TableSchema, settings: WriteSettings) -> None:
    import tsfile
    from tsfile import Compressor, TSEncoding

    config: dict[str, Any] = {"default_compression_type_": Compressor[settings.compression]}
    # Reset every key so a previous task's choice never leaks into this file.
    for type_, key in _CONFIG_KEY.items():
        config.setdefault(key, TSEncoding[DEFAULT_ENCODINGS[type_]])
    for key, encoding in native_encodings(schema, settings).items():
        config[key] = TSEncoding[encoding]
    tsfile.set_tsfile_config(config)


def _native_schema(schema: TableSchema) -> Any:
    import tsfile

    columns = [
        tsfile.ColumnSchema(
            c.name,
            # TEXT-typed TAGs lose values in the 2.5 writer; STRING is the safe TAG type.
            tsfile.TSDataType.STRING
            if c.category is Category.TAG
            else tsfile.TSDataType[c.type.value],
            tsfile.ColumnCategory[c.category.value],
        )
        for c in schema.columns
    ]
    return tsfile.TableSchema(schema.table, columns)


def duplicate_error(
    schema: TableSchema, row: Mapping[str, Any], *, across_parts: bool = False
) -> DataError:
    """The error for two rows of one write with the same device and time."""
    device = ", ".join(f"{t}={row[t]!r}" for t in schema.tag_names)
    where = (
        " in two part files of this write (different Spark partitions or rolled files)"
        if across_parts
        else ""
    )
    return DataError(
        f"duplicate rows for device ({device}) at time {row[TIME_COLUMN]}{where}; TsFile keeps "
        "one row per (device, time): deduplicate, or set onDuplicate=last to keep the last one"
    )


def sort_and_dedupe(data: pa.Table, schema: TableSchema, on_duplicate: str) -> pa.Table:
    """Rows ordered by device then time, with duplicate (device, time) pairs resolved.

    The native writer requires exactly this order and rejects (or, after an internal flush,
    silently corrupts on) anything else. Among duplicates the input order survives, so
    "last" means last written.

    A sort on the TAG strings dominated a write task's time; the TAG tuple is mapped to one
    integer device code in the same order (:func:`_device_codes`), and input that already is
    in order (checked, vectorised) is not reordered at all. The result is the same as
    :func:`_sort_and_dedupe_by_keys`, which stays the path when codes do not fit.
    """
    data, same = _sort_by_device_time(data, schema)
    if same is None:
        return data
    return _resolve_adjacent(data, schema, on_duplicate, same)


def split_duplicates(data: pa.Table, schema: TableSchema) -> list[pa.Table]:
    """Rows split into as few tables as hold each (device, time) at most once, every row kept:
    the k-th row of a (device, time) in input order goes to the k-th table, each ordered by
    device then time. One table when there is no duplicate.

    What OPTIMIZE writes when the parts it merges hold the same (device, time) more than once
    (an append-only table keeps both rows; one TsFile cannot hold them): the first rows of
    every key in one new part, the repeats in as many more as the most repeated key needs.
    """
    data, same = _sort_by_device_time(data, schema)
    if same is None or not pc.any(same).as_py():
        return [data]
    # A row's rank among its (device, time) run: its index less the index its run starts at.
    starts = pa.concat_arrays([pa.array([True]), pc.invert(_contiguous(same))])
    index = pa.array(range(data.num_rows), pa.int64())
    run_start = pc.cumulative_max(pc.if_else(starts, index, 0))
    rank = pc.subtract(index, run_start)
    deepest = pc.max(rank).as_py()
    return [data.filter(pc.equal(rank, k)) for k in range(deepest + 1)]


def _contiguous(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def _sort_by_device_time(
    data: pa.Table, schema: TableSchema
) -> tuple[pa.Table, pa.Array | pa.ChunkedArray | None]:
    """``data`` stably ordered by device then time, and ``same`` (``same[i]``: row i+1 has
    row i's device and time), None when there are fewer than two rows."""
    if data.num_rows == 0:
        return data, None
    time = data.column(TIME_COLUMN)
    device = _device_codes(data, schema.tag_names)
    if device is None or time.null_count:
        return _sort_by_keys(data, schema)
    time = time.combine_chunks() if isinstance(time, pa.ChunkedArray) else time
    if not _in_device_time_order(device, time):
        # Every sort here is stable: equal (device, time) keep their input order. Rows
        # usually arrive in time order, when grouping by device alone (a counting sort on
        # small integers) already orders them; otherwise sort on both.
        indices = pc.sort_indices(device)
        if not _in_device_time_order(device.take(indices), time.take(indices)):
            indices = pc.sort_indices(
                pa.table({"device": device, "time": time}),
                sort_keys=[("device", "ascending"), ("time", "ascending")],
            )
        # A take from one contiguous table is cheaper than from Spark's many small batches.
        data = data.combine_chunks().take(indices)
        device, time = device.take(indices), time.take(indices)
    if data.num_rows < 2:
        return data, None
    n = data.num_rows
    same = pc.and_(
        pc.equal(device.slice(1), device.slice(0, n - 1)),
        pc.equal(time.slice(1), time.slice(0, n - 1)),
    )
    return data, same


# Device codes are products of the TAG columns' distinct counts; beyond this the general
# sort is used rather than risk overflowing int64.
_MAX_DEVICE_CODE = 2**62


def _device_codes(data: pa.Table, tags: Sequence[str]) -> pa.Array | None:
    """One int64 per row ordering rows exactly as the TAG columns do under Arrow's sort
    (byte-wise, each TAG's nulls after its values); None when the codes would not fit."""
    code = pa.array([0] * data.num_rows, pa.int64()) if not tags else None
    width = 1
    for name in tags:
        column = data.column(name)
        # Distinct values are few (one per device at most): sorting them is cheap, and
        # their rank is the column's order.
        values = pc.unique(column).drop_null()
        values = values.take(pc.sort_indices(values))
        ranks = pc.fill_null(pc.index_in(column, value_set=values), len(values))
        ranks = ranks.combine_chunks() if isinstance(ranks, pa.ChunkedArray) else ranks
        ranks = ranks.cast(pa.int64())
        width *= len(values) + 1
        if width > _MAX_DEVICE_CODE:
            return None
        code = ranks if code is None else pc.add(pc.multiply(code, len(values) + 1), ranks)
    return code


def _in_device_time_order(device: pa.Array, time: pa.Array) -> bool:
    """Whether rows already are ordered by device code, then time."""
    n = len(device)
    if n < 2:
        return True
    d0, d1 = device.slice(0, n - 1), device.slice(1)
    t0, t1 = time.slice(0, n - 1), time.slice(1)
    backwards = pc.or_(pc.less(d1, d0), pc.and_(pc.equal(d1, d0), pc.less(t1, t0)))
    return not pc.any(backwards).as_py()


def _sort_and_dedupe_by_keys(data: pa.Table, schema: TableSchema, on_duplicate: str) -> pa.Table:
    """:func:`sort_and_dedupe` by sorting on the TAG and time columns themselves."""
    data, same = _sort_by_keys(data, schema)
    if same is None:
        return data
    return _resolve_adjacent(data, schema, on_duplicate, same)


def _sort_by_keys(
    data: pa.Table, schema: TableSchema
) -> tuple[pa.Table, pa.Array | pa.ChunkedArray | None]:
    """:func:`_sort_by_device_time` by sorting on the TAG and time columns themselves."""
    keys = [*schema.tag_names, TIME_COLUMN]
    if data.num_rows == 0:
        return data, None
    # Stable sort: among duplicates the input order survives, so "last" means last written.
    indices = pc.sort_indices(data, sort_keys=[(k, "ascending") for k in keys])
    data = data.take(indices)
    if data.num_rows < 2:
        return data, None
    same = None
    for key in keys:
        col = data.column(key)
        after, before = col.slice(1), col.slice(0, data.num_rows - 1)
        # A null TAG is a value of the device key: two rows of the null device at one
        # time are duplicates too (as the device codes of the fast path see it).
        eq = pc.or_(
            pc.fill_null(pc.equal(after, before), False),
            pc.and_(pc.is_null(after), pc.is_null(before)),
        )
        same = eq if same is None else pc.and_(same, eq)
    assert same is not None
    return data, same


def _resolve_adjacent(
    data: pa.Table, schema: TableSchema, on_duplicate: str, same: pa.Array | pa.ChunkedArray
) -> pa.Table:
    """Sorted ``data`` with runs of equal keys resolved; ``same[i]``: row i+1 repeats row i."""
    if not pc.any(same).as_py():
        return data
    if on_duplicate == "error":
        first = pc.index(same, True).as_py()
        raise duplicate_error(schema, data.slice(first, 1).to_pylist()[0])
    # Keep the last row of each run of equal keys.
    keep = pc.invert(pc.fill_null(same, False))
    if isinstance(keep, pa.ChunkedArray):
        keep = keep.combine_chunks()
    mask = pa.concat_arrays([keep, pa.array([True])])
    return data.filter(mask)


def write_file(
    local_path: str,
    data: pa.Table,
    schema: TableSchema,
    settings: WriteSettings,
    *,
    chunk_rows: int = 65_536,
) -> None:
    """Write sorted, deduplicated ``data`` (raw TsFile Arrow types) to a new local TsFile.

    The native writer refuses an existing path and leaves a corrupt file when it fails, so
    a failure here removes whatever was written.
    """
    from tsfile import TsFileTableWriter

    ordered = sort_and_dedupe(data, schema, settings.on_duplicate)
    time_index = ordered.schema.get_field_index(TIME_COLUMN)
    with _CONFIG_LOCK:
        _init_native()
        _configure(schema, settings)
        if os.path.exists(local_path):
            # The native writer refuses it too, but only after its own state is set up.
            raise DataError(f"{local_path} already exists; TsFile parts are never rewritten")
        writer = TsFileTableWriter(local_path, _native_schema(schema))
        try:
            for batch in ordered.to_batches(max_chunksize=chunk_rows):
                writer.writer.write_arrow_batch(schema.table, batch, time_index)
            writer.close()
        except Exception as e:
            try:
                writer.close()
            except Exception:  # the native writer is already poisoned; the file goes anyway
                pass
            if os.path.exists(local_path):
                os.remove(local_path)
            raise DataError(f"the TsFile writer rejected the data for {local_path}: {e}") from e


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
        with opened(io, url) as reader:
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
