"""What a table's metadata answers: DESCRIBE, DESCRIBE HISTORY, DESCRIBE DETAIL, SHOW PARTS
and EXPLAIN PARTS results, computed from a :class:`~tsfile_catalog.table.Table` alone.

Each builder returns a :class:`Result`, a Spark DDL schema string and plain Python rows, so
SQL (:mod:`tsfile_catalog.sql.catalog` wraps it in a DataFrame), a CLI and Python callers share
one answer. Nothing here imports pyspark or the sql package: what a catalog's registry entry
adds (the name users know the table by, its ``timestampAs`` read option, its stored options)
is passed in as keywords. Stored options, table properties and the history's parameters are
shown with credentials redacted.

A timeline of the parts is computed in :mod:`tsfile_catalog.timeline` (its names are
re-exported here, where ``inspect.timeline`` has always been) and its rows are
:func:`timeline_result`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from tsfile_catalog.metadata.key import key_mode, merge_groups, merged_slices_by_part
from tsfile_catalog.metadata.manifest import written_format_version
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.scan import ScanPlan
from tsfile_catalog.metadata.schema import TIME_COLUMN, TableSchema
from tsfile_catalog.metadata.spark.quoting import quote_identifier
from tsfile_catalog.metadata.spark.types import spark_type, spark_type_of
from tsfile_catalog.storage_options import redact_credentials, redact_parameters
from tsfile_catalog.table import DeleteResult, OptimizeResult, Table
from tsfile_catalog.table.expire import Expired
from tsfile_catalog.table.vacuum import Vacuumed
from tsfile_catalog.timeline import DEVICE, Timeline, TimelineBar, timeline

if TYPE_CHECKING:
    # Only annotations: the read path imports the TsFile reader (pyarrow), which the
    # metadata answers built from a Table never need.
    from tsfile_catalog.exec.source import ResolvedScan

__all__ = [
    "EXPLAIN_SCHEMA",
    "Result",
    "DEVICE",
    "Timeline",
    "TimelineBar",
    "describe",
    "describe_detail",
    "describe_files",
    "describe_history",
    "explain_rows",
    "planned_parts",
    "merge_labels",
    "show_parts",
    "table_summary",
    "timeline",
    "timeline_result",
    "vacuum_result",
    "parts_by_format",
    "show_file_parts",
    "expire_result",
    "restore_result",
    "show_create_table",
    "optimize_result",
    "delete_result",
    "DELETE_SCHEMA",
    "MERGE_SCHEMA",
    "UPDATE_SCHEMA",
]


@dataclass(frozen=True)
class Result:
    """A command's answer: ``schema`` is Spark DDL (``a string, b bigint``)."""

    schema: str
    rows: list[tuple[Any, ...]]

    @property
    def column_names(self) -> list[str]:
        """The column names of :attr:`schema` (top-level commas only: ``map<string,string>``
        and friends hold commas of their own)."""
        names, depth, start = [], 0, 0
        for i, char in enumerate(self.schema + ","):
            if char in "<(":
                depth += 1
            elif char in ">)":
                depth -= 1
            elif char == "," and depth == 0:
                names.append(self.schema[start:i].strip().split(" ", 1)[0].strip("`"))
                start = i + 1
        return names


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
        for name in schema.display_names
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
    rows = _column_rows(schema, timestamp_as)
    if extended:
        parts = table.parts()
        lo, hi = _time_range(parts)
        details: list[tuple[str, Any]] = [
            ("Name", name),
            ("TsFile table", schema.table),
            ("Location", table.location),
            ("Provider", "tsfile"),
            ("Format version", written_format_version(parts, schema)),
            ("Current version", table.version),
            ("Last commit", _iso(table.timestamp_ms)),
            ("Parts", len(parts)),
            ("Rows", sum(p.row_count for p in parts)),
            ("Size in bytes", sum(p.size_bytes for p in parts)),
            ("Min time", lo),
            ("Max time", hi),
            ("Table properties", _map_text(redact_credentials(table.properties))),
            ("Options", _map_text(redact_credentials(options or {}))),
        ]
        rows.append(("", "", ""))
        rows.append(("# Detailed Table Information", "", ""))
        rows.extend((key, "" if value is None else str(value), "") for key, value in details)
    return Result(_DESCRIBE_SCHEMA, rows)


_DESCRIBE_SCHEMA = "col_name string, data_type string, category string"


def _column_rows(schema: TableSchema, timestamp_as: str) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for name in schema.display_names:  # the order users see
        column = schema.column(name)
        if column is None:
            rows.append((TIME_COLUMN, spark_type(None, timestamp_as=timestamp_as), "TIME"))
        else:
            rows.append(
                (name, spark_type(column, timestamp_as=timestamp_as), column.category.value)
            )
    return rows


def describe_files(files: ResolvedScan, *, timestamp_as: str = "long") -> Result:
    """``DESCRIBE`` of plain TsFiles (no manifest): the columns their footers agree on, as
    :func:`describe` shows a table's."""
    return Result(_DESCRIBE_SCHEMA, _column_rows(files.schema, timestamp_as))


def describe_history(table: Table, *, limit: int | None = None) -> Result:
    """``DESCRIBE HISTORY``: one row per commit, newest first (the newest ``limit`` only)."""
    rows = [
        (
            info.version,
            _iso(info.timestamp_ms),
            info.operation,
            redact_parameters(info.operation_parameters),
            info.read_version,
            info.parts_added,
            info.rows_added,
            info.parts_removed,
            info.rows_removed,
            info.engine_info,
        )
        for info in table.history(limit=limit)
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
        # The manifest version this snapshot needs: 2 once it records an external part.
        written_format_version(parts, table.schema),
        table.version,
        _iso(table.timestamp_ms),
        len(parts),
        sum(p.row_count for p in parts),
        sum(p.size_bytes for p in parts),
        lo,
        hi,
        # Streaming's part watermark: rows with time < this are all committed (raw time).
        table.complete_until(),
        _num_devices(parts),
        list(table.schema.tag_names),
        _ddl(table.schema, timestamp_as),
        redact_credentials(table.properties),
        redact_credentials(options or {}),
        parts_by_format(parts),
        sum(_merged_slices(table, parts)),
    )
    return Result(
        "format string, name string, tsfile_table string, location string, table_uuid string, "
        "format_version int, version bigint, last_modified timestamp, num_parts bigint, "
        "num_rows bigint, size_in_bytes bigint, min_time bigint, max_time bigint, "
        "complete_until bigint, num_devices bigint, tag_columns array<string>, schema string, "
        "properties map<string,string>, options map<string,string>, "
        "parts_by_format map<string,bigint>, merged_slices bigint",
        [row],
    )


def parts_by_format(parts: Sequence[PartFile]) -> dict[str, int]:
    """How many live parts each file format has (``tsfile``, and external ``parquet``,
    ``orc``, ``csv``), as CarbonData's SHOW SEGMENTS shows each segment's format."""
    counts: dict[str, int] = {}
    for part in parts:
        counts[part.format] = counts.get(part.format, 0) + 1
    return dict(sorted(counts.items()))


def _merged_slices(table: Table, parts: Sequence[PartFile]) -> tuple[int, ...]:
    """Per part, how many of its (part, device) slices a read of ``table`` merges with
    another write's (:func:`~tsfile_catalog.metadata.key.merge_groups`); all 0 in a
    ``key.duplicates = keep`` table, which never merges."""
    if key_mode(table.properties) != "last":
        return (0,) * len(parts)
    return merged_slices_by_part(parts)


def show_parts(table: Table) -> Result:
    """``SHOW PARTS``: one row per live part of the version, in manifest order; ``path`` is
    relative to the table, or an external part's full URL (``external`` is true);
    ``merged_slices`` counts the part's devices a read merges with another write's rows
    (``key.duplicates = last``; OPTIMIZE brings it to 0)."""
    parts = table.parts()
    return _parts_result(parts, _merged_slices(table, parts))


def show_file_parts(files: ResolvedScan) -> Result:
    """``SHOW PARTS`` of plain TsFiles: one row per file, with the statistics of its footer
    (added_version and merged_slices are null: no manifest added it, no table key holds)."""
    return _parts_result(files.parts, (None,) * len(files.parts))


def _parts_result(parts: Sequence[PartFile], merged: Sequence[int | None]) -> Result:
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
            p.added_version if p.added_version >= 0 else None,
            slices,
        )
        for p, slices in zip(parts, merged, strict=True)
    ]
    return Result(
        "path string, format string, external boolean, rows bigint, min_time bigint, "
        "max_time bigint, devices int, size_bytes bigint, added_version bigint, "
        "merged_slices int",
        rows,
    )


EXPLAIN_SCHEMA = (
    "ref int, table string, alias string, version bigint, part string, status string, "
    "rows bigint, min_time bigint, max_time bigint, columns string, pushed_where string"
)


class _Versioned(Protocol):
    """A table version or a resolved scan (plain files have no version)."""

    @property
    def version(self) -> int | None: ...


def explain_rows(
    index: int,
    name: str,
    alias: str | None,
    table: _Versioned,
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


def merge_labels(table: Table, parts: Sequence[PartFile]) -> dict[str, str]:
    """Which planned ``parts`` a scan of ``table`` reads merged, by path: ``m1``, ``m2``, …
    one label per :class:`~tsfile_catalog.metadata.key.MergeGroup` (a part in several
    groups gets them all, comma-separated), with how many devices each merges
    (``m1:3``; ``m1:*`` when a part kept no device list, so all its rows merge). Empty in a
    ``key.duplicates = keep`` table; parts read as they are have no label."""
    if key_mode(table.properties) != "last":
        return {}
    labels: dict[str, list[str]] = {}
    for number, group in enumerate(merge_groups(parts), start=1):
        devices = "*" if group.devices is None else str(len(group.devices))
        for i in group.parts:
            labels.setdefault(parts[i].path, []).append(f"m{number}:{devices}")
    return {path: ",".join(names) for path, names in labels.items()}


def planned_parts(table: Table, plan: ScanPlan) -> Result:
    """:func:`show_parts` plus a ``status`` column: ``kept`` when a scan planned by ``plan``
    opens the part, ``pruned`` when its statistics rule it out."""
    kept = {part.path for part in plan.parts}
    shown = show_parts(table)
    rows = [(*row, "kept" if row[0] in kept else "pruned") for row in shown.rows]
    return Result(shown.schema + ", status string", rows)


# -- timeline: the parts as bars over time (computed in tsfile_catalog.timeline) -------------


def timeline_result(data: Timeline) -> Result:
    """A timeline's bars as rows (the CLI's ``timeline --json``)."""
    rows = [(b.group, b.part, b.start, b.end, b.rows) for b in data.bars]
    return Result("group string, part string, start bigint, end bigint, rows bigint", rows)


def table_summary(table: Table) -> Result:
    """One row: where the table is and what its version holds (after adopting it, say)."""
    parts = table.parts()
    row = (
        table.location,
        table.version,
        len(parts),
        sum(p.row_count for p in parts),
        sum(p.size_bytes for p in parts),
    )
    return Result(
        "location string, version bigint, parts bigint, rows bigint, size_bytes bigint", [row]
    )


# -- maintenance ------------------------------------------------------------------------------


def vacuum_result(vacuumed: Vacuumed) -> Result:
    """VACUUM's answer: each file (then folder) it deleted, or would delete in a dry run."""
    return Result(
        "path string, deleted boolean", [(url, not vacuumed.dry_run) for url in vacuumed.files]
    )


def expire_result(expired: Expired) -> Result:
    """EXPIRE SNAPSHOTS' answer: the oldest version left and how many log files went."""
    return Result(
        "oldest_version bigint, expired_versions bigint, expired_checkpoints bigint, "
        "checkpoint_written boolean",
        [
            (
                expired.oldest_kept,
                len(expired.versions),
                len(expired.checkpoints),
                expired.checkpoint_written,
            )
        ],
    )


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


def restore_result(table: Table) -> Result:
    """RESTORE's answer, from the version it committed (``table``)."""
    info = table.history(limit=1)[0]
    restored = int(info.operation_parameters.get("version", -1))
    return Result(
        "version bigint, restored_version bigint, num_removed_files bigint, "
        "num_restored_files bigint",
        [(table.version, restored, info.parts_removed, info.parts_added)],
    )


def show_create_table(statement: str) -> Result:
    """SHOW CREATE TABLE's answer, named as Spark names it."""
    return Result("createtab_stmt string", [(statement,)])


# The one row UPDATE, MERGE INTO and DELETE return, whichever engine ran them (Catalog.sql,
# spark.sql through the plugin): Delta's columns, num_affected_rows first; DELETE's further
# columns say how it did the work.
UPDATE_SCHEMA = "num_affected_rows bigint"
MERGE_SCHEMA = (
    "num_affected_rows bigint, num_updated_rows bigint, num_deleted_rows bigint, "
    "num_inserted_rows bigint"
)
DELETE_SCHEMA = (
    "num_affected_rows bigint, version bigint, num_files_removed bigint, "
    "num_files_added bigint, num_files_dropped bigint, num_files_rewritten bigint"
)


def delete_result(result: DeleteResult) -> Result:
    """DELETE's one row (:data:`DELETE_SCHEMA`): the rows deleted, the version it committed
    (null when no row matched), and the parts removed in metadata only or rewritten."""
    return Result(
        DELETE_SCHEMA,
        [
            (
                result.num_deleted_rows,
                result.version,
                result.files_removed,
                result.files_added,
                result.files_dropped,
                result.files_rewritten,
            )
        ],
    )
