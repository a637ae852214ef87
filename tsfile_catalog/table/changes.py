"""The parts a table's commits added between two versions: what streams (and incremental
reads) consume. Spark-free; the decisions are pure (:mod:`tsfile_catalog.metadata.changes`),
this module reads the log they decide on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tsfile_catalog.exceptions import OptionError, TableNotFoundError, VersionNotFoundError
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.change_feed import CommitChanges
from tsfile_catalog.metadata.changes import Segment, StreamOffset, commit_segment
from tsfile_catalog.metadata.key import key_mode
from tsfile_catalog.metadata.manifest import Snapshot
from tsfile_catalog.table.cache import identify
from tsfile_catalog.table.change_feed import plan_change_feed
from tsfile_catalog.table.handle import Table
from tsfile_catalog.table.log import Listing, list_log, no_table, read_commits
from tsfile_catalog.table.snapshots import load_snapshot, time_travel_ms, version_at

__all__ = ["current_table", "current_version", "starting_offset", "stream_segments"]


def _location(url: str, storage_options: Mapping[str, Any] | None) -> tuple[FileIO, str]:
    io = FileIO(url, storage_options)
    return io, io.normalize(url)


def current_version(url: str, *, storage_options: Mapping[str, Any] | None = None) -> int:
    """The latest committed version of the table at ``url`` (what ``Trigger.AvailableNow``
    stops at)."""
    return current_table(url, storage_options=storage_options)[0]


def current_table(
    url: str, *, table_uuid: str | None = None, storage_options: Mapping[str, Any] | None = None
) -> tuple[int, str]:
    """The latest committed version of the table at ``url`` and the table's UUID.

    Raises:
        TableNotFoundError: no table at ``url``, or (``table_uuid`` given) another table than
            the one a stream read so far: it was dropped and recreated.
    """
    io, location = _location(url, storage_options)
    listing = list_log(io, location)
    return listing.latest, _identity(io, location, listing, table_uuid)


def _identity(io: FileIO, location: str, listing: Listing, expected: str | None) -> str:
    """The UUID of the table ``listing`` shows, checked against the one a stream's offsets
    record (None: an offset written before they recorded it, not checked)."""
    if not listing.commits:
        raise no_table(io, location)
    current = identify(io, location, listing, use_cache=True)
    if expected is not None and current != expected:
        raise TableNotFoundError(
            f"the stream read table {expected} at {location}, which now holds table {current}: "
            "the table was dropped and recreated, and the new table's versions do not continue "
            "the stream's; nothing of it was read. Start a new stream (a new checkpoint "
            "location) to read the new table"
        )
    return current


def starting_offset(
    url: str,
    *,
    starting_version: int | str | None = None,
    starting_timestamp: str | None = None,
    time_zone: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> StreamOffset:
    """Where a new stream starts (Delta's options and meanings).

    Args:
        starting_version: read the commits from this version on (inclusive); ``"latest"``:
            only commits after the current one. None (and no ``starting_timestamp``): the
            whole table as of now, then every later commit.
        starting_timestamp: read the commits made at or after this instant (epoch ms or
            ISO-8601, naive in ``time_zone``, else UTC).

    Raises:
        VersionNotFoundError: ``starting_version`` does not exist (any more).
        OptionError: both options, or an unreadable timestamp.
    """
    io, location = _location(url, storage_options)
    listing = list_log(io, location)
    if not listing.commits:
        raise no_table(io, location)
    if starting_version is not None and starting_timestamp is not None:
        raise OptionError(
            "options 'startingVersion' and 'startingTimestamp' are mutually exclusive"
        )
    if starting_version == "latest":
        return StreamOffset(listing.latest + 1)
    if isinstance(starting_version, int):
        if starting_version not in set(listing.commits):
            raise VersionNotFoundError(
                f"option 'startingVersion' = {starting_version}: table {location} has versions "
                f"{listing.commits[0]}..{listing.latest}"
            )
        return StreamOffset(starting_version)
    if starting_timestamp is not None:
        at = time_travel_ms(starting_timestamp, time_zone=time_zone)
        try:
            before = version_at(io, location, listing, at, use_cache=True)
        except VersionNotFoundError:
            return StreamOffset(listing.commits[0])
        exact = load_snapshot(io, location, listing, before, use_cache=True).timestamp_ms == at
        return StreamOffset(before if exact else before + 1)
    return StreamOffset(listing.latest, 0, snapshot=True)


def stream_segments(
    url: str,
    start: StreamOffset,
    stop: int,
    *,
    skip_change_commits: bool,
    change_feed: bool = False,
    storage_options: Mapping[str, Any] | None = None,
) -> list[Segment]:
    """The segments from ``start`` through version ``stop``: the snapshot segment when
    ``start`` is in one, then one per commit (see :func:`~tsfile_catalog.metadata.changes.
    commit_segment`; a commit that removed data becomes a segment that stops the stream).

    Only the versions the stream still needs must exist: it resumes after EXPIRE SNAPSHOTS
    when its offset is at or past the oldest version kept.

    With ``change_feed`` each segment holds its commit's changes instead (removals included,
    none refused), and a snapshot segment the whole table as inserts.

    Raises:
        TableNotFoundError: ``start`` records another table than the one at ``url`` now.
        VersionNotFoundError: the stream needs a version EXPIRE SNAPSHOTS removed; the message
            names the stream's offset and the oldest version kept.
    """
    io, location = _location(url, storage_options)
    listing = list_log(io, location)
    _identity(io, location, listing, start.table)
    segments: list[Segment] = []
    first = start.version
    if (start.snapshot or first <= stop) and first < listing.commits[0]:
        raise _expired_offset(location, start, listing.commits[0])
    if start.snapshot:
        snapshot = load_snapshot(io, location, listing, start.version, use_cache=True)
        table = Table(io, location, snapshot, use_cache=True)
        if change_feed:
            segments.append(Segment(snapshot.version, (), None, True, change=_inserts(snapshot)))
        else:
            segments.append(Segment(snapshot.version, snapshot.parts, table.complete_until(), True))
        first += 1
    if first > stop:
        return segments
    if change_feed:
        feed = plan_change_feed(
            url, starting_version=first, ending_version=stop, storage_options=storage_options
        )
        changed = {c.version: c for c in feed.commits}
        segments.extend(Segment(v, (), change=changed.get(v)) for v in range(first, stop + 1))
        return segments
    # Commit ``first`` decodes with the schema after it as well as with the one before (a
    # commit that changes the schema carries the new one, and decoding uses that), and
    # version ``first`` loads where ``first - 1`` may be gone: EXPIRE SNAPSHOTS leaves a
    # checkpoint at the oldest version it keeps, and nothing before it.
    after = load_snapshot(io, location, listing, first, use_cache=True)
    commits = read_commits(io, location, listing, first, stop, after.schema)
    segments.extend(commit_segment(c, skip_change_commits=skip_change_commits) for c in commits)
    return segments


def _inserts(snapshot: Snapshot) -> CommitChanges:
    """The whole table at ``snapshot`` as the changes of its version: every row an insert."""
    key = key_mode(snapshot.properties)
    return CommitChanges(
        snapshot.version, snapshot.timestamp_ms, (), tuple(snapshot.parts), key, key
    )


def _expired_offset(location: str, start: StreamOffset, oldest: int) -> VersionNotFoundError:
    return VersionNotFoundError(
        f"the stream's offset is at version {start.version} of table {location}, but the "
        f"oldest version kept is {oldest}: EXPIRE SNAPSHOTS removed the versions the stream "
        "had still to read, so it cannot resume without skipping data. Start a new stream (a "
        f"new checkpoint location), with startingVersion {oldest} to read what is kept, or "
        "keep versions longer than streams may lag (the table property logRetention)"
    )
