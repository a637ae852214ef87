"""ALTER TABLE's column changes as pure functions of the schema: add, rename, drop, move.

None rewrites a part: columns keep their ids and physical names
(:mod:`tsfile_catalog.metadata.schema`), so a rename changes the name a reader shows, a drop
forgets the column (its physical name stays taken: a column added back under that name is a
new, empty column), and a move changes the order a reader shows. TAG columns are the device
identity every part file records (names and order), so they are neither renamed, dropped nor
moved: each such change is refused naming the column.

Column order: every row is ``time``, then the TAG columns (in device identity order), then the
FIELD columns, and only the FIELDs' order is free. ``FIRST`` (Spark's, Delta's and Iceberg's
"before every column") is therefore refused rather than read as "first FIELD": a user who
moved a column FIRST would write ``INSERT … VALUES`` by position with its value first, and
Spark would cast it to ``time``. A FIELD goes ``AFTER`` the last TAG (``time`` when there is
none) at the earliest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from tsfile_catalog.exceptions import SchemaError
from tsfile_catalog.metadata.schema import (
    TIME_COLUMN,
    Category,
    Column,
    DataType,
    TableSchema,
    evolve,
)

__all__ = [
    "NewColumn",
    "add_columns",
    "rename_column",
    "drop_columns",
    "move_column",
    "check_drop_not_null",
]


@dataclass(frozen=True, slots=True)
class NewColumn:
    """A FIELD column ``ALTER TABLE … ADD COLUMNS`` adds: last, or right ``after`` a column
    (``first``: FIRST, which is refused, see the module docstring)."""

    name: str
    type: DataType
    after: str | None = None
    first: bool = False


def add_columns(schema: TableSchema, columns: Sequence[NewColumn]) -> TableSchema:
    """``schema`` with the FIELD ``columns`` added in order, each last or where it says
    (``AFTER`` may name a column added before it in the same list, as in Spark). A name a
    dropped column had is a new column under a fresh physical name: it never reads the
    dropped column's data.

    Raises:
        SchemaError: none given, a name that exists already, is repeated or is ``time``, or a
            place a FIELD cannot take (FIRST, AFTER a TAG but the last, an unknown column).
    """
    if not columns:
        raise SchemaError(f"ALTER TABLE {schema.table} ADD COLUMNS: no columns given")
    out = schema
    for new in columns:
        name = new.name.lower()
        if name == TIME_COLUMN or out.column(name) is not None:
            raise SchemaError(
                f"cannot add column {name!r} to table {schema.table}: a column of that name "
                "exists already"
            )
        column = Column(name, new.type, Category.FIELD)
        if new.first or new.after is not None:
            where = None if new.first else new.after
            at = _place(out, name, where, verb="add")
        else:
            at = len(out.columns)
        out = _with(out, (*out.columns[:at], column, *out.columns[at:]))
    return out


def rename_column(schema: TableSchema, column: str, new_name: str) -> TableSchema:
    """``schema`` with FIELD ``column`` named ``new_name`` (the same schema when equal).

    Raises:
        SchemaError: no such column, a TAG column, or ``new_name`` taken (or ``time``).
    """
    current = _field(schema, column, "rename")
    new_name = new_name.lower()
    if new_name == current.name:
        return schema
    if new_name == TIME_COLUMN or schema.column(new_name) is not None:
        raise SchemaError(
            f"cannot rename column '{current.name}' of table {schema.table} to '{new_name}': "
            "a column of that name exists already"
        )
    renamed = replace(current, name=new_name, physical_name=current.physical)
    return _with(schema, tuple(renamed if c is current else c for c in schema.columns))


def drop_columns(
    schema: TableSchema, columns: Sequence[str], *, if_exists: bool = False
) -> TableSchema:
    """``schema`` without the FIELD ``columns`` (recorded as dropped).

    Raises:
        SchemaError: no such column (unless ``if_exists``), a TAG column, or none given.
    """
    if not columns:
        raise SchemaError(f"ALTER TABLE {schema.table} DROP COLUMNS: no columns given")
    gone: set[str] = set()
    for name in columns:
        if if_exists and schema.column(name) is None and name.lower() != TIME_COLUMN:
            continue
        gone.add(_field(schema, name, "drop").name)
    if not gone:
        return schema
    return _with(schema, tuple(c for c in schema.columns if c.name not in gone))


def move_column(schema: TableSchema, column: str, *, after: str | None) -> TableSchema:
    """``schema`` with FIELD ``column`` right after ``after`` (``None``: FIRST).

    ``time`` and the TAG columns come first in every row, so a FIELD goes after the last TAG
    (or ``time``) at the earliest; FIRST, or AFTER an earlier TAG, is refused.

    Raises:
        SchemaError: no such column, a TAG column, or a place before the last TAG.
    """
    current = _field(schema, column, "move")
    if after is not None and after.lower() == current.name:
        return schema
    rest = replace(schema, columns=tuple(c for c in schema.columns if c is not current))
    at = _place(rest, current.name, after, verb="move")
    return _with(schema, (*rest.columns[:at], current, *rest.columns[at:]))


def _place(schema: TableSchema, column: str, after: str | None, *, verb: str) -> int:
    """Where in ``schema.columns`` FIELD ``column`` goes to sit right after ``after``
    (``None``: FIRST, refused).

    Raises:
        SchemaError: FIRST, AFTER a TAG but the last, or no column ``after``.
    """
    last_key = schema.tag_names[-1] if schema.tags else TIME_COLUMN
    anchor = None if after is None else after.lower()
    if anchor == TIME_COLUMN and last_key == TIME_COLUMN:
        return 0
    if anchor is not None and (anchor == last_key or anchor in _field_names(schema)):
        return next(i for i, c in enumerate(schema.columns) if c.name == anchor) + 1
    where = "FIRST" if anchor is None else f"AFTER {anchor}"
    what = f"cannot {verb} column '{column}' {_PREPOSITION[verb]} table {schema.table} {where}"
    if anchor is not None and anchor != TIME_COLUMN and schema.column(anchor) is None:
        raise SchemaError(f"{what}: the table has no column '{anchor}'")
    raise SchemaError(
        f"{what}: time and the TAG columns come first in every row; a FIELD goes after "
        f"'{last_key}' at the earliest"
    )


def check_drop_not_null(schema: TableSchema, column: str) -> None:
    """``ALTER COLUMN … DROP NOT NULL``: every TAG and FIELD column already takes nulls, so
    the change is none; ``time`` never does.

    Raises:
        SchemaError: ``time``, or no such column.
    """
    name = column.lower()
    if name == TIME_COLUMN:
        raise SchemaError(
            f"cannot drop NOT NULL of column 'time' of table {schema.table}: every row has a time"
        )
    if schema.column(name) is None:
        raise SchemaError(_missing(schema, name))


_PREPOSITION = {"add": "to", "move": "of"}


def _field(schema: TableSchema, column: str, verb: str) -> Column:
    name = column.lower()
    current = schema.column(name)
    if current is None:
        if name == TIME_COLUMN:
            raise SchemaError(
                f"cannot {verb} column 'time' of table {schema.table}: it is the table's "
                "timestamp, not a column that can change"
            )
        raise SchemaError(_missing(schema, name))
    if current.category is Category.TAG:
        raise SchemaError(
            f"cannot {verb} TAG column '{name}' of table {schema.table}: TAG columns (names "
            "and order) identify the devices in every part file; only FIELD columns can be "
            "renamed, dropped or moved"
        )
    return current


def _missing(schema: TableSchema, name: str) -> str:
    return f"table {schema.table} has no column '{name}' (columns: {', '.join(schema.names)})"


def _field_names(schema: TableSchema) -> set[str]:
    return {c.name for c in schema.fields}


def _with(schema: TableSchema, columns: tuple[Column, ...]) -> TableSchema:
    return evolve(
        TableSchema(
            table=schema.table,
            columns=columns,
            dropped=schema.dropped,
            last_column_id=schema.last_column_id,
        ),
        schema,
    )
