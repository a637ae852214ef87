"""ALTER TABLE: schema evolution and table properties, each statement one commit, no data
rewritten.

:func:`alter_table` commits any list of changes (one Spark ``alterTable`` call: ``REPLACE
COLUMNS``, ``ADD COLUMNS (a, b)``, Spark's schema evolution) as one commit or none, each change
checked against the schema the ones before it left
(:mod:`tsfile_catalog.metadata.alterations`). The single changes are that function with one
change: :func:`add_columns` and :func:`alter_column_type` commit a new schema (older parts read
added columns as null and widened ones cast up); :func:`rename_column`, :func:`drop_columns` and
:func:`move_column` change names, membership and order only (columns keep their ids and physical
names, :mod:`tsfile_catalog.metadata.schema_evolution`); properties are set by
:func:`tsfile_catalog.table.commits.set_properties` and removed by :func:`unset_properties`.
:class:`Alter` is ``table.alter``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.alterations import (
    AddColumns,
    Change,
    ChangeColumnType,
    DropColumns,
    DropNotNull,
    MoveColumn,
    RenameColumn,
    SetTableProperties,
    UnsetTableProperties,
    alter,
)
from tsfile_catalog.metadata.completeness import check_table_properties
from tsfile_catalog.metadata.manifest import (
    Action,
    RemoveProperties,
    SetProperties,
    SetSchema,
    Snapshot,
)
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.metadata.schema_evolution import NewColumn
from tsfile_catalog.metadata.table_time import check_time_change
from tsfile_catalog.table.commits import commit, set_properties
from tsfile_catalog.table.snapshots import resolve_snapshot

if TYPE_CHECKING:
    from tsfile_catalog.table.handle import Table

__all__ = [
    "Alter",
    "NewColumn",
    "alter_table",
    "add_columns",
    "alter_column_type",
    "rename_column",
    "drop_columns",
    "move_column",
    "drop_not_null",
    "unset_properties",
]


def alter_table(
    url: str,
    changes: Sequence[Change],
    *,
    storage_options: Mapping[str, Any] | None = None,
) -> int:
    """Apply ``changes`` in order (one ALTER TABLE, or one Spark ``alterTable`` call) in one
    commit against the latest version, or none: every change is checked against the schema
    the changes before it left, and a refused one refuses them all. The history entry is the
    change's own when the call is one kind of change, ``REPLACE COLUMNS`` for Spark's REPLACE
    COLUMNS, else ``ALTER TABLE`` listing each change (:mod:`~tsfile_catalog.metadata.
    alterations`). A commit that loses the race to a concurrent schema change is refused as
    any commit is (:func:`~tsfile_catalog.table.commits.commit`).

    Returns:
        The new version (the current one when nothing changes: a rename to the same name, a
        DROP NOT NULL).

    Raises:
        SchemaError: the first change refused, naming its column.
        OptionError: a property the table cannot take (its time changed, a bad value).
        CommitConflictError: a concurrent commit changed the schema.
    """
    io, location, latest = _latest(url, storage_options)
    for change in changes:
        if isinstance(change, SetTableProperties):
            check_table_properties(change.properties)
    altered = alter(latest.schema, latest.properties, changes)
    if not altered.commits:
        return latest.version
    check_time_change(
        latest.properties, altered.set_properties, altered.removed_properties, table=location
    )
    actions: list[Action] = []
    if altered.schema_changed:
        actions.append(SetSchema(altered.schema, 0))
    if altered.set_properties:
        actions.append(SetProperties(altered.set_properties))
    if altered.removed_properties:
        actions.append(RemoveProperties(altered.removed_properties))
    snapshot = commit(
        io,
        location,
        actions,
        read=latest,
        operation=altered.operation,
        operation_parameters=altered.parameters,
        # Properties alone change no rows (a stream reading the table sees nothing new).
        data_change=altered.schema_changed,
    )
    return snapshot.version


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
    added = tuple(c if isinstance(c, NewColumn) else NewColumn(c[0], c[1]) for c in columns)
    return alter_table(url, [AddColumns(added)], storage_options=storage_options)


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
    change = ChangeColumnType(column, data_type)
    return alter_table(url, [change], storage_options=storage_options)


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
    change = RenameColumn(column, new_name)
    return alter_table(url, [change], storage_options=storage_options)


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
    change = DropColumns(tuple(columns), if_exists=if_exists)
    return alter_table(url, [change], storage_options=storage_options)


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
    change = MoveColumn(column, after)
    return alter_table(url, [change], storage_options=storage_options)


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
    return alter_table(url, [DropNotNull(column)], storage_options=storage_options)


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
    change = UnsetTableProperties(tuple(keys))
    return alter_table(url, [change], storage_options=storage_options)


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
