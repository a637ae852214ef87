"""ALTER TABLE: schema evolution and table properties, each one commit, no data rewritten.

:func:`add_columns` and :func:`alter_column_type` commit a new schema (older parts read added
columns as null and widened ones cast up); :func:`rename_column`, :func:`drop_columns` and
:func:`move_column` change names, membership and order only (columns keep their ids and
physical names, :mod:`tsfile_catalog.metadata.schema_evolution`); properties are set by
:func:`tsfile_catalog.table.commits.set_properties` and removed by :func:`unset_properties`.
:class:`Alter` is ``table.alter``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from tsfile_catalog.exceptions import SchemaError, SchemaMismatchError
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.manifest import Operation, RemoveProperties, SetSchema, Snapshot
from tsfile_catalog.metadata.schema import Category, DataType, TableSchema
from tsfile_catalog.metadata.schema_evolution import NewColumn, check_drop_not_null
from tsfile_catalog.metadata.schema_evolution import add_columns as add_columns_to
from tsfile_catalog.metadata.schema_evolution import drop_columns as drop_columns_of
from tsfile_catalog.metadata.schema_evolution import move_column as move_column_of
from tsfile_catalog.metadata.schema_evolution import rename_column as rename_column_of
from tsfile_catalog.metadata.schema_merge import widens
from tsfile_catalog.metadata.table_time import check_time_change
from tsfile_catalog.table.commits import commit, set_properties
from tsfile_catalog.table.snapshots import resolve_snapshot

if TYPE_CHECKING:
    from tsfile_catalog.table.handle import Table

__all__ = [
    "Alter",
    "NewColumn",
    "add_columns",
    "alter_column_type",
    "rename_column",
    "drop_columns",
    "move_column",
    "drop_not_null",
    "unset_properties",
]


_NO_REWRITE = "parts are never rewritten by ALTER TABLE, and their values cannot be converted"


def add_columns(
    url: str,
    columns: Sequence[tuple[str, DataType] | NewColumn],
    *,
    storage_options: Mapping[str, Any] | None = None,
) -> int:
    """Add FIELD columns (``ALTER TABLE … ADD COLUMNS``): a ``(name, type)`` goes last, a
    :class:`NewColumn` last, right after the column it names, or first (where users see
    it); parts written before read them as null. One commit, operation ``ADD COLUMNS``.

    Returns:
        The new version.

    Raises:
        SchemaError: a name that exists already, is repeated, or is ``time``; AFTER a column
            the table lacks.
    """
    io, location, latest = _latest(url, storage_options)
    added = [c if isinstance(c, NewColumn) else NewColumn(c[0], c[1]) for c in columns]
    new = add_columns_to(latest.schema, added)
    parameters = {"columns": json.dumps([[c.name.lower(), c.type.value] for c in added])}
    placed = {c.name.lower(): _position(c) for c in added if c.first or c.after is not None}
    if placed:
        parameters["positions"] = json.dumps(placed)
    return _change_schema(io, location, latest, new, Operation.ADD_COLUMNS, parameters)


def _position(column: NewColumn) -> str:
    return "FIRST" if column.after is None else f"AFTER {column.after.lower()}"


def alter_column_type(
    url: str,
    column: str,
    data_type: DataType,
    *,
    storage_options: Mapping[str, Any] | None = None,
) -> int:
    """Widen a FIELD column (INT32 -> INT64, FLOAT -> DOUBLE): readers cast older parts up,
    nothing is rewritten. One commit, operation ``CHANGE COLUMN``; the same type is a no-op.

    Returns:
        The new version (the current one when nothing changes).

    Raises:
        SchemaError: no such column, or a TAG column.
        SchemaMismatchError: a change other than the two widenings.
    """
    io, location, latest = _latest(url, storage_options)
    schema = latest.schema
    name = column.lower()
    current = schema.column(name)
    if current is None:
        raise SchemaError(
            f"table {schema.table} has no column {name!r} (columns: {', '.join(schema.names)})"
        )
    if current.category is Category.TAG:
        raise SchemaError(
            f"cannot change TAG column {name!r} of table {schema.table}: TAG columns identify "
            "the devices in every part file and never change"
        )
    if current.type is data_type:
        return latest.version
    if not widens(current.type, data_type):
        raise SchemaMismatchError(
            f"cannot change column {name!r} of table {schema.table} from "
            f"{current.type.value} to {data_type.value}: only INT32 -> INT64 and FLOAT -> "
            f"DOUBLE widen without rewriting data; other changes are refused because "
            f"{_NO_REWRITE}"
        )
    new = replace(
        schema,
        columns=tuple(replace(c, type=data_type) if c.name == name else c for c in schema.columns),
    )
    parameters = {"column": name, "from": current.type.value, "to": data_type.value}
    return _change_schema(io, location, latest, new, Operation.CHANGE_COLUMN, parameters)


def rename_column(
    url: str,
    column: str,
    new_name: str,
    *,
    storage_options: Mapping[str, Any] | None = None,
) -> int:
    """Rename FIELD ``column`` (``ALTER TABLE … RENAME COLUMN``): one commit, operation
    ``RENAME COLUMN``; the column keeps its id and physical name, so every part, older or
    newer, reads it under the new name. Renaming to the same name is no commit.

    Returns:
        The new version (the current one when nothing changes).

    Raises:
        SchemaError: no such column, a TAG column, or the new name is taken.
    """
    io, location, latest = _latest(url, storage_options)
    new = rename_column_of(latest.schema, column, new_name)
    if new is latest.schema:
        return latest.version
    parameters = {"column": column.lower(), "new_name": new_name.lower()}
    return _change_schema(io, location, latest, new, Operation.RENAME_COLUMN, parameters)


def drop_columns(
    url: str,
    columns: Sequence[str],
    *,
    if_exists: bool = False,
    storage_options: Mapping[str, Any] | None = None,
) -> int:
    """Drop FIELD ``columns`` (``ALTER TABLE … DROP COLUMN(S)``): one commit, operation
    ``DROP COLUMNS``, no part rewritten. A column added back later under a dropped name is a
    new, empty column. With ``if_exists``, missing columns are skipped (none left: no commit).

    Returns:
        The new version (the current one when nothing changes).

    Raises:
        SchemaError: no such column (without ``if_exists``), or a TAG column.
    """
    io, location, latest = _latest(url, storage_options)
    new = drop_columns_of(latest.schema, columns, if_exists=if_exists)
    if new is latest.schema:
        return latest.version
    parameters = {"columns": json.dumps([c.lower() for c in columns])}
    return _change_schema(io, location, latest, new, Operation.DROP_COLUMNS, parameters)


def move_column(
    url: str,
    column: str,
    *,
    after: str | None,
    storage_options: Mapping[str, Any] | None = None,
) -> int:
    """Show ``column`` (any, ``time`` and TAGs too) right after ``after`` (None: FIRST),
    ``ALTER TABLE … ALTER COLUMN … FIRST | AFTER``: one commit, operation ``CHANGE COLUMN``,
    no part rewritten; only the order users see changes
    (:mod:`tsfile_catalog.metadata.schema_evolution`).

    Returns:
        The new version (the current one when the order does not change).

    Raises:
        SchemaError: no column ``column`` or ``after``.
    """
    io, location, latest = _latest(url, storage_options)
    new = move_column_of(latest.schema, column, after=after)
    if new == latest.schema:
        return latest.version
    position = "FIRST" if after is None else f"AFTER {after.lower()}"
    parameters = {"column": column.lower(), "position": position}
    return _change_schema(io, location, latest, new, Operation.CHANGE_COLUMN, parameters)


def drop_not_null(
    url: str, column: str, *, storage_options: Mapping[str, Any] | None = None
) -> int:
    """``ALTER TABLE … ALTER COLUMN … DROP NOT NULL``: every TAG and FIELD column takes
    nulls already, so nothing is committed.

    Returns:
        The current version.

    Raises:
        SchemaError: ``time`` (never null), or no such column.
    """
    _, _, latest = _latest(url, storage_options)
    check_drop_not_null(latest.schema, column)
    return latest.version


def unset_properties(
    url: str,
    keys: Sequence[str],
    *,
    storage_options: Mapping[str, Any] | None = None,
) -> int:
    """Remove table properties (SQL ``ALTER TABLE … UNSET TBLPROPERTIES``) in one commit of
    operation ``UNSET TBLPROPERTIES``, no data changed.

    As in Spark 4, a key the table does not have is no change, with or without ``IF
    EXISTS``; the commit is made even when nothing changes, as ``set_properties`` does (the
    history records the statement).

    Returns:
        The committed version.

    Raises:
        TableNotFoundError: there is no table at ``url``.
    """
    io, location, latest = _latest(url, storage_options)
    present = tuple(dict.fromkeys(k for k in keys if k in latest.properties))
    check_time_change(latest.properties, {}, present, table=location)
    snapshot = commit(
        io,
        location,
        [RemoveProperties(present)] if present else [],
        read=latest,
        operation=Operation.UNSET_TBLPROPERTIES,
        operation_parameters={"properties": json.dumps(list(keys))},
        data_change=False,
    )
    return snapshot.version


def _change_schema(
    io: FileIO,
    location: str,
    read: Snapshot,
    schema: TableSchema,
    operation: Operation,
    parameters: Mapping[str, str],
) -> int:
    snapshot = commit(
        io,
        location,
        [SetSchema(schema, 0)],
        read=read,
        operation=operation,
        operation_parameters=parameters,
    )
    return snapshot.version


def _latest(url: str, storage_options: Mapping[str, Any] | None) -> tuple[FileIO, str, Snapshot]:
    io = FileIO(url, storage_options)
    location = io.normalize(url)
    return io, location, resolve_snapshot(io, location)


class Alter:
    """``table.alter``: the schema and property changes of one table (deltalake's
    ``dt.alter``). Each is one commit against the table's latest version, whatever version
    the handle shows."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def add_columns(self, columns: Sequence[tuple[str, DataType] | NewColumn]) -> int:
        """See :func:`add_columns`."""
        return add_columns(self._table.location, columns, storage_options=self._storage())

    def alter_column_type(self, column: str, data_type: DataType) -> int:
        """See :func:`alter_column_type`."""
        return alter_column_type(
            self._table.location, column, data_type, storage_options=self._storage()
        )

    def rename_column(self, column: str, new_name: str) -> int:
        """See :func:`rename_column`."""
        return rename_column(
            self._table.location, column, new_name, storage_options=self._storage()
        )

    def drop_columns(self, columns: Sequence[str], *, if_exists: bool = False) -> int:
        """See :func:`drop_columns`."""
        return drop_columns(
            self._table.location, columns, if_exists=if_exists, storage_options=self._storage()
        )

    def move_column(self, column: str, *, after: str | None) -> int:
        """See :func:`move_column`."""
        return move_column(
            self._table.location, column, after=after, storage_options=self._storage()
        )

    def drop_not_null(self, column: str) -> int:
        """See :func:`drop_not_null`."""
        return drop_not_null(self._table.location, column, storage_options=self._storage())

    def set_properties(self, properties: Mapping[str, str]) -> int:
        """See :func:`tsfile_catalog.table.commits.set_properties`."""
        return set_properties(self._table.location, properties, storage_options=self._storage())

    def unset_properties(self, keys: Sequence[str]) -> int:
        """See :func:`tsfile_catalog.table.commits.unset_properties`."""
        return unset_properties(self._table.location, keys, storage_options=self._storage())

    def _storage(self) -> Mapping[str, Any]:
        return self._table.io.storage_options
