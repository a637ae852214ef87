"""VACUUM: deleting the files a table no longer needs (purge, deleting every file it owns,
is :mod:`tsfile_catalog.table.purge`).

It deletes exactly what the plans of :mod:`tsfile_catalog.table.ownership` list; which
removed parts may go is decided by the pure plans of :mod:`tsfile_catalog.metadata.retention`,
and the rules of what a table owns are pure too (:mod:`tsfile_catalog.metadata.ownership`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tsfile_catalog.io import FileIO, join_url
from tsfile_catalog.metadata.manifest import replay
from tsfile_catalog.metadata.ownership import kept_paths
from tsfile_catalog.metadata.retention import (
    DEFAULT_DELETED_FILE_RETENTION_MS,
    DELETED_FILE_RETENTION,
    check_retention,
    plan_vacuum,
    retention_property,
)
from tsfile_catalog.progress import Progress
from tsfile_catalog.table import ownership
from tsfile_catalog.table.commits import now_ms
from tsfile_catalog.table.log import open_log, read_vacuum_record, vacuum_record_url
from tsfile_catalog.table.purge import known_log, known_parts

__all__ = ["DEFAULT_RETENTION_MS", "Vacuumed", "vacuum", "vacuum_table"]

DEFAULT_RETENTION_MS = DEFAULT_DELETED_FILE_RETENTION_MS


@dataclass(frozen=True)
class Vacuumed:
    """What a VACUUM deleted (or, for a dry run, would delete).

    ``removed`` are parts the table no longer uses, removed longer ago than the retention;
    ``orphans`` are files the table's writers left without committing, then the staging
    folders that go (ending in ``/``). ``bytes`` counts the files of both.
    """

    removed: tuple[str, ...]
    orphans: tuple[str, ...]
    bytes: int
    retention_ms: int
    dry_run: bool

    @property
    def files(self) -> list[str]:
        """Everything, sorted: the files, then the folders (ending in ``/``)."""
        files = sorted(u for u in (*self.removed, *self.orphans) if not u.endswith("/"))
        return files + [u for u in self.orphans if u.endswith("/")]


def vacuum_table(
    url: str,
    *,
    dry_run: bool = True,
    retention_ms: int | None = None,
    retention_check: bool = True,
    storage_options: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
) -> Vacuumed:
    """Delete the files of the table at ``url`` that no version within the retention uses.

    Two kinds of file go, and nothing else (see :mod:`tsfile_catalog.table.ownership`):

    * parts removed from the table (by an overwrite, a restore, ...) whose removing commit is
      older than the retention: only versions that stopped being current before then read
      them, and time travel to those versions fails afterwards with an error saying so;
    * orphans: files named and placed as only the table's writers name and place them (a
      ``part-<uuid>-<partition>.tsfile`` at the root no version references, a part in a
      job's staging folder) and older than the retention, plus staging folders left empty.

    External parts, a user's files and nested tables are never touched. Right before
    deleting, the log is read again: a file a version committed since the plan adds (a
    RESTORE that brought a removed part back) stays
    (:func:`~tsfile_catalog.table.ownership.without_recommitted`).

    Args:
        dry_run: list what would go, delete nothing.
        retention_ms: how old a removal (or an orphan) must be; default the table property
            ``deletedFileRetention`` (7 days). A shorter one is refused unless
            ``retention_check`` is False (Delta's ``retentionDurationCheck``): with 0, files a
            running write has not committed yet could go.
        progress: ``progress(done, total)`` as files are deleted.

    Raises:
        TableNotFoundError: no manifest at ``url``.
        OptionError: a retention below ``deletedFileRetention`` (with the check on), negative,
            or an unreadable property.
        CorruptManifestError: a commit file is unreadable (nothing is deleted then).
        CommitConflictError: the table was dropped and recreated while VACUUM planned
            (nothing is deleted then).
    """
    io = FileIO(url, storage_options)
    location = io.normalize(url)
    listing = open_log(io, location)
    base, commits = known_log(io, location, listing)
    latest = replay(base, commits) if commits else base
    if retention_ms is None:
        retention_ms = retention_property(
            latest.properties, DELETED_FILE_RETENTION, DEFAULT_DELETED_FILE_RETENTION_MS
        )
    check_retention(retention_ms, latest.properties, enabled=retention_check)
    cutoff = now_ms() - retention_ms
    plan = plan_vacuum(base, commits, cutoff_ms=cutoff)
    keep = kept_paths(known_parts(base, commits))
    removed = ownership.replaced(io, location, {r.path for r in plan.reclaimable}, keep=keep)
    orphans = ownership.orphans(
        io,
        location,
        plan.referenced,
        modified_before_ms=cutoff if retention_ms else None,
        keep=keep,
    )
    sizes = {join_url(location, r.path): r.size_bytes for r in plan.reclaimable}
    sizes.update((u, io.size(u)) for u in orphans.files)
    size = sum(sizes[u] for u in (*removed.files, *orphans.files))
    if not dry_run:
        if removed.files and plan.intact_from is not None:
            # Recorded before anything goes: an interrupted vacuum still explains the gap.
            _record_vacuum(io, location, plan.intact_from)
        everything = ownership.Deletion(removed.files + orphans.files, orphans.dirs)
        # A commit since planning (a RESTORE, say) may have added some of them back.
        everything = ownership.without_recommitted(
            io, location, everything, planned=latest.version, schema=latest.schema
        )
        deleted = ownership.delete(io, everything, progress=progress)
        gone = set(removed.files)
        removed_urls = tuple(u for u in deleted if u in gone)
        orphan_urls = tuple(u for u in deleted if u not in gone)
        size = sum(sizes[u] for u in everything.files)
        return Vacuumed(removed_urls, orphan_urls, size, retention_ms, dry_run)
    return Vacuumed(removed.files, tuple(orphans.urls()), size, retention_ms, dry_run)


def _record_vacuum(io: FileIO, location: str, intact_from: int) -> None:
    previous = read_vacuum_record(io, location)
    record = {
        "format_version": 1,
        "intact_from": max(intact_from, previous or 0),
        "timestamp_ms": now_ms(),
    }
    io.write_bytes(vacuum_record_url(location), json.dumps(record).encode())


def vacuum(
    url: str,
    *,
    dry_run: bool = True,
    retention_ms: int | None = None,
    retention_check: bool = True,
    storage_options: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
) -> list[str]:
    """:func:`vacuum_table`, returning the file URLs, sorted, then the folders that go
    (ending in ``/``). With ``dry_run`` (the default) nothing is deleted."""
    return vacuum_table(
        url,
        dry_run=dry_run,
        retention_ms=retention_ms,
        retention_check=retention_check,
        storage_options=storage_options,
        progress=progress,
    ).files
