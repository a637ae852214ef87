"""The table schema model: TsFile's table model, engine-free.

A row is ``(time, tag_1..tag_n, field_1..field_m)``. ``time`` is implicit (TsFile keeps it
outside the column list); TAG columns identify the device, in order; FIELD columns are values.
Names are lower case, as in TsFile's table model.

Columns have ids (Iceberg's field ids, Delta's column mapping): each column keeps its id and
its *physical name*, the name part files and part statistics use, for its whole life. A
rename changes the name only, a drop forgets the column (its physical name is never used
again), so no part is rewritten and no column ever reads another's data
(``docs/manifest-format.md``, "Column ids"). A schema recorded before ids existed gets ids
1..n in column order when read, each column's physical name equal to its name.

The order a user sees (``SELECT *``, ``DESCRIBE``, a positional ``INSERT``) is free: ``order``
records it, by column id (``time`` is 0), only when it is not the canonical one (``time``, the
TAGs, the FIELDs); :attr:`TableSchema.display_names` is it, :attr:`TableSchema.names` the
canonical order part files and the read and write paths keep (``docs/manifest-format.md``,
"Column order").
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from tsfile_catalog.exceptions import SchemaError, UnsupportedTypeError

__all__ = ["TIME_COLUMN", "TIME_ID", "DataType", "Category", "Column", "TableSchema", "evolve"]

TIME_COLUMN = "time"

# ``time``'s id in a display order (column ids start at 1).
TIME_ID = 0


class DataType(str, enum.Enum):
    """TsFile data types that tsfile-catalog maps to Spark."""

    BOOLEAN = "BOOLEAN"
    INT32 = "INT32"
    INT64 = "INT64"
    FLOAT = "FLOAT"
    DOUBLE = "DOUBLE"
    TEXT = "TEXT"
    STRING = "STRING"
    DATE = "DATE"
    TIMESTAMP = "TIMESTAMP"
    BLOB = "BLOB"

    @classmethod
    def parse(cls, name: str, *, column: str, where: str) -> DataType:
        try:
            return cls(name.upper())
        except ValueError:
            raise UnsupportedTypeError(
                f"column '{column}' in {where} has TsFile type {name}, which is not supported "
                f"(supported: {', '.join(t.value for t in cls)})"
            ) from None

    @property
    def is_numeric(self) -> bool:
        return self in _NUMERIC

    @property
    def is_string(self) -> bool:
        return self in (DataType.TEXT, DataType.STRING)


_NUMERIC = frozenset(
    {DataType.INT32, DataType.INT64, DataType.FLOAT, DataType.DOUBLE, DataType.TIMESTAMP}
)


class Category(str, enum.Enum):
    """Column categories tsfile-catalog supports (ATTRIBUTE and TIME-as-data are rejected)."""

    TAG = "TAG"
    FIELD = "FIELD"

    @classmethod
    def parse(cls, name: str, *, column: str, where: str) -> Category:
        try:
            return cls(name.upper())
        except ValueError:
            raise UnsupportedTypeError(
                f"column '{column}' in {where} has category {name}, which is not supported "
                "(only TAG and FIELD columns are; ATTRIBUTE and TIME-category data columns "
                "are not)"
            ) from None


@dataclass(frozen=True, slots=True)
class Column:
    """One column. ``id`` and ``physical_name`` are its identity in part files (see the
    module docstring); both are left out of equality, which compares what a user sees
    (names, types, categories, order): :meth:`TableSchema.same_mapping` compares the rest.
    ``id`` is None until the column is committed; ``physical_name`` None means the name."""

    name: str
    type: DataType
    category: Category
    id: int | None = field(default=None, compare=False)
    physical_name: str | None = field(default=None, compare=False)

    @property
    def physical(self) -> str:
        """The name part files and part statistics know this column by."""
        return self.physical_name or self.name

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "type": self.type.value,
            "category": self.category.value,
        }
        if self.id is not None:
            out["id"] = self.id
        if self.physical != self.name:
            out["physical_name"] = self.physical
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Column:
        name = str(obj["name"])
        raw_id = obj.get("id")
        if raw_id is not None and (isinstance(raw_id, bool) or not isinstance(raw_id, int)):
            raise SchemaError(f"column '{name}' has id {raw_id!r}; column ids are integers")
        physical = obj.get("physical_name")
        return cls(
            name=name,
            type=DataType.parse(str(obj["type"]), column=name, where="the schema"),
            category=Category.parse(str(obj["category"]), column=name, where="the schema"),
            id=raw_id,
            physical_name=None if physical is None or physical == name else str(physical),
        )


@dataclass(frozen=True)
class TableSchema:
    """An ordered TsFile table schema: TAG columns first (device identity order), then FIELDs.

    ``dropped`` are the columns dropped from the table (their physical names stay taken, so
    that a column added back under the same name never reads the old data) and
    ``last_column_id`` the largest id ever given; like the columns' ids they are left out of
    equality.

    ``order`` is the order a user sees, as column ids with ``time`` as :data:`TIME_ID`, or None
    for the canonical order (``time``, ``columns``). It is kept whole: ids of columns no
    longer there are left out, committed columns it lacks (added by an append) go last, and
    an order equal to the canonical one is None.
    """

    table: str
    columns: tuple[Column, ...]
    dropped: tuple[Column, ...] = field(default=(), compare=False)
    last_column_id: int = field(default=0, compare=False)
    order: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if not self.table:
            raise SchemaError("table name must not be empty")
        if self.order is not None:
            # Frozen: the one place the given order is made whole (see the docstring).
            object.__setattr__(self, "order", self._whole_order(self.order))
        physical: set[str] = set()
        # Columns without an id are not committed yet: evolve() gives them their names.
        for col in (*self.columns, *self.dropped):
            if col.id is None:
                continue
            if col.physical in physical:
                raise SchemaError(
                    f"column '{col.name}' of table '{self.table}' has physical name "
                    f"'{col.physical}', which another column has or had"
                )
            physical.add(col.physical)
        seen: set[str] = {TIME_COLUMN}
        seen_field = False
        for col in self.columns:
            if col.name != col.name.lower():
                raise SchemaError(f"column name '{col.name}' must be lower case")
            if col.name in seen:
                raise SchemaError(
                    f"duplicate column '{col.name}' in table '{self.table}' "
                    "(names are case-insensitive; 'time' is reserved for the timestamp)"
                )
            seen.add(col.name)
            if col.category is Category.TAG:
                if seen_field:
                    raise SchemaError(
                        f"TAG column '{col.name}' comes after a FIELD column in table "
                        f"'{self.table}'; TAG columns must come first"
                    )
                if not col.type.is_string:
                    raise UnsupportedTypeError(
                        f"TAG column '{col.name}' has type {col.type.value}; TAG columns "
                        "must be STRING"
                    )
            else:
                seen_field = True

    @classmethod
    def of(cls, table: str, columns: Iterable[Column]) -> TableSchema:
        return cls(table=table.lower(), columns=tuple(columns))

    @classmethod
    def declared(cls, table: str, columns: Iterable[Column], shown: Iterable[str]) -> TableSchema:
        """A new table's schema (ids given) shown in ``shown``, the order its creator declared
        every column in (``time`` included): a column list, a query's or DataFrame's columns,
        Arrow data's. ``columns`` are in the canonical order (TAGs, then FIELDs); the order
        is recorded only when ``shown`` is not that one, as Parquet, Delta and Iceberg keep
        a declared order.

        Raises:
            SchemaError: ``shown`` names an unknown column, one twice, or leaves one out.
        """
        schema = cls.of(table, columns).with_ids()
        return replace(schema, order=schema._ids_of(shown, where="the declared columns"))

    @property
    def tags(self) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if c.category is Category.TAG)

    @property
    def fields(self) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if c.category is Category.FIELD)

    @property
    def tag_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.tags)

    @property
    def names(self) -> tuple[str, ...]:
        """Every column of a row, ``time`` first: the canonical order, which part files, the
        read path and the writers keep (users see :attr:`display_names`)."""
        return (TIME_COLUMN, *(c.name for c in self.columns))

    @property
    def display_names(self) -> tuple[str, ...]:
        """Every column in the order a user sees: ``SELECT *``, ``DESCRIBE``, the Spark
        schema, a positional ``INSERT``. Columns not committed yet (no id) come last."""
        if self.order is None:
            return self.names
        by_id = {c.id: c.name for c in self.columns if c.id is not None}
        shown = tuple(TIME_COLUMN if i == TIME_ID else by_id[i] for i in self.order)
        return (*shown, *(c.name for c in self.columns if c.id is None))

    @property
    def display_ids(self) -> tuple[int, ...]:
        """:attr:`display_names` as ids (``time`` :data:`TIME_ID`), committed columns only."""
        if self.order is not None:
            return self.order
        return (TIME_ID, *(c.id for c in self.columns if c.id is not None))

    def _whole_order(self, order: tuple[int, ...]) -> tuple[int, ...] | None:
        ids = [c.id for c in self.columns if c.id is not None]
        known = {TIME_ID, *ids}
        if len(set(order)) != len(order):
            raise SchemaError(f"the column order of table '{self.table}' repeats a column")
        kept = [i for i in order if i in known]
        whole = (*kept, *(i for i in (TIME_ID, *ids) if i not in kept))
        return None if whole == (TIME_ID, *ids) else whole

    def column(self, name: str) -> Column | None:
        lowered = name.lower()
        for col in self.columns:
            if col.name == lowered:
                return col
        return None

    # -- column ids ---------------------------------------------------------------------------

    @property
    def is_mapped(self) -> bool:
        """Whether a reader matching part columns by name would misread this table: a
        column's physical name differs from its name, or a column was dropped (whose name
        a reader without ids could give back to a new column)."""
        return bool(self.dropped) or any(c.physical != c.name for c in self.columns)

    def physical_name(self, name: str) -> str:
        """The physical name of column ``name`` (``time`` and unknown names: themselves)."""
        col = self.column(name)
        return name if col is None else col.physical

    def physical_names(self) -> dict[str, str]:
        """Column name -> physical name, for the columns whose two differ."""
        return {c.name: c.physical for c in self.columns if c.physical != c.name}

    def file_schema(self) -> TableSchema:
        """This schema as part files carry it: each column under its physical name."""
        if all(c.physical == c.name for c in self.columns):
            return self
        return TableSchema(
            table=self.table,
            columns=tuple(Column(c.physical, c.type, c.category) for c in self.columns),
        )

    def stats_types(self) -> dict[str, DataType]:
        """FIELD type by physical name: how part statistics (keyed by physical name) decode;
        dropped columns too, so that their statistics round-trip unchanged."""
        fields = (c for c in (*self.dropped, *self.columns) if c.category is Category.FIELD)
        return {c.physical: c.type for c in fields}

    def same_mapping(self, other: TableSchema) -> bool:
        """Equal, and every column has the same physical name in both."""
        return self == other and all(
            a.physical == b.physical for a, b in zip(self.columns, other.columns, strict=True)
        )

    def with_ids(self) -> TableSchema:
        """This schema with ids given to the columns that have none (a schema recorded
        before ids, or a new table's): the next free ids in column order, physical name =
        name (which, without a dropped column, no other column has)."""
        if all(c.id is not None for c in self.columns):
            return self
        return evolve(self, None)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"table": self.table, "columns": [c.to_json() for c in self.columns]}
        if self.dropped:
            out["dropped"] = [c.to_json() for c in self.dropped]
        if self.last_column_id:
            out["last_column_id"] = self.last_column_id
        if self.order is not None:
            out["column_order"] = list(self.display_names)
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> TableSchema:
        last = obj.get("last_column_id", 0)
        if isinstance(last, bool) or not isinstance(last, int):
            raise SchemaError(f"last_column_id {last!r} is not an integer")
        schema = cls(
            table=str(obj["table"]),
            columns=tuple(Column.from_json(c) for c in obj["columns"]),
            dropped=tuple(Column.from_json(c) for c in obj.get("dropped") or ()),
            last_column_id=last,
        ).with_ids()
        shown = obj.get("column_order")
        if shown is None:
            return schema
        return replace(schema, order=schema._ids_of(shown, where="column_order"))

    def _ids_of(self, shown: Iterable[str], *, where: str) -> tuple[int, ...]:
        """The ids of ``shown``, every column's name once (``time`` too), in that order.

        Raises:
            SchemaError: a name the table lacks, one named twice, or a column left out.
        """
        ids = {TIME_COLUMN: TIME_ID, **{c.name: c.id for c in self.columns if c.id is not None}}
        out: list[int] = []
        for name in shown:
            if name not in ids:
                raise SchemaError(f"{where} of table '{self.table}' names no column {name!r}")
            if ids[name] in out:
                raise SchemaError(f"{where} of table '{self.table}' names {name!r} twice")
            out.append(ids[name])
        if len(out) != len(ids):
            raise SchemaError(
                f"{where} of table '{self.table}' lists {len(out)} of the {len(ids)} columns "
                f"({', '.join(self.names)})"
            )
        return tuple(out)


def evolve(new: TableSchema, base: TableSchema | None, *, fresh_names: bool = True) -> TableSchema:
    """``new`` as the next schema of a table whose schema is ``base``: ids kept, given, and
    the columns ``base`` had that ``new`` lacks recorded as dropped.

    A column of ``new`` without an id is ``base``'s column of the same name when there is
    one (a widening, a merge rebuilding the column), else a new column: the next id, and its
    name as physical name unless another column has or had that physical name; then, with
    ``fresh_names``, ``<name>_<id>`` (a name no part file holds), else an error (the caller
    already wrote parts under the plain name).

    Raises:
        SchemaError: a new column's name is a taken physical name and not ``fresh_names``.
    """
    base_columns = {} if base is None else {c.name: c for c in base.columns}
    last = max(
        (
            new.last_column_id,
            0 if base is None else base.last_column_id,
            *(c.id or 0 for c in (*new.columns, *new.dropped)),
            *(() if base is None else (c.id or 0 for c in (*base.columns, *base.dropped))),
        ),
        default=0,
    )
    kept_ids = {c.id for c in new.columns if c.id is not None}
    carried: list[Column] = []
    for col in new.columns:
        if col.id is None and col.name in base_columns:
            same = base_columns[col.name]
            if same.id is not None and same.id not in kept_ids:
                col = replace(col, id=same.id, physical_name=same.physical_name)
                kept_ids.add(same.id)
        carried.append(col)
    dropped = {c.id: c for c in new.dropped if c.id is not None}
    if base is not None:
        for col in (*base.dropped, *base.columns):
            if col.id is not None and col.id not in kept_ids:
                dropped.setdefault(col.id, col)
    for col_id in kept_ids:
        dropped.pop(col_id, None)
    taken = {c.physical for c in carried if c.id is not None} | {
        c.physical for c in dropped.values()
    }
    out: list[Column] = []
    for col in carried:
        if col.id is None:
            last += 1
            physical = col.physical
            if physical in taken:
                if not fresh_names:
                    raise SchemaError(
                        f"column '{col.name}' of table '{new.table}' cannot be added under "
                        f"physical name '{physical}': another column has or had it"
                    )
                physical = f"{col.name}_{last}"
                while physical in taken:
                    physical += "_"
            col = replace(col, id=last, physical_name=None if physical == col.name else physical)
        taken.add(col.physical)
        out.append(col)
    return TableSchema(
        table=new.table,
        columns=tuple(out),
        dropped=tuple(dropped[i] for i in sorted(dropped)),
        last_column_id=last,
        order=new.order,
    )
