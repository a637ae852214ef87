"""Adopt a plain directory of TsFiles as a table: a manifest built from file metadata."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tsfile_catalog.discovery import has_manifest, resolve_files
from tsfile_catalog.exceptions import OptionError, TableExistsError, TableNotFoundError
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.manifest import Operation
from tsfile_catalog.metadata.schema import TableSchema
from tsfile_catalog.progress import Progress
from tsfile_catalog.table import Table, append_parts, open_table
from tsfile_catalog.table.ownership import check_location, check_no_table_inside

__all__ = ["adopt_table"]


def adopt_table(
    path: str,
    *,
    table: str | None = None,
    merge_schema: bool = False,
    storage_options: Mapping[str, Any] | None = None,
    check_schema: Callable[[TableSchema], None] | None = None,
    progress: Progress | None = None,
) -> Table:
    """Create a manifest (version 0) listing every ``*.tsfile`` under the directory ``path``.

    Files stay where they are; statistics come from each file's metadata (a table without FIELD
    columns also needs a scan of its time and TAG columns: TsFile keeps no statistics for it).
    ``check_schema`` may refuse the files' schema before anything is committed;
    ``progress`` counts the files whose metadata has been read.

    Raises:
        TableExistsError: ``path`` already has a manifest.
        LocationError: ``path`` is a file-system root, inside another table, or holds one
            at any depth (whose files the new table would then own too).
        SchemaMismatchError: the files disagree (``merge_schema`` unions FIELD columns).
    """
    io = FileIO(path, storage_options)
    if has_manifest(io, path) and _has_table(path, storage_options):
        raise TableExistsError(f"{path} already has a table manifest")
    if not io.isdir(path):
        raise OptionError(f"{path} is not a directory; only a directory can become a table")
    check_location(io, io.normalize(path))
    check_no_table_inside(io, path)
    scan = resolve_files(io, path, table=table, merge_schema=merge_schema, progress=progress)
    if check_schema is not None:
        check_schema(scan.schema)
    append_parts(
        path,
        list(scan.parts),
        scan.schema,
        merge_schema=merge_schema,
        operation=Operation.ADOPT,
        operation_parameters={"files": str(len(scan.parts))},
        storage_options=storage_options,
    )
    return open_table(path, storage_options=storage_options)


def _has_table(path: str, storage_options: Mapping[str, Any] | None) -> bool:
    """Whether the manifest at ``path`` holds a commit: an empty one is what a killed first
    commit leaves, and must not stop the table from being created."""
    try:
        open_table(path, storage_options=storage_options)
    except TableNotFoundError:
        return False
    return True
