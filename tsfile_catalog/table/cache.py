"""The in-process metadata cache, and which table a location holds.

Loading a version replays commits onto the newest base the process has: a cached snapshot of
the same table, or a checkpoint. A version of a table never changes, but a location can
change tables (dropped and recreated), so every cached entry is keyed on the table UUID and
every use first re-establishes the location's table (:func:`identify`), cheaply when the
storage stamp of its oldest commit file still matches.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.manifest import CommitInfo, Snapshot, commit_table_uuid
from tsfile_catalog.table.log import Listing, commit_url, list_log, read_log_file

if TYPE_CHECKING:
    from tsfile_catalog.table.part_index import PartIndex

__all__ = ["CACHE", "MetadataCache", "clear_cache", "current_identity", "identify"]


@dataclass
class _CachedTable:
    """What this process knows of the table at one location (mutated under the cache lock)."""

    table_uuid: str
    # The oldest commit file (version, stamp) last read and found to carry table_uuid: while
    # a listing shows the same, the location still holds this table.
    vouched: tuple[int, str] | None = None
    snapshots: OrderedDict[int, Snapshot] = field(default_factory=OrderedDict)
    infos: dict[int, CommitInfo] = field(default_factory=dict)
    # The columnar index of each cached snapshot, built on its first plan (same versions).
    indexes: dict[int, PartIndex] = field(default_factory=dict)


class MetadataCache:
    """Snapshots and commit infos by (table location, table UUID, version).

    A version of a table never changes, but a location can change tables: another process
    may drop the table and create a new one there, whose versions restart at 0. So entries
    are keyed on the table UUID too, a location keeps only one table's entries, and every
    load first re-establishes which table a location holds (:func:`identify`). Bounded LRU
    over locations, and over snapshots within a table (a 10k-part snapshot is a few
    megabytes).
    """

    def __init__(self, max_tables: int = 32, snapshots_per_table: int = 4) -> None:
        self._lock = threading.Lock()
        self._tables: OrderedDict[str, _CachedTable] = OrderedDict()
        self._max_tables = max_tables
        self._per_table = snapshots_per_table

    def _entry(self, location: str, table_uuid: str, *, create: bool) -> _CachedTable | None:
        """The location's entry if it is ``table_uuid``'s; with ``create``, one replacing
        another table's (call with the lock held)."""
        entry = self._tables.get(location)
        if entry is None or entry.table_uuid != table_uuid:
            if not create:
                return None
            entry = self._tables[location] = _CachedTable(table_uuid)
            while len(self._tables) > self._max_tables:
                self._tables.popitem(last=False)
        self._tables.move_to_end(location)
        return entry

    def holds(self, location: str) -> bool:
        with self._lock:
            return location in self._tables

    def vouched(self, location: str, oldest: tuple[int, str] | None) -> str | None:
        """The UUID of the table at ``location`` if its oldest commit file is still the one
        last read there (same version and stamp); None when that is not known."""
        with self._lock:
            entry = self._tables.get(location)
            if oldest is None or entry is None or entry.vouched != oldest:
                return None
            return entry.table_uuid

    def vouch(self, location: str, table_uuid: str, oldest: tuple[int, str] | None) -> None:
        """Record that ``location`` holds ``table_uuid``, whose oldest commit file is
        ``oldest``; the entries of a table that was there before are dropped."""
        with self._lock:
            entry = self._entry(location, table_uuid, create=True)
            assert entry is not None
            entry.vouched = oldest

    def snapshot(self, location: str, table_uuid: str, version: int) -> Snapshot | None:
        with self._lock:
            entry = self._entry(location, table_uuid, create=False)
            if entry is None or version not in entry.snapshots:
                return None
            entry.snapshots.move_to_end(version)
            return entry.snapshots[version]

    def newest_at_or_before(self, location: str, table_uuid: str, version: int) -> Snapshot | None:
        with self._lock:
            entry = self._entry(location, table_uuid, create=False)
            if entry is None:
                return None
            best = max((v for v in entry.snapshots if v <= version), default=None)
            return None if best is None else entry.snapshots[best]

    def put(self, location: str, snapshot: Snapshot) -> None:
        with self._lock:
            entry = self._entry(location, snapshot.table_uuid, create=True)
            assert entry is not None
            entry.snapshots[snapshot.version] = snapshot
            entry.snapshots.move_to_end(snapshot.version)
            entry.indexes.pop(snapshot.version, None)
            while len(entry.snapshots) > self._per_table:
                evicted, _ = entry.snapshots.popitem(last=False)
                entry.indexes.pop(evicted, None)

    def part_index(self, location: str, snapshot: Snapshot) -> PartIndex:
        """The :class:`PartIndex` of ``snapshot``: the one built for it before while it is
        the cached snapshot of its version, else a new one (kept if it is cached)."""
        with self._lock:
            entry = self._entry(location, snapshot.table_uuid, create=False)
            cached = entry is not None and entry.snapshots.get(snapshot.version) is snapshot
            found = entry.indexes.get(snapshot.version) if entry is not None and cached else None
        if found is not None:
            return found
        # Imported here: pyarrow loads only when a plan first has a predicate to pre-filter.
        from tsfile_catalog.table.part_index import PartIndex

        # Built outside the lock (milliseconds per 10,000 parts); two threads may both build.
        index = PartIndex(snapshot.parts)
        if cached:
            with self._lock:
                entry = self._entry(location, snapshot.table_uuid, create=False)
                if entry is not None and entry.snapshots.get(snapshot.version) is snapshot:
                    entry.indexes[snapshot.version] = index
        return index

    def info(self, location: str, table_uuid: str, version: int) -> CommitInfo | None:
        with self._lock:
            entry = self._entry(location, table_uuid, create=False)
            return None if entry is None else entry.infos.get(version)

    def put_info(self, location: str, table_uuid: str, info: CommitInfo) -> None:
        with self._lock:
            entry = self._entry(location, table_uuid, create=False)
            if entry is not None:
                entry.infos[info.version] = info

    def drop(self, location: str) -> None:
        with self._lock:
            self._tables.pop(location, None)

    def clear(self) -> None:
        with self._lock:
            self._tables.clear()


CACHE = MetadataCache()


def clear_cache() -> None:
    """Forget every cached snapshot (tests, benchmarks of cold loads)."""
    CACHE.clear()


def identify(io: FileIO, location: str, listing: Listing, *, use_cache: bool) -> str:
    """The UUID of the table whose log ``listing`` shows, as its oldest commit file records it
    (derived from that file's bytes for a table written before table UUIDs).

    The file is read only when the cache cannot vouch for it. A table dropped and recreated
    at the location has a new oldest commit file, so another storage stamp, even when its
    versions match the old table's one for one.
    """
    if use_cache:
        known = CACHE.vouched(location, listing.oldest)
        if known is not None:
            return known
    url = commit_url(location, listing.commits[0])
    table_uuid = commit_table_uuid(read_log_file(io, url, "commit"), source=url)
    if use_cache:
        CACHE.vouch(location, table_uuid, listing.oldest)
    return table_uuid


def current_identity(io: FileIO, location: str, *, use_cache: bool = True) -> str | None:
    """The UUID of the table at ``location`` now; None when there is none."""
    listing = list_log(io, location)
    return identify(io, location, listing, use_cache=use_cache) if listing.commits else None
