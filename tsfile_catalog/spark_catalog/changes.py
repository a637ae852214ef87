"""Spark's ``ALTER TABLE`` changes (``TableChange``, as ``Changes.java`` hands them over) as
the table layer's changes (:mod:`tsfile_catalog.metadata.alterations`), which decide what a
tsfile table supports.

One ``alterTable`` call is one statement: its changes, in Spark's order, become one commit
or none (:func:`tsfile_catalog.table.alter.alter_table`). Spark's ``REPLACE COLUMNS``, which
arrives as a drop of every column followed by an add of each listed one, is taken as what it
means (the listed columns, in order: those the table has keep their values), not as a drop of
``time`` and the TAGs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tsfile_catalog.exceptions import SqlError
from tsfile_catalog.metadata.alterations import (
    AddColumns,
    Change,
    ChangeColumnType,
    DropColumns,
    DropNotNull,
    MoveColumn,
    RenameColumn,
    ReplaceColumns,
    SetTableProperties,
    UnsetTableProperties,
)
from tsfile_catalog.metadata.schema import TIME_COLUMN, DataType
from tsfile_catalog.metadata.schema_evolution import NewColumn
from tsfile_catalog.metadata.spark.types import tsfile_type_of_sql
from tsfile_catalog.sql.statements import ColumnSpec, SparkType, TableName

__all__ = ["PROVIDER_PROPERTY", "VERSION_PROPERTY", "alter_changes", "column_spec"]

# Properties the catalog shows of a table (describe_table), which are not the table's own.
PROVIDER_PROPERTY = "provider"
VERSION_PROPERTY = "tsfile.version"

_SPARK_TYPE_NAMES: dict[str, SparkType] = {
    "boolean": "BOOLEAN",
    "int": "INT",
    "bigint": "BIGINT",
    "float": "FLOAT",
    "double": "DOUBLE",
    "string": "STRING",
    "date": "DATE",
    "timestamp": "TIMESTAMP",
    "binary": "BINARY",
}


def alter_changes(
    name: TableName,
    changes: Sequence[Mapping[str, Any]],
    columns: Mapping[str, str],
    never_null: Sequence[str] = (),
) -> list[Change]:
    """``changes`` as the table layer's, in order; adjacent ones of a kind (``ADD COLUMNS (a,
    b)``, ``DROP COLUMNS (a, b)``, ``SET TBLPROPERTIES`` of several keys arrive one per column
    or key) as one. ``columns`` maps each of the table's columns (lower case) to its Spark
    type (``simpleString``); ``never_null`` names ``time`` and the TAGs, which a REPLACE
    COLUMNS may declare NOT NULL.

    Raises:
        SqlError: a change tsfile tables do not support, naming it.
    """
    replaced = _replaced(name, changes, columns, never_null)
    if replaced is not None:
        return [replaced]
    out: list[Change] = []
    for change in changes:
        step = _change(name, change)
        last = out[-1] if out else None
        if isinstance(step, AddColumns) and isinstance(last, AddColumns):
            out[-1] = AddColumns((*last.columns, *step.columns))
        elif (
            isinstance(step, DropColumns)
            and isinstance(last, DropColumns)
            and step.if_exists == last.if_exists
        ):
            out[-1] = DropColumns((*last.columns, *step.columns), step.if_exists)
        elif isinstance(step, SetTableProperties) and isinstance(last, SetTableProperties):
            out[-1] = SetTableProperties({**last.properties, **step.properties})
        elif isinstance(step, UnsetTableProperties) and isinstance(last, UnsetTableProperties):
            out[-1] = UnsetTableProperties((*last.keys, *step.keys))
        else:
            out.append(step)
    return out


def _change(name: TableName, change: Mapping[str, Any]) -> Change:
    kind = change["kind"]
    single = len(change.get("column") or ()) == 1
    column = str(change["column"][0]) if single else ""
    if kind == "SetProperty":
        return SetTableProperties({_settable(name, change["property"]): change["value"]})
    if kind == "RemoveProperty":
        return UnsetTableProperties((_removable(name, change["property"]),))
    if kind == "AddColumn" and single:
        _check_added(name, change)
        after = change.get("after")
        new = NewColumn(
            column,
            _type(name, column, change["type"]),
            after=None if after is None else str(after),
            first=after is None and bool(change.get("first")),
        )
        return AddColumns((new,))
    if kind == "UpdateColumnType" and single:
        return ChangeColumnType(column, _type(name, column, change["type"]))
    if kind == "DeleteColumn" and single:
        return DropColumns((column,), bool(change.get("if_exists")))
    if kind == "RenameColumn" and single:
        return RenameColumn(column, str(change["new_name"]))
    if kind == "UpdateColumnPosition" and single:
        after = change.get("after")
        return MoveColumn(column, None if after is None else str(after))
    if kind == "UpdateColumnNullability" and single and change.get("nullable"):
        return DropNotNull(column)
    raise SqlError(
        f"ALTER TABLE {name}: {_change_text(change)} is not supported on tsfile "
        "tables (supported: ADD COLUMNS, REPLACE COLUMNS, RENAME COLUMN, DROP COLUMNS, ALTER "
        "COLUMN ... TYPE to a wider type / FIRST / AFTER / DROP NOT NULL, SET/UNSET "
        "TBLPROPERTIES, RENAME TO)"
    )


def _replaced(
    name: TableName,
    changes: Sequence[Mapping[str, Any]],
    columns: Mapping[str, str],
    never_null: Sequence[str],
) -> ReplaceColumns | None:
    """Spark's REPLACE COLUMNS (a drop of every column the table has, then the adds) as
    one change, None for any other call.

    Raises:
        SqlError: a listed column Spark declared with a clause a tsfile column cannot hold,
            or ``time`` given another type than the table reads it as.
    """
    dropped = [c for c in changes if c["kind"] == "DeleteColumn"]
    added = changes[len(dropped) :]
    if (
        not added
        or any(c["kind"] != "AddColumn" or len(c.get("column") or ()) != 1 for c in added)
        or any(len(c.get("column") or ()) != 1 for c in dropped)
        or [c["kind"] for c in changes[: len(dropped)]] != ["DeleteColumn"] * len(dropped)
        or sorted(str(c["column"][0]).lower() for c in dropped) != sorted(columns)
    ):
        return None
    out: list[tuple[str, DataType]] = []
    for change in added:
        column = str(change["column"][0]).lower()
        if column in never_null:
            _check_added(name, {**change, "nullable": True})
        else:
            _check_added(name, change)
        type_name = str(change["type"])
        if column == TIME_COLUMN and type_name != columns[TIME_COLUMN]:
            raise SqlError(
                f"ALTER TABLE {name} REPLACE COLUMNS: column 'time' is read as "
                f"{columns[TIME_COLUMN]}, not {type_name}: the table's timestamp keeps its type"
            )
        out.append((column, _type(name, column, type_name)))
    return ReplaceColumns(tuple(out))


def _type(table: TableName, column: str, type_name: str) -> DataType:
    return tsfile_type_of_sql(column_spec(table, column, type_name).data_type)


def column_spec(table: TableName, name: str, type_name: str) -> ColumnSpec:
    """A column Spark declared (its type as Spark's ``simpleString``)."""
    spark_type = _SPARK_TYPE_NAMES.get(type_name)
    if spark_type is None:
        raise SqlError(
            f"table {table}: column {name!r} has type {type_name}, which tsfile tables do not "
            f"support (supported: {', '.join(sorted(_SPARK_TYPE_NAMES))})"
        )
    return ColumnSpec(name, spark_type)


def _settable(name: TableName, key: str) -> str:
    """``key`` of a SET TBLPROPERTIES, unless it is one the catalog shows (Spark hands
    ``ALTER TABLE ... SET LOCATION`` over as a SET of ``location``)."""
    if key.lower() == "location":
        raise SqlError(
            f"ALTER TABLE {name} SET LOCATION: a tsfile table's location cannot change; "
            "register the folder under a name with CREATE TABLE ... USING tsfile LOCATION '...'"
        )
    if key.lower() in (PROVIDER_PROPERTY, VERSION_PROPERTY):
        raise SqlError(
            f"ALTER TABLE {name} SET TBLPROPERTIES: {key!r} is shown by the catalog (the "
            "table's provider or loaded version), not a table property; it cannot be set"
        )
    return key


def _removable(name: TableName, key: str) -> str:
    """``key`` of an UNSET TBLPROPERTIES, unless it is one the catalog shows."""
    if key.lower() in (PROVIDER_PROPERTY, "location", VERSION_PROPERTY):
        raise SqlError(
            f"ALTER TABLE {name} UNSET TBLPROPERTIES: {key!r} is shown by the catalog (the "
            "table's provider, location or loaded version), not a table property; it cannot "
            "be unset"
        )
    return key


def _check_added(table: TableName, change: Mapping[str, Any]) -> None:
    """Refuse what ADD COLUMNS would otherwise drop: NOT NULL, a DEFAULT (FIRST/AFTER are
    the schema's to place or refuse)."""
    column = change["column"][0]
    refused = [
        clause
        for clause, given in (
            ("NOT NULL", not change.get("nullable", True)),
            ("DEFAULT", change.get("has_default", False)),
        )
        if given
    ]
    if refused:
        raise SqlError(
            f"ALTER TABLE {table}: column {column!r} has {' and '.join(refused)}, "
            "which tsfile tables do not support (a new column is a nullable FIELD, NULL in "
            "the rows written before it)"
        )


def _change_text(change: Mapping[str, Any]) -> str:
    column = change.get("column")
    return change["kind"] + (f" of column {'.'.join(column)!r}" if column else "")
