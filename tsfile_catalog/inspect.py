"""What a table's metadata answers: DESCRIBE, DESCRIBE HISTORY, DESCRIBE DETAIL, SHOW PARTS
and EXPLAIN PARTS results, computed from a :class:`~tsfile_catalog.table.Table` alone.

Each builder returns a :class:`Result`, a Spark DDL schema string and plain Python rows, so
SQL (:mod:`tsfile_catalog.sql.catalog` wraps it in a DataFrame), a CLI and Python callers share
one answer. Nothing here imports pyspark or the sql package: what a catalog's registry entry
adds (the name users know the table by, its ``timestampAs`` read option, its stored options)
is passed in as keywords. Stored options are shown with credentials redacted.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tsfile_catalog.metadata.manifest import FORMAT_VERSION
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.scan import ScanPlan
from tsfile_catalog.metadata.schema import TIME_COLUMN, TableSchema
from tsfile_catalog.metadata.spark_dialect import quote_identifier
from tsfile_catalog.metadata.spark_types import spark_type, spark_type_of
from tsfile_catalog.storage_options import redact_credentials
from tsfile_catalog.table import DeleteResult, OptimizeResult, Table

__all__ = [
    "EXPLAIN_SCHEMA",
    "Result",
    "describe",
    "describe_detail",
    "describe_history",
    "explain_rows",
    "show_parts",
    "optimize_result",
    "delete_result",
]


@dataclass(frozen=True)
class Result:
    """A command's answer: ``schema`` is Spark DDL (``a string, b bigint``)."""

    schema: str
    rows: list[tuple[Any, ...]]


def _iso(ms: int | None) -> dt.datetime | None:
    if ms is None:
        return None
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc)


def _time_range(parts: Sequence[PartFile]) -> tuple[int | None, int | None]:
    mins = [p.min_time for p in parts if p.min_time is not None and p.row_count]
    maxs = [p.max_time for p in parts if p.max_time is not None and p.row_count]
    return (min(mins) if mins else None, max(maxs) if maxs else None)


def _num_devices(parts: Sequence[PartFile]) -> int | None:
    devices: set[tuple[str | None, ...]] = set()
    for part in parts:
        if part.devices is None:
            return None
        devices.update(device.tags for device in part.devices)
    return len(devices)


def _ddl(schema: TableSchema, timestamp_as: str) -> str:
    return ", ".join(
        f"{quote_identifier(name)} {spark_type_of(name, schema, timestamp_as=timestamp_as)}"
        for name in schema.names
    )


def _map_text(values: Mapping[str, str]) -> str:
    return "[" + ", ".join(f"{k}={v}" for k, v in sorted(values.items())) + "]"


def describe(
    table: Table,
    *,
    extended: bool = False,
    name: str,
    timestamp_as: str = "long",
    options: Mapping[str, str] | None = None,
) -> Result:
    """``DESCRIBE [EXTENDED]``: one row per column (``time`` first), then table details.

    Args:
        table: the table at the version to describe.
        extended: add the detailed table information rows.
        name: the name shown for the table.
        timestamp_as: the ``timestampAs`` read option, which decides the Spark type shown for
            ``time`` and TIMESTAMP columns.
        options: the stored options to show (credentials are redacted).
    """
    schema = table.schema
    rows: list[tuple[Any, ...]] = [
        (TIME_COLUMN, spark_type(None, timestamp_as=timestamp_as), "TIME")
    ]
    rows.extend(
        (c.name, spark_type(c, timestamp_as=timestamp_as), c.category.value) for c in schema.columns
    )
    if extended:
        parts = table.parts()
        lo, hi = _time_range(parts)
        details: list[tuple[str, Any]] = [
            ("Name", name),
            ("TsFile table", schema.table),
            ("Location", table.location),
            ("Provider", "tsfile"),
            ("Format version", FORMAT_VERSION),
            ("Current version", table.version),
            ("Last commit", _iso(table.timestamp_ms)),
            ("Parts", len(parts)),
            ("Rows", sum(p.row_count for p in parts)),
            ("Size in bytes", sum(p.size_bytes for p in parts)),
            ("Min time", lo),
            ("Max time", hi),
            ("Table properties", _map_text(table.properties)),
            ("Options", _map_text(redact_credentials(options or {}))),
        ]
        rows.append(("", "", ""))
        rows.append(("# Detailed Table Information", "", ""))
        rows.extend((key, "" if value is None else str(value), "") for key, value in details)
    return Result("col_name string, data_type string, category string", rows)


def describe_history(table: Table) -> Result:
    """``DESCRIBE HISTORY``: one row per commit, newest first."""
    rows = [
        (
            info.version,
            _iso(info.timestamp_ms),
            info.operation,
            dict(info.operation_parameters),
            info.read_version,
            info.parts_added,
            info.rows_added,
            info.parts_removed,
            info.rows_removed,
            info.engine_info,
        )
        for info in table.history()
    ]
    return Result(
        "version bigint, timestamp timestamp, operation string, "
        "operation_parameters map<string,string>, read_version bigint, parts_added bigint, "
        "rows_added bigint, parts_removed bigint, rows_removed bigint, engine_info string",
        rows,
    )


def describe_detail(
    table: Table,
    *,
    name: str,
    timestamp_as: str = "long",
    options: Mapping[str, str] | None = None,
) -> Result:
    """``DESCRIBE DETAIL``: one row summarising the current version.

    Keywords as for :func:`describe`.
    """
    parts = table.parts()
    lo, hi = _time_range(parts)
    row = (
        "tsfile",
        name,
        table.schema.table,
        table.location,
        table.table_uuid,
        FORMAT_VERSION,
        table.version,
        _iso(table.timestamp_ms),
        len(parts),
        sum(p.row_count for p in parts),
        sum(p.size_bytes for p in parts),
        lo,
        hi,
        _num_devices(parts),
        list(table.schema.tag_names),
        _ddl(table.schema, timestamp_as),
        dict(table.properties),
        redact_credentials(options or {}),
    )
    return Result(
        "format string, name string, tsfile_table string, location string, table_uuid string, "
        "format_version int, version bigint, last_modified timestamp, num_parts bigint, "
        "num_rows bigint, size_in_bytes bigint, min_time bigint, max_time bigint, "
        "num_devices bigint, tag_columns array<string>, schema string, "
        "properties map<string,string>, options map<string,string>",
        [row],
    )


def show_parts(table: Table) -> Result:
    """``SHOW PARTS``: one row per live part of the version, in manifest order."""
    rows = [
        (
            p.path,
            p.format,
            p.external,
            p.row_count,
            p.min_time,
            p.max_time,
            len(p.devices) if p.devices is not None else None,
            p.size_bytes,
            p.added_version,
        )
        for p in table.parts()
    ]
    return Result(
        "path string, format string, external boolean, rows bigint, min_time bigint, "
        "max_time bigint, devices int, size_bytes bigint, added_version bigint",
        rows,
    )


EXPLAIN_SCHEMA = (
    "ref int, table string, alias string, version bigint, part string, status string, "
    "rows bigint, min_time bigint, max_time bigint, columns string, pushed_where string"
)


def explain_rows(
    index: int,
    name: str,
    alias: str | None,
    table: Table,
    plan: ScanPlan,
    columns: Sequence[str] | None,
    where: str | None,
) -> list[tuple[Any, ...]]:
    """``EXPLAIN PARTS`` rows (:data:`EXPLAIN_SCHEMA`) for one table reference: one per part,
    ``opened`` or ``pruned`` by ``plan``."""
    shown_columns = "*" if columns is None else ",".join(columns)
    rows = []
    for status, parts in (("opened", plan.parts), ("pruned", plan.pruned)):
        for part in parts:
            rows.append(
                (
                    index,
                    name,
                    alias,
                    table.version,
                    part.path,
                    status,
                    part.row_count,
                    part.min_time,
                    part.max_time,
                    shown_columns,
                    where,
                )
            )
    return rows


# -- OPTIMIZE / DELETE (issue 13) -------------------------------------------------------------


def optimize_result(result: OptimizeResult) -> Result:
    """OPTIMIZE's one row: the version it committed (null when nothing needed compacting),
    files removed and added, and their bytes (Delta reports the same metrics)."""
    return Result(
        "version bigint, num_files_removed bigint, num_files_added bigint, "
        "bytes_removed bigint, bytes_added bigint",
        [
            (
                result.version,
                result.files_removed,
                result.files_added,
                result.bytes_removed,
                result.bytes_added,
            )
        ],
    )


def delete_result(result: DeleteResult) -> Result:
    """DELETE's one row: the version it committed (null when no row matched), the rows
    deleted, and the parts removed in metadata only or rewritten."""
    return Result(
        "version bigint, num_deleted_rows bigint, num_files_removed bigint, "
        "num_files_added bigint, num_files_dropped bigint, num_files_rewritten bigint",
        [
            (
                result.version,
                result.num_deleted_rows,
                result.files_removed,
                result.files_added,
                result.files_dropped,
                result.files_rewritten,
            )
        ],
    )
