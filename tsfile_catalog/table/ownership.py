"""What a table owns on storage: the location checks, and the only walks that plan deletions.

A table owns the parts its manifest ever added, its ``_tsfile_manifest/`` folder and its
writers' job folders under ``_staging/`` (the rules are pure, in
:mod:`tsfile_catalog.metadata.ownership`). :func:`tsfile_catalog.table.vacuum` and
:func:`tsfile_catalog.table.purge` delete exactly what the plans built here list. The walks
never descend into a folder that holds another ``_tsfile_manifest/`` (a nested table) and never
follow or delete a symbolic link, so nothing outside the table's own files can be reached. A
file the manifest records as not the table's (``keep``: external parts, see
:func:`~tsfile_catalog.metadata.ownership.kept_paths`) is left out of every plan, whatever
its name, compared as the same file (local paths through their real paths).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Set
from dataclasses import dataclass

from tsfile_catalog.exceptions import CommitConflictError, LocationError
from tsfile_catalog.io import FileIO, join_url
from tsfile_catalog.metadata.manifest import AddPart
from tsfile_catalog.metadata.ownership import (
    MANIFEST_DIR,
    STAGING_DIR,
    TSFILE_MAGIC,
    ancestors,
    holds_writers_bytes,
    is_root,
    is_staging_dir,
    is_vacuum_candidate,
)
from tsfile_catalog.metadata.parts import PartFile, is_absolute_url
from tsfile_catalog.metadata.schema import TableSchema
from tsfile_catalog.progress import Progress, batches
from tsfile_catalog.table.log import list_log, read_commits

__all__ = [
    "Deletion",
    "check_location",
    "check_empty",
    "orphans",
    "owned",
    "part_url",
    "replaced",
    "delete",
    "without_recommitted",
]

# A new table may reuse what a killed first write or commit of its own left behind.
_OWN_LEFTOVERS = frozenset({MANIFEST_DIR, STAGING_DIR})


@dataclass(frozen=True)
class Deletion:
    """Files to delete, in order, then folders to remove if they are empty (deepest first)."""

    files: tuple[str, ...] = ()
    dirs: tuple[str, ...] = ()

    def urls(self) -> list[str]:
        """Everything it removes, folders marked by a trailing ``/``."""
        return [*self.files, *(f"{d}/" for d in self.dirs)]


def delete(io: FileIO, deletion: Deletion, *, progress: Progress | None = None) -> list[str]:
    """Carry ``deletion`` out; returns its :meth:`~Deletion.urls` less the folders that were
    not empty after all (a concurrent writer got there first) or already gone. ``progress``
    counts deleted files (object stores delete in batches of a thousand)."""
    if progress is None:
        io.delete_files(deletion.files)
    else:
        _delete_reporting(io, deletion.files, progress)
    removed = tuple(folder for folder in deletion.dirs if io.remove_empty_dir(folder))
    return Deletion(deletion.files, removed).urls()


def without_recommitted(
    io: FileIO, location: str, deletion: Deletion, *, planned: int, schema: TableSchema
) -> Deletion:
    """``deletion`` less every file a version committed after ``planned`` (the latest version
    the plan read, whose schema is ``schema``) adds: read from the log right before deleting,
    so a RESTORE (or any commit re-adding a removed part) that landed while VACUUM planned
    keeps its files. What commits after this check can still lose is the window
    ``docs/maintenance.md`` describes.

    Raises:
        CommitConflictError: the log now ends before ``planned`` (the table was dropped and
            recreated meanwhile): nothing may be deleted on an outdated plan.
    """
    listing = list_log(io, location)
    if not listing.commits or listing.latest < planned:
        raise CommitConflictError(
            f"the table at {location} changed under VACUUM: it planned at version {planned}, "
            f"but the log now ends at {listing.latest if listing.commits else 'nothing'}; "
            "nothing was deleted, run VACUUM again"
        )
    if listing.latest == planned:
        return deletion
    commits = read_commits(io, location, listing, planned + 1, listing.latest, schema)
    kept = {
        join_url(location, action.part.path)
        for commit in commits
        for action in commit.actions
        if isinstance(action, AddPart)
    }
    return Deletion(tuple(f for f in deletion.files if f not in kept), deletion.dirs)


def _delete_reporting(io: FileIO, files: tuple[str, ...], progress: Progress) -> None:
    # Local files go one by one anyway; object stores keep FileIO's one request per thousand.
    size = 1 if io.is_local else 1000
    done = 0
    if not files:
        progress(0, 0)
    for batch in batches(files, size):
        io.delete_files(batch)
        done += len(batch)
        progress(done, len(files))


# -- where a table may live -------------------------------------------------------------------


def part_url(location: str, part: PartFile) -> str:
    """Where ``part`` of the table at ``location`` lives: an external part records its
    absolute URL (it may live outside the table root), the table's own parts a path below it."""
    return part.path if part.external else join_url(location, part.path)


def check_location(io: FileIO, location: str) -> None:
    """Refuse a location that is a file-system root or lies inside another table.

    Raises:
        LocationError: naming the location and the table it is inside.
    """
    if is_root(location):
        raise LocationError(
            f"table location {location} is a file-system root; give the table a folder of its own"
        )
    for folder in ancestors(location):
        if io.exists(join_url(folder, MANIFEST_DIR)):
            raise LocationError(
                f"table location {location} is inside the table at {folder}; a table's folder "
                "is its own (a table inside another would share its vacuum and purge)"
            )


def check_empty(io: FileIO, location: str) -> None:
    """Refuse to start a new table in a folder that already holds something.

    Raises:
        LocationError: naming the location and what it holds.
    """
    held = [name for name, _ in io.list_entries(location) if name not in _OWN_LEFTOVERS]
    if held:
        shown = ", ".join(held[:3]) + (", ..." if len(held) > 3 else "")
        raise LocationError(
            f"table location {location} is not empty (it holds {shown}); a new table needs an "
            "empty or missing folder. To make a table of TsFiles already there, register the "
            "folder without a column list (it is adopted, see adopt_table)"
        )


# -- what vacuum and purge may delete ---------------------------------------------------------


def orphans(
    io: FileIO,
    location: str,
    referenced: Set[str],
    *,
    modified_before_ms: int | None,
    keep: Set[str] = frozenset(),
) -> Deletion:
    """Files the table's writers left that no version references, and emptied staging folders.

    Only :func:`~tsfile_catalog.metadata.ownership.is_vacuum_candidate` paths qualify: a
    writer-named part at the root, or a writer-named part in a job's task folder. With
    ``modified_before_ms`` a file or folder must also be older than that instant (a store
    that reports no modification time keeps its files). Nothing in ``keep`` goes.
    """
    kept = _kept(io, location, keep)

    def old(url: str) -> bool:
        if modified_before_ms is None:
            return True
        modified = io.modified_ms(url)
        return modified is not None and modified < modified_before_ms

    def unreferenced(relative: str) -> bool:
        return (
            is_vacuum_candidate(relative)
            and relative not in referenced
            and not kept(join_url(location, relative))
            and old(join_url(location, relative))
            and _writers_bytes(io, location, relative)
        )

    root = io.list_entries(location)
    files = [
        join_url(location, name) for name, kind in root if kind == "file" and unreferenced(name)
    ]
    staged: list[str] = []
    dirs: list[str] = []
    if (STAGING_DIR, "dir") in root:
        _walk_staging(io, location, STAGING_DIR, unreferenced, old, staged, dirs)
    return Deletion(tuple(sorted(files + staged)), tuple(dirs))


def _writers_bytes(io: FileIO, location: str, relative: str) -> bool:
    """:func:`~tsfile_catalog.metadata.ownership.holds_writers_bytes` for the file at
    ``relative``: one small read, only for a file every other rule lets go."""
    try:
        with io.open_input(join_url(location, relative)) as handle:
            head = handle.read(len(TSFILE_MAGIC))
    except FileNotFoundError:
        return False
    return holds_writers_bytes(relative, head)


def _walk_staging(
    io: FileIO,
    location: str,
    relative: str,
    take: Callable[[str], bool],
    old: Callable[[str], bool],
    files: list[str],
    dirs: list[str],
) -> bool:
    """Collect the files ``take`` accepts in the staging folder ``relative`` (only the writers'
    job and task folders are entered); whether the folder will be empty and goes too."""
    url = join_url(location, relative)
    entries = io.list_entries(url)
    if any(name == MANIFEST_DIR for name, _ in entries):
        return False  # another table lives here; nothing in it is ours
    empty = True
    for name, kind in entries:
        child = f"{relative}/{name}"
        if kind == "dir" and is_staging_dir(child):
            if _walk_staging(io, location, child, take, old, files, dirs):
                continue
        elif kind == "file" and take(child):
            files.append(join_url(location, child))
            continue
        empty = False
    # On object stores a folder is only a key prefix: it disappears with its last file.
    if empty and io.is_local and old(url):
        dirs.append(url)
        return True
    return False


def owned(
    io: FileIO, location: str, referenced: Set[str], *, keep: Set[str] = frozenset()
) -> Deletion:
    """The table's data files: each referenced part reached through real folders of this
    table (no link, no folder holding another manifest), then its writers' staging files;
    the folders they leave empty go too. Nothing in ``keep`` goes. The manifest folder is the
    caller's, since only the log knows which of its files are commits
    (:func:`tsfile_catalog.table.purge`)."""
    kept = _kept(io, location, keep)
    files, folders = _own_files(io, location, referenced)
    files = [url for url in files if not kept(url)]

    def staged(relative: str) -> bool:
        return (
            is_vacuum_candidate(relative)
            and not kept(join_url(location, relative))
            and _writers_bytes(io, location, relative)
        )

    dirs: list[str] = []
    if (STAGING_DIR, "dir") in io.list_entries(location):
        _walk_staging(io, location, STAGING_DIR, staged, lambda _: True, files, dirs)
    if io.is_local:
        # Deepest first, so a folder is tried after everything below it.
        dirs.extend(
            join_url(location, f) for f in sorted(folders, key=lambda f: (-f.count("/"), f))
        )
    return Deletion(tuple(files), tuple(dirs))


def replaced(
    io: FileIO, location: str, paths: Set[str], *, keep: Set[str] = frozenset()
) -> Deletion:
    """The removed parts at ``paths`` (relative) that still exist, reached through real
    folders of this table (no link, no nested table), less anything in ``keep``: what VACUUM
    reclaims once no retained version reads them. Their folders stay (an adopted layout keeps
    its shape)."""
    kept = _kept(io, location, keep)
    files, _ = _own_files(io, location, paths)
    return Deletion(tuple(url for url in files if io.exists(url) and not kept(url)))


def _kept(io: FileIO, location: str, keep: Set[str]) -> Callable[[str], bool]:
    """Whether a file URL under ``location`` is one of the part paths in ``keep`` (absolute
    URLs, or paths relative to the table). Local files compare by real path, so neither a
    link nor another spelling of a folder hides a kept file; object stores by URL."""
    if not keep:
        return lambda url: False  # most tables: no realpath per candidate
    urls = [p if is_absolute_url(p) else join_url(location, p) for p in keep]
    if io.is_local:
        # A kept URL of another scheme (an external part on S3) cannot be a local file.
        local = [u.removeprefix("file://") for u in urls if u.startswith(("/", "file://"))]
        real = {os.path.realpath(u) for u in local}
        return lambda url: os.path.realpath(io.normalize(url)) in real
    same = {io.normalize(u) for u in urls}
    return lambda url: io.normalize(url) in same


def _own_files(io: FileIO, location: str, paths: Set[str]) -> tuple[list[str], set[str]]:
    """The URLs of ``paths`` reached through this table's own folders only, sorted, and
    the (relative) folders on their way."""
    reachable: dict[str, bool] = {"": True}

    def through_own_folders(folder: str) -> bool:
        if folder not in reachable:
            url = join_url(location, folder)
            reachable[folder] = (
                through_own_folders(posixpath.dirname(folder))
                and not io.is_link(url)
                and not io.exists(join_url(url, MANIFEST_DIR))
            )
        return reachable[folder]

    files: list[str] = []
    folders: set[str] = set()
    for path in sorted(paths):
        folder = posixpath.dirname(path)
        url = join_url(location, path)
        if not through_own_folders(folder) or io.is_link(url):
            continue
        files.append(url)
        while folder:
            folders.add(folder)
            folder = posixpath.dirname(folder)
    return files, folders
