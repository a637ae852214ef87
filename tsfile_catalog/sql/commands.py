"""The catalog's statements that change tables: CREATE, DROP, ALTER, INSERT.

One function per statement (or family), each taking the catalog's
:class:`~tsfile_catalog.sql.query.Tables` and the parsed statement and returning the answer
as a small DataFrame. The work itself is the table layer's verbs (:mod:`tsfile_catalog.table`)
and the registry's. A statement on a name Spark owns (a Spark table or view) is handed to Spark
unchanged. The statements that only read a table (DESCRIBE, SHOW) are
:mod:`tsfile_catalog.sql.describe`'s; OPTIMIZE, DELETE, VACUUM and friends are
:mod:`tsfile_catalog.sql.maintenance`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, cast

from pyspark.sql import DataFrame
from pyspark.sql import types as T
from sqlglot import exp

from tsfile_catalog.adopt import adopt_table
from tsfile_catalog.datasource.writer import plan_write
from tsfile_catalog.exceptions import (
    CorruptManifestError,
    SqlError,
    TableExistsError,
    TableNotFoundError,
)
from tsfile_catalog.inspect import Result
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.completeness import check_table_properties
from tsfile_catalog.metadata.expressions import TimeUnit
from tsfile_catalog.metadata.schema import TableSchema
from tsfile_catalog.metadata.spark.types import tsfile_type_of_sql
from tsfile_catalog.metadata.table_time import table_unit
from tsfile_catalog.options import parse_write_options, with_table_properties
from tsfile_catalog.sql import ddl, dml, table_options
from tsfile_catalog.sql.maintenance import rewrite_runner
from tsfile_catalog.sql.query import Tables, run
from tsfile_catalog.sql.registry import TableEntry, database_of
from tsfile_catalog.sql.statements import (
    AlterTableAddColumns,
    AlterTableAddPart,
    AlterTableAlterColumn,
    AlterTableChangeColumn,
    AlterTableDropColumns,
    AlterTableDropPart,
    AlterTableRename,
    AlterTableRenameColumn,
    AlterTableSetProperties,
    AlterTableUnsetProperties,
    AlterTableUnsupported,
    CreateTable,
    DropTable,
    Insert,
)
from tsfile_catalog.sql.write_distribution import cluster_for_write
from tsfile_catalog.table import (
    NewColumn,
    Table,
    add_columns,
    add_files,
    alter_column_type,
    create_table,
    drop_columns,
    drop_not_null,
    drop_parts,
    move_column,
    open_table,
    purge,
    rename_column,
    set_properties,
    unset_properties,
)
from tsfile_catalog.table.ownership import check_empty, check_location
from tsfile_catalog.table.rewrite import RewriteJob
from tsfile_catalog.write.replace_staging import REPLACE_STAGED, prestage_replace

__all__ = [
    "alter_parts",
    "alter_table",
    "create",
    "drop",
    "insert",
    "set_table_properties",
]

_VERSION = "version bigint"
_LOCATION = "location string"


def _version(tables: Tables, version: int) -> DataFrame:
    return tables.result(Result(_VERSION, [(version,)]))


# -- CREATE and DROP ----------------------------------------------------------------------------


def create(tables: Tables, statement: CreateTable, source: DataFrame | None = None) -> DataFrame:
    """CREATE TABLE: an empty table, one from a SELECT, or a table (or directory of TsFiles)
    already at LOCATION registered. ``source``: the rows of the AS query, when the caller
    ran it (by default the query runs with fresh scans of catalog tables)."""
    registry = tables.registry
    existing = registry.get(statement.table)
    if existing is not None:
        if statement.if_not_exists:
            return tables.result(Result(_LOCATION, [(existing.location,)]))
        raise TableExistsError(f"table {existing.display_name!r} already exists")
    given, properties = table_options.split_create_properties(
        statement.options, statement.properties, table=str(statement.table)
    )
    statement = replace(statement, properties=properties)
    options = table_options.check_table_options(given)
    # Properties are set with the rows (AS SELECT) or after the adoption commit: checked
    # first, so that a refused one leaves no table behind.
    check_table_properties(statement.properties)
    if statement.location is None:
        location = registry.default_location(statement.table)
    else:
        location = ddl.absolute_location(statement.location)
    # Every form, registering an existing table too: a table inside another (or in the
    # registry, or holding the warehouse) would share files with a second owner.
    registry.check_new(statement.table, location)
    storage = tables.storage(TableEntry("", "", location, options))
    io = FileIO(location, storage)
    check_location(io, location)
    if statement.columns is not None:
        options = _create_empty(statement, location, options, storage)
    elif statement.query is not None:
        options = _create_as_select(tables, statement, io, location, options, source)
    else:
        _adopt(statement, io, location, options)
    _options_of_table_time(statement, options, open_table(location, storage_options=storage))
    try:
        entry = registry.create(statement.table, location, options)
    except TableExistsError:
        if statement.if_not_exists:
            entry = registry.require(statement.table)
            return tables.result(Result(_LOCATION, [(entry.location,)]))
        raise
    tables.refresh_view(entry)
    return tables.result(Result(_LOCATION, [(entry.location,)]))


def _create_empty(
    statement: CreateTable, location: str, options: dict[str, str], storage: dict[str, Any]
) -> dict[str, str]:
    schema = ddl.new_table_schema(statement, options)
    table_options.check_encoding(options, schema)
    table = create_table(
        location,
        schema,
        properties=dict(statement.properties),
        # The table records its time itself: every writer and reader then uses it.
        # (None: what TBLPROPERTIES 'time.*' say, else ms read as BIGINT).
        unit=table_options.given_precision(TableEntry("", "", location, options)),
        timestamp_as=(
            table_options.timestamp_as(TableEntry("", "", location, options))
            if "timestampAs" in options
            else None
        ),
        storage_options=storage,
        exist_ok=statement.location is not None,
    )
    # A table that was already there (a version-0 one too) must match the columns.
    _register_existing(statement, table, schema, storage)
    return options


def _options_of_table_time(statement: CreateTable, options: dict[str, str], table: Table) -> None:
    """Complete the entry's ``options`` with the unit the table records (a table registered
    at its LOCATION is read in the unit it was written in), refusing a ``timestampPrecision``
    naming another unit. How ``time`` reads stays the entry's choice (``timestampAs``); a
    table registered as it is (no columns, no query) without one reads it as the table
    records it, as ``load(url)`` and its URL reference read it.

    Raises:
        OptionError: naming the option, the table and both units.
    """
    time = table.time
    if time is None:
        return  # a table from before times were recorded: read as the options say
    given = options.get("timestampPrecision")
    table_unit(
        table.properties,
        None if given is None else cast(TimeUnit, given.strip().lower()),
        table=statement.table.qualified,
        option="CREATE TABLE option 'timestampPrecision'",
    )
    if given is None and time.unit != "ms":  # no option stored means ms
        options["timestampPrecision"] = time.unit
    adopted = statement.columns is None and statement.query is None
    if adopted and "timestampAs" not in options and time.timestamp_as == "timestamp":
        options["timestampAs"] = time.timestamp_as  # none stored means long


def _register_existing(
    statement: CreateTable, table: Table, schema: TableSchema, storage: dict[str, Any]
) -> None:
    """``CREATE TABLE name (columns) LOCATION`` of a table already there (what SHOW
    CREATE TABLE prints): registered as it is when the columns match, as Delta does."""
    if table.schema.columns != schema.columns:
        there = table.schema
        raise TableExistsError(
            f"CREATE TABLE {statement.table}: the table at {table.location} has other "
            f"columns ({', '.join(there.names)}; TAGs {', '.join(there.tag_names)}) than "
            "declared; register it without a column list"
        )
    changed = {k: v for k, v in statement.properties.items() if table.properties.get(k) != v}
    if changed:
        set_properties(table.location, changed, storage_options=storage)


def _create_as_select(
    tables: Tables,
    statement: CreateTable,
    io: FileIO,
    location: str,
    options: dict[str, str],
    source: DataFrame | None,
) -> dict[str, str]:
    assert statement.query is not None
    name = statement.table.qualified
    storage = io.storage_options
    try:
        open_table(location, storage_options=storage)
    except TableNotFoundError:
        pass
    else:
        raise TableExistsError(
            f"CREATE TABLE {name} AS SELECT: a table already exists at {location}; use "
            f"CREATE TABLE {name} USING tsfile LOCATION '...' to register it"
        )
    check_empty(io, location)
    if source is None:
        source = run(tables, statement.query)
    ddl.as_select_options(name, options, source.schema)
    entry = TableEntry("", statement.table.name, location, options)
    write = tables.source_options(entry, table_options.write_options(entry, statement.table.name))
    clustered = cluster_for_write(
        source, ddl.tag_columns(options, name), keep_order=_keeps_duplicates_order(options)
    )
    # The properties are set by the write's own commit: the statement is one commit.
    write = with_table_properties(write, statement.properties)
    clustered.write.format("tsfile").options(**write).mode("append").save()
    return options


def _adopt(statement: CreateTable, io: FileIO, location: str, options: Mapping[str, str]) -> None:
    storage = io.storage_options
    try:
        table = open_table(location, storage_options=storage)
    except TableNotFoundError:
        if not io.isdir(location):
            raise TableNotFoundError(
                f"CREATE TABLE {statement.table.qualified} LOCATION {location!r}: there is "
                "no table and no directory of TsFiles there"
            ) from None
        table = adopt_table(
            location,
            storage_options=storage,
            check_schema=lambda schema: table_options.check_encoding(options, schema),
        )
    else:
        table_options.check_encoding(options, table.schema)
    if statement.properties:
        set_properties(location, statement.properties, storage_options=storage)


def drop(tables: Tables, statement: DropTable) -> DataFrame:
    """DROP TABLE [PURGE]: unregister the name (and delete the table's files with PURGE)."""
    registry = tables.registry
    schema = "location string, purged boolean"
    try:
        entry = registry.get(statement.table)
    except CorruptManifestError as e:
        return _drop_unreadable(tables, statement, e, schema)
    if entry is None and tables.spark_owns(statement.table):
        return tables.spark.sql(statement.to_sql())
    if entry is None:
        registry.check_warehouse()  # IF EXISTS must not pass over a warehouse that is not there
        if statement.if_exists:
            return tables.result(Result(schema, []))
        raise TableNotFoundError(
            f"table {statement.table.qualified!r} is not in the catalog at {registry.warehouse}"
        )
    if statement.purge:
        # Purge before unregistering: a failed purge leaves the name to retry with.
        others = registry.names_at(entry.location, besides=(entry.database, entry.name))
        if others:
            raise SqlError(
                f"DROP TABLE {entry.display_name} PURGE: its location {entry.location} is "
                f"also registered as {', '.join(others)}, whose data it is; drop without "
                "PURGE, or drop the other names first"
            )
        purge(entry.location, storage_options=tables.storage(entry))
    registry.drop(statement.table)
    tables.drop_view(entry)
    return tables.result(Result(schema, [(entry.location, statement.purge)]))


def _drop_unreadable(
    tables: Tables, statement: DropTable, error: CorruptManifestError, schema: str
) -> DataFrame:
    """DROP TABLE of a name whose entry cannot be read: the entry goes, and nothing else,
    since the location the table owns is what the entry no longer says."""
    if statement.purge:
        raise SqlError(
            f"DROP TABLE {statement.table} PURGE: {error}; without the entry the catalog cannot "
            "tell which files are the table's, so PURGE deletes nothing: drop without PURGE"
        ) from error
    tables.registry.drop(statement.table)
    name = statement.table
    tables.drop_view(TableEntry(database_of(name), name.name, ""))
    return tables.result(Result(schema, [(None, False)]))


# -- ALTER TABLE --------------------------------------------------------------------------------


def set_table_properties(tables: Tables, statement: AlterTableSetProperties) -> DataFrame:
    """SET TBLPROPERTIES: one commit. ``time.unit`` (declaring the time of a table from
    before it was recorded) must be the unit the catalog reads the table in.

    Raises:
        OptionError: ``time.unit`` names another unit than the entry's ``timestampPrecision``.
        SqlError: a key is one of the table's options (``tagColumns``, ``compression``, …),
            fixed when the table was created: stored as a property it would change nothing.
    """
    entry = tables.registry.require(statement.table)
    table_options.check_settable_properties(entry, statement.properties)
    version = set_properties(
        entry.location, statement.properties, storage_options=tables.storage(entry)
    )
    tables.refresh_view(entry)
    return _version(tables, version)


def unset_table_properties(tables: Tables, statement: AlterTableUnsetProperties) -> DataFrame:
    """UNSET TBLPROPERTIES: one commit removing the table's properties (absent keys ignored,
    as Spark 4 does); the table options its catalog entry holds are refused by name."""
    if tables.spark_owns(statement.table):
        return tables.spark.sql(statement.to_sql())
    entry = tables.registry.require(statement.table)
    table_options.check_unsettable_properties(entry, statement.keys)
    version = unset_properties(
        entry.location, statement.keys, storage_options=tables.storage(entry)
    )
    tables.refresh_view(entry)
    return _version(tables, version)


def alter_parts(tables: Tables, statement: AlterTableAddPart | AlterTableDropPart) -> DataFrame:
    """ADD PART / DROP PART: one manifest commit through the table layer; the new
    version is the answer."""
    entry = tables.registry.require(statement.table)
    storage = tables.storage(entry)
    if isinstance(statement, AlterTableDropPart):
        version = drop_parts(entry.location, statement.pattern, storage_options=storage)
    else:
        options = dict(statement.options)
        keys = {k.lower(): k for k in options}
        if "timestampprecision" not in keys:
            # TIMESTAMP/DATE times become raw values in the unit the table is read with.
            options["timestampPrecision"] = table_options.precision(entry)
        path = options.pop(keys.get("path", "path"), "")
        fmt = options.pop(keys.get("format", "format"), "")
        version = add_files(
            entry.location, path, format=fmt, options=options, storage_options=storage
        )
    tables.refresh_view(entry)
    return _version(tables, version)


def alter_table(
    tables: Tables,
    statement: AlterTableAddColumns
    | AlterTableAlterColumn
    | AlterTableRename
    | AlterTableRenameColumn
    | AlterTableDropColumns
    | AlterTableChangeColumn
    | AlterTableUnsupported,
) -> DataFrame:
    """ALTER TABLE ADD / RENAME / DROP COLUMN(S), ALTER COLUMN TYPE / FIRST / AFTER / DROP
    NOT NULL, RENAME TO (the rest is refused)."""
    if tables.spark_owns(statement.table):
        return tables.spark.sql(statement.to_sql())
    entry = tables.registry.require(statement.table)
    storage = tables.storage(entry)
    if isinstance(statement, AlterTableUnsupported):
        raise SqlError(statement.reason)
    if isinstance(statement, AlterTableRename):
        renamed = tables.registry.rename(statement.table, statement.new_name)
        tables.drop_view(entry)
        tables.refresh_view(renamed)
        return tables.result(
            Result("table string, location string", [(renamed.display_name, entry.location)])
        )
    if isinstance(statement, AlterTableAddColumns):
        columns = [
            NewColumn(
                c.name,
                tsfile_type_of_sql(c.data_type),
                after=None if place is None else place.after,
                first=place is not None and place.after is None,
            )
            for c, place in statement.placed()
        ]
        version = add_columns(entry.location, columns, storage_options=storage)
    elif isinstance(statement, AlterTableRenameColumn):
        version = rename_column(
            entry.location, statement.column, statement.new_name, storage_options=storage
        )
    elif isinstance(statement, AlterTableDropColumns):
        version = drop_columns(
            entry.location,
            statement.columns,
            if_exists=statement.if_exists,
            storage_options=storage,
        )
    elif isinstance(statement, AlterTableChangeColumn):
        if statement.drop_not_null:
            version = drop_not_null(entry.location, statement.column, storage_options=storage)
        else:
            version = move_column(
                entry.location, statement.column, after=statement.after, storage_options=storage
            )
    else:
        column = statement.column
        version = alter_column_type(
            entry.location,
            column.name,
            tsfile_type_of_sql(column.data_type),
            storage_options=storage,
        )
    tables.refresh_view(entry)
    return _version(tables, version)


# -- INSERT -------------------------------------------------------------------------------------


def insert(tables: Tables, statement: Insert, source: DataFrame | None = None) -> DataFrame:
    """INSERT [OVERWRITE] [REPLACE WHERE] into a catalog table, or into a Spark table from
    a query that reads catalog tables. ``source``: the rows of the statement's query, when
    the caller ran it (by default the query runs with fresh scans of catalog tables)."""
    if tables.spark_owns(statement.table):
        if source is None:
            source = _source(tables, statement)
        return _insert_into_spark(tables, statement, source)
    entry = tables.registry.require(statement.table)
    if source is None:
        source = _source(tables, statement)
    table = tables.open(entry)
    schema = table.schema
    rows = dml.insert_rows(statement, source, schema, entry)
    write = tables.source_options(entry, table_options.write_options(entry, schema.table))
    mode = "overwrite" if statement.overwrite else "append"
    if statement.replace_where is not None:
        mode = "overwrite"
        write["replaceWhere"] = statement.replace_where
        zone = tables.session_time_zone()
        if zone is not None:
            write["timeZone"] = zone
    clustered = cluster_for_write(
        rows, schema.tag_names, keep_order=_keeps_duplicates_order(entry.options)
    )
    if statement.replace_where is None:
        clustered.write.format("tsfile").options(**write).mode(mode).save()
    else:
        _replace(tables, table, clustered, write)
    latest = tables.open(entry)
    info = latest.history(limit=1)[0]
    inserted = info.rows_added
    if "numDeletedRows" in info.operation_parameters:
        # A replaceWhere commit also re-adds the rows its rewritten parts kept.
        kept = info.rows_removed - int(info.operation_parameters["numDeletedRows"])
        inserted -= kept
    tables.refresh_view(entry)
    return tables.result(
        Result("version bigint, num_inserted_rows bigint", [(latest.version, inserted)])
    )


def _replace(tables: Tables, table: Table, rows: DataFrame, write: dict[str, str]) -> None:
    """A replaceWhere overwrite of ``table`` with ``rows``: its straddling parts rewritten
    first, in Spark tasks (unless distributed rewrites are off), and taken by the write's
    commit (:mod:`~tsfile_catalog.write.replace_staging`); the pre-staging job's folder goes
    whatever the write did."""
    runner = rewrite_runner(tables)
    writer = rows.write.format("tsfile").options(**write).mode("overwrite")
    if runner is None:
        writer.save()
        return
    options = parse_write_options(write)
    with RewriteJob(table, options.settings()) as job:
        if prestage_replace(job, plan_write(rows.schema, options), options, runner) is not None:
            writer = writer.option(REPLACE_STAGED, job.job)
        writer.save()


def _keeps_duplicates_order(options: Mapping[str, str]) -> bool:
    """Whether the table's ``onDuplicate=last`` makes the rows' order part of the answer."""
    return table_options.write_settings(options).on_duplicate == "last"


def _source(tables: Tables, statement: Insert) -> DataFrame:
    if isinstance(statement.query, exp.Query):
        return run(tables, statement.query)
    return tables.spark.sql(statement.query_sql)


def _insert_into_spark(tables: Tables, statement: Insert, source: DataFrame) -> DataFrame:
    """INSERT into a Spark table: the source still reads catalog tables with fresh scans."""
    if statement.replace_where is not None:
        raise SqlError(
            f"INSERT INTO {statement.table} REPLACE WHERE: only catalog tables support "
            "REPLACE WHERE"
        )
    if statement.columns is not None:
        raise SqlError(
            f"INSERT INTO {statement.table} ({', '.join(statement.columns)}): a column list "
            "is only supported for catalog tables; select the columns in table order instead"
        )
    source.write.insertInto(statement.table.qualified, overwrite=statement.overwrite)
    return tables.spark.createDataFrame([], T.StructType([]))
