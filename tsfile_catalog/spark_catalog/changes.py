"""Spark's ``ALTER TABLE`` changes (``TableChange``, as ``Changes.java`` hands them over) as
the Catalog's own ALTER TABLE statements, which decide what a tsfile table supports.

Every change is checked before any statement runs, so a refused change commits nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tsfile_catalog.exceptions import SqlError
from tsfile_catalog.sql.statements import (
    AlterTableAddColumns,
    AlterTableAlterColumn,
    AlterTableChangeColumn,
    AlterTableDropColumns,
    AlterTableRenameColumn,
    AlterTableSetProperties,
    AlterTableUnsetProperties,
    ColumnPosition,
    ColumnSpec,
    SparkType,
    Statement,
    TableName,
)

__all__ = ["PROVIDER_PROPERTY", "VERSION_PROPERTY", "alter_statements", "column_spec"]

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


def alter_statements(name: TableName, changes: Sequence[Mapping[str, Any]]) -> list[Statement]:
    """The statements that apply ``changes`` in order: column renames, moves, type and
    nullability changes one each as given; then the added columns, the dropped ones (``DROP
    COLUMNS (a, b)`` arrives as one change per column: one commit for them all), the set and
    the removed properties, one statement each.

    Raises:
        SqlError: a change tsfile tables do not support, naming it.
    """
    properties: dict[str, str] = {}
    unset: list[str] = []
    added: list[ColumnSpec] = []
    positions: list[ColumnPosition | None] = []
    dropped: list[str] = []
    drop_if_exists = False
    out: list[Statement] = []
    for change in changes:
        kind = change["kind"]
        single = len(change.get("column") or ()) == 1
        if kind == "SetProperty":
            properties[_settable(name, change["property"])] = change["value"]
        elif kind == "RemoveProperty":
            unset.append(_removable(name, change["property"]))
        elif kind == "AddColumn" and single:
            _check_added(name, change)
            added.append(column_spec(name, change["column"][0], change["type"]))
            after = change.get("after")
            positions.append(
                ColumnPosition(after=str(after))
                if after is not None
                else ColumnPosition()
                if change.get("first")
                else None
            )
        elif kind == "UpdateColumnType" and single:
            column = column_spec(name, change["column"][0], change["type"])
            out.append(AlterTableAlterColumn(table=name, column=column))
        elif kind == "DeleteColumn" and single:
            dropped.append(str(change["column"][0]))
            drop_if_exists = bool(change.get("if_exists"))
        elif kind == "RenameColumn" and single:
            out.append(
                AlterTableRenameColumn(
                    table=name, column=str(change["column"][0]), new_name=change["new_name"]
                )
            )
        elif kind == "UpdateColumnPosition" and single:
            out.append(
                AlterTableChangeColumn(
                    table=name, column=str(change["column"][0]), after=change.get("after")
                )
            )
        elif kind == "UpdateColumnNullability" and single and change.get("nullable"):
            out.append(
                AlterTableChangeColumn(
                    table=name, column=str(change["column"][0]), drop_not_null=True
                )
            )
        else:
            raise SqlError(
                f"ALTER TABLE {name}: {_change_text(change)} is not supported on tsfile "
                "tables (supported: ADD COLUMNS, RENAME COLUMN, DROP COLUMNS, ALTER COLUMN "
                "... TYPE to a wider type / FIRST / AFTER / DROP NOT NULL, SET/UNSET "
                "TBLPROPERTIES, RENAME TO)"
            )
    if added:
        out.append(
            AlterTableAddColumns(table=name, columns=tuple(added), positions=tuple(positions))
        )
    if dropped:
        out.append(
            AlterTableDropColumns(table=name, columns=tuple(dropped), if_exists=drop_if_exists)
        )
    if properties:
        out.append(AlterTableSetProperties(table=name, properties=properties))
    if unset:
        out.append(AlterTableUnsetProperties(table=name, keys=tuple(unset)))
    return out


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
            f"ALTER TABLE {table} ADD COLUMNS: column {column!r} has {' and '.join(refused)}, "
            "which tsfile tables do not support (a new column is a nullable FIELD, NULL in "
            "the rows written before it)"
        )


def _change_text(change: Mapping[str, Any]) -> str:
    column = change.get("column")
    return change["kind"] + (f" of column {'.'.join(column)!r}" if column else "")
