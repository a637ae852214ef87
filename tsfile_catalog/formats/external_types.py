"""External files' types and times in the table's terms: Arrow types to table types, the
time column to raw table time (floored, range-checked), and file-level time bounds.

Split from :mod:`tsfile_catalog.formats.external` (the adapters' shared scan and statistics),
which imports it; no Spark here.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from tsfile_catalog.exceptions import DataError, SchemaMismatchError
from tsfile_catalog.metadata.expressions import INT64_MAX, INT64_MIN
from tsfile_catalog.metadata.external import FileColumn
from tsfile_catalog.metadata.schema import TIME_COLUMN, DataType

_PER_SECOND = {"ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_PER_DAY_SECONDS = 86_400
# Units per second of Arrow's timestamp units, and the floor_temporal names of ours.
_PER_UNIT = {"s": 1, **_PER_SECOND}
_ARROW_UNIT = {"ms": "millisecond", "us": "microsecond", "ns": "nanosecond"}


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


def check_time_type(where: str, name: str, arrow: pa.DataType) -> None:
    if pa.types.is_integer(arrow) or pa.types.is_timestamp(arrow) or pa.types.is_date(arrow):
        return
    raise SchemaMismatchError(
        f"{where}: time column '{name}' has type {arrow}; it must hold BIGINT raw times, "
        "TIMESTAMP or DATE values: cast it in the file, or name another column with timeColumn"
    )


def raw_time(
    array: pa.ChunkedArray | pa.Array, unit: str, *, where: str = "", column: str = TIME_COLUMN
) -> pa.ChunkedArray | pa.Array:
    """A time column as raw int64 values in ``unit``: integers as they are, TIMESTAMPs (any
    unit, any zone: they are instants) and DATEs (midnight UTC) converted. A finer unit is
    floored, as the writer converts Spark's times (``-0.5 ms`` is raw ``-1``, not ``0``).

    Raises:
        DataError: a value outside what int64 holds in ``unit`` (9999-12-31 in ``ns``), naming
            ``where`` (the file), ``column`` and the value, instead of wrapping around.
    """
    try:
        return _raw(array, unit)
    except pa.ArrowInvalid as e:
        raise DataError(
            f"{where}: column '{column}' holds {_out_of_range(array, unit)}, which raw {unit} "
            f"times (int64) cannot hold; store the table's times in a coarser unit "
            f"(timestampPrecision), or leave such rows out of the file"
        ) from e


def _raw(array: pa.ChunkedArray | pa.Array, unit: str) -> pa.ChunkedArray | pa.Array:
    """:func:`raw_time`'s conversion; a value out of range raises ``ArrowInvalid``."""
    arrow = array.type
    if pa.types.is_timestamp(arrow):
        # Dropping the zone keeps the instants: Arrow stores UTC whatever the zone.
        naive = array.cast(pa.timestamp(arrow.unit))
        if _PER_UNIT[arrow.unit] > _PER_UNIT[unit]:
            naive = pc.floor_temporal(naive, unit=_ARROW_UNIT[unit])
        # A safe cast: a value the unit cannot hold raises instead of wrapping around.
        return naive.cast(pa.timestamp(unit)).cast(pa.int64())
    if pa.types.is_date(arrow):
        days = array.cast(pa.date32()).cast(pa.int32()).cast(pa.int64())
        return pc.multiply_checked(days, _PER_DAY_SECONDS * _PER_SECOND[unit])
    return array.cast(pa.int64())


def _out_of_range(array: pa.ChunkedArray | pa.Array, unit: str) -> str:
    """The extreme value of ``array`` that does not fit raw ``unit`` times, as text."""
    bounds = pc.min_max(array)
    for end in ("min", "max"):
        value = bounds[end]
        try:
            _raw(pa.array([value.as_py()], array.type), unit)
        except (pa.ArrowInvalid, OverflowError, ValueError):
            return str(value)
    return "a value"


def to_table_column(
    array: pa.ChunkedArray, type_: DataType, unit: str, *, where: str, column: str
) -> pa.ChunkedArray:
    """A FIELD column in the raw domain ``normalize`` expects (TIMESTAMP as raw int64)."""
    if type_ is DataType.TIMESTAMP:
        return raw_time(array, unit, where=where, column=column)
    if pa.types.is_dictionary(array.type):
        return array.cast(array.type.value_type)
    if pa.types.is_float16(array.type):
        # Widened to FLOAT (exact): Arrow's compute kernels (min/max, filters) skip halffloat.
        return array.cast(pa.float32())
    if type_ is DataType.DATE and array.type != pa.date32():
        return array.cast(pa.date32())
    return array


def file_bounds(arrow: pa.DataType, unit: str, lo: int, hi: int) -> tuple[Any, Any]:
    """Raw bounds ``[lo, hi]`` as (inclusive) bounds in the file column's own domain, rounded
    outward: a coarse filter for row-group pruning; rows are filtered exactly afterwards."""

    def scale(value: int, per: int, up: bool) -> int:
        return -((-value) // per) if up else value // per

    if pa.types.is_timestamp(arrow):
        file_per = _PER_UNIT[arrow.unit]
        raw_per = _PER_SECOND[unit]
        # Raw times floor finer file values: raw r holds the file values from r's start up to
        # (not including) the start of r + 1.
        low = scale(lo * file_per, raw_per, False) if lo > INT64_MIN else None
        high = scale((hi + 1) * file_per, raw_per, True) - 1 if hi < INT64_MAX else None
        return (
            None
            if low is None or low < INT64_MIN
            else pa.scalar(low, pa.timestamp(arrow.unit, arrow.tz)),
            None
            if high is None or high > INT64_MAX
            else pa.scalar(high, pa.timestamp(arrow.unit, arrow.tz)),
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
