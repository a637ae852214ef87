"""The catalog's DESCRIBE and SHOW statements: what a table (or a URL reference) holds.

One function per statement, each taking the catalog's :class:`~tsfile_catalog.sql.query.Tables`
and the parsed statement and returning the answer as a small DataFrame. Nothing here changes a
table: the answers' shapes are :mod:`tsfile_catalog.inspect`'s, and a DESCRIBE of a name Spark
owns (a Spark table or view) is handed to Spark unchanged.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from tsfile_catalog import inspect
from tsfile_catalog.discovery import open_location
from tsfile_catalog.exceptions import TableNotFoundError
from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.inspect import Result
from tsfile_catalog.sql import table_options
from tsfile_catalog.sql.query import Tables
from tsfile_catalog.sql.registry import TableEntry
from tsfile_catalog.sql.statements import (
    DescribeDetail,
    DescribeHistory,
    DescribeTable,
    ShowCreateTable,
    ShowParts,
    ShowTables,
    TableUrl,
    create_table_statement,
)
from tsfile_catalog.sql.urls import url_entry
from tsfile_catalog.storage_options import redact_credentials

__all__ = [
    "describe",
    "describe_detail",
    "describe_history",
    "describe_url",
    "show_create_table",
    "show_parts",
    "show_tables",
]


def describe(tables: Tables, statement: DescribeTable) -> DataFrame:
    """DESCRIBE [EXTENDED] of a catalog table (a Spark table's is Spark's)."""
    assert not isinstance(statement.table, TableUrl)
    if tables.spark_owns(statement.table):
        return tables.spark.sql(statement.to_sql())
    entry = tables.registry.require(statement.table)
    return tables.result(
        inspect.describe(
            tables.open(entry),
            extended=statement.extended,
            name=entry.display_name,
            timestamp_as=table_options.timestamp_as(entry),
            options=entry.options,
        )
    )


def describe_history(tables: Tables, statement: DescribeHistory) -> DataFrame:
    assert not isinstance(statement.table, TableUrl)
    entry = tables.registry.require(statement.table)
    return tables.result(inspect.describe_history(tables.open(entry)))


def describe_detail(tables: Tables, statement: DescribeDetail) -> DataFrame:
    assert not isinstance(statement.table, TableUrl)
    entry = tables.registry.require(statement.table)
    return tables.result(
        inspect.describe_detail(
            tables.open(entry),
            name=entry.display_name,
            timestamp_as=table_options.timestamp_as(entry),
            options=entry.options,
        )
    )


def show_tables(tables: Tables, statement: ShowTables) -> DataFrame:
    """SHOW TABLES: an entry that cannot be read is listed with a NULL location (reading the
    table names its file and why; DROP TABLE removes it)."""
    listing = tables.registry.listing(statement.database)
    rows = [
        (e.database, e.name, e.location if isinstance(e, TableEntry) else None) for e in listing
    ]
    return tables.result(Result("namespace string, tableName string, location string", rows))


def show_parts(tables: Tables, statement: ShowParts) -> DataFrame:
    assert not isinstance(statement.table, TableUrl)
    entry = tables.registry.require(statement.table)
    return tables.result(inspect.show_parts(tables.open(entry, statement.time_travel)))


def show_create_table(tables: Tables, statement: ShowCreateTable) -> DataFrame:
    entry = tables.registry.require(statement.table)
    table = tables.open(entry)
    created = create_table_statement(
        statement.table,
        table.schema,
        location=entry.location,
        # Shown, as Spark's SHOW CREATE TABLE shows them: credentials masked.
        options=redact_credentials(entry.options),
        properties=redact_credentials(table.properties),
    )
    return tables.result(inspect.show_create_table(created.to_sql()))


def describe_url(
    tables: Tables, statement: DescribeTable | DescribeHistory | DescribeDetail | ShowParts
) -> DataFrame:
    """DESCRIBE [EXTENDED | HISTORY | DETAIL] / SHOW PARTS of a URL reference: a table's
    answers where the URL holds one, columns and files where it holds plain TsFiles."""
    url = statement.table
    assert isinstance(url, TableUrl)
    entry = url_entry(url)
    travel = url.time_travel
    if isinstance(statement, ShowParts):
        travel = statement.time_travel or travel
    version, timestamp = tables.travel(travel)
    # open_location, not Tables.resolve: history and details need the table itself.
    found = open_location(
        entry.location,
        version=version,
        timestamp=timestamp,
        table=entry.url.table,
        table_uuid=entry.url.table_uuid,
        storage_options=tables.storage(entry),
    )
    if isinstance(found, ResolvedScan):
        if isinstance(statement, ShowParts):
            return tables.result(inspect.show_file_parts(found))
        if isinstance(statement, DescribeTable) and not statement.extended:
            return tables.result(inspect.describe_files(found))
        raise TableNotFoundError(
            f"{statement.to_sql()}: {url.url} holds TsFiles but no table (no manifest), so "
            "it has no versions, history or table details; DESCRIBE and SHOW PARTS show "
            "its columns and files (adopt it with CREATE TABLE ... LOCATION for the rest)"
        )
    # The table's own time type, as a query of the reference reads it (Tables.resolve).
    timestamp_as = table_options.time_read_as(entry, found)
    match statement:
        case DescribeTable(extended=extended):
            answer = inspect.describe(
                found,
                extended=extended,
                name=entry.display_name,
                timestamp_as=timestamp_as,
                options=entry.options,
            )
        case DescribeHistory():
            answer = inspect.describe_history(found)
        case DescribeDetail():
            answer = inspect.describe_detail(
                found, name=entry.display_name, timestamp_as=timestamp_as, options=entry.options
            )
        case _:
            answer = inspect.show_parts(found)
    return tables.result(answer)
