"""CREATE TABLE's checks: what a new catalog table's location, columns and TAG columns must
be, and the options it is registered with.

The catalog (:mod:`tsfile_catalog.sql.catalog`) runs these before anything is written, so a
refused statement leaves no table, files or registry entry behind. Errors name the table
and the offending column, option or location.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pyspark.sql import types as T

from tsfile_catalog.exceptions import OptionError, SqlError
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.schema import TIME_COLUMN, Category, Column, TableSchema
from tsfile_catalog.metadata.spark.types import tsfile_type_of_sql
from tsfile_catalog.options import check_tag_columns
from tsfile_catalog.sql.statements import CreateTable

__all__ = ["absolute_location", "as_select_options", "new_table_schema", "tag_columns"]

# Column names travel in comma-separated source options (columns, tagColumns).
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]*")


def absolute_location(location: str) -> str:
    """``LOCATION`` normalized; relative paths are refused.

    Raises:
        SqlError: ``location`` is relative.
    """
    if "://" in location or location.startswith("/"):
        return FileIO(location).normalize(location)
    raise SqlError(
        f"LOCATION {location!r} is relative; give an absolute path or a URL with a scheme "
        "(relative locations would depend on the working directory of each process)"
    )


def tag_columns(options: Mapping[str, str], table: str) -> list[str]:
    """The ``tagColumns`` option of a new table, lower-cased, in order.

    Raises:
        OptionError: the option is missing or empty, names an empty or repeated column, or
            names ``time``.
    """
    raw = options.get("tagColumns")
    tags = None if raw is None or not raw.strip() else raw.split(",")
    return [tag.lower() for tag in check_tag_columns(tags, where=f"CREATE TABLE {table}: ")]


def new_table_schema(statement: CreateTable, options: dict[str, str]) -> TableSchema:
    """The schema of ``CREATE TABLE name (columns) USING tsfile``: TAG columns first, in
    ``tagColumns`` order, then the FIELD columns as declared; shown in the declared order.

    Completes ``options`` as the table is registered: ``tagColumns`` normalized, and
    ``timestampAs 'timestamp'`` when a column is declared TIMESTAMP and the option is unset.

    Raises:
        SqlError: a column name is not a plain identifier, or ``time`` is missing or not
            BIGINT/TIMESTAMP.
        OptionError: ``tagColumns`` is invalid or names a missing or non-STRING column.
    """
    assert statement.columns is not None
    name = statement.table.qualified
    for column in statement.columns:
        if not _IDENTIFIER.fullmatch(column.name):
            raise SqlError(
                f"CREATE TABLE {name}: column name {column.name!r} is not a plain identifier "
                "(letters, digits and underscores, not starting with a digit)"
            )
    types = {column.name: column.data_type for column in statement.columns}
    time_type = types.get(TIME_COLUMN)
    if time_type not in ("BIGINT", "TIMESTAMP"):
        raise SqlError(
            f"CREATE TABLE {name}: a tsfile table needs a time column, declared as "
            f"'time BIGINT' or 'time TIMESTAMP'"
            + (f" (it is declared {time_type})" if time_type else "")
        )
    tags = tag_columns(options, name)
    for tag in tags:
        if tag not in types:
            raise OptionError(
                f"CREATE TABLE {name}: option 'tagColumns' names {tag!r}, which is not a "
                f"column (columns: {', '.join(types)})"
            )
        if tag == TIME_COLUMN or types[tag] != "STRING":
            raise OptionError(
                f"CREATE TABLE {name}: TAG column {tag!r} is {types[tag]}; TAG columns must "
                "be STRING"
            )
    columns = [Column(tag, tsfile_type_of_sql("STRING"), Category.TAG) for tag in tags]
    columns.extend(
        Column(c.name, tsfile_type_of_sql(c.data_type), Category.FIELD)
        for c in statement.columns
        if c.name != TIME_COLUMN and c.name not in tags
    )
    # Shown as declared (stored canonically): SELECT *, DESCRIBE and a positional INSERT
    # follow the column list, as on a Parquet table declared so.
    schema = TableSchema.declared(
        statement.table.name, columns, (c.name for c in statement.columns)
    )
    if "timestampAs" not in options and "TIMESTAMP" in types.values():
        options["timestampAs"] = "timestamp"
    options["tagColumns"] = ",".join(tags)
    return schema


def as_select_options(name: str, options: dict[str, str], source: T.StructType) -> None:
    """Check ``CREATE TABLE name ... AS SELECT`` against the query's ``source`` schema and
    complete ``options`` as for :func:`new_table_schema`.

    Raises:
        SqlError: the query returns no ``time`` column.
        OptionError: ``tagColumns`` is invalid or names a column the query does not return.
    """
    returned = ", ".join(source.names)
    by_lower = {f.name.lower(): f for f in source.fields}
    if TIME_COLUMN not in by_lower:
        raise SqlError(
            f"CREATE TABLE {name} AS SELECT: the query has no 'time' column (alias the "
            f"timestamp column AS time); it returns {returned}"
        )
    tags = tag_columns(options, name)
    for tag in tags:
        if tag not in by_lower:
            raise OptionError(
                f"CREATE TABLE {name} AS SELECT: option 'tagColumns' names {tag!r}, which "
                f"the query does not return (it returns {returned})"
            )
    if "timestampAs" not in options and any(
        isinstance(f.dataType, (T.TimestampType, T.TimestampNTZType)) for f in source.fields
    ):
        options["timestampAs"] = "timestamp"
    options["tagColumns"] = ",".join(tags)
