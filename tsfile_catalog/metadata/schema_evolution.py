"""ALTER TABLE's column changes as pure functions of the schema: add, rename, drop, move.

None rewrites a part: columns keep their ids and physical names
(:mod:`tsfile_catalog.metadata.schema`), so a rename changes the name a reader shows, a drop
forgets the column (its physical name stays taken: a column added back under that name is a
new, empty column), and a move changes the order a reader shows. TAG columns are the device
identity every part file records (names and order), so they are neither renamed nor dropped:
each such change is refused naming the column.

Column order: part files (and the read and write paths) keep every row as ``time``, then the
TAG columns (in device identity order), then the FIELD columns. The order a user sees is free:
``FIRST`` and ``AFTER`` place any column, ``time`` and TAGs too, anywhere. An order that is
still ``time``, the TAGs, then the FIELDs (a FIELD moved among the FIELDs) is recorded as the
columns' own order, as every release reads it; any other is recorded as the schema's display
order (``TableSchema.order``), which every reader projects to (``SELECT *``, ``DESCRIBE``, the
Spark schema, so a positional ``INSERT … VALUES`` takes values in that order) and which
releases that cannot follow it refuse to read (manifest ``format_version`` 4).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from tsfile_catalog.exceptions import SchemaError, SchemaMismatchError
from tsfile_catalog.metadata.schema import (
    TIME_COLUMN,
    TIME_ID,
    Category,
    Column,
    DataType,
    TableSchema,
    evolve,
)
from tsfile_catalog.metadata.schema_merge import widens

__all__ = [
    "NewColumn",
    "add_columns",
    "change_column_type",
    "rename_column",
    "drop_columns",
    "move_column",
    "replace_columns",
    "check_drop_not_null",
]

_NO_REWRITE = "parts are never rewritten by ALTER TABLE, and their values cannot be converted"


@dataclass(frozen=True, slots=True)
class NewColumn:
    """A FIELD column ``ALTER TABLE … ADD COLUMNS`` adds: last, right ``after`` a column, or
    ``first`` (FIRST); the place is only where users see it (see the module docstring)."""

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
        SchemaError: none given, a name that exists already, is repeated or is ``time``, or
            AFTER a column the table lacks.
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
        shown = out.display_ids
        if new.first or new.after is not None:
            at = _place(out, shown, name, None if new.first else new.after, verb="add")
        else:
            at = len(shown)
        out = _with(out, (*out.columns, Column(name, new.type, Category.FIELD)))
        added = _id_of(out, name)
        out = _shown(out, (*shown[:at], added, *shown[at:]))
    return out


def change_column_type(schema: TableSchema, column: str, data_type: DataType) -> TableSchema:
    """``schema`` with FIELD ``column`` widened to ``data_type`` (INT32 -> INT64, FLOAT ->
    DOUBLE): readers cast older parts up, nothing is rewritten. Its own type is no change
    (the same schema).

    Raises:
        SchemaError: no such column, or a TAG column (or ``time``).
        SchemaMismatchError: a change other than the two widenings.
    """
    name = column.lower()
    current = _field(
        schema,
        name,
        "change",
        tags_because="identify the devices in every part file and never change",
    )
    if current.type is data_type:
        return schema
    if not widens(current.type, data_type):
        raise SchemaMismatchError(
            f"cannot change column {name!r} of table {schema.table} from "
            f"{current.type.value} to {data_type.value}: only INT32 -> INT64 and FLOAT -> "
            f"DOUBLE widen without rewriting data; other changes are refused because "
            f"{_NO_REWRITE}"
        )
    return replace(
        schema,
        columns=tuple(replace(c, type=data_type) if c is current else c for c in schema.columns),
    )


def replace_columns(schema: TableSchema, columns: Sequence[tuple[str, DataType]]) -> TableSchema:
    """``schema`` with exactly ``columns``, in that order (``REPLACE COLUMNS``), as Delta and
    a Parquet table read it: a listed column the table has is that column, its values kept
    (its type the same or a widening); the FIELDs not listed are dropped and the new names
    added as FIELDs. ``time`` and every TAG must be listed (the caller checks that ``time``'s
    type is the one the table reads it as; a TAG keeps its type).

    Raises:
        SchemaError: a name listed twice, ``time`` or a TAG left out, a TAG given another
            type, or a type change that is not a widening (naming the column).
    """
    names = [name.lower() for name, _ in columns]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise SchemaError(
            f"ALTER TABLE {schema.table} REPLACE COLUMNS: column {repeated[0]!r} given twice"
        )
    listed = dict(zip(names, (t for _, t in columns), strict=True))
    for name in (TIME_COLUMN, *schema.tag_names):
        if name not in listed:
            _field(schema, name, "drop")  # refuses time and TAGs, naming them
    for tag in schema.tags:
        given = listed[tag.name]
        if given is not tag.type and not (given.is_string and tag.type.is_string):
            raise SchemaError(
                f"cannot change TAG column {tag.name!r} of table {schema.table} from "
                f"{tag.type.value} to {given.value}: TAG columns identify the "
                "devices in every part file and never change"
            )
    gone = [c.name for c in schema.fields if c.name not in listed]
    out = drop_columns(schema, gone) if gone else schema
    for name, data_type in listed.items():
        current = out.column(name)
        if current is not None and current.category is Category.FIELD:
            out = change_column_type(out, name, data_type)
    new = [NewColumn(n, t) for n, t in listed.items() if n != TIME_COLUMN and out.column(n) is None]
    if new:
        out = add_columns(out, new)
    return _shown(out, tuple(_id_of(out, n) for n in names))


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
    """``schema`` with ``column`` (any, ``time`` and TAGs too) shown right after ``after``
    (``None``: FIRST). Only the order users see changes (see the module docstring).

    Raises:
        SchemaError: no column ``column`` or ``after``.
    """
    name = column.lower()
    if name != TIME_COLUMN and schema.column(name) is None:
        raise SchemaError(_missing(schema, name))
    if after is not None and after.lower() == name:
        return schema
    moved = _id_of(schema, name)
    rest = [i for i in schema.display_ids if i != moved]
    at = _place(schema, rest, name, after, verb="move")
    return _shown(schema, (*rest[:at], moved, *rest[at:]))


def _place(
    schema: TableSchema, shown: Sequence[int], column: str, after: str | None, *, verb: str
) -> int:
    """Where in ``shown`` (display ids) ``column`` goes to sit right after ``after``
    (``None``: FIRST).

    Raises:
        SchemaError: no column ``after``.
    """
    if after is None:
        return 0
    anchor = after.lower()
    if anchor != TIME_COLUMN and schema.column(anchor) is None:
        raise SchemaError(
            f"cannot {verb} column '{column}' {_PREPOSITION[verb]} table {schema.table} "
            f"AFTER {anchor}: the table has no column '{anchor}'"
        )
    return shown.index(_id_of(schema, anchor)) + 1


def _id_of(schema: TableSchema, name: str) -> int:
    if name == TIME_COLUMN:
        return TIME_ID
    col = schema.column(name)
    assert col is not None and col.id is not None, "a committed column"
    return col.id


def _shown(schema: TableSchema, shown: Sequence[int]) -> TableSchema:
    """``schema`` shown in ``shown`` order (display ids): the FIELDs in ``columns`` follow
    it too, so that an order of ``time``, the TAGs, then the FIELDs is recorded as the
    columns alone (as readers of every release read it) and only another one as ``order``."""
    fields = {c.id: c for c in schema.fields}
    columns = (*schema.tags, *(fields[i] for i in shown if i in fields))
    return replace(schema, columns=columns, order=tuple(shown))


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


def _field(
    schema: TableSchema,
    column: str,
    verb: str,
    *,
    tags_because: str = (
        "(names and order) identify the devices in every part file; only FIELD columns can "
        "be renamed, dropped or moved"
    ),
) -> Column:
    """The FIELD ``column`` of ``schema`` that is to be ``verb``-ed (a rename, drop, move or
    type change), refusing ``time``, a TAG (``tags_because`` says why) or no such column."""
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
            f"cannot {verb} TAG column '{name}' of table {schema.table}: TAG columns {tags_because}"
        )
    return current


def _missing(schema: TableSchema, name: str) -> str:
    return f"table {schema.table} has no column '{name}' (columns: {', '.join(schema.names)})"


def _with(schema: TableSchema, columns: tuple[Column, ...]) -> TableSchema:
    return evolve(
        TableSchema(
            table=schema.table,
            columns=columns,
            dropped=schema.dropped,
            last_column_id=schema.last_column_id,
            order=schema.order,
        ),
        schema,
    )
