"""Resolve the ``tsfile`` source's read options into a pinned schema and list of parts.

A path with a manifest is planned from the manifest alone (no listing, no file opened); a
plain path goes to :func:`tsfile_catalog.discovery.resolve_files`, which lists it and reads
each footer once.
"""

from __future__ import annotations

from tsfile_catalog.datasource.options import ReadOptions
from tsfile_catalog.discovery import ResolvedScan, has_manifest, resolve_files
from tsfile_catalog.exceptions import OptionError, TableNotFoundError
from tsfile_catalog.io import FileIO
from tsfile_catalog.table import open_table

__all__ = ["resolve"]


def resolve(options: ReadOptions) -> ResolvedScan:
    io = FileIO(options.path, options.storage_options)
    if has_manifest(io, options.path):
        table = open_table(
            options.path,
            version=options.version_as_of,
            timestamp=options.timestamp_as_of,
            time_zone=options.time_zone,
            storage_options=options.storage_options,
            use_cache=options.use_metadata_cache,
        )
        if options.table is not None and options.table.lower() != table.schema.table:
            raise TableNotFoundError(
                f"table '{options.table}' is not at {options.path}; it holds '{table.schema.table}'"
            )
        return ResolvedScan(
            io.normalize(options.path), table.schema, tuple(table.parts()), table.version
        )
    if options.version_as_of is not None or options.timestamp_as_of is not None:
        raise OptionError(
            f"time travel (versionAsOf/timestampAsOf) needs a table with a manifest; "
            f"{options.path} has none (adopt it with tsfile_catalog.adopt_table)"
        )
    return resolve_files(io, options.path, table=options.table, merge_schema=options.merge_schema)
