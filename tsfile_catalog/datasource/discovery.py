"""Resolve the ``tsfile`` source's read options into a pinned schema and list of parts.

A path with a manifest is planned from the manifest alone (no listing, no file opened); a
plain path goes to :func:`tsfile_catalog.discovery.resolve_files`, which lists it and reads
each footer once.
"""

from __future__ import annotations

from tsfile_catalog.datasource.options import ReadOptions
from tsfile_catalog.discovery import scan_location
from tsfile_catalog.exec.source import ResolvedScan

__all__ = ["resolve"]


def resolve(options: ReadOptions) -> ResolvedScan:
    return scan_location(
        options.path,
        unit=options.precision,
        timestamp_as=options.timestamp_as,
        version=options.version_as_of,
        timestamp=options.timestamp_as_of,
        time_zone=options.time_zone,
        table=options.table,
        table_uuid=options.table_uuid,
        storage_options=options.storage_options,
        use_cache=options.use_metadata_cache,
        merge_schema=options.merge_schema,
    )
