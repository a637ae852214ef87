"""VACUUM and purge: deleting the files a table no longer needs, or every file it owns.

They delete exactly what the plans of :mod:`tsfile_catalog.table.ownership` list; which
removed parts may go is decided by the pure plans of :mod:`tsfile_catalog.metadata.retention`,
and the rules of what a table owns are pure too (:mod:`tsfile_catalog.metadata.ownership`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tsfile_catalog.io import FileIO, join_url
from tsfile_catalog.metadata.manifest import AddPart, Commit, Snapshot, replay
from tsfile_catalog.metadata.ownership import kept_paths, owns_part
from tsfile_catalog.metadata.parts import PartFile
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
from tsfile_catalog.table.log import (
    COMMIT_NAME,
    Listing,
    commit_url,
    list_log,
    log_url,
    open_log,
    read_commits,
    read_vacuum_record,
    vacuum_record_url,
)
from tsfile_catalog.table.snapshots import load_snapshot

__all__ = ["DEFAULT_RETENTION_MS", "Vacuumed", "purge", "vacuum", "vacuum_table"]

DEFAULT_RETENTION_MS = DEFAULT_DELETED_FILE_RETENTION_MS


def _known_log(io: FileIO, location: str, listing: Listing) -> tuple[Snapshot, list[Commit]]:
    """The oldest version the log can load (version 0, or the checkpoint an expiry kept) and
    every commit after it: all the log still knows of the table's parts."""
    oldest = listing.commits[0]
    base = load_snapshot(io, location, listing, oldest, use_cache=True)
    return base, read_commits(io, location, listing, oldest + 1, listing.latest, base.schema)


def _known_parts(base: Snapshot, commits: Sequence[Commit]) -> list[PartFile]:
    """Every part a known version holds, current or time-travel."""
    added = [a.part for c in commits for a in c.actions if isinstance(a, AddPart)]
    return [*base.parts, *added]


def _ever_added(
    io: FileIO, location: str, listing: Listing
) -> tuple[frozenset[str], frozenset[str]]:
    """(paths the table owns, paths it must keep) over every part a known version holds:
    its data files, and the external parts that are the user's, never deleted whatever their
    names (``owns_part``, ``kept_paths``)."""
    if not listing.commits:
        return frozenset(), frozenset()
    parts = _known_parts(*_known_log(io, location, listing))
    return frozenset(p.path for p in parts if owns_part(p)), kept_paths(parts)


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

    External parts, a user's files and nested tables are never touched.

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
    """
    io = FileIO(url, storage_options)
    location = io.normalize(url)
    listing = open_log(io, location)
    base, commits = _known_log(io, location, listing)
    latest = replay(base, commits) if commits else base
    if retention_ms is None:
        retention_ms = retention_property(
            latest.properties, DELETED_FILE_RETENTION, DEFAULT_DELETED_FILE_RETENTION_MS
        )
    check_retention(retention_ms, latest.properties, enabled=retention_check)
    cutoff = now_ms() - retention_ms
    plan = plan_vacuum(base, commits, cutoff_ms=cutoff)
    keep = kept_paths(_known_parts(base, commits))
    removed = ownership.replaced(io, location, {r.path for r in plan.reclaimable}, keep=keep)
    orphans = ownership.orphans(
        io,
        location,
        plan.referenced,
        modified_before_ms=cutoff if retention_ms else None,
        keep=keep,
    )
    sizes = {join_url(location, r.path): r.size_bytes for r in plan.reclaimable}
    size = sum(sizes[u] for u in removed.files) + sum(io.size(u) for u in orphans.files)
    if not dry_run:
        if removed.files and plan.intact_from is not None:
            # Recorded before anything goes: an interrupted vacuum still explains the gap.
            _record_vacuum(io, location, plan.intact_from)
        everything = ownership.Deletion(removed.files + orphans.files, orphans.dirs)
        deleted = ownership.delete(io, everything, progress=progress)
        gone = set(removed.files)
        orphan_urls = tuple(u for u in deleted if u not in gone)
        return Vacuumed(removed.files, orphan_urls, size, retention_ms, dry_run)
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


def purge(url: str, *, storage_options: Mapping[str, Any] | None = None) -> list[str]:
    """Delete every file the table at ``url`` owns, and nothing else (``DROP TABLE … PURGE``).

    The table owns the parts any version added, its writers' staging files and its
    ``_tsfile_manifest/`` folder. Other files under the location (a user's notes, a table
    nested below) stay, so does anything behind a symbolic link, and so do the folders
    holding them; folders left empty are removed. Data goes first and the log last (newest
    commit first), so an interrupted purge can simply be run again. A location without a
    table holds nothing of one: only staging and manifest leftovers are removed.

    Returns:
        What was deleted: files, then folders (ending in ``/``).

    Raises:
        CorruptManifestError: a commit file is unreadable (nothing is deleted then).
    """
    io = FileIO(url, storage_options)
    location = io.normalize(url)
    listing = list_log(io, location)
    owned, keep = _ever_added(io, location, listing)
    data = ownership.owned(io, location, owned, keep=keep)
    manifest_url = log_url(location)
    derived = [
        join_url(manifest_url, name)
        for name, kind in io.list_entries(manifest_url)
        if kind == "file" and not COMMIT_NAME.match(name)
    ]
    # Checkpoints and hints first, then commits newest first: at every step the log left
    # is a valid older table, so a rerun reads it.
    commits = [commit_url(location, v) for v in reversed(listing.commits)]
    log = ownership.Deletion((*derived, *commits), (manifest_url, location) if io.is_local else ())
    return ownership.delete(io, data) + ownership.delete(io, log)
