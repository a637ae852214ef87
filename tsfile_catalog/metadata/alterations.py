"""One ALTER TABLE as data: its changes folded, in order, over the table's latest schema and
properties, and the one history entry that records them.

Spark hands a catalog several changes in one ``alterTable`` call (``REPLACE COLUMNS``, ``ADD
COLUMNS (a, b)``, its schema evolution's adds and widenings, any JVM or Connect caller's list):
they are one statement, so they are one commit or none. Each change is checked against the
schema the changes before it left (``ADD COLUMNS (x)`` then ``ALTER COLUMN y AFTER x`` holds; a
move after a column an earlier change dropped is refused), and the first refusal refuses the
whole call, naming its column, before anything is written.

The history entry is the one the same change made alone has always recorded when the call
is one kind of change (``ADD COLUMNS``, ``DROP COLUMNS``, ``RENAME COLUMN``, ``CHANGE
COLUMN``, ``SET``/``UNSET TBLPROPERTIES``, with the same parameters), ``REPLACE COLUMNS`` (as
Delta records it) for Spark's ``REPLACE COLUMNS``, and otherwise ``ALTER TABLE`` whose
parameter ``changes`` lists each change in order as SQL text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

from tsfile_catalog.exceptions import SchemaError
from tsfile_catalog.metadata.manifest import Operation
from tsfile_catalog.metadata.schema import DataType, TableSchema
from tsfile_catalog.metadata.schema_evolution import (
    NewColumn,
    add_columns,
    change_column_type,
    check_drop_not_null,
    drop_columns,
    move_column,
    rename_column,
    replace_columns,
)
from tsfile_catalog.metadata.spark.quoting import quote_identifier, quote_string

__all__ = [
    "AddColumns",
    "Altered",
    "Change",
    "ChangeColumnType",
    "DropColumns",
    "DropNotNull",
    "MoveColumn",
    "RenameColumn",
    "ReplaceColumns",
    "SetTableProperties",
    "UnsetTableProperties",
    "alter",
]


@dataclass(frozen=True, slots=True)
class AddColumns:
    """``ADD COLUMNS``: new FIELD columns, each last or where it says."""

    columns: tuple[NewColumn, ...]


@dataclass(frozen=True, slots=True)
class ChangeColumnType:
    """``ALTER COLUMN c TYPE t``: a widening of a FIELD column (or its own type: no change)."""

    column: str
    type: DataType


@dataclass(frozen=True, slots=True)
class RenameColumn:
    """``RENAME COLUMN c TO new``."""

    column: str
    new_name: str


@dataclass(frozen=True, slots=True)
class DropColumns:
    """``DROP COLUMNS [IF EXISTS] (…)``."""

    columns: tuple[str, ...]
    if_exists: bool = False


@dataclass(frozen=True, slots=True)
class MoveColumn:
    """``ALTER COLUMN c FIRST | AFTER other`` (``after`` None: FIRST)."""

    column: str
    after: str | None


@dataclass(frozen=True, slots=True)
class DropNotNull:
    """``ALTER COLUMN c DROP NOT NULL``: every TAG and FIELD takes nulls already."""

    column: str


@dataclass(frozen=True, slots=True)
class ReplaceColumns:
    """``REPLACE COLUMNS (…)``: the table's columns become ``columns``, in that order (see
    :func:`~tsfile_catalog.metadata.schema_evolution.replace_columns`)."""

    columns: tuple[tuple[str, DataType], ...]


@dataclass(frozen=True, slots=True)
class SetTableProperties:
    """``SET TBLPROPERTIES (…)``."""

    properties: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class UnsetTableProperties:
    """``UNSET TBLPROPERTIES (…)`` (keys the table lacks are no change, as in Spark 4)."""

    keys: tuple[str, ...]


Change: TypeAlias = (
    AddColumns
    | ChangeColumnType
    | RenameColumn
    | DropColumns
    | MoveColumn
    | DropNotNull
    | ReplaceColumns
    | SetTableProperties
    | UnsetTableProperties
)


@dataclass(frozen=True, slots=True)
class Altered:
    """What one ALTER commits: the new schema (``schema_changed`` when it differs), the
    properties whose values change, the ones removed, and the history entry. ``commits`` is
    false when there is nothing to record (a rename to the same name, a DROP NOT NULL): as
    each of those alone has always done, no version is made."""

    schema: TableSchema
    schema_changed: bool
    set_properties: dict[str, str]
    removed_properties: tuple[str, ...]
    operation: Operation
    parameters: dict[str, str] = field(default_factory=dict)
    commits: bool = True


def alter(schema: TableSchema, properties: Mapping[str, str], changes: Sequence[Change]) -> Altered:
    """Fold ``changes``, in order, over ``schema`` and ``properties`` (the latest version's).

    Raises:
        SchemaError: the first change refused, naming its column (see
            :mod:`~tsfile_catalog.metadata.schema_evolution`); none given.
    """
    if not changes:
        raise SchemaError(f"ALTER TABLE {schema.table}: no changes given")
    out = schema
    current = dict(properties)
    removed: list[str] = []  # in the order the changes remove them
    texts: list[str] = []
    type_changes: list[dict[str, str]] = []
    for change in changes:
        if isinstance(change, SetTableProperties):
            current.update(change.properties)
        elif isinstance(change, UnsetTableProperties):
            for key in change.keys:
                if current.pop(key, None) is not None and key in properties:
                    removed.append(key)
        elif isinstance(change, ChangeColumnType):
            before = out
            out = change_column_type(out, change.column, change.type)
            old = before.column(change.column)
            assert old is not None, "change_column_type refuses a missing column"
            type_changes.append(
                {"column": old.name, "from": old.type.value, "to": change.type.value}
            )
        else:
            out = _apply(out, change)
        texts.append(_text(change))
    changed = {k: v for k, v in current.items() if properties.get(k) != v}
    gone = tuple(k for k in dict.fromkeys(removed) if k not in current)
    touches_properties = any(
        isinstance(c, SetTableProperties | UnsetTableProperties) for c in changes
    )
    schema_changed = out != schema
    operation, parameters = _entry(changes, texts, type_changes)
    return Altered(
        schema=out,
        schema_changed=schema_changed,
        set_properties=changed,
        removed_properties=gone,
        operation=operation,
        parameters=parameters,
        # Property statements commit even when nothing changes (the history records them,
        # as Delta's do); a schema change that changes nothing is no version.
        commits=schema_changed or touches_properties,
    )


def _apply(schema: TableSchema, change: Change) -> TableSchema:
    if isinstance(change, AddColumns):
        return add_columns(schema, change.columns)
    if isinstance(change, RenameColumn):
        return rename_column(schema, change.column, change.new_name)
    if isinstance(change, DropColumns):
        return drop_columns(schema, change.columns, if_exists=change.if_exists)
    if isinstance(change, MoveColumn):
        return move_column(schema, change.column, after=change.after)
    if isinstance(change, DropNotNull):
        check_drop_not_null(schema, change.column)
        return schema
    assert isinstance(change, ReplaceColumns), change
    return replace_columns(schema, change.columns)


def _entry(
    changes: Sequence[Change], texts: Sequence[str], type_changes: Sequence[dict[str, str]]
) -> tuple[Operation, dict[str, str]]:
    """The history entry of ``changes``: a single kind's own (as it alone records it), or
    ``ALTER TABLE`` listing each change."""
    kinds = {type(c) for c in changes}
    if len(kinds) == 1:
        (kind,) = kinds
        if kind is AddColumns:
            added = [
                c for change in changes if isinstance(change, AddColumns) for c in change.columns
            ]
            return Operation.ADD_COLUMNS, _added_parameters(added)
        if kind is DropColumns:
            drops = [c for c in changes if isinstance(c, DropColumns)]
            if len({d.if_exists for d in drops}) == 1:
                names = [n.lower() for d in drops for n in d.columns]
                return Operation.DROP_COLUMNS, {"columns": json.dumps(names)}
        if kind is SetTableProperties:
            merged: dict[str, str] = {}
            for change in changes:
                assert isinstance(change, SetTableProperties)
                merged.update(change.properties)
            return Operation.SET_TBLPROPERTIES, {"properties": json.dumps(merged, sort_keys=True)}
        if kind is UnsetTableProperties:
            keys = [k for c in changes if isinstance(c, UnsetTableProperties) for k in c.keys]
            return Operation.UNSET_TBLPROPERTIES, {"properties": json.dumps(keys)}
    if len(changes) == 1:
        (change,) = changes
        if isinstance(change, RenameColumn):
            return Operation.RENAME_COLUMN, {
                "column": change.column.lower(),
                "new_name": change.new_name.lower(),
            }
        if isinstance(change, ChangeColumnType):
            return Operation.CHANGE_COLUMN, dict(type_changes[0])
        if isinstance(change, MoveColumn):
            position = "FIRST" if change.after is None else f"AFTER {change.after.lower()}"
            return Operation.CHANGE_COLUMN, {"column": change.column.lower(), "position": position}
        if isinstance(change, ReplaceColumns):
            columns = [[name.lower(), data_type.value] for name, data_type in change.columns]
            return Operation.REPLACE_COLUMNS, {"columns": json.dumps(columns)}
    return Operation.ALTER_TABLE, {"changes": json.dumps(list(texts))}


def _added_parameters(added: Sequence[NewColumn]) -> dict[str, str]:
    parameters = {"columns": json.dumps([[c.name.lower(), c.type.value] for c in added])}
    placed = {c.name.lower(): _position(c) for c in added if c.first or c.after is not None}
    if placed:
        parameters["positions"] = json.dumps(placed)
    return parameters


def _position(column: NewColumn) -> str:
    return "FIRST" if column.after is None else f"AFTER {column.after.lower()}"


def _text(change: Change) -> str:
    """``change`` as the SQL of its ALTER TABLE clause (types as the table records them)."""
    if isinstance(change, AddColumns):
        columns = ", ".join(
            f"{_name(c.name)} {c.type.value}"
            + ("" if not (c.first or c.after is not None) else f" {_place(c.after)}")
            for c in change.columns
        )
        return f"ADD COLUMNS ({columns})"
    if isinstance(change, ChangeColumnType):
        return f"ALTER COLUMN {_name(change.column)} TYPE {change.type.value}"
    if isinstance(change, RenameColumn):
        return f"RENAME COLUMN {_name(change.column)} TO {_name(change.new_name)}"
    if isinstance(change, DropColumns):
        exists = " IF EXISTS" if change.if_exists else ""
        return f"DROP COLUMNS{exists} ({', '.join(_name(c) for c in change.columns)})"
    if isinstance(change, MoveColumn):
        return f"ALTER COLUMN {_name(change.column)} {_place(change.after)}"
    if isinstance(change, DropNotNull):
        return f"ALTER COLUMN {_name(change.column)} DROP NOT NULL"
    if isinstance(change, ReplaceColumns):
        columns = ", ".join(f"{_name(n)} {t.value}" for n, t in change.columns)
        return f"REPLACE COLUMNS ({columns})"
    if isinstance(change, SetTableProperties):
        pairs = ", ".join(
            f"{quote_string(k)} = {quote_string(v)}" for k, v in change.properties.items()
        )
        return f"SET TBLPROPERTIES ({pairs})"
    return f"UNSET TBLPROPERTIES ({', '.join(quote_string(k) for k in change.keys)})"


def _place(after: str | None) -> str:
    return "FIRST" if after is None else f"AFTER {_name(after)}"


def _name(name: str) -> str:
    return quote_identifier(name.lower())
