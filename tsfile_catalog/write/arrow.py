"""Incoming Arrow columns in TsFile terms: the type each is stored as, and its values in
the raw domain the native writer takes.

Spark hands its tasks Arrow batches; ``write_table`` gets pyarrow or pandas data. Both come
through here, so a value is stored the same way whichever path wrote it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from tsfile_catalog.exceptions import DataError
from tsfile_catalog.exec.time_buckets import floor_divide
from tsfile_catalog.formats.base import NORMALIZED_ARROW
from tsfile_catalog.metadata.expressions import TimeUnit
from tsfile_catalog.metadata.schema import TIME_COLUMN, Category, Column, DataType, TableSchema

__all__ = ["IncomingColumn", "arrow_columns", "raw_from_arrow_column", "raw_table"]

_NANOS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


@dataclass(frozen=True)
class IncomingColumn:
    """One column of the data a write receives, as the planner needs to see it."""

    name: str
    # The TsFile type it is stored as; None when TsFile cannot store it.
    type: DataType | None
    # Its type as the caller knows it ("bigint" for Spark, "int64" for Arrow), for messages.
    type_name: str
    # Whether its values are timestamps (what ``replaceWhere`` compares ``time`` against).
    timestamp: bool = False
    # The message refusing the column when ``type`` is None (names the column).
    unsupported: str = ""


def _tsfile_type(type_: pa.DataType) -> DataType | None:
    if pa.types.is_dictionary(type_):
        return _tsfile_type(type_.value_type)
    checks: list[tuple[bool, DataType]] = [
        (pa.types.is_boolean(type_), DataType.BOOLEAN),
        (type_ in (pa.int8(), pa.int16(), pa.int32(), pa.uint8(), pa.uint16()), DataType.INT32),
        (type_ in (pa.int64(), pa.uint32()), DataType.INT64),
        (pa.types.is_float32(type_), DataType.FLOAT),
        (pa.types.is_float64(type_), DataType.DOUBLE),
        (pa.types.is_string(type_) or pa.types.is_large_string(type_), DataType.STRING),
        (pa.types.is_binary(type_) or pa.types.is_large_binary(type_), DataType.BLOB),
        (pa.types.is_date32(type_), DataType.DATE),
        (pa.types.is_timestamp(type_), DataType.TIMESTAMP),
    ]
    return next((tsfile for matches, tsfile in checks if matches), None)


def arrow_columns(schema: pa.Schema) -> list[IncomingColumn]:
    """The columns of Arrow (or pandas, converted) data, as a write sees them."""
    out = []
    for field in schema:
        type_ = _tsfile_type(field.type)
        out.append(
            IncomingColumn(
                field.name,
                type_,
                str(field.type),
                type_ is DataType.TIMESTAMP,
                f"column '{field.name}' has Arrow type {field.type}, which TsFile cannot store "
                "(supported: bool, int8/16/32/64, uint8/16/32, float32/64, string, binary, "
                "date32, timestamp); cast it first",
            )
        )
    return out


def _timestamps_to_raw(array: pa.Array | pa.ChunkedArray, unit: TimeUnit, name: str) -> pa.Array:
    """Timestamps (any unit, any zone: the instant counts) as raw ``unit`` longs; finer
    values are floored, as Spark floors a timestamp cast to a coarser unit.

    Raises:
        DataError: an instant the unit's int64 cannot hold (naming column, value and unit).
    """
    ticks = pc.cast(array, pa.timestamp(array.type.unit)).cast(pa.int64())
    have, want = _NANOS[array.type.unit], _NANOS[unit]
    if have > want:
        try:
            return pc.multiply_checked(ticks, have // want)
        except pa.ArrowInvalid:
            raise _out_of_range(ticks, array.type.unit, unit, name) from None
    if have < want:
        return floor_divide(ticks, want // have)
    return ticks


# What an int64 count of each unit reaches, either side of the epoch (for messages).
_RANGES = {
    "ms": "about 292 million years either side of 1970",
    "us": "about 292,000 years either side of 1970",
    "ns": "1677-09-21 00:12:43.145224192 .. 2262-04-11 23:47:16.854775807 UTC",
}


def _out_of_range(
    ticks: pa.Array | pa.ChunkedArray, have: str, unit: TimeUnit, name: str
) -> DataError:
    """The error for the first of ``ticks`` (counts of ``have``) that overflows int64 in
    ``unit``."""
    limit = (2**63 - 1) // (_NANOS[have] // _NANOS[unit])
    outside = pc.or_(pc.greater(ticks, limit), pc.less(ticks, -limit))
    first = pc.filter(ticks, outside)[0].as_py()
    try:
        shown = pa.scalar(first, pa.timestamp(have, "UTC")).as_py().isoformat()
    except (OverflowError, ValueError, pa.ArrowInvalid):  # past Python's datetime range
        shown = f"{first} {have} since 1970-01-01 UTC"
    names = {"ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}
    return DataError(
        f"column '{name}' holds {shown}, which a table storing time in {names[unit]} "
        f"('{unit}') cannot hold: its raw times reach {_RANGES[unit]}"
    )


def raw_from_arrow_column(
    array: pa.Array | pa.ChunkedArray,
    column: Column | None,
    unit: TimeUnit,
    name: str = TIME_COLUMN,
) -> pa.Array | pa.ChunkedArray:
    """One incoming Arrow column in the raw type the native writer accepts.

    ``column`` None means the time column, which the data calls ``name``.

    Raises:
        DataError: a TAG value is null or holds a NUL character, or a timestamp ``unit``
            cannot hold (naming the column).
    """
    if pa.types.is_dictionary(array.type):
        array = array.cast(array.type.value_type)
    if column is None:
        if pa.types.is_timestamp(array.type):
            return _timestamps_to_raw(array, unit, name)
        return array.cast(pa.int64())
    if column.type is DataType.TIMESTAMP:
        raw = (
            _timestamps_to_raw(array, unit, column.name)
            if pa.types.is_timestamp(array.type)
            else array
        )
        # The native writer takes TIMESTAMP only as timestamp[ns]; it stores the raw long.
        return raw.cast(pa.int64()).cast(pa.timestamp("ns"))
    wanted = NORMALIZED_ARROW[column.type]
    if column.category is Category.TAG:
        _check_tag_values(array, column.name)
    return array if array.type == wanted else array.cast(wanted)


def raw_table(data: pa.Table, schema: TableSchema, unit: TimeUnit) -> pa.Table:
    """``data`` (a column per table column, by name, as a scan or Spark returns them) in
    the raw domain the table's parts hold, as a rewrite reads and writes rows: TIMESTAMP
    columns and ``time`` as raw int64 in ``unit``.

    Raises:
        DataError: a null ``time``, or a TAG value the writer refuses (naming the column).
    """
    time = data.column(schema.names[0])
    if time.null_count:
        raise DataError(f"time column '{schema.names[0]}' has a null value; every row needs a time")
    arrays = [raw_from_arrow_column(time, None, unit, schema.names[0])]
    for column in schema.columns:
        raw = raw_from_arrow_column(data.column(column.name), column, unit)
        arrays.append(raw.cast(pa.int64()) if column.type is DataType.TIMESTAMP else raw)
    return pa.Table.from_arrays(arrays, names=list(schema.names))


def _check_tag_values(array: pa.Array | pa.ChunkedArray, name: str) -> None:
    if array.null_count:
        raise DataError(
            f"TAG column '{name}' has a null value; TAG values identify the device "
            "and must not be null (nullTagPolicy=error)"
        )
    # The TsFile device index stores TAG values NUL-terminated: 'a\x00b' would be indexed as
    # 'a', merging devices in the statistics and hiding the rows from TAG filters.
    has_nul = pc.match_substring(array, "\x00")
    if pc.any(has_nul).as_py():
        value = array.filter(has_nul)[0].as_py()
        raise DataError(
            f"TAG column '{name}' has a value containing a NUL character (\\x00): {value!r}; "
            "TsFile cannot index such a device, remove or replace the character"
        )
