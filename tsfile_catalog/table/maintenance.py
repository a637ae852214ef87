"""Vacuum and purge: deleting only what the table owns.

Both delete exactly what the plans of :mod:`tsfile_catalog.table.ownership` list, from the part
paths the log says any version added; the rules of what a table owns are pure
(:mod:`tsfile_catalog.metadata.ownership`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tsfile_catalog.exceptions import OptionError, TableNotFoundError
from tsfile_catalog.io import FileIO, join_url
from tsfile_catalog.metadata.manifest import AddPart
from tsfile_catalog.metadata.ownership import MANIFEST_DIR, owns_part
from tsfile_catalog.progress import Progress
from tsfile_catalog.table import ownership
from tsfile_catalog.table.commits import now_ms
from tsfile_catalog.table.log import (
    COMMIT_NAME,
    Listing,
    commit_url,
    list_log,
    log_url,
    read_commits,
)

__all__ = ["DEFAULT_RETENTION_MS", "purge", "vacuum"]

DEFAULT_RETENTION_MS = 7 * 24 * 3600 * 1000


def _ever_added(io: FileIO, location: str, listing: Listing) -> frozenset[str]:
    """Every part path any version added that the table owns: its data files, current or
    time-travel (external parts are the user's, never deleted: ``owns_part``)."""
    if not listing.commits:
        return frozenset()
    return frozenset(
        action.part.path
        for c in read_commits(io, location, listing, 0, listing.latest, None)
        for action in c.actions
        if isinstance(action, AddPart) and owns_part(action.part)
    )


def vacuum(
    url: str,
    *,
    dry_run: bool = True,
    retention_ms: int = DEFAULT_RETENTION_MS,
    storage_options: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
) -> list[str]:
    """Delete what the table's own writers left behind and no version uses.

    Orphans are only files named and placed as the writer names and places them: a
    ``part-<uuid>-<partition>.tsfile`` at the table root (a write that died between
    publishing and committing) or such a part in a job's task folder under ``_staging/``.
    Staging folders left empty go too. Nothing else under the location is ever considered —
    not a user's files, not an adopted layout, not a table nested below (see
    :mod:`tsfile_catalog.table.ownership`) — and a file any version references is never an
    orphan, so time travel keeps working. Files and folders modified within ``retention_ms``
    are left alone: they may belong to a write that has not committed yet. ``retention_ms=0``
    is only safe when no write is running. With ``dry_run`` (the default) nothing is deleted:
    the result is what a real run with the same arguments would delete. ``progress`` is told
    how many of the orphan files are deleted (:mod:`tsfile_catalog.progress`).

    Returns:
        The orphan file URLs, sorted, then the folders that go (ending in ``/``).

    Raises:
        TableNotFoundError: no manifest at ``url``.
        CorruptManifestError: a commit file is unreadable (nothing is deleted then).
    """
    if retention_ms < 0:
        raise OptionError(f"retention_ms must be >= 0, got {retention_ms}")
    io = FileIO(url, storage_options)
    location = io.normalize(url)
    listing = list_log(io, location)
    if not listing.commits:
        raise TableNotFoundError(f"no tsfile-catalog table at {location} (no {MANIFEST_DIR}/)")
    referenced = _ever_added(io, location, listing)
    cutoff = now_ms() - retention_ms if retention_ms else None
    found = ownership.orphans(io, location, referenced, modified_before_ms=cutoff)
    return found.urls() if dry_run else ownership.delete(io, found, progress=progress)


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
    data = ownership.owned(io, location, _ever_added(io, location, listing))
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
