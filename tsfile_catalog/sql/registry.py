"""The catalog's table registry: one small JSON document per table under the warehouse.

``<warehouse>/_catalog/tables/<database>/<name>.json`` maps a table name to its location and
the options every scan and write of it needs (``tagColumns``, ``timestampAs``, ...). A
database exists while it holds a table, or once created explicitly (Spark's ``CREATE
NAMESPACE`` through the catalog plugin), which leaves a ``_database.json`` marker. Entries
are created with an atomic put-if-absent, so two processes creating the same name cannot
both succeed, and any process opening a :class:`Registry` on the same warehouse sees the
same tables. Nothing here imports pyspark; all storage access goes through
:class:`~tsfile_catalog.io.FileIO`.
"""

from __future__ import annotations

import json
import posixpath
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tsfile_catalog.exceptions import (
    CorruptManifestError,
    LocationError,
    OptionError,
    SqlError,
    StorageError,
    TableExistsError,
    TableNotFoundError,
)
from tsfile_catalog.io import FileIO, join_url
from tsfile_catalog.metadata.frozen import empty_mapping, frozen_mapping
from tsfile_catalog.metadata.ownership import is_within
from tsfile_catalog.sql.statements import TableName
from tsfile_catalog.storage_options import (
    CREDENTIALS_AT_RUN_TIME,
    STORAGE_PREFIX,
    is_credential_option,
    redact_text,
)

__all__ = [
    "CATALOG_DIR",
    "DEFAULT_DATABASE",
    "REGISTRY_FORMAT_VERSION",
    "TableEntry",
    "Registry",
    "UnreadableEntry",
    "database_of",
    "parse_table_name",
    "refuse_credential",
]

CATALOG_DIR = "_catalog"
DEFAULT_DATABASE = "default"
REGISTRY_FORMAT_VERSION = 1

_SUFFIX = ".json"
_DATABASE_MARKER = "_database.json"


@dataclass(frozen=True, slots=True)
class TableEntry:
    """One registered table.

    Attributes:
        database: the database (namespace) it belongs to; ``default`` when none was given.
        name: the table name (a plain lower-case identifier).
        location: the table root URL (local paths absolute).
        options: data source options stored with the table (``tagColumns``, ``timestampAs``,
            ``compression``, non-secret ``fs.*`` settings, ...), applied to every scan or
            write as relevant. Never credentials (see :func:`refuse_credential`).
        created_ms: when it was registered (epoch milliseconds).
    """

    database: str
    name: str
    location: str
    options: Mapping[str, str] = field(default_factory=empty_mapping)
    created_ms: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", frozen_mapping(self.options))

    @property
    def qualified(self) -> str:
        return f"{self.database}.{self.name}"

    @property
    def display_name(self) -> str:
        """The name as users write it: bare in the default database, qualified otherwise."""
        return self.name if self.database == DEFAULT_DATABASE else self.qualified

    def with_options(self, options: Mapping[str, str]) -> TableEntry:
        return TableEntry(self.database, self.name, self.location, options, self.created_ms)

    def to_json(self) -> dict[str, Any]:
        return {
            "format_version": REGISTRY_FORMAT_VERSION,
            "database": self.database,
            "name": self.name,
            "location": self.location,
            "options": dict(self.options),
            "created_ms": self.created_ms,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], *, source: str) -> TableEntry:
        try:
            version = int(obj["format_version"])
            if version > REGISTRY_FORMAT_VERSION:
                raise CorruptManifestError(
                    f"catalog entry {source} has format_version {version}; this version of "
                    f"tsfile-catalog reads up to {REGISTRY_FORMAT_VERSION}"
                )
            options = obj.get("options") or {}
            if not isinstance(options, Mapping):
                raise TypeError("options is not an object")
            return cls(
                database=str(obj["database"]),
                name=str(obj["name"]),
                location=str(obj["location"]),
                options={str(k): str(v) for k, v in options.items()},
                created_ms=int(obj.get("created_ms", 0)),
            )
        except (KeyError, TypeError, ValueError, OverflowError) as e:
            # OverflowError: ``Infinity`` where an integer belongs (found by fuzzing).
            raise CorruptManifestError(f"catalog entry {source} is invalid: {e}") from e


@dataclass(frozen=True, slots=True)
class UnreadableEntry:
    """A registry file that names a table but cannot be read: truncated, not JSON, missing a
    field, or written by a newer version. Listed (so the name shows and can be dropped), but
    never opened: its location is unknown, so nothing may delete files for it.

    Attributes:
        database: the database folder it sits in.
        name: the table name its file name gives.
        url: the registry file.
        reason: why it cannot be read, in one line (names ``url``).
    """

    database: str
    name: str
    url: str
    reason: str

    @property
    def display_name(self) -> str:
        return self.name if self.database == DEFAULT_DATABASE else f"{self.database}.{self.name}"


def refuse_credential(key: str, value: str) -> None:
    """Credentials never go into the registry, which everyone who can list the warehouse can
    read (and DESCRIBE would print): they come from the process that uses the table.

    Raises:
        OptionError: ``key`` is an ``fs.*`` option that holds or may hold a credential.
    """
    if key.lower().startswith(STORAGE_PREFIX) and is_credential_option(key, value):
        raise OptionError(
            f"table option {key!r} looks like a credential, and the catalog never stores "
            "credentials with a table. Keep only settings such as 'fs.endpoint_url' in "
            f"OPTIONS and supply credentials at run time: {CREDENTIALS_AT_RUN_TIME}"
        )


def parse_table_name(name: str) -> TableName:
    """``name`` or ``database.name`` as the catalog's Python API and the CLI take it.

    Raises:
        SqlError: more than two dotted parts, or an invalid identifier.
    """
    parts = name.split(".")
    if len(parts) == 1:
        return TableName(parts[0])
    if len(parts) == 2:
        return TableName(parts[1], parts[0])
    raise SqlError(f"invalid table name {name!r}: use name or database.name")


def database_of(table: TableName) -> str:
    return table.database or DEFAULT_DATABASE


class Registry:
    """The table registry of one warehouse."""

    def __init__(self, warehouse: str, storage_options: Mapping[str, Any] | None = None) -> None:
        self._io = FileIO(warehouse, storage_options)
        self.warehouse = self._io.normalize(warehouse)
        self.root = join_url(self.warehouse, CATALOG_DIR, "tables")

    @property
    def io(self) -> FileIO:
        return self._io

    def _url(self, database: str, name: str) -> str:
        # Both parts are validated identifiers (TableName), so they cannot escape the root.
        return join_url(self.root, database, name + _SUFFIX)

    def default_location(self, table: TableName) -> str:
        """``<warehouse>/<name>`` in the default database, ``<warehouse>/<db>.db/<name>``
        otherwise (Hive's layout)."""
        database = database_of(table)
        if database == DEFAULT_DATABASE:
            return join_url(self.warehouse, table.name)
        return join_url(self.warehouse, f"{database}.db", table.name)

    def get(self, table: TableName) -> TableEntry | None:
        """The entry for ``table``, or None when it is not registered.

        Raises:
            CorruptManifestError: the entry's file cannot be read; the message names the file
                and says that ``DROP TABLE`` forgets it.
        """
        database = database_of(table)
        url = self._url(database, table.name)
        try:
            data = self._io.read_bytes(url)
        except FileNotFoundError:
            return None
        except IsADirectoryError as e:
            raise self._unreadable(table, url, "is a directory, not a JSON file") from e
        except NotADirectoryError as e:
            raise self._not_a_folder(posixpath.dirname(url)) from e
        try:
            obj = json.loads(data)
        except (ValueError, RecursionError) as e:
            # RecursionError: nesting deeper than the parser's stack (found by fuzzing).
            reason = "nested too deeply" if isinstance(e, RecursionError) else str(e)
            raise self._unreadable(table, url, f"is not valid JSON ({reason})") from e
        if not isinstance(obj, Mapping):
            raise self._unreadable(table, url, "is not a JSON object")
        try:
            return TableEntry.from_json(obj, source=url)
        except CorruptManifestError as e:
            raise CorruptManifestError(f"{e}; {_drop_hint(table)}") from e

    def _unreadable(self, table: TableName, url: str, what: str) -> CorruptManifestError:
        return CorruptManifestError(f"catalog entry {url} {what}; {_drop_hint(table)}")

    def exists(self, table: TableName) -> bool:
        """Whether ``table`` has an entry, readable or not (DROP TABLE of an unreadable one
        removes it).

        Raises:
            StorageError, LocationError: no entry, and the warehouse cannot be reached or is
                a file (see :meth:`check_warehouse`): "no such table" would be wrong.
        """
        if self._io.exists(self._url(database_of(table), table.name)):
            return True
        self.check_warehouse()
        return False

    def require(self, table: TableName) -> TableEntry:
        """The entry for ``table``.

        Raises:
            TableNotFoundError: no such table in the catalog.
            CorruptManifestError: its entry cannot be read.
            StorageError, LocationError: the warehouse cannot be reached or is a file.
        """
        entry = self.get(table)
        if entry is None:
            # "Not in the catalog" would be the wrong advice when there is no catalog there.
            self.check_warehouse()
            raise TableNotFoundError(
                f"table {table.qualified!r} is not in the catalog at {self.warehouse}"
            )
        return entry

    def listing(self, database: str | None = None) -> list[TableEntry | UnreadableEntry]:
        """Every registered table (of one database), sorted by database and name; an entry
        that cannot be read is listed as an :class:`UnreadableEntry`, so one bad file hides
        no table and blocks no listing.

        Raises:
            StorageError, LocationError: the warehouse cannot be reached or is a file (see
                :meth:`check_warehouse`), rather than an empty list.
        """
        databases = [database] if database is not None else self._list(self.root)
        out: list[TableEntry | UnreadableEntry] = []
        for db in databases:
            for file_name in self._list(join_url(self.root, db)):
                if not file_name.endswith(_SUFFIX) or file_name.startswith((".", "_")):
                    continue
                try:
                    table = TableName(file_name[: -len(_SUFFIX)], db)
                except SqlError:
                    continue  # a stray file, not a table entry
                try:
                    entry = self.get(table)
                except CorruptManifestError as e:
                    out.append(UnreadableEntry(db, table.name, self._url(db, table.name), str(e)))
                    continue
                if entry is not None:
                    out.append(entry)
        return sorted(out, key=lambda e: (e.database, e.name))

    def entries(self, database: str | None = None) -> list[TableEntry]:
        """Every readable registered table (of one database), sorted by database and name;
        :meth:`listing` also has the unreadable ones."""
        return [e for e in self.listing(database) if isinstance(e, TableEntry)]

    def databases(self) -> list[str]:
        """Every database: the default one, those holding tables and those created empty."""
        names = {DEFAULT_DATABASE}
        for name in self._list(self.root):
            if name.startswith((".", "_")):
                continue
            try:
                TableName("t", name)
            except SqlError:
                continue  # a stray folder, not a database
            if name == DEFAULT_DATABASE or self._io.list_names(join_url(self.root, name)):
                names.add(name)
        return sorted(names)

    def _list(self, url: str) -> list[str]:
        """Names in a registry folder. A folder that is missing lists nothing, as in a new
        warehouse, but only once :meth:`check_warehouse` has found the warehouse there."""
        try:
            names = self._io.list_names(url)
        except NotADirectoryError as e:
            raise self._not_a_folder(url) from e
        if not names:
            self.check_warehouse()
        return names

    def _not_a_folder(self, url: str) -> LocationError:
        """The error for a registry folder ``url`` that a file keeps from being one."""
        self.check_warehouse()  # the warehouse itself a file: say that instead
        blocking = self._io.file_in_the_way(url) or url
        return LocationError(
            f"the catalog's registry folder {url} is not a directory ({blocking} is a file); "
            "move that file out of the warehouse's _catalog folder"
        )

    def check_warehouse(self) -> None:
        """Refuse a warehouse that cannot hold a registry, so that it never reads as an empty
        one: an object store whose bucket does not exist or whose endpoint answers "not
        found" to it, a store that cannot be reached, or a local path that is (or lies
        under) a file. A local folder that does not exist yet, or a prefix of an existing
        bucket with nothing under it, is an empty warehouse: its first CREATE makes it.

        Raises:
            StorageError: the bucket does not exist, or the store refused or failed the check.
            LocationError: the warehouse path is a file, or lies under one.
        """
        io = self._io
        blocking = io.file_in_the_way(self.warehouse)
        if blocking is not None:
            where = "is a file" if blocking == self.warehouse else f"lies under the file {blocking}"
            raise LocationError(
                f"the warehouse {self.warehouse} {where}, not a directory: give the catalog a "
                "folder (it is created on the first CREATE TABLE)"
            )
        bucket = io.bucket_of(self.warehouse)
        if bucket is not None and not io.bucket_exists(self.warehouse):
            endpoint = redact_text(str(io.storage_options.get("endpoint_url") or ""))
            store = f"the store at {endpoint}" if endpoint else "the store"
            raise StorageError(
                f"the warehouse {self.warehouse} cannot be reached: {store} answers that its "
                f"bucket {bucket!r} does not exist (404); check the warehouse URL and the "
                "catalog's fs.endpoint_url"
            )

    def create_database(self, database: str) -> bool:
        """Create an empty database (its marker); False when it already existed.

        Raises:
            SqlError: ``database`` is not a plain identifier.
        """
        database = TableName("t", database).database or DEFAULT_DATABASE
        if database in self.databases():
            return False
        marker = json.dumps({"format_version": REGISTRY_FORMAT_VERSION, "database": database})
        try:
            url = join_url(self.root, database, _DATABASE_MARKER)
            self._io.create_exclusive(url, marker.encode())
        except FileExistsError:
            return False
        return True

    def drop_database(self, database: str) -> None:
        """Forget an empty database's marker (tables keep a database in existence)."""
        self._io.delete(join_url(self.root, database, _DATABASE_MARKER))

    def names_at(self, location: str, *, besides: tuple[str, str]) -> list[str]:
        """Display names of the tables registered at exactly ``location``, except the one
        whose (database, name) is ``besides``."""
        return [
            entry.display_name
            for entry in self.entries()
            if entry.location == location and (entry.database, entry.name) != besides
        ]

    def check_new(self, table: TableName, location: str) -> None:
        """Refuse a name or location that would let two owners delete the same files.

        Names starting with ``_`` are reserved: the registry folder is ``_catalog`` (a table of
        that name would sit on it), a table's own folders are ``_tsfile_manifest`` and
        ``_staging``, and listings skip such names. A location may not be the warehouse root,
        hold the warehouse, or lie in the registry; and it has at most one name.

        Raises:
            SqlError: a reserved name.
            LocationError: a location the warehouse itself uses.
            TableExistsError: another name is registered at ``location``.
        """
        _check_name(table)
        registry = join_url(self.warehouse, CATALOG_DIR)
        if is_within(location, registry):
            raise LocationError(
                f"table location {location} is inside the catalog's registry {registry}"
            )
        if is_within(self.warehouse, location):
            raise LocationError(
                f"table location {location} holds the warehouse {self.warehouse} (its "
                "registry and every table in it); give the table a folder of its own, such "
                f"as {join_url(self.warehouse, table.name)}"
            )
        others = self.names_at(location, besides=(database_of(table), table.name))
        if others:
            raise TableExistsError(
                f"table location {location} is already registered as {', '.join(others)}; one "
                "location has one catalog name (two names would each purge the other's data)"
            )

    def create(self, table: TableName, location: str, options: Mapping[str, str]) -> TableEntry:
        """Register ``table`` (atomically: exactly one concurrent creator wins).

        Raises:
            TableExistsError: the name is already registered, or the location is (under
                another name).
            SqlError, LocationError: see :meth:`check_new`.
        """
        self.check_new(table, location)
        entry = TableEntry(
            database_of(table),
            table.name,
            location,
            options,
            created_ms=time.time_ns() // 1_000_000,
        )
        try:
            self._io.create_exclusive(self._url(entry.database, entry.name), self._encode(entry))
        except FileExistsError as e:
            raise TableExistsError(
                f"table {entry.qualified!r} already exists in the catalog at {self.warehouse}"
            ) from e
        return entry

    def rename(self, table: TableName, new: TableName) -> TableEntry:
        """Register ``table``'s location and options as ``new`` and drop ``table``: the
        location and data stay where they are (as Delta's rename of a table by path).

        The new entry is created exclusively first, so a concurrent creator of ``new`` wins
        cleanly and ``table`` is only dropped once ``new`` exists.

        Raises:
            TableNotFoundError: ``table`` is not registered.
            TableExistsError: ``new`` is.
            SqlError: ``new`` is a reserved name.
        """
        entry = self.require(table)
        _check_name(new)
        renamed = TableEntry(
            database_of(new), new.name, entry.location, entry.options, entry.created_ms
        )
        try:
            url = self._url(renamed.database, renamed.name)
            self._io.create_exclusive(url, self._encode(renamed))
        except FileExistsError as e:
            raise TableExistsError(
                f"cannot rename table {entry.display_name!r} to {renamed.display_name!r}: that "
                f"name is taken in the catalog at {self.warehouse}"
            ) from e
        self.drop(table)
        return renamed

    def replace(self, entry: TableEntry) -> None:
        """Overwrite an existing entry (its options changed)."""
        self._io.write_bytes(self._url(entry.database, entry.name), self._encode(entry))

    def drop(self, table: TableName) -> None:
        self._io.delete(self._url(database_of(table), table.name))

    @staticmethod
    def _encode(entry: TableEntry) -> bytes:
        for key, value in entry.options.items():
            refuse_credential(key, value)
        return json.dumps(entry.to_json(), indent=2, sort_keys=True).encode()


def _drop_hint(table: TableName) -> str:
    return (
        f"DROP TABLE {table.qualified} removes this entry (and never the table's files, "
        "whose location it no longer says)"
    )


def _check_name(table: TableName) -> None:
    if table.name.startswith("_"):
        raise SqlError(
            f"table name {table.qualified!r} is reserved: names starting with '_' are the "
            f"catalog's and the tables' own folders ({CATALOG_DIR}, _tsfile_manifest, "
            "_staging)"
        )
