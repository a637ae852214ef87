"""Schema enforcement and evolution for appends: what a write may do to the table schema.

The rules follow what a Delta Lake user expects, adapted to TsFile's TAG/FIELD model:

* The table name and the TAG columns (names, order, types) are the device identity of every
  part, so they never change, with or without ``merge``.
* FIELD columns are matched by name; their order in the incoming data does not matter.
* An incoming batch may lack FIELD columns the table has: those rows read them as null (Delta's
  "missing columns are null" rule). New FIELD columns need ``merge=True`` and are appended at
  the end of the table schema, in incoming order; older parts read them as null.
* TEXT and STRING are one family (both are Spark strings): either is accepted for the other and
  the table keeps its declared type.
* INT32 -> INT64 and FLOAT -> DOUBLE widen the table column, only with ``merge=True``; the
  narrower incoming type (INT32 into an INT64 column) is always accepted, because readers
  widen per part anyway. Everything else is a :class:`SchemaMismatchError`.
"""

from __future__ import annotations

import json

from tsfile_catalog.exceptions import SchemaMismatchError
from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema, evolve

__all__ = ["merge_schema", "merged_read_schema", "widens"]

_WIDENINGS = frozenset({(DataType.INT32, DataType.INT64), (DataType.FLOAT, DataType.DOUBLE)})


def merge_schema(old: TableSchema | None, incoming: TableSchema, *, merge: bool) -> TableSchema:
    """The table schema after appending data of schema ``incoming`` to a table of ``old``.

    Pure: nothing is committed. Returns ``old`` itself when the append leaves it unchanged, so
    callers can tell whether a schema change must be recorded.

    Args:
        old: the current table schema; None when the write creates the table.
        incoming: the schema of the data being written.
        merge: allow new FIELD columns and INT32->INT64 / FLOAT->DOUBLE widening.

    Raises:
        SchemaMismatchError: naming the column and both types (or categories).
    """
    if old is None:
        return incoming
    if incoming.table != old.table:
        raise SchemaMismatchError(
            f"cannot write table '{incoming.table}' data into table '{old.table}': the TsFile "
            "table name is part of every part file"
        )
    _check_tags(old, incoming)

    widened: dict[str, Column] = {}
    added: list[Column] = []
    for col in incoming.columns:
        if col.category is Category.TAG:
            continue
        current = old.column(col.name)
        if current is None:
            if col.id is not None and any(c.id == col.id for c in old.columns):
                raise SchemaMismatchError(
                    f"column '{col.name}' of table '{old.table}' was renamed while this write "
                    "ran; nothing was committed: retry the write"
                )
            if not merge:
                raise SchemaMismatchError(
                    f"column '{col.name}' ({col.type.value}) is not in table '{old.table}'; "
                    "write with mergeSchema=true to add it"
                )
            added.append(col)
            continue
        if col.id is not None and col.physical != current.physical:
            # Parts staged for a column that was renamed away, or dropped and added back,
            # while the write ran would be read under another column (or not at all).
            raise SchemaMismatchError(
                f"column '{col.name}' of table '{old.table}' was renamed, or dropped and "
                "added back, while this write ran; nothing was committed: retry the write"
            )
        if current.category is not Category.FIELD:
            raise SchemaMismatchError(
                f"column '{col.name}' is a TAG in table '{old.table}' but a FIELD in the "
                "incoming data; TAG columns can never change"
            )
        new_type = _merged_type(old.table, current, col.type, merge=merge)
        if new_type is not current.type:
            widened[col.name] = Column(
                col.name, new_type, Category.FIELD, current.id, current.physical_name
            )

    if not widened and not added:
        return old
    columns = [widened.get(c.name, c) for c in old.columns]
    # Ids carried, new columns given theirs (and a fresh physical name if a dropped column
    # had theirs), before any part is staged under them.
    return evolve(TableSchema(table=old.table, columns=(*columns, *added), order=old.order), old)


def merged_read_schema(old: TableSchema, text: str) -> TableSchema:
    """The schema ``text`` (manifest JSON) to read a version of schema ``old`` under: what
    merging data into ``old`` makes (its columns, widened, then new ones no part holds,
    which read as NULL), as a ``mergeSchema`` write will commit it.

    Raises:
        SchemaMismatchError: ``text`` is no such schema of ``old`` (naming both).
    """
    try:
        merged = TableSchema.from_json(json.loads(text))
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise SchemaMismatchError(f"option 'mergedSchema' is no table schema: {e}") from None
    try:
        again = merge_schema(old, merged, merge=True)
    except SchemaMismatchError as e:
        raise SchemaMismatchError(f"option 'mergedSchema': {e}") from None
    if again != merged:
        raise SchemaMismatchError(
            f"option 'mergedSchema' ({', '.join(merged.names)}) is not what a merge into "
            f"table '{old.table}' ({', '.join(old.names)}) makes"
        )
    return merged


def widens(old: DataType, new: DataType) -> bool:
    """Whether a column of type ``old`` may become ``new`` (INT32->INT64, FLOAT->DOUBLE):
    readers cast every older part up, so no data is rewritten."""
    return (old, new) in _WIDENINGS


def _check_tags(old: TableSchema, incoming: TableSchema) -> None:
    old_tags = tuple((c.name, c.type.is_string) for c in old.tags)
    new_tags = tuple((c.name, c.type.is_string) for c in incoming.tags)
    if old_tags == new_tags:
        return
    for col in incoming.tags:
        current = old.column(col.name)
        if current is not None and current.category is Category.FIELD:
            raise SchemaMismatchError(
                f"column '{col.name}' is a FIELD in table '{old.table}' but a TAG in the "
                "incoming data; TAG columns can never change"
            )
    raise SchemaMismatchError(
        f"TAG columns of table '{old.table}' are ({', '.join(old.tag_names)}) but the incoming "
        f"data has ({', '.join(incoming.tag_names)}); TAG columns (names and order) can never "
        "change, even with mergeSchema"
    )


def _merged_type(table: str, current: Column, incoming: DataType, *, merge: bool) -> DataType:
    old = current.type
    if incoming is old or (incoming.is_string and old.is_string):
        return old
    if (incoming, old) in _WIDENINGS:
        return old
    if (old, incoming) in _WIDENINGS:
        if merge:
            return incoming
        raise SchemaMismatchError(
            f"column '{current.name}' of table '{table}' is {old.value} but the incoming data "
            f"has {incoming.value}; write with mergeSchema=true to widen it"
        )
    raise SchemaMismatchError(
        f"column '{current.name}' of table '{table}' is {old.value} but the incoming data has "
        f"{incoming.value}; only INT32->INT64 and FLOAT->DOUBLE widening is supported"
    )
