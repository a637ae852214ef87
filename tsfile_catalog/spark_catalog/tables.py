"""The catalog plugin's table and namespace operations, over the warehouse's one registry.

Spark's ``ts.db.t`` is the registry's ``db.t`` (the one ``Catalog(spark, warehouse)`` reads),
and the Catalog's unqualified ``t`` is ``ts.default.t``. Creating, dropping, renaming and
altering a table run the Catalog's own statements (:meth:`Catalog.execute` with the statement
Spark's call amounts to), so both front ends make the same checks with the same messages.
Loading a table resolves its registry entry and its latest version (or the one time travel
names) every time, so a commit or a rename by any process shows in the next query. What is
reused is only what those determine: the description of a table version already described
(:meth:`Warehouse.load`), which a Spark Connect query asks for twice, once per analysis.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pyspark.sql import types as T

from tsfile_catalog.datasource.types import spark_schema
from tsfile_catalog.exceptions import (
    LocationError,
    OptionError,
    SqlError,
    TableExistsError,
    TableNotFoundError,
)
from tsfile_catalog.exec.table_scan import resolve_columns
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.alterations import SetTableProperties, UnsetTableProperties
from tsfile_catalog.metadata.completeness import check_table_properties
from tsfile_catalog.metadata.schema import TIME_COLUMN
from tsfile_catalog.metadata.table_time import check_time_change
from tsfile_catalog.options import with_table_properties
from tsfile_catalog.spark_catalog.changes import (
    PROVIDER_PROPERTY,
    VERSION_PROPERTY,
    alter_changes,
)
from tsfile_catalog.spark_catalog.changes import column_spec as _column
from tsfile_catalog.sql import table_options
from tsfile_catalog.sql.query import open_entry
from tsfile_catalog.sql.registry import DEFAULT_DATABASE, Registry, TableEntry
from tsfile_catalog.sql.statements import (
    AlterTableRename,
    CreateTable,
    DropTable,
    Statement,
    TableName,
)
from tsfile_catalog.storage_options import (
    STORAGE_PREFIX,
    redact_credentials,
    storage_options_from,
)
from tsfile_catalog.table.alter import alter_table
from tsfile_catalog.table.handle import Table, open_table
from tsfile_catalog.table.ownership import check_empty, check_location
from tsfile_catalog.table.purge import purge

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from tsfile_catalog.sql.catalog import Catalog

__all__ = ["NamespaceError", "Warehouse", "table_name", "describe_table"]

WAREHOUSE_OPTION = "warehouse"
PROVIDER = "tsfile"

# Table properties Spark sets itself on CREATE TABLE; none is a tsfile table option.
_SPARK_RESERVED = frozenset({"provider", "location", "owner", "external", "is_managed_location"})
_OPTION_PREFIX = "option."
# Descriptions kept per warehouse (Warehouse.load): a few per table a session queries.
_DESCRIBED = 64


class NamespaceError(SqlError):
    """A namespace Spark named does not exist, exists already, or is not empty."""

    def __init__(self, kind: str, namespace: Sequence[str], message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.namespace = list(namespace)


def table_name(namespace: Sequence[str], name: str) -> TableName:
    """Spark's identifier as a registry name; one namespace level (the database).

    Raises:
        SqlError: a nested or empty namespace, or a name that is not a plain identifier.
    """
    if len(namespace) != 1:
        raise SqlError(
            f"table {'.'.join([*namespace, name])!r}: a tsfile catalog table is "
            "<catalog>.<database>.<name>, with exactly one database level"
        )
    return TableName(name, namespace[0])


@dataclass
class Warehouse:
    """One configured catalog (``spark.sql.catalog.<name>.*``): its registry and the
    Catalog whose statements carry out DDL."""

    spark: SparkSession
    name: str
    options: Mapping[str, str]
    _catalog: Catalog | None = field(default=None, init=False, repr=False)
    # (entry, table UUID, version) -> describe_table's answer, least recently used first.
    _described: OrderedDict[tuple[Any, ...], dict[str, Any]] = field(
        default_factory=OrderedDict, init=False, repr=False
    )
    _described_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @cached_property
    def storage_options(self) -> dict[str, Any]:
        return storage_options_from({k.lower(): v for k, v in self.options.items()})

    @cached_property
    def registry(self) -> Registry:
        return Registry(self._warehouse, self.storage_options)

    @property
    def _warehouse(self) -> str:
        for key, value in self.options.items():
            if key.lower() == WAREHOUSE_OPTION:
                return value
        raise OptionError(
            f"catalog {self.name!r} has no warehouse: set spark.sql.catalog.{self.name}."
            f"{WAREHOUSE_OPTION} (tsfile_catalog.configure(builder, warehouse=...) does)"
        )

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            # Imported on first DDL: the statements live with the SQL front end (sqlglot).
            from tsfile_catalog.sql.catalog import Catalog

            self._catalog = Catalog(
                self.spark,
                self._warehouse,
                storage_options=self.storage_options,
                register_views=False,
            )
        return self._catalog

    def execute(self, statement: Statement) -> None:
        self.catalog.execute(statement)

    def storage(self, entry: TableEntry) -> dict[str, Any]:
        """The catalog's storage options under the table's own ``fs.*`` settings."""
        return {**self.storage_options, **table_options.storage_options(entry)}

    def source_options(self, entry: TableEntry, options: Mapping[str, str]) -> dict[str, str]:
        """``options`` for the ``tsfile`` source on ``entry``: its path and storage settings
        (which reach Spark's Python workers inside the source options)."""
        out = dict(options)
        for key, value in self.storage(entry).items():
            out[f"{STORAGE_PREFIX}{key}"] = value if isinstance(value, str) else json.dumps(value)
        out["path"] = entry.location
        return out

    # -- namespaces -------------------------------------------------------------------------

    def list_namespaces(self, parent: Sequence[str]) -> list[list[str]]:
        if not parent:
            return [[name] for name in self.registry.databases()]
        self.require_namespace(parent)
        return []

    def namespace_exists(self, namespace: Sequence[str]) -> bool:
        return len(namespace) == 1 and namespace[0].lower() in self.registry.databases()

    def require_namespace(self, namespace: Sequence[str]) -> str:
        if not self.namespace_exists(namespace):
            raise NamespaceError(
                "no_such_namespace", namespace, f"no namespace {'.'.join(namespace)!r}"
            )
        return namespace[0].lower()

    def create_namespace(self, namespace: Sequence[str]) -> None:
        if len(namespace) != 1:
            raise SqlError(
                f"namespace {'.'.join(namespace)!r}: the tsfile catalog has one level of "
                "namespaces (databases)"
            )
        if not self.registry.create_database(namespace[0]):
            raise NamespaceError(
                "namespace_exists", namespace, f"namespace {namespace[0]!r} already exists"
            )

    def drop_namespace(self, namespace: Sequence[str], *, cascade: bool) -> bool:
        if not self.namespace_exists(namespace):
            return False
        database = namespace[0].lower()
        if database == DEFAULT_DATABASE:
            raise SqlError("the default namespace cannot be dropped")
        # Unreadable entries too: a cascade removes them (their entries only).
        entries = self.registry.listing(database)
        if entries and not cascade:
            raise NamespaceError(
                "namespace_not_empty",
                namespace,
                f"namespace {database!r} holds tables ({', '.join(e.name for e in entries)})",
            )
        for entry in entries:
            self.execute(DropTable(table=TableName(entry.name, database)))
        self.registry.drop_database(database)
        return True

    # -- tables -----------------------------------------------------------------------------

    def list_tables(self, namespace: Sequence[str]) -> list[str]:
        database = self.require_namespace(namespace)
        # Unreadable entries are listed: loading one says why; DROP TABLE removes it.
        return [entry.name for entry in self.registry.listing(database)]

    def table_exists(self, name: TableName) -> bool:
        """Whether ``name`` is registered, its entry readable or not (Spark's DROP TABLE asks
        before it drops, and an unreadable entry must be droppable)."""
        return self.registry.exists(name)

    def load(
        self, name: TableName, *, version: str | None = None, timestamp_us: int | None = None
    ) -> dict[str, Any]:
        """The table's description for Spark (see :func:`describe_table`).

        The entry and the version are read anew on every call; the description of a version
        already described under the same entry is reused. It is a function of the entry, the
        table's identity and its version alone (a table dropped and recreated at the location
        is another table, whose versions restart), so it cannot be stale.
        """
        entry = self.registry.require(name)
        table = self.open_as_of(entry, version, timestamp_us)
        key = (
            entry.database,
            entry.name,
            entry.location,
            tuple(sorted(entry.options.items())),
            table.table_uuid,
            table.version,
        )
        with self._described_lock:
            found = self._described.get(key)
            if found is not None:
                self._described.move_to_end(key)
                return found
        described = describe_table(self, entry, table)
        with self._described_lock:
            self._described[key] = described
            while len(self._described) > _DESCRIBED:
                self._described.popitem(last=False)
        return described

    def open_as_of(self, entry: TableEntry, version: str | None, timestamp_us: int | None) -> Table:
        """``entry``'s table at Spark's ``VERSION AS OF`` text or ``TIMESTAMP AS OF``
        microseconds (neither: the latest version).

        Raises:
            SqlError: the version is not a commit number.
        """
        number = None
        if version is not None:
            try:
                number = int(version)
            except ValueError:
                raise SqlError(
                    f"VERSION AS OF {version!r} on table {entry.display_name!r}: a version is a "
                    "commit number (DESCRIBE HISTORY lists them)"
                ) from None
        return open_entry(
            entry,
            self.storage(entry),
            version=number,
            # Spark resolved TIMESTAMP AS OF to microseconds; a version is committed at or
            # before it exactly when its millisecond is at or before the floor.
            timestamp=None if timestamp_us is None else timestamp_us // 1000,
        )

    def create(
        self, name: TableName, schema: T.StructType, properties: Mapping[str, str]
    ) -> dict[str, Any]:
        options, table_properties, location = self._split_properties(name, properties)
        _check_nullable(name, schema, options)
        # The database outlives its last table, as Spark users expect of a namespace.
        self.registry.create_database(name.database or DEFAULT_DATABASE)
        columns = (
            tuple(_column(name, f.name, f.dataType.simpleString()) for f in schema.fields)
            if schema.fields
            else None
        )
        try:
            self.execute(
                CreateTable(
                    table=name,
                    columns=columns,
                    location=location,
                    options=options,
                    properties=table_properties,
                )
            )
        except TableExistsError as e:
            if self.registry.exists(name):
                raise  # the name is taken: Spark's "already exists"
            # The name is free, its location is not (a table dropped without PURGE keeps
            # its files, or another name holds the location). Spark's "already exists"
            # would make CREATE TABLE IF NOT EXISTS succeed with no table.
            raise LocationError(
                f"CREATE TABLE {name}: {e} (DROP TABLE keeps a table's files unless PURGE is "
                f"given); register it with CREATE TABLE {name} USING tsfile LOCATION '...', "
                "or give the new table another LOCATION"
            ) from e
        return self.load(name)

    def _split_properties(
        self, name: TableName, properties: Mapping[str, str]
    ) -> tuple[dict[str, str], dict[str, str], str | None]:
        provider = properties.get("provider")
        if provider is not None and provider.lower() != PROVIDER:
            default = str(self.spark.conf.get("spark.sql.sources.default", "parquet"))
            raise SqlError(
                f"CREATE TABLE {name}: the tsfile catalog holds tsfile tables only (USING "
                f"tsfile), not {provider}"
                + (
                    f"; {default} is the session's default source (spark.sql.sources.default), "
                    "which a write naming no format asks for: give df.write.saveAsTable, "
                    "writeStream.toTable and spark.catalog.createTable .format('tsfile') or "
                    "source='tsfile'"
                    if provider.lower() == default.lower()
                    else ""
                )
                + (
                    "; as spark_catalog, io.tsfilecatalog.spark.TsFileSessionCatalog keeps "
                    "other providers' tables in Spark's built-in catalog "
                    "(tsfile_catalog.configure(..., name='spark_catalog') sets it)"
                    if self.name == "spark_catalog"
                    else ""
                )
            )
        return _split_properties(name, properties)

    def drop(self, name: TableName, *, purge: bool) -> bool:
        if not self.registry.exists(name):  # an unreadable entry exists: DROP removes it
            return False
        self.execute(DropTable(table=name, purge=purge))
        return True

    # -- CREATE/REPLACE ... AS SELECT: the rows are the first commit, the name comes after --

    def stage(
        self, name: TableName, mode: str, schema: T.StructType, properties: Mapping[str, str]
    ) -> dict[str, Any]:
        """Check a table about to be created (or replaced) from a query's rows, and the
        options its write runs with.

        ``mode`` is ``create``, ``replace`` or ``create_or_replace``. A replaced table keeps
        its identity, history and schema: the query's rows overwrite all of its rows in one
        commit. A new table's first commit is the write itself; :meth:`commit_staged`
        registers the name once it is made.
        """
        options, table_properties, location = self._split_properties(name, properties)
        entry = self.registry.get(name)
        if entry is not None and mode == "create":
            raise TableExistsError(f"table {entry.display_name!r} already exists")
        if entry is None and mode == "replace":
            raise TableNotFoundError(f"table {name.qualified!r} is not in the catalog")
        # The properties are set by the rows' commit (the write's ``tableProperties``), so
        # that the statement is one commit: checked now, so that a refused one refuses the
        # statement before anything is written.
        check_table_properties(table_properties)
        if entry is not None:
            table_options.check_settable_properties(entry, table_properties)
            current = self.open_as_of(entry, None, None).properties
            changed = {k: v for k, v in table_properties.items() if current.get(k) != v}
            check_time_change(current, changed, table=entry.display_name)
            table = self.load(name)
            return {
                "existing": True,
                "truncate": True,
                "write_options": with_table_properties(table["write_options"], table_properties),
                "table_properties": table_properties,
            }
        options = table_options.check_table_options(options)
        location = location or self.registry.default_location(name)
        self.registry.check_new(name, location)
        new = TableEntry(name.database or DEFAULT_DATABASE, name.name, location, options)
        io = FileIO(location, self.storage(new))
        check_location(io, location)
        check_empty(io, location)
        return {
            "existing": False,
            "truncate": False,
            "location": location,
            "options": options,
            "table_properties": table_properties,
            "write_options": with_table_properties(
                self.source_options(new, table_options.write_options(new, name.name)),
                table_properties,
            ),
        }

    def commit_staged(
        self,
        name: TableName,
        staged: Mapping[str, Any],
        schema: T.StructType,
        write_options: Mapping[str, str],
    ) -> None:
        """Register a staged new table (the table its write created, or an empty one for an
        empty query) with its options, the write's own (``saveAsTable``'s ``tagColumns``)
        included. The write's commit set the statement's properties with its rows."""
        properties = dict(staged["table_properties"])
        if staged["existing"]:
            return
        options = dict(staged["options"])
        for key, value in write_options.items():
            if table_options.is_table_option(key):
                options.setdefault(key, value)
        self.registry.create_database(name.database or DEFAULT_DATABASE)
        self.execute(
            CreateTable(
                table=name,
                columns=tuple(_column(name, f.name, f.dataType.simpleString()) for f in schema),
                location=staged["location"],
                options=options,
                properties=properties,
            )
        )

    def abort_staged(self, name: TableName, staged: Mapping[str, Any]) -> None:
        """Remove what a failed create wrote: its location was empty when it was staged, and
        no name was registered for it."""
        if staged["existing"] or self.registry.get(name) is not None:
            return
        location = staged["location"]
        new = TableEntry(name.database or DEFAULT_DATABASE, name.name, location, staged["options"])
        try:
            open_table(location, storage_options=self.storage(new))
        except TableNotFoundError:
            return
        purge(location, storage_options=self.storage(new))

    def rename(self, name: TableName, new: TableName) -> None:
        self.execute(AlterTableRename(table=name, new_name=new))

    def alter(self, name: TableName, changes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Apply Spark's table changes, one ``alterTable`` call, in one commit or none
        (:func:`~tsfile_catalog.table.alter.alter_table`): a change refused anywhere in the
        call commits none of them."""
        entry = self.registry.require(name)
        table = self.open_as_of(entry, None, None)
        timestamp_as = table_options.time_read_as(entry, table)
        shown = spark_schema(
            table.schema, resolve_columns(table.schema, None, what="the table"), timestamp_as
        )
        columns = {f.name.lower(): f.dataType.simpleString() for f in shown.fields}
        steps = alter_changes(name, changes, columns, (TIME_COLUMN, *table.schema.tag_names))
        for step in steps:
            if isinstance(step, SetTableProperties):
                table_options.check_settable_properties(entry, step.properties)
            elif isinstance(step, UnsetTableProperties):
                table_options.check_unsettable_properties(entry, step.keys)
        alter_table(entry.location, steps, storage_options=self.storage(entry))
        return self.load(name)


def describe_table(warehouse: Warehouse, entry: TableEntry, table: Table) -> dict[str, Any]:
    """What Spark's table object holds: the schema scans give (``time`` a TIMESTAMP when the
    table is read so), its properties, the pinned version a scan plans from, and the options
    of a write into it."""
    timestamp_as = table_options.time_read_as(entry, table)
    columns = resolve_columns(table.schema, None, what="the table")
    schema = spark_schema(table.schema, columns, timestamp_as)
    # The table's own unit when it records one (a stored option naming another is refused).
    unit = table.time_unit(table_options.given_precision(entry))
    # The unit of the table's raw times, and how they read back, are the table's: a read or
    # write option naming others would misread or miswrite every time. Set here, they win
    # over the user's options as every stored option does.
    read = {**table_options.read_options(entry), "timestampPrecision": unit}
    read["timestampAs"] = timestamp_as
    read["versionAsOf"] = str(table.version)
    write = {**table_options.write_options(entry, table.schema.table), "timestampPrecision": unit}
    properties = {**table.properties, **entry.options}
    properties[PROVIDER_PROPERTY] = PROVIDER
    properties["location"] = entry.location
    properties[VERSION_PROPERTY] = str(table.version)
    return {
        "schema": schema.json(),
        # Shown only (SHOW TBLPROPERTIES, DESCRIBE, SHOW CREATE TABLE): credentials masked.
        "properties": redact_credentials(
            {k: v for k, v in properties.items() if not k.lower().startswith(STORAGE_PREFIX)}
        ),
        "scan": {
            "table": entry.display_name,
            "location": entry.location,
            "version": table.version,
            # Which table that version is of: scan calls reopen it from the cache by it.
            "table_uuid": table.table_uuid,
            "unit": unit,
            "timestamp_as": timestamp_as,
            "options": warehouse.source_options(entry, read),
        },
        "write_options": warehouse.source_options(entry, write),
    }


def _split_properties(
    name: TableName, properties: Mapping[str, str]
) -> tuple[dict[str, str], dict[str, str], str | None]:
    """Spark's CREATE TABLE properties as (table options, table properties, location).

    Table options come as ``OPTIONS`` (Spark prefixes them ``option.``) or as TBLPROPERTIES
    of an option's name (``'tagColumns' = 'city,device'``); other TBLPROPERTIES are the
    table's properties. :meth:`Warehouse._split_properties` has checked the provider.
    """
    given: dict[str, str] = {}
    rest: dict[str, str] = {}
    for key, value in properties.items():
        lowered = key.lower()
        if lowered in _SPARK_RESERVED or lowered == VERSION_PROPERTY:
            continue  # VERSION_PROPERTY: what SHOW CREATE TABLE prints, shown by the catalog
        if lowered.startswith(_OPTION_PREFIX):
            given[key[len(_OPTION_PREFIX) :]] = value
        else:
            rest[key] = value
    options, table_properties = table_options.split_create_properties(given, rest, table=str(name))
    location = properties.get("location")
    if location is not None and location.startswith("file:/") and not location.startswith("//", 5):
        # Spark qualifies a LOCATION as Hadoop does: '/data/t' arrives as 'file:/data/t'.
        location = location[len("file:") :]
    return options, table_properties, location


def _check_nullable(table: TableName, schema: T.StructType, options: Mapping[str, str]) -> None:
    """Refuse ``NOT NULL`` on a FIELD column: a FIELD may always be NULL, so the constraint
    would be dropped unenforced. ``time`` is never NULL, nor is a TAG (a write of a NULL
    one fails), so ``NOT NULL`` on them (as ``SHOW CREATE TABLE`` prints ``time``) holds."""
    tags = next((v for k, v in options.items() if k.lower() == "tagcolumns"), "")
    never_null = {TIME_COLUMN} | {t.strip().lower() for t in tags.split(",")}
    for f in schema.fields:
        if not f.nullable and f.name.lower() not in never_null:
            raise SqlError(
                f"CREATE TABLE {table}: column {f.name!r} is declared NOT NULL, which a tsfile "
                "FIELD column cannot enforce (only time and the TAG columns are never NULL)"
            )
