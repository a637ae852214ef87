"""INSERT's checks and coercion: the rows of ``INSERT INTO <catalog table> ...`` as the table
is written (UPDATE and MERGE coerce their new values with :func:`coerce` too).

The column list (or the table's columns) must name existing columns once each and include
``time`` and every TAG column; the query's columns are then cast to the table's types, and
columns the statement leaves out are NULL.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from tsfile_catalog.exceptions import SqlError
from tsfile_catalog.metadata.schema import TIME_COLUMN, DataType, TableSchema
from tsfile_catalog.metadata.spark.types import spark_type_of
from tsfile_catalog.sql import table_options
from tsfile_catalog.sql.registry import TableEntry
from tsfile_catalog.sql.statements import Insert, quote_identifier

__all__ = ["coerce", "insert_rows"]


def insert_rows(
    statement: Insert, source: DataFrame, schema: TableSchema, entry: TableEntry
) -> DataFrame:
    """``source`` (the statement's query) as rows of the table ``entry`` with ``schema``: one
    column per table column, in table order, each cast as the table stores it.

    Raises:
        SqlError: the column list names an unknown column or one twice, leaves out ``time``
            or a TAG column, or its length differs from the query's.
    """
    # By position: the columns in the order users see them (ALTER COLUMN … FIRST | AFTER).
    targets = statement.columns if statement.columns is not None else schema.display_names
    name = entry.display_name
    unknown = [c for c in targets if c not in schema.names]
    if unknown:
        raise SqlError(
            f"INSERT INTO {name}: no column {', '.join(map(repr, unknown))} (columns: "
            f"{', '.join(schema.display_names)})"
        )
    if len(set(targets)) != len(targets):
        raise SqlError(f"INSERT INTO {name}: the column list names a column twice")
    missing = [c for c in (TIME_COLUMN, *schema.tag_names) if c not in targets]
    if missing:
        raise SqlError(
            f"INSERT INTO {name}: the time and TAG columns need values; missing "
            f"{', '.join(missing)}"
        )
    if len(source.columns) != len(targets):
        raise SqlError(
            f"INSERT INTO {name}: the query returns {len(source.columns)} columns but "
            f"{len(targets)} are inserted ({', '.join(targets)})"
        )
    by_target = dict(zip(targets, source.schema.fields, strict=True))
    columns = []
    for column in schema.names:
        field = by_target.get(column)
        if field is None:
            wanted = (
                "timestamp"
                if _is_timestamp_field(column, schema)
                else (spark_type_of(column, schema, timestamp_as=table_options.timestamp_as(entry)))
            )
            columns.append(F.lit(None).cast(wanted).alias(column))
        else:
            source_column = source[quote_identifier(field.name)]
            columns.append(
                coerce(source_column, field.dataType, column, schema, entry).alias(column)
            )
    return source.select(*columns)


def _is_timestamp_field(name: str, schema: TableSchema) -> bool:
    column = schema.column(name) if name != TIME_COLUMN else None
    return column is not None and column.type is DataType.TIMESTAMP


_RAW_TO_TIMESTAMP: Mapping[str, Callable[[SparkColumn], SparkColumn]] = {
    "ms": F.timestamp_millis,
    "us": F.timestamp_micros,
    "ns": lambda c: F.timestamp_micros(F.floor(c / 1000)),
}


def coerce(
    column: SparkColumn,
    source: T.DataType,
    name: str,
    schema: TableSchema,
    entry: TableEntry,
) -> SparkColumn:
    """``column`` as the table's column ``name`` is written.

    Numbers become TIMESTAMP values as raw time in the table's precision (not seconds, as a
    Spark cast would); the time column of a ``long`` table keeps timestamps as they are (the
    writer converts them with the precision).
    """
    numeric = isinstance(source, T.NumericType)
    temporal = isinstance(source, (T.TimestampType, T.TimestampNTZType, T.DateType))
    is_timestamp_field = _is_timestamp_field(name, schema)
    wanted = spark_type_of(name, schema, timestamp_as=table_options.timestamp_as(entry))
    if name == TIME_COLUMN or is_timestamp_field:
        if wanted == "timestamp" or is_timestamp_field:
            if numeric:
                return _RAW_TO_TIMESTAMP[table_options.precision(entry)](column.cast("bigint"))
            return column.cast("timestamp")
        return column.cast("timestamp") if temporal else column.cast("bigint")
    return column.cast(wanted)
