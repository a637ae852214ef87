"""The catalog's maintenance statements: OPTIMIZE, DELETE, VACUUM, EXPIRE SNAPSHOTS, RESTORE.

As :mod:`tsfile_catalog.sql.commands`, one function per statement, taking the catalog's
:class:`~tsfile_catalog.sql.query.Tables` and the parsed statement and answering with a small
DataFrame; the work is the table layer's verbs. :func:`rewrite_args` is how every rewrite
(OPTIMIZE, DELETE, UPDATE, MERGE) writes and binds for a registered table, and
:func:`rewrite_runner` where its parts are rewritten (and :func:`new_rows_of` where an
UPDATE's or MERGE's new rows are staged).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame

from tsfile_catalog import inspect
from tsfile_catalog.datasource.rewrite_tasks import FrameRows, SparkTasks, distributed_rewrites
from tsfile_catalog.metadata.schema import TableSchema
from tsfile_catalog.options import WriteOptions, parse_write_options
from tsfile_catalog.sql import table_options
from tsfile_catalog.sql.query import Tables
from tsfile_catalog.sql.registry import TableEntry
from tsfile_catalog.sql.statements import (
    Delete,
    ExpireSnapshots,
    Optimize,
    RestoreTable,
    TimestampAsOf,
    Vacuum,
    VersionAsOf,
)
from tsfile_catalog.table import delete, expire_snapshots, optimize, restore, vacuum_table
from tsfile_catalog.write.arrow import raw_table

__all__ = [
    "RETENTION_CHECK",
    "delete_rows",
    "expire",
    "new_rows_of",
    "optimize_table",
    "restore_table",
    "rewrite_args",
    "rewrite_runner",
    "vacuum",
]

# Delta's spark.databricks.delta.retentionDurationCheck.enabled: "false" lets VACUUM use a
# retention below a table's deletedFileRetention.
RETENTION_CHECK = "spark.tsfile.retentionDurationCheck.enabled"


def rewrite_args(tables: Tables, entry: TableEntry) -> dict[str, Any]:
    """How OPTIMIZE and DELETE write and bind for ``entry``: its stored write options
    (compression, encoding), its scan's time unit and ``timestampAs``, the session time
    zone (the opened table carries its storage options)."""
    write = _write_options(entry)
    return {
        "settings": write.settings(),
        "unit": table_options.precision(entry),
        "timestamp_as": table_options.timestamp_as(entry),
        "time_zone": tables.session_time_zone(),
    }


def _write_options(entry: TableEntry) -> WriteOptions:
    return parse_write_options({**table_options.write_options(entry, "-"), "path": entry.location})


def new_rows_of(
    tables: Tables, entry: TableEntry, frame: DataFrame, schema: TableSchema, *, clustered: bool
) -> pa.Table | FrameRows:
    """The new rows an UPDATE or MERGE computed in ``frame`` (a column per table column),
    as its commit stages them: in Spark's tasks, parts of at most the table's
    ``maxRowsPerFile`` rows (:class:`FrameRows`, ``clustered`` by key first: what a ``last``
    table's rows need when they may repeat a key), unless distributed rewrites are off;
    then collected here (raw domain)."""
    unit = table_options.precision(entry)
    if rewrite_runner(tables) is None:
        return raw_table(frame.toArrow(), schema, unit)
    return FrameRows(frame, unit, _write_options(entry).max_rows_per_file, clustered)


def rewrite_runner(tables: Tables) -> SparkTasks | None:
    """Where a rewrite's groups or parts run: as Spark tasks, each staging its parts, unless
    switched off (then in this process); this process commits once either way."""
    return SparkTasks(tables.spark) if distributed_rewrites(tables.spark) else None


def optimize_table(tables: Tables, statement: Optimize) -> DataFrame:
    entry = tables.registry.require(statement.table)
    done = optimize(
        tables.open(entry),
        where=statement.where,
        runner=rewrite_runner(tables),
        **rewrite_args(tables, entry),
    )
    tables.refresh_view(entry)
    return tables.result(inspect.optimize_result(done))


def delete_rows(tables: Tables, statement: Delete) -> DataFrame:
    """DELETE FROM a catalog table (a Spark table's is Spark's)."""
    if tables.spark_owns(statement.table):
        return tables.spark.sql(statement.to_sql())
    entry = tables.registry.require(statement.table)
    removed = delete(
        tables.open(entry),
        statement.where,
        predicate=statement.history_predicate,
        runner=rewrite_runner(tables),
        **rewrite_args(tables, entry),
    )
    tables.refresh_view(entry)
    return tables.result(inspect.delete_result(removed))


def vacuum(tables: Tables, statement: Vacuum) -> DataFrame:
    entry = tables.registry.require(statement.table)
    hours = statement.retain_hours
    check = str(tables.spark.conf.get(RETENTION_CHECK, "true")).strip().lower() != "false"
    vacuumed = vacuum_table(
        entry.location,
        dry_run=statement.dry_run,
        retention_ms=None if hours is None else round(hours * 3_600_000),
        retention_check=check,
        storage_options=tables.storage(entry),
    )
    return tables.result(inspect.vacuum_result(vacuumed))


def expire(tables: Tables, statement: ExpireSnapshots) -> DataFrame:
    entry = tables.registry.require(statement.table)
    hours = statement.retain_hours
    expired = expire_snapshots(
        entry.location,
        older_than=statement.older_than,
        retention_ms=None if hours is None else round(hours * 3_600_000),
        retain_last=statement.retain_last,
        time_zone=tables.session_time_zone(),
        storage_options=tables.storage(entry),
    )
    return tables.result(inspect.expire_result(expired))


def restore_table(tables: Tables, statement: RestoreTable) -> DataFrame:
    entry = tables.registry.require(statement.table)
    travel = statement.time_travel
    restore(
        entry.location,
        version=travel.version if isinstance(travel, VersionAsOf) else None,
        timestamp=tables.as_of_ms(travel) if isinstance(travel, TimestampAsOf) else None,
        storage_options=tables.storage(entry),
    )
    tables.refresh_view(entry)
    return tables.result(inspect.restore_result(tables.open(entry)))
