"""Reading a TsFile's metadata: its table schema and per-part statistics.

Statistics come from the device index and chunk statistics, without reading rows; only
devices TsFile keeps no series for (tables without FIELD columns) are counted by a scan of
time and the TAGs. What the native reader reports loosely (upper-case names, TEXT tags,
NaN bounds, sums kept in doubles) is checked or narrowed here to what is exact.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import math
import os
from collections.abc import Iterator, Sequence
from typing import IO, Any

import pyarrow as pa

from tsfile_catalog.exceptions import (
    DataError,
    OptionError,
    SchemaError,
    TableNotFoundError,
    TsFileCatalogError,
    UnsupportedTypeError,
)
from tsfile_catalog.formats.tsfile.native import native
from tsfile_catalog.formats.tsfile.scan import scan_file
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.expressions.model import INT64_MAX, INT64_MIN
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import (
    TIME_COLUMN,
    Category,
    Column,
    DataType,
    TableSchema,
)
from tsfile_catalog.metadata.stats import (
    MAX_DEVICES,
    DeviceStats,
    FieldStats,
    SeriesStats,
    kept_double_sum,
    tag_stats_from_devices,
)

__all__ = [
    "opened",
    "read_table_schema",
    "series_stats",
    "part_from_reader",
    "part_and_devices",
]


@contextlib.contextmanager
def opened(io: FileIO, url: str, *, size_bytes: int | None = None) -> Iterator[Any]:
    """An open native reader on ``url``: a plain path locally (native I/O), otherwise a
    seekable fsspec file object, so remote files are read without a local copy.

    With ``size_bytes`` (the part's size in the manifest), a file of another size is refused:
    a part replaced by another TsFile, even a valid one, would otherwise be read with the
    statistics of the file the table wrote. The size comes with the remote file object (its
    open already asked the store: no extra request); locally it is one ``stat`` (about 5 µs).

    Raises:
        DataError: the file's size is not ``size_bytes``, naming the file and the fix.
    """
    tsfile = native()

    handle: IO[bytes] | None = None
    try:
        if io.is_local:
            path = io.normalize(url)
            if size_bytes is not None:
                # The native reader opens the path itself: one stat of it, as its open does.
                _check_size(url, os.stat(path).st_size, size_bytes)
            reader = tsfile.TsFileReader(path)
        else:
            handle = io.open_input(url)
            if size_bytes is not None:
                known = getattr(handle, "size", None)  # fsspec's files learn it on open
                _check_size(url, known if isinstance(known, int) else io.size(url), size_bytes)
            reader = tsfile.TsFileReader(handle)
    except DataError:
        if handle is not None:
            handle.close()
        raise
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


def _check_size(url: str, actual: int, recorded: int) -> None:
    if actual != recorded:
        raise DataError(
            f"TsFile part {url} no longer matches the table's manifest: it is {actual} bytes, "
            f"the manifest records {recorded} (the file was replaced or changed after it was "
            "written): restore it from a backup, or ALTER TABLE … DROP PART it"
        )


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
    semantics (see :class:`~tsfile_catalog.metadata.stats.SeriesStats`)."""
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
