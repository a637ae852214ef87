"""The Spark SQL type a ``tsfile`` scan returns for each column, by name (``bigint``, ...),
and the TsFile type a ``CREATE TABLE`` column type declares.

Plain strings, so DESCRIBE results and the SQL layer's casts agree with the data source
without importing pyspark. The time column and TIMESTAMP columns depend on the table's
``timestampAs`` option: ``timestamp`` reads them as Spark timestamps, ``long`` as raw int64.
"""

from __future__ import annotations

from collections.abc import Mapping

from tsfile_catalog.metadata.schema import TIME_COLUMN, Column, DataType, TableSchema

__all__ = ["SQL_TYPE_NAMES", "spark_type", "spark_type_of", "tsfile_type_of_sql"]

_SPARK_TYPE_NAMES: Mapping[DataType, str] = {
    DataType.BOOLEAN: "boolean",
    DataType.INT32: "int",
    DataType.INT64: "bigint",
    DataType.FLOAT: "float",
    DataType.DOUBLE: "double",
    DataType.TEXT: "string",
    DataType.STRING: "string",
    DataType.DATE: "date",
    DataType.BLOB: "binary",
}


def spark_type(column: Column | None, *, timestamp_as: str) -> str:
    """The Spark SQL type a scan returns for ``column`` (None: the time column)."""
    if column is None or column.type is DataType.TIMESTAMP:
        return "timestamp" if timestamp_as == "timestamp" else "bigint"
    return _SPARK_TYPE_NAMES[column.type]


def spark_type_of(name: str, schema: TableSchema, *, timestamp_as: str) -> str:
    """:func:`spark_type` of the column ``name`` of ``schema`` (``time`` included)."""
    column = None if name == TIME_COLUMN else schema.column(name)
    return spark_type(column, timestamp_as=timestamp_as)


_TSFILE_TYPE_OF_SQL: Mapping[str, DataType] = {
    "BOOLEAN": DataType.BOOLEAN,
    "INT": DataType.INT32,
    "BIGINT": DataType.INT64,
    "FLOAT": DataType.FLOAT,
    "DOUBLE": DataType.DOUBLE,
    "STRING": DataType.STRING,
    "DATE": DataType.DATE,
    "TIMESTAMP": DataType.TIMESTAMP,
    "BINARY": DataType.BLOB,
}


# The column types a CREATE TABLE or ALTER TABLE may declare, as the parser spells them.
SQL_TYPE_NAMES: tuple[str, ...] = tuple(_TSFILE_TYPE_OF_SQL)


def tsfile_type_of_sql(sql_type: str) -> DataType:
    """The TsFile type a ``CREATE TABLE`` column type (as the parser spells it) maps to."""
    return _TSFILE_TYPE_OF_SQL[sql_type]
