"""``create_table``: a new, empty table at a URL (SQL ``CREATE TABLE``), its time recorded."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tsfile_catalog.exceptions import CommitConflictError, OptionError, TableExistsError
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.completeness import check_table_properties
from tsfile_catalog.metadata.expressions import TimestampAs, TimeUnit
from tsfile_catalog.metadata.key import new_table_properties
from tsfile_catalog.metadata.manifest import Action, Operation, SetProperties, SetSchema
from tsfile_catalog.metadata.schema import TableSchema
from tsfile_catalog.metadata.table_time import TIME_PROPERTIES, table_time, time_properties
from tsfile_catalog.table import ownership
from tsfile_catalog.table.commits import commit
from tsfile_catalog.table.handle import Table, open_table
from tsfile_catalog.table.log import list_log

__all__ = ["create_table"]


def create_table(
    url: str,
    schema: TableSchema,
    *,
    properties: Mapping[str, str] | None = None,
    unit: TimeUnit | None = None,
    timestamp_as: TimestampAs | None = None,
    exist_ok: bool = False,
    storage_options: Mapping[str, Any] | None = None,
) -> Table:
    """Create an empty table (SQL ``CREATE TABLE``).

    The folder must be missing or empty: files already there would not be the table's, yet
    would sit among its own (to make a table of existing TsFiles, use ``adopt_table``).
    ``schema`` is recorded as given, its order too (:meth:`TableSchema.declared` builds one
    shown in the order its columns were declared).

    Args:
        unit: the unit of the table's raw times (``ms``, ``us``, ``ns``; default ``ms``),
            recorded in its properties (``time.unit``): every later reader and writer uses
            it, and refuses an option naming another.
        timestamp_as: how ``time`` reads, ``"timestamp"`` or ``"long"`` (default), recorded
            as ``time.type`` (``TIMESTAMP``/``BIGINT``): what ``Table.update``/``delete``/
            ``plan`` compare ``time`` in the predicate as.

    Raises:
        TableExistsError: a table is already at ``url`` (unless ``exist_ok``, which returns
            it unchanged, whatever its schema).
        LocationError: ``url`` is a file-system root, inside another table, or not empty.
        OptionError: ``unit``/``timestamp_as`` contradict ``time.*`` among ``properties``.
    """
    properties = _with_time(properties or {}, unit, timestamp_as)
    check_table_properties(properties)
    io = FileIO(url, storage_options)
    location = io.normalize(url)
    if list_log(io, location).commits:
        if exist_ok:
            return open_table(location, storage_options=storage_options)
        raise TableExistsError(f"a table already exists at {location}")
    ownership.check_location(io, location)
    ownership.check_empty(io, location)
    actions: list[Action] = [SetSchema(schema, 0), SetProperties(new_table_properties(properties))]
    try:
        snapshot = commit(io, location, actions, read=None, operation=Operation.CREATE)
    except CommitConflictError as e:
        if exist_ok:
            return open_table(location, storage_options=storage_options)
        raise TableExistsError(f"a table was created concurrently at {location}") from e
    return Table(io, location, snapshot, use_cache=True)


def _with_time(
    properties: Mapping[str, str], unit: TimeUnit | None, timestamp_as: TimestampAs | None
) -> dict[str, str]:
    """``properties`` with the new table's time recorded (``time.*`` given there must agree
    with ``unit`` and ``timestamp_as``)."""
    given = table_time(properties)
    if given is None:
        return {**properties, **time_properties(unit or "ms", timestamp_as or "long")}
    if (unit is not None and unit != given.unit) or (
        timestamp_as is not None and timestamp_as != given.timestamp_as
    ):
        recorded = ", ".join(f"'{k}' = {properties[k]!r}" for k in TIME_PROPERTIES)
        raise OptionError(
            f"table properties {recorded} contradict "
            f"the table's time unit {unit or given.unit!r} read as "
            f"{timestamp_as or given.timestamp_as!r}: give the time once"
        )
    return dict(properties)
