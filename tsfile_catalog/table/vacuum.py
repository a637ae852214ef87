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

from tsfile_catalog.exceptions import CorruptManifestError
from tsfile_catalog.io import FileIO, join_url
from tsfile_catalog.metadata.manifest import (
    AddPart,
    Commit,
    Snapshot,
    commit_table_uuid,
    decode_commit,
    replay,
)
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
    has_start,
    list_log,
    log_url,
    open_log,
    read_commits,
    read_log_file,
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


def purge(url: str, *, storage_options: Mapping[str, Any] | None = None) -> list[str]:
    """Delete every file the table at ``url`` owns, and nothing else (``DROP TABLE … PURGE``).

    The table owns the parts any version added, its writers' staging files and its
    ``_tsfile_manifest/`` folder. Other files under the location (a user's notes, a table
    nested below) stay, so does anything behind a symbolic link, and so do the folders
    holding them; folders left empty are removed. A location without a table holds nothing
    of one: only staging and manifest leftovers are removed.

    The purge wins a race with writers as a whole (``docs/maintenance.md``): it deletes the
    data the log names while the log is intact (an interrupted purge can simply be run
    again), then breaks the log's start (checkpoints, then the oldest commit), so no
    process can load the table any more and a commit that lands from then on is undone by
    its own writer (``commits._check_landed``). Then it lists the log again and deletes
    what it finds, with the parts of the commits that landed since it read the log.

    Returns:
        What was deleted: files, then folders (ending in ``/``).

    Raises:
        CorruptManifestError: a commit file is unreadable (nothing is deleted then).
    """
    io = FileIO(url, storage_options)
    location = io.normalize(url)
    listing = list_log(io, location)
    table_uuid: str | None = None
    known = -1
    if has_start(listing):
        base, commits = _known_log(io, location, listing)
        parts = _known_parts(base, commits)
        owned = frozenset(p.path for p in parts if owns_part(p))
        keep = kept_paths(parts)
        table_uuid, known = base.table_uuid, listing.latest
    else:
        # No table, or the log a purge that was interrupted left: what it still names is
        # found below, from the commit files themselves.
        owned, keep = frozenset(), frozenset()
    deleted = ownership.delete(io, ownership.owned(io, location, owned, keep=keep))
    deleted += _break_start(io, location, listing)
    deleted += _finish_log(io, location, table_uuid, known=known, keep=keep)
    if io.is_local:
        deleted += ownership.delete(io, ownership.Deletion((), (log_url(location), location)))
    files = [u for u in deleted if not u.endswith("/")]
    return files + [u for u in deleted if u.endswith("/")]


def _break_start(io: FileIO, location: str, listing: Listing) -> list[str]:
    """Delete the checkpoints, then the oldest commit: from here on the log cannot be loaded
    (:func:`~tsfile_catalog.table.log.has_start`), and every commit landing in it is undone
    by its writer."""
    derived = _derived_files(io, location)
    oldest = [commit_url(location, listing.commits[0])] if listing.commits else []
    return ownership.delete(io, ownership.Deletion((*derived, *oldest)))


def _derived_files(io: FileIO, location: str) -> list[str]:
    """The log folder's files other than commits: checkpoints and hints."""
    manifest_url = log_url(location)
    return [
        join_url(manifest_url, name)
        for name, kind in io.list_entries(manifest_url)
        if kind == "file" and not COMMIT_NAME.match(name)
    ]


# Rounds of listing the broken log; commits that landed before the break are all in the
# first (listings see every completed write), later ones are undone by their writers.
_FINISH_ROUNDS = 10


def _finish_log(
    io: FileIO, location: str, table_uuid: str | None, *, known: int, keep: frozenset[str]
) -> list[str]:
    """Delete what the broken log still holds: the commits (newest first) and checkpoints,
    and the parts the table owns that commits after ``known`` (the latest version the purge
    read) added. Stops early at version 0 of another table: a table created here once the
    log was gone is not the purged one's to delete."""
    deleted: list[str] = []
    for _ in range(_FINISH_ROUNDS):
        listing = list_log(io, location)
        derived = _derived_files(io, location)
        if not listing.commits and not derived:
            break
        if listing.commits and listing.commits[0] == 0 and table_uuid is not None:
            source = commit_url(location, 0)
            if commit_table_uuid(read_log_file(io, source, "commit"), source=source) != table_uuid:
                break
        late = [v for v in listing.commits if v > known]
        added = _added_parts(io, location, late)
        owned = frozenset(p.path for p in added if owns_part(p))
        data = ownership.owned(io, location, owned, keep=keep | kept_paths(added))
        log = [commit_url(location, v) for v in reversed(listing.commits)]
        deleted += ownership.delete(io, data)
        deleted += ownership.delete(io, ownership.Deletion((*derived, *log)))
    return deleted


def _added_parts(io: FileIO, location: str, versions: Sequence[int]) -> list[PartFile]:
    """The parts the commits at ``versions`` add, read one by one (the log they are in
    cannot be loaded); a commit that vanished meanwhile (undone by its writer) adds none."""
    out: list[PartFile] = []
    for version in versions:
        source = commit_url(location, version)
        try:
            commit = decode_commit(read_log_file(io, source, "commit"), None, source=source)
        except CorruptManifestError:
            continue
        out.extend(a.part for a in commit.actions if isinstance(a, AddPart))
    return out
