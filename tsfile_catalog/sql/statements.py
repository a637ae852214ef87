"""The statement model of ``catalog.sql()``: one frozen dataclass per statement the catalog
executes itself, :class:`PassThrough` for every other statement Spark can run unchanged.

:func:`~tsfile_catalog.sql.parse.parse_statement` turns text into these models, which an
executor can ``match`` on. Each model's ``to_sql()`` renders it back with every user-supplied
name and value quoted (:func:`quote_identifier`, :func:`quote_string`), so parsing that text
again gives an equal model.

Table and column names are lower-cased, as Spark resolves them case-insensitively and TsFile's
table model stores them in lower case; option and property keys keep their spelling.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias, get_args

from sqlglot import exp

from tsfile_catalog.exceptions import SqlError
from tsfile_catalog.metadata.frozen import empty_mapping, frozen_mapping
from tsfile_catalog.metadata.spark_dialect import quote_identifier, quote_string
from tsfile_catalog.sql import dialect

__all__ = [
    "PROVIDER",
    "SparkType",
    "quote_identifier",
    "quote_string",
    "TableName",
    "VersionAsOf",
    "TimestampAsOf",
    "TimeTravel",
    "ColumnSpec",
    "CreateTable",
    "DropTable",
    "Insert",
    "Select",
    "DescribeTable",
    "DescribeHistory",
    "DescribeDetail",
    "ShowTables",
    "ShowParts",
    "ExplainParts",
    "AlterTableSetProperties",
    "Vacuum",
    "Optimize",
    "Delete",
    "PassThrough",
    "Statement",
]

PROVIDER = "tsfile"
"""The ``USING`` provider name that makes a ``CREATE TABLE`` the catalog's."""

SparkType: TypeAlias = Literal[
    "BOOLEAN", "INT", "BIGINT", "FLOAT", "DOUBLE", "STRING", "DATE", "TIMESTAMP", "BINARY"
]
"""Spark column types that have a TsFile counterpart (as Spark spells them)."""

_SPARK_TYPES: frozenset[str] = frozenset(get_args(SparkType))
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DIALECT = dialect.TsFileSpark()


def _query_sql(query: exp.Expr) -> str:
    return query.sql(dialect=_DIALECT)


def _check_identifier(value: str, what: str, shown: str) -> None:
    if not _IDENTIFIER.fullmatch(value):
        raise SqlError(
            f"invalid {what} {shown!r}: use letters, digits and underscores, not starting with "
            "a digit"
        )


@dataclass(frozen=True, slots=True)
class TableName:
    """A catalog table name, ``[database.]name``; both parts are plain identifiers, stored
    in lower case."""

    name: str
    database: str | None = None

    def __post_init__(self) -> None:
        shown = self.qualified
        _check_identifier(self.name, "table name", shown)
        object.__setattr__(self, "name", self.name.lower())
        if self.database is not None:
            _check_identifier(self.database, "database name in table name", shown)
            object.__setattr__(self, "database", self.database.lower())

    @property
    def qualified(self) -> str:
        """``database.name``, or ``name`` when no database was given."""
        return f"{self.database}.{self.name}" if self.database else self.name

    def to_sql(self) -> str:
        parts = (self.database, self.name) if self.database else (self.name,)
        return ".".join(quote_identifier(part) for part in parts)

    def __str__(self) -> str:
        return self.qualified


@dataclass(frozen=True, slots=True)
class VersionAsOf:
    """``VERSION AS OF n``: the table as of commit version ``n``."""

    version: int

    def __post_init__(self) -> None:
        if isinstance(self.version, bool) or self.version < 0:
            raise SqlError(f"VERSION AS OF needs a non-negative integer, got {self.version!r}")

    def to_sql(self) -> str:
        return f"VERSION AS OF {self.version}"


@dataclass(frozen=True, slots=True)
class TimestampAsOf:
    """``TIMESTAMP AS OF 'ts'``: the table as of the last commit at or before ``ts``.

    The timestamp text is kept as written; the catalog resolves it, a time without an offset
    in the session time zone.
    """

    timestamp: str

    def to_sql(self) -> str:
        return f"TIMESTAMP AS OF {quote_string(self.timestamp)}"


TimeTravel: TypeAlias = VersionAsOf | TimestampAsOf


@dataclass(frozen=True, slots=True)
class ColumnSpec:
    """One column of a ``CREATE TABLE`` column list; the name is stored in lower case."""

    name: str
    data_type: SparkType

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", self.name.lower())
        if self.data_type not in _SPARK_TYPES:
            raise SqlError(
                f"column {self.name!r} has type {self.data_type}, which tsfile tables do not "
                f"support (supported: {', '.join(sorted(_SPARK_TYPES))})"
            )

    def to_sql(self) -> str:
        return f"{quote_identifier(self.name)} {self.data_type}"


def _properties_sql(values: Mapping[str, str]) -> str:
    return ", ".join(
        f"{quote_string(key)} = {quote_string(value)}" for key, value in values.items()
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateTable:
    """``CREATE TABLE ... USING tsfile`` in its three forms.

    * with ``columns``: a new, empty table with that schema;
    * with neither ``columns`` nor ``query`` (``location`` required): adopt the TsFile files
      already at ``location``;
    * with ``query`` (CTAS): a new table holding the query's rows.
    """

    table: TableName
    columns: tuple[ColumnSpec, ...] | None = None
    location: str | None = None
    options: Mapping[str, str] = field(default_factory=empty_mapping)
    properties: Mapping[str, str] = field(default_factory=empty_mapping)
    if_not_exists: bool = False
    query: exp.Query | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", frozen_mapping(self.options))
        object.__setattr__(self, "properties", frozen_mapping(self.properties))
        if self.columns is not None and self.query is not None:
            raise SqlError(
                f"CREATE TABLE {self.table}: give either a column list or AS SELECT, not both"
            )
        if self.columns is not None:
            if not self.columns:
                raise SqlError(f"CREATE TABLE {self.table}: the column list is empty")
            seen: set[str] = set()
            for column in self.columns:
                if column.name in seen:
                    raise SqlError(f"CREATE TABLE {self.table}: duplicate column {column.name!r}")
                seen.add(column.name)
        elif self.query is None and self.location is None:
            raise SqlError(
                f"CREATE TABLE {self.table} USING {PROVIDER} needs a column list, AS SELECT, "
                "or a LOCATION holding TsFile files to adopt"
            )

    def to_sql(self) -> str:
        parts = ["CREATE TABLE"]
        if self.if_not_exists:
            parts.append("IF NOT EXISTS")
        parts.append(self.table.to_sql())
        if self.columns is not None:
            parts.append("(" + ", ".join(column.to_sql() for column in self.columns) + ")")
        parts.append(f"USING {PROVIDER}")
        if self.options:
            parts.append(f"OPTIONS ({_properties_sql(self.options)})")
        if self.location is not None:
            parts.append(f"LOCATION {quote_string(self.location)}")
        if self.properties:
            parts.append(f"TBLPROPERTIES ({_properties_sql(self.properties)})")
        if self.query is not None:
            parts.append(f"AS {_query_sql(self.query)}")
        return " ".join(parts)


@dataclass(frozen=True, slots=True, kw_only=True)
class DropTable:
    """``DROP TABLE [IF EXISTS] name [PURGE]``."""

    table: TableName
    if_exists: bool = False
    purge: bool = False

    def to_sql(self) -> str:
        exists = " IF EXISTS" if self.if_exists else ""
        purge = " PURGE" if self.purge else ""
        return f"DROP TABLE{exists} {self.table.to_sql()}{purge}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Insert:
    """``INSERT INTO|OVERWRITE [TABLE] name [(columns)] <query or VALUES>``.

    ``query`` is the source as a sqlglot tree (a query or ``exp.Values``); treat it as
    read-only, it is shared with the caller. Column names are stored in lower case.
    """

    table: TableName
    query: exp.Expr
    columns: tuple[str, ...] | None = None
    overwrite: bool = False
    # ``INSERT INTO name REPLACE WHERE <predicate> <query>`` (Delta): the predicate's SQL.
    replace_where: str | None = None

    def __post_init__(self) -> None:
        if self.columns is not None:
            object.__setattr__(self, "columns", tuple(name.lower() for name in self.columns))

    @property
    def query_sql(self) -> str:
        """The source query as Spark SQL."""
        return _query_sql(self.query)

    def to_sql(self) -> str:
        verb = "INSERT OVERWRITE TABLE" if self.overwrite else "INSERT INTO"
        columns = ""
        if self.columns is not None:
            columns = " (" + ", ".join(quote_identifier(column) for column in self.columns) + ")"
        if self.replace_where is not None:
            columns += f" REPLACE WHERE {self.replace_where}"
        return f"{verb} {self.table.to_sql()}{columns} {self.query_sql}"


@dataclass(frozen=True, slots=True)
class Select:
    """A query (SELECT, set operation, WITH ...), kept as a sqlglot tree for analysis."""

    query: exp.Query

    def to_sql(self) -> str:
        return _query_sql(self.query)


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeTable:
    """``DESCRIBE [TABLE] [EXTENDED] name``."""

    table: TableName
    extended: bool = False

    def to_sql(self) -> str:
        extended = " EXTENDED" if self.extended else ""
        return f"DESCRIBE TABLE{extended} {self.table.to_sql()}"


@dataclass(frozen=True, slots=True)
class DescribeHistory:
    """``DESCRIBE HISTORY name``: the table's commits."""

    table: TableName

    def to_sql(self) -> str:
        return f"DESCRIBE HISTORY {self.table.to_sql()}"


@dataclass(frozen=True, slots=True)
class DescribeDetail:
    """``DESCRIBE DETAIL name``: location, format, sizes, properties."""

    table: TableName

    def to_sql(self) -> str:
        return f"DESCRIBE DETAIL {self.table.to_sql()}"


@dataclass(frozen=True, slots=True)
class ShowTables:
    """``SHOW TABLES [IN database]``; the database is stored in lower case."""

    database: str | None = None

    def __post_init__(self) -> None:
        if self.database is not None:
            _check_identifier(self.database, "database name", self.database)
            object.__setattr__(self, "database", self.database.lower())

    def to_sql(self) -> str:
        if self.database is None:
            return "SHOW TABLES"
        return f"SHOW TABLES IN {quote_identifier(self.database)}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ShowParts:
    """``SHOW PARTS name [VERSION AS OF n | TIMESTAMP AS OF 'ts']``."""

    table: TableName
    time_travel: TimeTravel | None = None

    def to_sql(self) -> str:
        travel = f" {self.time_travel.to_sql()}" if self.time_travel else ""
        return f"SHOW PARTS {self.table.to_sql()}{travel}"


@dataclass(frozen=True, slots=True)
class ExplainParts:
    """``EXPLAIN PARTS <query>``: which parts the query opens and which it prunes."""

    query: exp.Query

    def to_sql(self) -> str:
        return f"EXPLAIN PARTS {_query_sql(self.query)}"


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterTableSetProperties:
    """``ALTER TABLE name SET TBLPROPERTIES (...)``."""

    table: TableName
    properties: Mapping[str, str]

    def __post_init__(self) -> None:
        object.__setattr__(self, "properties", frozen_mapping(self.properties))
        if not self.properties:
            raise SqlError(f"ALTER TABLE {self.table} SET TBLPROPERTIES: no properties given")

    def to_sql(self) -> str:
        return (
            f"ALTER TABLE {self.table.to_sql()} "
            f"SET TBLPROPERTIES ({_properties_sql(self.properties)})"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Vacuum:
    """``VACUUM name [DRY RUN]``: delete files no live version references."""

    table: TableName
    dry_run: bool = False

    def to_sql(self) -> str:
        dry_run = " DRY RUN" if self.dry_run else ""
        return f"VACUUM {self.table.to_sql()}{dry_run}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Optimize:
    """``OPTIMIZE name [WHERE predicate]``: compact small parts; ``where`` is Spark SQL."""

    table: TableName
    where: str | None = None

    def to_sql(self) -> str:
        where = f" WHERE {self.where}" if self.where is not None else ""
        return f"OPTIMIZE {self.table.to_sql()}{where}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Delete:
    """``DELETE FROM name [WHERE predicate]``; ``where`` is Spark SQL (None: every row)."""

    table: TableName
    where: str | None = None

    def to_sql(self) -> str:
        where = f" WHERE {self.where}" if self.where is not None else ""
        return f"DELETE FROM {self.table.to_sql()}{where}"


@dataclass(frozen=True, slots=True)
class PassThrough:
    """A statement the catalog does not own; ``sql`` is the text to hand to ``spark.sql``,
    exactly as the user wrote it (minus trailing semicolons)."""

    sql: str

    def to_sql(self) -> str:
        return self.sql


Statement: TypeAlias = (
    CreateTable
    | DropTable
    | Insert
    | Select
    | DescribeTable
    | DescribeHistory
    | DescribeDetail
    | ShowTables
    | ShowParts
    | ExplainParts
    | AlterTableSetProperties
    | Vacuum
    | Optimize
    | Delete
    | PassThrough
)
