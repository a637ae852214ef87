"""What the catalog's own statements answer, computed from table metadata alone.

Each function turns a :class:`~tsfile_catalog.table.Table` (and its registry entry) into a
:class:`Result`: a Spark DDL schema string and plain Python rows. The executor
(:mod:`tsfile_catalog.sql.catalog`) only wraps them in a DataFrame, so everything here runs
without Spark. Table options (what ``OPTIONS (...)`` may hold and which of them reach scans
and writes) are decided here too.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from tsfile_catalog.datasource.options import storage_options_from
from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.metadata.expressions import INT64_MAX, INT64_MIN, TimestampAs, TimeUnit
from tsfile_catalog.metadata.manifest import FORMAT_VERSION, CommitInfo
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.scan import ScanPlan
from tsfile_catalog.metadata.schema import TIME_COLUMN, Column, DataType, TableSchema
from tsfile_catalog.sql.registry import TableEntry
from tsfile_catalog.sql.statements import quote_identifier
from tsfile_catalog.table import Table

__all__ = [
    "Result",
    "TABLE_OPTIONS",
    "check_table_options",
    "read_options",
    "write_options",
    "storage_options",
    "timestamp_as",
    "precision",
    "spark_type",
    "spark_type_of",
    "describe",
    "describe_history",
    "describe_detail",
    "show_tables",
    "show_parts",
    "metadata_count",
    "explain_rows",
    "EXPLAIN_SCHEMA",
]

# -- table options -----------------------------------------------------------------------------

_READ_ONLY = ("timestampAs", "mergeSchema", "rowsPerPartition", "useMetadataCache")
_WRITE_ONLY = ("tagColumns", "compression", "encoding", "maxRowsPerFile", "onDuplicate")
_BOTH = ("timestampPrecision",)
TABLE_OPTIONS: tuple[str, ...] = (*_READ_ONLY, *_WRITE_ONLY, *_BOTH)
"""Options ``CREATE TABLE ... OPTIONS (...)`` accepts (case-insensitive), plus ``fs.*``."""

_STORAGE_PREFIX = "fs."
# Per-query read options and per-write layout the catalog itself decides.
_PER_QUERY = ("path", "table", "columns", "where", "versionAsOf", "timestampAsOf", "timeColumn",
              "fieldColumns", "model", "pushFilters", "pushdown", "nullTagPolicy")


@dataclass(frozen=True)
class Result:
    """A command's answer: ``schema`` is Spark DDL (``a string, b bigint``)."""

    schema: str
    rows: list[tuple[Any, ...]]


def check_table_options(options: Mapping[str, str]) -> dict[str, str]:
    """The options with canonical key spelling.

    Raises:
        OptionError: an unknown option, or one the catalog sets per query.
    """
    canonical = {key.lower(): key for key in TABLE_OPTIONS}
    managed = {key.lower() for key in _PER_QUERY}
    out: dict[str, str] = {}
    for key, value in options.items():
        lowered = key.lower()
        if lowered.startswith(_STORAGE_PREFIX) and len(lowered) > len(_STORAGE_PREFIX):
            out[_STORAGE_PREFIX + key[len(_STORAGE_PREFIX):]] = value
        elif lowered in canonical:
            out[canonical[lowered]] = value
        elif lowered in managed:
            raise OptionError(
                f"table option {key!r} cannot be stored with a table: the catalog sets it for "
                "each query or write (use WHERE, VERSION AS OF, a column list, ...)"
            )
        else:
            raise OptionError(
                f"unknown table option {key!r}; valid options are: {', '.join(TABLE_OPTIONS)} "
                f"(and '{_STORAGE_PREFIX}<name>' for file-system settings)"
            )
    if "timestampAs" in out and out["timestampAs"].strip().lower() not in ("long", "timestamp"):
        raise OptionError(
            f"table option 'timestampAs' = {out['timestampAs']!r}: use 'long' or 'timestamp'"
        )
    if "timestampPrecision" in out and out["timestampPrecision"].strip().lower() not in (
        "ms", "us", "ns"
    ):
        raise OptionError(
            f"table option 'timestampPrecision' = {out['timestampPrecision']!r}: use ms, us "
            "or ns"
        )
    return out


def _select(options: Mapping[str, str], keys: Iterable[str]) -> dict[str, str]:
    wanted = set(keys)
    return {
        k: v for k, v in options.items() if k in wanted or k.startswith(_STORAGE_PREFIX)
    }


def read_options(entry: TableEntry) -> dict[str, str]:
    """The stored options a scan of ``entry`` passes to the data source."""
    return _select(entry.options, (*_READ_ONLY, *_BOTH))


def write_options(entry: TableEntry, tsfile_table: str) -> dict[str, str]:
    """The options a write into ``entry`` (TsFile table ``tsfile_table``) passes to the data
    source."""
    out = _select(entry.options, (*_WRITE_ONLY, *_BOTH))
    out["table"] = tsfile_table
    return out


def storage_options(entry: TableEntry) -> dict[str, Any]:
    """``fs.*`` options as fsspec storage options, decoded exactly as the source does."""
    return storage_options_from(entry.options)


def timestamp_as(entry: TableEntry) -> TimestampAs:
    return cast(TimestampAs, entry.options.get("timestampAs", "long").strip().lower())


def precision(entry: TableEntry) -> TimeUnit:
    return cast(TimeUnit, entry.options.get("timestampPrecision", "ms").strip().lower())


# -- types -------------------------------------------------------------------------------------

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


def tsfile_type_of_sql(sql_type: str) -> DataType:
    """The TsFile type a ``CREATE TABLE`` column type (as the parser spells it) maps to."""
    return _TSFILE_TYPE_OF_SQL[sql_type]


def spark_type(column: Column | None, entry: TableEntry) -> str:
    """The Spark SQL type a scan of ``entry`` returns for ``column`` (None: the time column)."""
    as_timestamp = timestamp_as(entry) == "timestamp"
    if column is None or column.type is DataType.TIMESTAMP:
        return "timestamp" if as_timestamp else "bigint"
    return _SPARK_TYPE_NAMES[column.type]


def spark_type_of(name: str, schema: TableSchema, entry: TableEntry) -> str:
    return spark_type(None if name == TIME_COLUMN else schema.column(name), entry)


# -- DESCRIBE ----------------------------------------------------------------------------------


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


def _ddl(schema: TableSchema, entry: TableEntry) -> str:
    return ", ".join(
        f"{quote_identifier(name)} {spark_type_of(name, schema, entry)}" for name in schema.names
    )


def describe(entry: TableEntry, table: Table, *, extended: bool) -> Result:
    """``DESCRIBE [EXTENDED]``: one row per column (``time`` first), then table details."""
    schema = table.schema
    rows: list[tuple[Any, ...]] = [(TIME_COLUMN, spark_type(None, entry), "TIME")]
    rows.extend((c.name, spark_type(c, entry), c.category.value) for c in schema.columns)
    if extended:
        parts = table.parts()
        lo, hi = _time_range(parts)
        details: list[tuple[str, Any]] = [
            ("Name", entry.display_name),
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
            ("Options", _map_text(entry.options)),
        ]
        rows.append(("", "", ""))
        rows.append(("# Detailed Table Information", "", ""))
        rows.extend((key, "" if value is None else str(value), "") for key, value in details)
    return Result("col_name string, data_type string, category string", rows)


def _map_text(values: Mapping[str, str]) -> str:
    return "[" + ", ".join(f"{k}={v}" for k, v in sorted(values.items())) + "]"


def describe_history(history: Sequence[CommitInfo]) -> Result:
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
        for info in history
    ]
    return Result(
        "version bigint, timestamp timestamp, operation string, "
        "operation_parameters map<string,string>, read_version bigint, parts_added bigint, "
        "rows_added bigint, parts_removed bigint, rows_removed bigint, engine_info string",
        rows,
    )


def describe_detail(entry: TableEntry, table: Table) -> Result:
    """``DESCRIBE DETAIL``: one row summarising the current version."""
    parts = table.parts()
    lo, hi = _time_range(parts)
    row = (
        "tsfile",
        entry.display_name,
        table.schema.table,
        table.location,
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
        _ddl(table.schema, entry),
        dict(table.properties),
        dict(entry.options),
    )
    return Result(
        "format string, name string, tsfile_table string, location string, "
        "format_version int, version bigint, last_modified timestamp, num_parts bigint, "
        "num_rows bigint, size_in_bytes bigint, min_time bigint, max_time bigint, "
        "num_devices bigint, tag_columns array<string>, schema string, "
        "properties map<string,string>, options map<string,string>",
        [row],
    )


def show_tables(entries: Sequence[TableEntry]) -> Result:
    rows = [(e.database, e.name, e.location) for e in entries]
    return Result("namespace string, tableName string, location string", rows)


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


# -- metadata-only count -----------------------------------------------------------------------


def metadata_count(plan: ScanPlan) -> int | None:
    """The exact number of rows a scan with ``plan``'s predicate returns, from statistics
    alone, or None when statistics cannot tell (then the caller must scan).

    Exact when nothing is left for row-level evaluation (no residual) and, for each part the
    plan keeps, the pushed time range and TAG sets either hold for every row of the part or,
    device by device, hold for all or none of a device's rows.
    """
    pushdown = plan.pushdown
    if pushdown.residual is not None:
        return None
    if pushdown.empty:
        return 0
    lo, hi = pushdown.time_min, pushdown.time_max
    unbounded = lo == INT64_MIN and hi == INT64_MAX
    tag_sets = pushdown.tag_dict()
    tag_index = {name: i for i, name in enumerate(plan.schema.tag_names)}
    total = 0
    for part in plan.parts:
        if not part.row_count:
            continue
        if not tag_sets and (unbounded or _inside(part.min_time, part.max_time, lo, hi)):
            total += part.row_count
            continue
        if part.devices is None:
            return None
        for device in part.devices:
            if any(device.tags[tag_index[t]] not in values for t, values in tag_sets.items()):
                continue
            if device.max_time < lo or device.min_time > hi:
                continue
            if lo <= device.min_time and device.max_time <= hi:
                total += device.row_count
                continue
            return None
    return total


def _inside(part_min: int | None, part_max: int | None, lo: int, hi: int) -> bool:
    return part_min is not None and part_max is not None and lo <= part_min and part_max <= hi


# -- EXPLAIN PARTS -----------------------------------------------------------------------------

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
    """One row per part of one table reference: ``opened`` or ``pruned``."""
    shown_columns = "*" if columns is None else ",".join(columns)
    rows = []
    for status, parts in (("opened", plan.parts), ("pruned", plan.pruned)):
        for part in parts:
            rows.append(
                (index, name, alias, table.version, part.path, status, part.row_count,
                 part.min_time, part.max_time, shown_columns, where)
            )
    return rows
