"""The table schema model: TsFile's table model, engine-free.

A row is ``(time, tag_1..tag_n, field_1..field_m)``. ``time`` is implicit (TsFile keeps it
outside the column list); TAG columns identify the device, in order; FIELD columns are values.
Names are lower case, as in TsFile's table model.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tsfile_catalog.exceptions import SchemaError, UnsupportedTypeError

__all__ = ["TIME_COLUMN", "DataType", "Category", "Column", "TableSchema"]

TIME_COLUMN = "time"


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
    name: str
    type: DataType
    category: Category

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type.value, "category": self.category.value}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Column:
        name = str(obj["name"])
        return cls(
            name=name,
            type=DataType.parse(str(obj["type"]), column=name, where="the schema"),
            category=Category.parse(str(obj["category"]), column=name, where="the schema"),
        )


@dataclass(frozen=True)
class TableSchema:
    """An ordered TsFile table schema: TAG columns first (device identity order), then FIELDs."""

    table: str
    columns: tuple[Column, ...]

    def __post_init__(self) -> None:
        if not self.table:
            raise SchemaError("table name must not be empty")
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
        """Every column of a row, ``time`` first."""
        return (TIME_COLUMN, *(c.name for c in self.columns))

    def column(self, name: str) -> Column | None:
        lowered = name.lower()
        for col in self.columns:
            if col.name == lowered:
                return col
        return None

    def to_json(self) -> dict[str, Any]:
        return {"table": self.table, "columns": [c.to_json() for c in self.columns]}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> TableSchema:
        return cls(
            table=str(obj["table"]),
            columns=tuple(Column.from_json(c) for c in obj["columns"]),
        )
