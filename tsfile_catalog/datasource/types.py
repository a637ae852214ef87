"""Type mapping between TsFile, Arrow and Spark, and the batch conversions both ways.

Reads go raw TsFile Arrow -> *normalized* (time and TIMESTAMP as raw int64, target types,
missing columns as nulls; the residual filter runs here, in the raw domain its literals were
bound to) -> *output* (the exact Arrow schema Spark 4.3 checks: int64 not int32, ``string``
not ``large_string``, ``timestamp[us, tz=UTC]``, nullability, column order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import types as T

from tsfile_catalog.exceptions import DataError, SchemaMismatchError, UnsupportedTypeError
from tsfile_catalog.exec.time_buckets import floor_divide
from tsfile_catalog.metadata.expressions import TimeUnit
from tsfile_catalog.metadata.schema import TIME_COLUMN, DataType, TableSchema
from tsfile_catalog.metadata.spark.time import SPARK_TIMESTAMP_RANGE, spark_timestamp_bounds
from tsfile_catalog.write.arrow import IncomingColumn

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "spark_schema",
    "project_user_schema",
    "arrow_schema",
    "to_output",
    "tsfile_type_of",
    "spark_columns",
]

TimestampAs = Literal["long", "timestamp"]

_SPARK: Mapping[DataType, T.DataType] = {
    DataType.BOOLEAN: T.BooleanType(),
    DataType.INT32: T.IntegerType(),
    DataType.INT64: T.LongType(),
    DataType.FLOAT: T.FloatType(),
    DataType.DOUBLE: T.DoubleType(),
    DataType.TEXT: T.StringType(),
    DataType.STRING: T.StringType(),
    DataType.DATE: T.DateType(),
    DataType.BLOB: T.BinaryType(),
}

_UNITS_PER_MICRO: Mapping[str, tuple[int, int]] = {"ms": (1_000, 1), "us": (1, 1), "ns": (1, 1_000)}


def _spark_type(type_: DataType, timestamp_as: TimestampAs) -> T.DataType:
    if type_ is DataType.TIMESTAMP:
        return T.TimestampType() if timestamp_as == "timestamp" else T.LongType()
    return _SPARK[type_]


def spark_schema(
    schema: TableSchema, columns: Sequence[str], timestamp_as: TimestampAs
) -> T.StructType:
    """The Spark schema of a scan returning ``columns`` (names from ``schema.names``)."""
    fields = []
    for name in columns:
        if name == TIME_COLUMN:
            time_type = T.TimestampType() if timestamp_as == "timestamp" else T.LongType()
            fields.append(T.StructField(TIME_COLUMN, time_type, nullable=False))
            continue
        col = schema.column(name)
        assert col is not None
        fields.append(T.StructField(col.name, _spark_type(col.type, timestamp_as), True))
    return T.StructType(fields)


def project_user_schema(
    schema: TableSchema, given: T.StructType, timestamp_as: TimestampAs
) -> list[str]:
    """The table columns a user-specified read schema selects, in its order.

    ``.schema("time long, city string")`` on a read is a projection: each field must name a
    column of ``schema`` (case-insensitively, once) with the Spark type the scan gives it
    under ``timestamp_as``; a field may be declared nullable, but a column holding nulls may
    not be declared NOT NULL.

    Raises:
        SchemaMismatchError: naming the field and both types (or the table's columns).
    """
    if not given.fields:
        raise SchemaMismatchError("the read schema has no columns; name at least one")
    table = spark_schema(schema, schema.names, timestamp_as)
    by_name = {f.name: f for f in table.fields}
    out: list[str] = []
    for field in given.fields:
        name = field.name.lower()
        column = by_name.get(name)
        if column is None:
            raise SchemaMismatchError(
                f"the read schema's column '{field.name}' is not a column of table "
                f"'{schema.table}' (columns: {', '.join(schema.names)}); a user-specified "
                "schema selects a subset of the table's columns"
            )
        if name in out:
            raise SchemaMismatchError(f"the read schema names column '{field.name}' twice")
        if field.dataType != column.dataType:
            raise SchemaMismatchError(
                f"the read schema gives column '{field.name}' type "
                f"{field.dataType.simpleString()}, but table '{schema.table}' reads it as "
                f"{column.dataType.simpleString()} (timestampAs = '{timestamp_as}'); a "
                "user-specified schema must use the table's types"
            )
        if not field.nullable and column.nullable:
            raise SchemaMismatchError(
                f"the read schema declares column '{field.name}' NOT NULL, but it may hold "
                f"nulls in table '{schema.table}'"
            )
        out.append(name)
    return out


def _arrow_of_spark(type_: T.DataType) -> pa.DataType:
    if isinstance(type_, T.TimestampType):
        return pa.timestamp("us", tz="UTC")
    mapping: list[tuple[type, pa.DataType]] = [
        (T.BooleanType, pa.bool_()),
        (T.IntegerType, pa.int32()),
        (T.LongType, pa.int64()),
        (T.FloatType, pa.float32()),
        (T.DoubleType, pa.float64()),
        (T.StringType, pa.string()),
        (T.DateType, pa.date32()),
        (T.BinaryType, pa.binary()),
    ]
    for cls, arrow in mapping:
        if isinstance(type_, cls):
            return arrow
    raise UnsupportedTypeError(f"no Arrow mapping for Spark type {type_.simpleString()}")


def arrow_schema(spark: T.StructType) -> pa.Schema:
    return pa.schema(
        [pa.field(f.name, _arrow_of_spark(f.dataType), nullable=f.nullable) for f in spark.fields]
    )


def local_relation(
    spark: SparkSession, rows: Sequence[Sequence[object]], schema: T.StructType
) -> DataFrame:
    """``rows`` as a DataFrame over a local relation built from Arrow (timestamps as aware
    UTC datetimes): collecting it runs no Spark job, where a list of rows goes through a Python
    RDD and a job (about 0.1 s, measured, on every answer from statistics)."""
    arrow = arrow_schema(schema)
    columns = [pa.array([row[i] for row in rows], f.type) for i, f in enumerate(arrow)]
    return spark.createDataFrame(pa.Table.from_arrays(columns, schema=arrow), schema)


def _raw_to_micros(array: pa.ChunkedArray | pa.Array, unit: TimeUnit) -> pa.Array:
    mul, div = _UNITS_PER_MICRO[unit]
    if mul != 1:
        array = pc.multiply_checked(array, mul)
    elif div != 1:
        array = floor_divide(array, div)
    return array


def to_output(
    table: pa.Table, target: TableSchema, out_schema: pa.Schema, unit: TimeUnit
) -> pa.Table:
    """Normalized data in Spark's exact Arrow schema (timestamps converted per ``unit``)."""
    arrays = []
    for field in out_schema:
        array = table.column(field.name)
        if pa.types.is_timestamp(field.type):
            _check_spark_timestamps(array, field.name, unit)
            array = _raw_to_micros(array, unit).cast(pa.int64()).cast(field.type)
        elif array.type != field.type:
            array = array.cast(field.type)
        arrays.append(array)
    return pa.Table.from_arrays(arrays, schema=out_schema)


def _check_spark_timestamps(array: pa.ChunkedArray, column: str, unit: TimeUnit) -> None:
    """Raw times that are no Spark timestamp fail naming the column and the value (else they
    overflow in Arrow, or reach Python as a datetime that cannot exist)."""
    lo, hi = spark_timestamp_bounds(unit)
    bounds = pc.min_max(array)
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    bad = low if low is not None and low < lo else high if high is not None and high > hi else None
    if bad is not None:
        raise DataError(
            f"column '{column}' holds the raw time {bad} ({unit} since the epoch), which is "
            f"outside the range of Spark timestamps ({SPARK_TIMESTAMP_RANGE}); read the table "
            "with timestampAs=long to see raw values"
        )


# -- writing ----------------------------------------------------------------------------------


def tsfile_type_of(field: T.StructField) -> DataType:
    """The TsFile type a Spark column is stored as; UnsupportedTypeError names the column."""
    t = field.dataType
    if isinstance(t, T.BooleanType):
        return DataType.BOOLEAN
    if isinstance(t, (T.ByteType, T.ShortType, T.IntegerType)):
        return DataType.INT32
    if isinstance(t, T.LongType):
        return DataType.INT64
    if isinstance(t, T.FloatType):
        return DataType.FLOAT
    if isinstance(t, T.DoubleType):
        return DataType.DOUBLE
    if isinstance(t, (T.StringType, T.CharType, T.VarcharType)):
        return DataType.STRING
    if isinstance(t, T.BinaryType):
        return DataType.BLOB
    if isinstance(t, T.DateType):
        return DataType.DATE
    if isinstance(t, (T.TimestampType, T.TimestampNTZType)):
        return DataType.TIMESTAMP
    raise UnsupportedTypeError(
        f"column '{field.name}' has Spark type {t.simpleString()}, which TsFile cannot store "
        "(supported: boolean, tinyint/smallint/int, bigint, float, double, string, binary, "
        "date, timestamp); cast it first"
    )


def spark_columns(schema: T.StructType) -> list[IncomingColumn]:
    """The columns of a DataFrame a write receives, as the (Spark-free) planner sees them."""
    out = []
    for field in schema.fields:
        try:
            type_: DataType | None = tsfile_type_of(field)
            unsupported = ""
        except UnsupportedTypeError as e:
            type_, unsupported = None, str(e)
        timestamp = isinstance(field.dataType, T.TimestampType)
        out.append(
            IncomingColumn(field.name, type_, field.dataType.simpleString(), timestamp, unsupported)
        )
    return out
