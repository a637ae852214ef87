"""Find the files a plain path names and read their schema and statistics (no Spark).

A plain file, directory or glob is listed, and each file's footer is read once for its schema
and statistics (through the format adapter), so pruning works the same way on plain paths as
on tables with a manifest. :func:`has_manifest` tells the two apart.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

import fsspec

from tsfile_catalog.exceptions import (
    LocationError,
    OptionError,
    SchemaMismatchError,
    TableNotFoundError,
)
from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.formats.tsfile import TSFILE
from tsfile_catalog.io import GLOB_CHARS, FileIO, join_url
from tsfile_catalog.metadata.expressions import TimestampAs, TimeUnit
from tsfile_catalog.metadata.ownership import MANIFEST_DIR
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import Category, TableSchema
from tsfile_catalog.progress import Progress, tracked
from tsfile_catalog.table.handle import Table, open_table

__all__ = [
    "ResolvedScan",  # defined in tsfile_catalog.exec.source; kept here for old imports
    "list_tsfiles",
    "reconcile_schemas",
    "has_manifest",
    "resolve_files",
    "open_location",
    "scan_location",
]


def has_manifest(io: FileIO, url: str) -> bool:
    return io.exists(join_url(url, MANIFEST_DIR))


def _visible(relative: str) -> bool:
    return not any(part.startswith((".", "_")) for part in relative.split("/"))


def list_tsfiles(io: FileIO, url: str) -> tuple[str, list[tuple[str, int]]]:
    """(base, [(relative path, size)]) of the TsFiles a plain path names.

    Directories are walked recursively for ``*.tsfile``, skipping hidden and ``_``-prefixed
    entries (staging areas, manifests); globs keep the ``*.tsfile`` files they match.

    Raises:
        LocationError: a walked folder holds a table (a ``_tsfile_manifest/`` below it, at
            any depth), or a glob reaches into one. That table's manifest, not its folder,
            says which of its files are rows: its removed parts are still there until its
            VACUUM deletes them, so neither a plain read nor an adoption may take its files.
    """
    if any(c in url for c in GLOB_CHARS):
        # Like Spark's file sources, hidden and "_" entries stay hidden inside glob matches.
        fixed = io.normalize(url[: min(url.index(c) for c in GLOB_CHARS if c in url)])
        prefix = fixed.rsplit("/", 1)[0]
        found: list[tuple[str, int]] = []
        tables: dict[str, bool] = {}
        for match in io.glob(url):
            if not _visible(posixpath.relpath(io.normalize(match), prefix)):
                continue
            if io.isdir(match):
                _refuse_inside_table(io, url, io.normalize(match), prefix, tables)
                found.extend((f, s) for f, s in _walk(io, match))
            elif match.endswith(".tsfile"):
                _refuse_inside_table(
                    io, url, posixpath.dirname(io.normalize(match)), prefix, tables
                )
                found.append((match, io.size(match)))
        return "", sorted(found)
    if io.isdir(url):
        base = io.normalize(url)
        files = []
        for full, size in _walk(io, base):
            files.append((posixpath.relpath(io.normalize(full), base), size))
        return base, sorted(files)
    if io.exists(url):
        full = io.normalize(url)
        return posixpath.dirname(full), [(posixpath.basename(full), io.size(url))]
    raise TableNotFoundError(f"path {url} does not exist")


def _walk(io: FileIO, directory: str) -> list[tuple[str, int]]:
    base = io.normalize(directory)
    out = []
    for full, size in io.walk_files(directory):
        relative = posixpath.relpath(io.normalize(full), base)
        _refuse_nested_table(directory, relative)
        if relative.endswith(".tsfile") and _visible(relative):
            out.append((full, size))
    return out


def _refuse_inside_table(
    io: FileIO, url: str, folder: str, prefix: str, tables: dict[str, bool]
) -> None:
    """Refuse a glob match in ``folder`` when it or a folder above it, up to the glob's fixed
    ``prefix``, is a table (``tables`` remembers the folders already looked at)."""
    while True:
        if folder not in tables:
            tables[folder] = has_manifest(io, folder)
        if tables[folder]:
            raise LocationError(
                f"{url} reaches into the table at {folder}; its files cannot be read as plain "
                "TsFiles, since its manifest, not its folder, decides which of them are rows "
                "(its removed parts stay until its VACUUM). Read that table by its own location"
            )
        parent = posixpath.dirname(folder)
        if len(folder) <= len(prefix) or parent == folder:
            return
        folder = parent


def _refuse_nested_table(directory: str, relative: str) -> None:
    """Refuse a walk that meets another table's manifest (a file under a ``_tsfile_manifest``
    folder below ``directory``; ``directory``'s own manifest is its caller's business)."""
    folders = relative.split("/")[:-1]
    if MANIFEST_DIR not in folders[1:]:
        return
    inner = "/".join(folders[: folders.index(MANIFEST_DIR, 1)])
    raise LocationError(
        f"{directory} holds the table at {join_url(directory, inner)} (its {MANIFEST_DIR}/); "
        "a folder holding a table cannot be read or adopted as plain TsFiles, since that "
        "table's manifest, not its folder, decides which of its files are rows (its removed "
        "parts stay until its VACUUM). Read or register that table by its own location, or "
        "adopt a folder beside it"
    )


def reconcile_schemas(schemas: Sequence[tuple[str, TableSchema]], merge: bool) -> TableSchema:
    """One schema for files read together.

    Strict by default: the same table, columns, categories and types in the same order.
    ``merge`` unions FIELD columns (first-seen order); TAG columns must still be identical
    and a column may not change type.
    """
    first_where, result = schemas[0]
    for where, schema in schemas[1:]:
        if schema.table != result.table:
            raise SchemaMismatchError(
                f"{first_where} holds table '{result.table}' but {where} holds "
                f"'{schema.table}'; read one table at a time (option 'table')"
            )
        if schema.tags != result.tags:
            raise SchemaMismatchError(
                f"TAG columns differ: {first_where} has ({', '.join(result.tag_names)}), "
                f"{where} has ({', '.join(schema.tag_names)})"
            )
        if not merge:
            if schema.columns != result.columns:
                raise SchemaMismatchError(_difference(first_where, result, where, schema))
            continue
        columns = list(result.columns)
        for col in schema.fields:
            existing = result.column(col.name)
            if existing is None:
                columns.append(col)
            elif existing.type != col.type or existing.category is not Category.FIELD:
                raise SchemaMismatchError(
                    f"column '{col.name}' is {existing.category.value} {existing.type.value} in "
                    f"{first_where} but {col.category.value} {col.type.value} in {where}"
                )
        result = TableSchema(result.table, tuple(columns))
    return result


def _difference(where_a: str, a: TableSchema, where_b: str, b: TableSchema) -> str:
    for col in a.columns:
        other = b.column(col.name)
        if other is None:
            return (
                f"column '{col.name}' is in {where_a} but not in {where_b} "
                "(set mergeSchema=true to union FIELD columns)"
            )
        if other != col:
            return (
                f"column '{col.name}' is {col.category.value} {col.type.value} in {where_a} "
                f"but {other.category.value} {other.type.value} in {where_b}"
            )
    for col in b.columns:
        if a.column(col.name) is None:
            return (
                f"column '{col.name}' is in {where_b} but not in {where_a} "
                "(set mergeSchema=true to union FIELD columns)"
            )
    return f"columns are in a different order in {where_a} and {where_b}"


def resolve_files(
    io: FileIO,
    path: str,
    *,
    table: str | None = None,
    merge_schema: bool = False,
    progress: Progress | None = None,
    unit: TimeUnit = "ms",
    timestamp_as: TimestampAs = "long",
) -> ResolvedScan:
    """The schema and parts of the TsFiles a plain ``path`` names, each file opened once.

    ``table`` picks one table from files holding several; ``merge_schema`` unions FIELD
    columns across files (see :func:`reconcile_schemas`); ``progress`` counts files read;
    ``unit`` and ``timestamp_as`` are how the scan will be read (see :class:`ResolvedScan`).
    """
    base, files = list_tsfiles(io, path)
    if not files:
        raise TableNotFoundError(f"no *.tsfile files under {path}")
    schemas: list[tuple[str, TableSchema]] = []
    parts: list[PartFile] = []
    for relative, size in tracked(files, progress):
        url = join_url(base, relative) if base else relative
        schema, part = TSFILE.read_part(io, url, path=relative, size_bytes=size, table=table)
        schemas.append((url, schema))
        parts.append(part)
    schema = reconcile_schemas(schemas, merge_schema)
    return ResolvedScan(base, schema, tuple(parts), io=io, unit=unit, timestamp_as=timestamp_as)


def open_location(
    url: str,
    *,
    version: int | None = None,
    timestamp: str | int | None = None,
    time_zone: str | None = None,
    table: str | None = None,
    table_uuid: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
    use_cache: bool = True,
    merge_schema: bool = False,
    unit: TimeUnit = "ms",
    timestamp_as: TimestampAs = "long",
) -> Table | ResolvedScan:
    """What a location holds, resolved as ``load(url)`` resolves it: the table whose manifest
    is there (at ``version`` / ``timestamp``, see :func:`~tsfile_catalog.table.open_table`),
    else the TsFiles of a plain path (:func:`resolve_files`). The one resolution shared by
    the data source and the SQL catalog's URL references, so both fail the same way.

    Args:
        table: the TsFile table name the caller expects (case-insensitive): a manifest table
            must hold it; for plain files it picks that table.
        table_uuid: the identity the caller expects (case-insensitive): the table must carry
            it, so a path dropped and recreated since the caller learnt it is not read.
        unit, timestamp_as: how plain files will be read (see :class:`ResolvedScan`).

    Raises:
        TableNotFoundError: nothing readable at ``url``, another TsFile table than ``table``,
            or another table than ``table_uuid``.
        VersionNotFoundError: as :func:`~tsfile_catalog.table.open_table`.
        OptionError: a URL scheme fsspec does not know (or whose package is missing); time
            travel or ``table_uuid`` on a path without a manifest (plain files have neither
            versions nor an identity).
    """
    io = FileIO(url, storage_options)
    try:
        fsspec.get_filesystem_class(io.protocol)
    except (ValueError, ImportError) as e:
        # Before any listing: fsspec's own error would surface from deep inside a scan.
        raise OptionError(
            f"cannot read {url}: no file system for its scheme {io.protocol!r} ({e})"
        ) from e
    if has_manifest(io, url):
        found = open_table(
            url,
            version=version,
            timestamp=timestamp,
            time_zone=time_zone,
            storage_options=storage_options,
            use_cache=use_cache,
        )
        if table is not None and table.lower() != found.schema.table:
            raise TableNotFoundError(
                f"table '{table}' is not at {url}; it holds '{found.schema.table}'"
            )
        if table_uuid is not None and table_uuid.strip().lower() != found.table_uuid.lower():
            raise TableNotFoundError(
                f"the table at {url} is table {found.table_uuid}, not {table_uuid.strip()!r}: "
                "the path was dropped and recreated, or holds another table"
            )
        return found
    if version is not None or timestamp is not None:
        raise OptionError(
            f"time travel (versionAsOf/timestampAsOf) needs a table with a manifest; "
            f"{url} has none (adopt it with tsfile_catalog.adopt_table)"
        )
    if table_uuid is not None:
        raise OptionError(
            f"a table UUID (tableUuid) needs a table with a manifest; {url} has none, so it "
            "has no identity to check (adopt it with tsfile_catalog.adopt_table)"
        )
    return resolve_files(
        io, url, table=table, merge_schema=merge_schema, unit=unit, timestamp_as=timestamp_as
    )


def scan_location(
    url: str,
    *,
    unit: TimeUnit | None = None,
    timestamp_as: TimestampAs | None = None,
    version: int | None = None,
    timestamp: str | int | None = None,
    time_zone: str | None = None,
    table: str | None = None,
    table_uuid: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
    use_cache: bool = True,
    merge_schema: bool = False,
) -> ResolvedScan:
    """What a scan of ``url`` reads, table or plain files alike: :func:`open_location`
    (same arguments and errors) with a table taken as :meth:`ResolvedScan.of_table`. Only
    callers that show a table's history or details need :func:`open_location` itself.

    ``unit`` is the unit of the raw times: a table's own when it records one (``unit``
    naming another is refused), else ``unit``, else ``ms``. ``timestamp_as`` is how ``time``
    reads: as given, else as the table records it (``time.type``), else ``long``.

    Raises:
        OptionError: also when ``unit`` contradicts the table's own.
    """
    found = open_location(
        url,
        version=version,
        timestamp=timestamp,
        time_zone=time_zone,
        table=table,
        table_uuid=table_uuid,
        storage_options=storage_options,
        use_cache=use_cache,
        merge_schema=merge_schema,
        unit=unit or "ms",
        timestamp_as=timestamp_as or "long",
    )
    if isinstance(found, ResolvedScan):
        return found
    return ResolvedScan.of_table(
        found, unit=found.time_unit(unit), timestamp_as=found.time_read_as(timestamp_as)
    )
