"""Metadata tables, as Iceberg serves them: ``ts.db.t.history``, ``ts.db.t.snapshots`` and
``ts.db.t.parts``, readable from any client with SELECT, WHERE and JOIN, and with no parser
change (Spark asks the catalog for table ``history`` in namespace ``db.t``).

Their rows are those of the statements Spark cannot parse (:mod:`tsfile_catalog.inspect`):
``history`` is ``DESCRIBE HISTORY``, ``parts`` is ``SHOW PARTS`` (each part's row count and
time range included), ``snapshots`` one row per readable version in Iceberg's shape. All three
take ``VERSION AS OF`` / ``TIMESTAMP AS OF`` (the table as of that version). The rows go to
the JVM with the table description, which serves them as a local scan.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tsfile_catalog import inspect
from tsfile_catalog.sql.registry import TableName

if TYPE_CHECKING:
    from tsfile_catalog.spark_catalog.tables import Warehouse
    from tsfile_catalog.table.handle import Table

__all__ = ["METADATA_TABLES", "load_metadata_table", "spark_value"]

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def _snapshots(table: Table) -> inspect.Result:
    """Iceberg's ``snapshots`` table: when each version was committed, its parent (the
    version before it, null for the first), its operation and a summary of its counts."""
    rows = []
    for info in table.history():
        summary = {
            **info.operation_parameters,
            "parts-added": str(info.parts_added),
            "rows-added": str(info.rows_added),
            "parts-removed": str(info.parts_removed),
            "rows-removed": str(info.rows_removed),
        }
        parent = info.version - 1 if info.version > 0 else None
        committed = _EPOCH + dt.timedelta(milliseconds=info.timestamp_ms)
        rows.append((committed, info.version, parent, info.operation, summary))
    return inspect.Result(
        "committed_at timestamp, version bigint, parent_version bigint, operation string, "
        "summary map<string,string>",
        rows,
    )


METADATA_TABLES: Mapping[str, Callable[[Table], inspect.Result]] = {
    "history": inspect.describe_history,
    "snapshots": _snapshots,
    "parts": inspect.show_parts,
}


def load_metadata_table(
    warehouse: Warehouse,
    namespace: Sequence[str],
    name: str,
    *,
    version: str | None,
    timestamp_us: int | None,
) -> dict[str, Any] | None:
    """The description of metadata table ``name`` of table ``namespace`` (``[db, t]``), with
    its rows; None when the identifier names no metadata table (it is then a table's)."""
    kind = name.lower()
    if len(namespace) != 2 or kind not in METADATA_TABLES:
        return None
    entry = warehouse.registry.require(TableName(namespace[1], namespace[0]))
    table = warehouse.open_as_of(entry, version, timestamp_us)
    result = METADATA_TABLES[kind](table)
    return {
        "metadata_table": {
            "name": f"{entry.display_name}.{kind}",
            "version": table.version,
            "schema": result.schema,
            "rows": [[spark_value(v) for v in row] for row in result.rows],
        }
    }


def spark_value(value: object) -> object:
    """A Python value as JSON the JVM reads into Spark's internal value: a timestamp as
    microseconds since the epoch (a naive one is UTC)."""
    if isinstance(value, dt.datetime):
        instant = value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
        return (instant - _EPOCH) // dt.timedelta(microseconds=1)
    return value
