"""The statement model of ``catalog.sql()``: one frozen dataclass per statement the catalog
executes itself, :class:`PassThrough` for every other statement Spark can run unchanged.

:func:`~tsfile_catalog.sql.parse.parse_statement` turns text into these models, which an
executor can ``match`` on. Each model's ``to_sql()`` renders it back with every user-supplied
name and value quoted (:func:`quote_identifier`, :func:`quote_string`), so parsing that text
again gives an equal model.

Table and column names are lower-cased, as Spark resolves them case-insensitively and TsFile's
table model stores them in lower case; option and property keys keep their spelling.

One job: the model, one small frozen class and its ``to_sql()`` per statement, with the
quoting they share; it grows by one class per statement.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias, get_args

from sqlglot import exp

from tsfile_catalog.exceptions import SqlError
from tsfile_catalog.metadata.frozen import empty_mapping, frozen_mapping
from tsfile_catalog.metadata.schema import TIME_COLUMN, DataType, TableSchema
from tsfile_catalog.metadata.spark.dialect import quote_identifier, quote_string
from tsfile_catalog.sql import dialect
from tsfile_catalog.storage_options import (
    CREDENTIALS_AT_RUN_TIME,
    STORAGE_PREFIX,
    check_url,
    is_credential_option,
)

__all__ = [
    "PROVIDER",
    "SparkType",
    "quote_identifier",
    "quote_string",
    "TableName",
    "VersionAsOf",
    "TimestampAsOf",
    "TimeTravel",
    "URL_FUNCTION",
    "URL_SETTINGS",
    "TableUrl",
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
    "AlterTableUnsetProperties",
    "AlterTableAddPart",
    "AlterTableDropPart",
    "Vacuum",
    "ExpireSnapshots",
    "RestoreTable",
    "AlterTableAddColumns",
    "ColumnPosition",
    "AlterTableAlterColumn",
    "AlterTableRename",
    "AlterTableRenameColumn",
    "AlterTableDropColumns",
    "AlterTableChangeColumn",
    "AlterTableUnsupported",
    "ShowCreateTable",
    "create_table_statement",
    "Optimize",
    "Delete",
    "Update",
    "MergeClause",
    "Merge",
    "PassThrough",
    "Statement",
    "row_level_parameters",
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


URL_FUNCTION = dialect.URL_FUNCTION
"""The table function (``tsfile('<url>', ...)``) and the qualifier (``tsfile.`<url>` ``) that
make a table reference a URL rather than a registered name."""

URL_SETTINGS: tuple[str, ...] = ("version", "timestamp", "table", "tableUuid")
"""The named settings of ``tsfile('<url>', ...)`` besides ``fs.*`` (case-insensitive)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TableUrl:
    """A table named by its location: ``tsfile('<url>' [, version => n | timestamp => 'ts']
    [, table => 'name'] [, tableUuid => '...'] [, `fs.<name>` => value ...])``, or
    ``tsfile.`<url>` ``.

    Attributes:
        url: the table root (or plain directory of TsFiles), as written: a local path or an
            fsspec URL.
        time_travel: the ``version`` / ``timestamp`` setting (mutually exclusive), or None.
        table: the TsFile table name the location must hold (``table``), or None.
        table_uuid: the table UUID the manifest must carry (``tableUuid``), or None.
        settings: non-secret ``fs.*`` storage settings, keys with their prefix. Credentials
            are refused: SQL text is logged and kept in query histories.
    """

    url: str
    time_travel: TimeTravel | None = None
    table: str | None = None
    table_uuid: str | None = None
    settings: Mapping[str, str] = field(default_factory=empty_mapping)

    def __post_init__(self) -> None:
        object.__setattr__(self, "settings", frozen_mapping(self.settings))
        check_url(self.url)  # before any message below quotes the URL
        if not self.url.strip():
            raise SqlError(f"{URL_FUNCTION}(): the URL is empty")
        for what, value in (("table", self.table), ("tableUuid", self.table_uuid)):
            if value is not None and not value.strip():
                raise SqlError(f"{URL_FUNCTION}({quote_string(self.url)}): {what} is empty")
        for key, value in self.settings.items():
            if not key.lower().startswith(STORAGE_PREFIX) or len(key) <= len(STORAGE_PREFIX):
                raise SqlError(
                    f"{URL_FUNCTION}({quote_string(self.url)}): unknown setting {key!r}; "
                    f"valid settings are: {', '.join(URL_SETTINGS)} and "
                    f"`{STORAGE_PREFIX}<name>` for non-secret file-system settings"
                )
            if is_credential_option(key, value):
                raise SqlError(
                    f"{URL_FUNCTION}({quote_string(self.url)}): setting {key!r} looks like a "
                    f"credential, and credentials never go into SQL text (it is logged and "
                    f"kept in query histories). Keep settings such as "
                    f"`{STORAGE_PREFIX}endpoint_url` in the call and supply credentials at "
                    f"run time: {CREDENTIALS_AT_RUN_TIME}"
                )

    @property
    def located(self) -> TableUrl:
        """The same reference without its time travel: what identifies the table."""
        return TableUrl(
            url=self.url, table=self.table, table_uuid=self.table_uuid, settings=self.settings
        )

    def to_sql(self) -> str:
        args = [quote_string(self.url)]
        if isinstance(self.time_travel, VersionAsOf):
            args.append(f"version => {self.time_travel.version}")
        elif isinstance(self.time_travel, TimestampAsOf):
            args.append(f"timestamp => {quote_string(self.time_travel.timestamp)}")
        if self.table is not None:
            args.append(f"table => {quote_string(self.table)}")
        if self.table_uuid is not None:
            args.append(f"tableUuid => {quote_string(self.table_uuid)}")
        args.extend(
            f"{quote_identifier(key)} => {quote_string(value)}"
            for key, value in self.settings.items()
        )
        return f"{URL_FUNCTION}({', '.join(args)})"

    def __str__(self) -> str:
        return self.to_sql()


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

    table: TableName | TableUrl
    extended: bool = False

    def to_sql(self) -> str:
        extended = " EXTENDED" if self.extended else ""
        return f"DESCRIBE TABLE{extended} {self.table.to_sql()}"


@dataclass(frozen=True, slots=True)
class DescribeHistory:
    """``DESCRIBE HISTORY name``: the table's commits."""

    table: TableName | TableUrl

    def to_sql(self) -> str:
        return f"DESCRIBE HISTORY {self.table.to_sql()}"


@dataclass(frozen=True, slots=True)
class DescribeDetail:
    """``DESCRIBE DETAIL name``: location, format, sizes, properties."""

    table: TableName | TableUrl

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

    table: TableName | TableUrl
    time_travel: TimeTravel | None = None

    def __post_init__(self) -> None:
        if isinstance(self.table, TableUrl) and self.table.time_travel and self.time_travel:
            raise SqlError(
                f"SHOW PARTS {self.table} {self.time_travel.to_sql()} gives time travel twice; "
                "use either the version/timestamp setting or the AS OF clause"
            )

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


def _hours_sql(hours: float) -> str:
    return str(int(hours)) if float(hours).is_integer() else repr(float(hours))


def _check_hours(hours: float | None, statement: str) -> None:
    if hours is not None and hours < 0:
        raise SqlError(f"{statement}: RETAIN needs a non-negative number of hours, got {hours}")


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterTableUnsetProperties:
    """``ALTER TABLE name UNSET TBLPROPERTIES [IF EXISTS] ('k', …)``.

    As in Spark 4, a key the table does not have is ignored with or without ``IF EXISTS``,
    which is kept only to write the statement back as it was given.
    """

    table: TableName
    keys: tuple[str, ...]
    if_exists: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "keys", tuple(self.keys))
        if not self.keys:
            raise SqlError(f"ALTER TABLE {self.table} UNSET TBLPROPERTIES: no properties given")

    def to_sql(self) -> str:
        exists = " IF EXISTS" if self.if_exists else ""
        keys = ", ".join(quote_string(key) for key in self.keys)
        return f"ALTER TABLE {self.table.to_sql()} UNSET TBLPROPERTIES{exists} ({keys})"


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterTableAddPart:
    """``ALTER TABLE name ADD PART OPTIONS (path '…', format '…', …)``: add external files."""

    table: TableName
    options: Mapping[str, str]

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", frozen_mapping(self.options))

    def to_sql(self) -> str:
        options = _properties_sql(self.options)
        return f"ALTER TABLE {self.table.to_sql()} ADD PART OPTIONS ({options})"


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterTableDropPart:
    """``ALTER TABLE name DROP PART 'path-or-glob'``: remove parts from the manifest."""

    table: TableName
    pattern: str

    def __post_init__(self) -> None:
        if not self.pattern.strip():
            raise SqlError(f"ALTER TABLE {self.table} DROP PART: the path or glob is empty")

    def to_sql(self) -> str:
        return f"ALTER TABLE {self.table.to_sql()} DROP PART {quote_string(self.pattern)}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Vacuum:
    """``VACUUM name [RETAIN n HOURS] [DRY RUN]``: delete the files no version within the
    retention (default: the table's ``deletedFileRetention``) references."""

    table: TableName
    dry_run: bool = False
    retain_hours: float | None = None

    def __post_init__(self) -> None:
        _check_hours(self.retain_hours, f"VACUUM {self.table}")

    def to_sql(self) -> str:
        retain = ""
        if self.retain_hours is not None:
            retain = f" RETAIN {_hours_sql(self.retain_hours)} HOURS"
        dry_run = " DRY RUN" if self.dry_run else ""
        return f"VACUUM {self.table.to_sql()}{retain}{dry_run}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpireSnapshots:
    """``EXPIRE SNAPSHOTS name [RETAIN n HOURS | OLDER THAN 'ts'] [RETAIN LAST n]``: drop
    the log of versions no longer current at the cutoff (default: the table's
    ``logRetention``)."""

    table: TableName
    retain_hours: float | None = None
    older_than: str | None = None
    retain_last: int | None = None

    def __post_init__(self) -> None:
        statement = f"EXPIRE SNAPSHOTS {self.table}"
        _check_hours(self.retain_hours, statement)
        if self.retain_hours is not None and self.older_than is not None:
            raise SqlError(f"{statement}: give RETAIN n HOURS or OLDER THAN, not both")
        if self.retain_last is not None and (
            isinstance(self.retain_last, bool) or self.retain_last < 1
        ):
            raise SqlError(f"{statement}: RETAIN LAST needs at least 1, got {self.retain_last}")

    def to_sql(self) -> str:
        out = f"EXPIRE SNAPSHOTS {self.table.to_sql()}"
        if self.older_than is not None:
            out += f" OLDER THAN {quote_string(self.older_than)}"
        if self.retain_hours is not None:
            out += f" RETAIN {_hours_sql(self.retain_hours)} HOURS"
        if self.retain_last is not None:
            out += f" RETAIN LAST {self.retain_last}"
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class RestoreTable:
    """``RESTORE TABLE name TO VERSION AS OF n | TIMESTAMP AS OF 'ts'``."""

    table: TableName
    time_travel: TimeTravel

    def to_sql(self) -> str:
        return f"RESTORE TABLE {self.table.to_sql()} TO {self.time_travel.to_sql()}"


@dataclass(frozen=True, slots=True)
class ColumnPosition:
    """Where ``ADD COLUMNS`` puts a column: ``AFTER after``, or FIRST (``after`` None)."""

    after: str | None = None

    def to_sql(self) -> str:
        return "FIRST" if self.after is None else f"AFTER {quote_identifier(self.after)}"


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterTableAddColumns:
    """``ALTER TABLE name ADD COLUMNS (c TYPE [FIRST | AFTER other], ...)``: new FIELD
    columns; ``positions`` holds each column's place (None: last; empty: all last)."""

    table: TableName
    columns: tuple[ColumnSpec, ...]
    positions: tuple[ColumnPosition | None, ...] = ()

    def __post_init__(self) -> None:
        names = [c.name for c in self.columns]
        if not names:
            raise SqlError(f"ALTER TABLE {self.table} ADD COLUMNS: no columns given")
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise SqlError(f"ALTER TABLE {self.table} ADD COLUMNS: {repeated[0]!r} given twice")
        if not any(self.positions):
            object.__setattr__(self, "positions", ())
        elif len(self.positions) != len(self.columns):
            raise SqlError(
                f"ALTER TABLE {self.table} ADD COLUMNS: {len(self.positions)} positions for "
                f"{len(self.columns)} columns"
            )

    def placed(self) -> tuple[tuple[ColumnSpec, ColumnPosition | None], ...]:
        """Each column with its place (None: last)."""
        positions = self.positions or (None,) * len(self.columns)
        return tuple(zip(self.columns, positions, strict=True))

    def to_sql(self) -> str:
        columns = ", ".join(
            column.to_sql() + ("" if place is None else f" {place.to_sql()}")
            for column, place in self.placed()
        )
        return f"ALTER TABLE {self.table.to_sql()} ADD COLUMNS ({columns})"


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterTableAlterColumn:
    """``ALTER TABLE name ALTER COLUMN c TYPE t``: widen a FIELD column's type."""

    table: TableName
    column: ColumnSpec

    def to_sql(self) -> str:
        return (
            f"ALTER TABLE {self.table.to_sql()} ALTER COLUMN "
            f"{quote_identifier(self.column.name)} TYPE {self.column.data_type}"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterTableRenameColumn:
    """``ALTER TABLE name RENAME COLUMN c TO new``: rename a FIELD column (no part rewritten)."""

    table: TableName
    column: str
    new_name: str

    def to_sql(self) -> str:
        return (
            f"ALTER TABLE {self.table.to_sql()} RENAME COLUMN {quote_identifier(self.column)} "
            f"TO {quote_identifier(self.new_name)}"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterTableDropColumns:
    """``ALTER TABLE name DROP COLUMN[S] [IF EXISTS] c, …``: drop FIELD columns (no part
    rewritten; a column added back under a dropped name is new and empty)."""

    table: TableName
    columns: tuple[str, ...]
    if_exists: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", tuple(c.lower() for c in self.columns))
        if not self.columns:
            raise SqlError(f"ALTER TABLE {self.table} DROP COLUMNS: no columns given")

    def to_sql(self) -> str:
        exists = " IF EXISTS" if self.if_exists else ""
        columns = ", ".join(quote_identifier(c) for c in self.columns)
        return f"ALTER TABLE {self.table.to_sql()} DROP COLUMNS{exists} ({columns})"


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterTableChangeColumn:
    """``ALTER TABLE name ALTER COLUMN c FIRST | AFTER other`` (a move; ``after`` None is
    FIRST) or ``… ALTER COLUMN c DROP NOT NULL`` (``drop_not_null``)."""

    table: TableName
    column: str
    after: str | None = None
    drop_not_null: bool = False

    def to_sql(self) -> str:
        head = f"ALTER TABLE {self.table.to_sql()} ALTER COLUMN {quote_identifier(self.column)}"
        if self.drop_not_null:
            return f"{head} DROP NOT NULL"
        return (
            f"{head} FIRST"
            if self.after is None
            else f"{head} AFTER {quote_identifier(self.after)}"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterTableRename:
    """``ALTER TABLE name RENAME TO new_name``: rename the catalog entry."""

    table: TableName
    new_name: TableName

    def to_sql(self) -> str:
        return f"ALTER TABLE {self.table.to_sql()} RENAME TO {self.new_name.to_sql()}"


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterTableUnsupported:
    """An ALTER TABLE form Spark knows but a catalog table refuses (dropping or renaming a
    column, ...): ``reason`` says why; on a Spark table ``sql`` runs unchanged."""

    table: TableName
    sql: str
    reason: str

    def to_sql(self) -> str:
        return self.sql


@dataclass(frozen=True, slots=True)
class ShowCreateTable:
    """``SHOW CREATE TABLE name``: a CREATE TABLE statement that recreates it."""

    table: TableName

    def to_sql(self) -> str:
        return f"SHOW CREATE TABLE {self.table.to_sql()}"


def create_table_statement(
    table: TableName,
    schema: TableSchema,
    *,
    location: str,
    options: Mapping[str, str],
    properties: Mapping[str, str],
) -> CreateTable:
    """The ``CREATE TABLE`` that recreates a table of ``schema`` (``SHOW CREATE TABLE``):
    its columns in the order users see (which a column list declares), and the stored
    options (``tagColumns`` and ``timestampAs`` say which columns are TAGs and how ``time``
    reads). Run in another catalog it registers the table at ``location``.

    Running it yields the same statement again: the options are the stored ones, plus only
    what the table needs and did not store (``tagColumns`` of an adopted table;
    ``timestampAs 'long'`` when a TIMESTAMP field would otherwise make CREATE TABLE choose
    ``timestamp``)."""
    timestamps = options.get("timestampAs") == "timestamp"
    columns: list[ColumnSpec] = []
    for name in schema.display_names:  # the order users see, which CREATE TABLE keeps
        column = schema.column(name)
        if column is None:
            columns.append(ColumnSpec(TIME_COLUMN, "TIMESTAMP" if timestamps else "BIGINT"))
        else:
            columns.append(ColumnSpec(column.name, _CREATE_TYPES[column.type]))
    completed = {**options, "tagColumns": ",".join(schema.tag_names)}
    if "timestampAs" not in options and any(c.data_type == "TIMESTAMP" for c in columns):
        completed["timestampAs"] = "long"  # the default this table reads with
    return CreateTable(
        table=table,
        columns=tuple(columns),
        location=location,
        options=completed,
        properties=properties,
    )


# The CREATE TABLE type that declares each TsFile type (TEXT reads as a Spark string too).
_CREATE_TYPES: Mapping[DataType, SparkType] = {
    DataType.BOOLEAN: "BOOLEAN",
    DataType.INT32: "INT",
    DataType.INT64: "BIGINT",
    DataType.FLOAT: "FLOAT",
    DataType.DOUBLE: "DOUBLE",
    DataType.TEXT: "STRING",
    DataType.STRING: "STRING",
    DataType.DATE: "DATE",
    DataType.TIMESTAMP: "TIMESTAMP",
    DataType.BLOB: "BINARY",
}


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
    """``DELETE FROM name [WHERE predicate]``; ``where`` is Spark SQL (None: every row).

    ``history_predicate`` is the condition the history records when it is not ``where``
    (``spark.sql``'s DELETE answered in metadata: ``where`` is Spark's predicates as the scan
    takes them, the history the user's condition, as :func:`row_level_parameters` gives it).
    """

    table: TableName
    where: str | None = None
    history_predicate: str | None = None

    def to_sql(self) -> str:
        where = f" WHERE {self.where}" if self.where is not None else ""
        return f"DELETE FROM {self.table.to_sql()}{where}"


def row_level_parameters(
    operation: Literal["UPDATE", "DELETE", "MERGE"],
    condition: str | None,
    columns: Sequence[str] = (),
) -> dict[str, str]:
    """What the history records of an UPDATE, DELETE or MERGE besides its counts (Delta's
    keys), through ``Catalog.sql`` and ``spark.sql`` alike: ``predicate``, the statement's
    ``condition`` (a WHERE, ``true`` without one; a MERGE's ON condition), in the form the
    catalog's parser gives it; an UPDATE's ``set``, the ``columns`` it sets in its order."""
    parameters = {"predicate": condition if condition is not None else "true"}
    if operation == "UPDATE":
        parameters["set"] = ", ".join(c.lower() for c in columns)
    return parameters


Assignments: TypeAlias = tuple[tuple[str, str], ...]
"""``column = expression`` pairs: a lower-cased column name and Spark SQL."""


def _assignments_sql(assignments: Assignments) -> str:
    return ", ".join(f"{quote_identifier(column)} = {value}" for column, value in assignments)


def _alias_sql(alias: str | None) -> str:
    return f" AS {quote_identifier(alias)}" if alias is not None else ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Update:
    """``UPDATE name [[AS] alias] SET column = expression [, ...] [WHERE predicate]``; the
    expressions and ``where`` are Spark SQL over the table's rows (None: every row)."""

    table: TableName
    assignments: Assignments
    where: str | None = None
    alias: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "assignments", tuple((c.lower(), v) for c, v in self.assignments))
        if self.alias is not None:
            object.__setattr__(self, "alias", self.alias.lower())

    def to_sql(self) -> str:
        where = f" WHERE {self.where}" if self.where is not None else ""
        return (
            f"UPDATE {self.table.to_sql()}{_alias_sql(self.alias)} SET "
            f"{_assignments_sql(self.assignments)}{where}"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class MergeClause:
    """One ``WHEN [NOT] MATCHED [AND condition] THEN ...`` of a MERGE.

    ``action`` is ``update`` or ``delete`` (MATCHED) or ``insert`` (NOT MATCHED);
    ``assignments`` None is ``UPDATE SET *`` / ``INSERT *``; an INSERT's pairs are its
    column list and VALUES, in order.
    """

    matched: bool
    action: Literal["update", "delete", "insert"]
    condition: str | None = None
    assignments: Assignments | None = None

    def __post_init__(self) -> None:
        if self.matched == (self.action == "insert"):
            raise SqlError(
                "MERGE: WHEN MATCHED takes UPDATE or DELETE, WHEN NOT MATCHED takes INSERT"
            )
        if self.assignments is not None:
            object.__setattr__(
                self, "assignments", tuple((c.lower(), v) for c, v in self.assignments)
            )

    def to_sql(self) -> str:
        when = "WHEN MATCHED" if self.matched else "WHEN NOT MATCHED"
        if self.condition is not None:
            when += f" AND {self.condition}"
        if self.action == "delete":
            return f"{when} THEN DELETE"
        if self.action == "update":
            sets = "*" if self.assignments is None else _assignments_sql(self.assignments)
            return f"{when} THEN UPDATE SET {sets}"
        if self.assignments is None:
            return f"{when} THEN INSERT *"
        columns = ", ".join(quote_identifier(c) for c, _ in self.assignments)
        values = ", ".join(v for _, v in self.assignments)
        return f"{when} THEN INSERT ({columns}) VALUES ({values})"


@dataclass(frozen=True, slots=True, kw_only=True)
class Merge:
    """``MERGE INTO name [[AS] alias] USING source [[AS] alias] ON condition WHEN ...``
    (Delta's syntax).

    ``source`` is the sqlglot tree of the source, a table reference or a query, without its
    alias; ``on`` the ON condition's tree (read-only, shared with the caller): the executor
    checks it pins the table key.
    """

    table: TableName
    source: exp.Expr
    on: exp.Expr
    clauses: tuple[MergeClause, ...]
    alias: str | None = None
    source_alias: str | None = None

    def __post_init__(self) -> None:
        if not self.clauses:
            raise SqlError("MERGE needs at least one WHEN clause")
        for name in ("alias", "source_alias"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, value.lower())

    @property
    def source_sql(self) -> str:
        if isinstance(self.source, exp.Table):
            return _query_sql(self.source)
        return f"({_query_sql(self.source)})"

    @property
    def on_sql(self) -> str:
        return _query_sql(self.on)

    def to_sql(self) -> str:
        whens = " ".join(clause.to_sql() for clause in self.clauses)
        return (
            f"MERGE INTO {self.table.to_sql()}{_alias_sql(self.alias)} USING "
            f"{self.source_sql}{_alias_sql(self.source_alias)} ON {self.on_sql} {whens}"
        )


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
    | AlterTableUnsetProperties
    | AlterTableAddPart
    | AlterTableDropPart
    | Vacuum
    | ExpireSnapshots
    | RestoreTable
    | AlterTableAddColumns
    | AlterTableAlterColumn
    | AlterTableRename
    | AlterTableRenameColumn
    | AlterTableDropColumns
    | AlterTableChangeColumn
    | AlterTableUnsupported
    | ShowCreateTable
    | Optimize
    | Delete
    | Update
    | Merge
    | PassThrough
)
