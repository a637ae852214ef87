"""DROP TABLE … PURGE: deleting every file a table owns, and winning a race with writers.

The purge deletes exactly what the plans of :mod:`tsfile_catalog.table.ownership` list (the
rules of what a table owns are pure: :mod:`tsfile_catalog.metadata.ownership`). To win a race
with writers as a whole it breaks the log's start before it deletes the log, and every commit
checks after landing that the start is still there (:func:`check_landed`): see
``docs/manifest-format.md``, "Purge against writers". Below the commit loop, which calls it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from tsfile_catalog.exceptions import CommitConflictError, CorruptManifestError
from tsfile_catalog.io import FileIO, join_url
from tsfile_catalog.metadata.manifest import (
    AddPart,
    Commit,
    Snapshot,
    commit_table_uuid,
    decode_commit,
)
from tsfile_catalog.metadata.ownership import kept_paths, owns_part
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.table import ownership
from tsfile_catalog.table.log import (
    COMMIT_NAME,
    LAST_CHECKPOINT,
    Listing,
    checkpoint_urls,
    commit_url,
    has_start,
    list_log,
    log_intact,
    log_url,
    read_commits,
    read_log_file,
)
from tsfile_catalog.table.snapshots import load_snapshot

__all__ = ["check_landed", "drop_checkpoint_if_purged", "known_log", "known_parts", "purge"]

_log = logging.getLogger(__name__)


def known_log(io: FileIO, location: str, listing: Listing) -> tuple[Snapshot, list[Commit]]:
    """The oldest version the log can load (version 0, or the checkpoint an expiry kept) and
    every commit after it: all the log still knows of the table's parts."""
    oldest = listing.commits[0]
    present = set(listing.commits)
    if oldest not in listing.checkpoints and oldest != 0:
        # An expiry killed after its checkpoint and some deletions: the log loads from there.
        oldest = min((c for c in listing.checkpoints if c in present), default=oldest)
    base = load_snapshot(io, location, listing, oldest, use_cache=True)
    return base, read_commits(io, location, listing, oldest + 1, listing.latest, base.schema)


def known_parts(base: Snapshot, commits: Sequence[Commit]) -> list[PartFile]:
    """Every part a known version holds, current or time-travel."""
    added = [a.part for c in commits for a in c.actions if isinstance(a, AddPart)]
    return [*base.parts, *added]


def check_landed(io: FileIO, location: str, url: str, snapshot: Snapshot) -> None:
    """Undo the commit just created at ``url`` if the table was purged under it.

    ``DROP TABLE … PURGE`` breaks the log's start before it deletes the log (:func:`purge`):
    a commit that landed before that is purged with the rest, and one that lands after it
    finds the start gone here. Its version was free only because the purge deleted the
    commit that held it, so it belongs to no table: it is deleted again, and the caller's
    files with it (the write paths remove what they published when the commit fails).

    Raises:
        CommitConflictError: the table was purged while this commit was made.
    """
    if snapshot.version == 0:
        return
    try:
        if log_intact(io, location):
            return
    except OSError as e:
        # The commit landed: reporting it failed would make the caller write it twice. A
        # purge racing this very commit is the rarer case, and purge reruns clean it up.
        _log.warning("commit %s landed; could not check the log after it: %s", url, e)
        return
    io.delete_files([url])
    raise CommitConflictError(
        f"commit to table {location} failed: the table was dropped (DROP TABLE … PURGE) "
        "while this commit was made; nothing was committed"
    )


def drop_checkpoint_if_purged(io: FileIO, location: str, version: int) -> None:
    """Delete the checkpoint (and hint) of ``version`` just written if a purge deleted its
    commit meanwhile: a checkpoint of a dropped table must not outlive it (a table made
    here later would load it as its own). A purge that deletes the commit after this check
    finds the checkpoint in its last listing."""
    if not io.exists(commit_url(location, version)):
        io.delete_files(
            [*checkpoint_urls(location, version), join_url(log_url(location), LAST_CHECKPOINT)]
        )


def purge(url: str, *, storage_options: Mapping[str, Any] | None = None) -> list[str]:
    """Delete every file the table at ``url`` owns, and nothing else (``DROP TABLE … PURGE``).

    The table owns the parts any version added, its writers' staging files and its
    ``_tsfile_manifest/`` folder. Other files under the location (a user's notes, a table
    nested below) stay, so does anything behind a symbolic link, and so do the folders
    holding them; folders left empty are removed. A location without a table holds nothing
    of one: only staging and manifest leftovers are removed.

    The purge wins a race with writers as a whole (``docs/manifest-format.md``): it deletes the
    data the log names while the log is intact (an interrupted purge can simply be run
    again), then breaks the log's start (checkpoints, then the oldest commit), so no
    process can load the table any more and a commit that lands from then on is undone by
    its own writer (:func:`check_landed`). Then it lists the log again and deletes
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
        base, commits = known_log(io, location, listing)
        parts = known_parts(base, commits)
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
