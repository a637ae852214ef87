"""Which snapshot a read gets: loading a version from the log, and time travel.

A version is loaded from the best base at hand (a cached snapshot of the table the location
holds now, or a checkpoint) plus the commits after it; time travel by timestamp
binary-searches the commit timestamps, which strictly increase along the log. Everything
here works on ``(io, location)`` and returns a :class:`Snapshot`; building a
:class:`~tsfile_catalog.table.handle.Table` around one is :mod:`~tsfile_catalog.table.handle`'s.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Callable, Iterator

from tsfile_catalog.exceptions import (
    CorruptManifestError,
    OptionError,
    PredicateError,
    TableNotFoundError,
    VersionNotFoundError,
)
from tsfile_catalog.io import FileIO, join_url
from tsfile_catalog.metadata.expressions import parse_iso_datetime
from tsfile_catalog.metadata.gc_pause import gc_paused
from tsfile_catalog.metadata.manifest import (
    CommitInfo,
    Snapshot,
    decode_commit_info,
    foreign_commit,
    replay,
)
from tsfile_catalog.metadata.spark.literals import instant_micros, parse_zone
from tsfile_catalog.metadata.spark.time import SPARK_TIMESTAMP_RANGE, spark_timestamp_bounds
from tsfile_catalog.table.cache import CACHE, identify
from tsfile_catalog.table.log import (
    Listing,
    commit_url,
    list_log,
    no_table,
    read_checkpoint,
    read_commits,
    read_log_file,
    read_vacuum_record,
)

__all__ = ["commit_info", "load_snapshot", "resolve_snapshot", "time_travel_ms", "version_at"]

_log = logging.getLogger(__name__)


def resolve_snapshot(
    io: FileIO,
    location: str,
    *,
    version: int | None = None,
    timestamp: str | int | None = None,
    time_zone: str | None = None,
    use_cache: bool = True,
) -> Snapshot:
    """The snapshot :func:`~tsfile_catalog.table.handle.open_table` opens: the latest, exactly
    ``version``, or the latest committed at or before ``timestamp`` (see there for the
    arguments and errors)."""
    if version is not None and timestamp is not None:
        raise OptionError(
            "pass either version (versionAsOf) or timestamp (timestampAsOf), not both"
        )
    listing = list_log(io, location)
    if not listing.commits:
        raise no_table(io, location)
    if version is not None:
        if version not in set(listing.commits):
            raise VersionNotFoundError(_missing_version(location, listing, version))
        target = version
    elif timestamp is not None:
        at = time_travel_ms(timestamp, time_zone=time_zone)
        target = version_at(io, location, listing, at, use_cache=use_cache)
    else:
        target = listing.latest
    snapshot = load_snapshot(io, location, listing, target, use_cache=use_cache)
    if target != listing.latest and listing.vacuumed:
        _check_not_vacuumed(io, location, snapshot)
    return snapshot


def load_snapshot(
    io: FileIO, location: str, listing: Listing, version: int, *, use_cache: bool
) -> Snapshot:
    """The snapshot at ``version``: the best base (a cached snapshot of the table the location
    holds now, or a checkpoint) plus the commits after it."""
    with gc_paused():
        return _load_snapshot(io, location, listing, version, use_cache=use_cache)


def _load_snapshot(
    io: FileIO, location: str, listing: Listing, version: int, *, use_cache: bool
) -> Snapshot:
    identity: str | None = None
    cached: Snapshot | None = None
    if use_cache and CACHE.holds(location):
        identity = identify(io, location, listing, use_cache=True)
        hit = CACHE.snapshot(location, identity, version)
        if hit is not None:
            return hit
        cached = CACHE.newest_at_or_before(location, identity, version)

    def legacy_table_uuid() -> str:
        return identity or identify(io, location, listing, use_cache=use_cache)

    bases = _bases(io, location, listing, version, cached, identity, legacy_table_uuid)
    for base in bases:
        start = 0 if base is None else base.version + 1
        schema = None if base is None else base.schema
        commits = read_commits(io, location, listing, start, version, schema)
        foreign = None if base is None else foreign_commit(base.table_uuid, commits)
        if base is not None and foreign is not None:
            # The base belongs to a table that was dropped and recreated here (a cached
            # snapshot whose stamp check could not tell, or a stale checkpoint): never extend
            # it with the new table's commits; fall back to an older base, at worst version 0.
            _log.warning(
                "not extending version %d of table %s with version %d of table %s at %s",
                base.version,
                base.table_uuid,
                foreign.version,
                foreign.table_uuid,
                location,
            )
            if base is cached:
                CACHE.drop(location)
            continue
        snapshot = replay(base, commits) if commits else base
        assert snapshot is not None
        if use_cache:
            if identity is None:
                # Same listing: the oldest commit file belongs to the table just loaded.
                CACHE.vouch(location, snapshot.table_uuid, listing.oldest)
            CACHE.put(location, snapshot)
        return snapshot
    raise AssertionError("replaying from version 0 is always the last base")


def _bases(
    io: FileIO,
    location: str,
    listing: Listing,
    version: int,
    cached: Snapshot | None,
    identity: str | None,
    legacy_table_uuid: Callable[[], str],
) -> Iterator[Snapshot | None]:
    """Bases to load ``version`` from, best first: readable checkpoints at or below it and
    the cached snapshot, newest first, then None (replay from version 0)."""
    for checkpoint in reversed(listing.checkpoints):
        if checkpoint > version:
            continue
        if cached is not None and cached.version >= checkpoint:
            yield cached
            cached = None
        try:
            snapshot = read_checkpoint(
                io,
                location,
                checkpoint,
                legacy_table_uuid,
                parquet=checkpoint in listing.parquet_checkpoints,
            )
        except CorruptManifestError as e:
            # Checkpoints are derived data: fall back to an older base and the commits.
            _log.warning("ignoring checkpoint: %s", e)
            continue
        if identity is not None and snapshot.table_uuid != identity:
            _log.warning(
                "ignoring checkpoint %d at %s: it belongs to table %s, not %s",
                checkpoint,
                location,
                snapshot.table_uuid,
                identity,
            )
            continue
        yield snapshot
    if cached is not None:
        yield cached
    yield None


def commit_info(
    io: FileIO, location: str, table_uuid: str, version: int, *, use_cache: bool
) -> CommitInfo:
    if use_cache:
        cached = CACHE.info(location, table_uuid, version)
        if cached is not None:
            return cached
    url = commit_url(location, version)
    info, recorded = decode_commit_info(read_log_file(io, url, "commit"), source=url)
    if recorded is not None and recorded != table_uuid:
        raise TableNotFoundError(
            f"table {table_uuid} is no longer at {location}: version {version} there belongs "
            f"to table {recorded} (the table was dropped and recreated)"
        )
    if use_cache:
        CACHE.put_info(location, table_uuid, info)
    return info


def _missing_version(location: str, listing: Listing, version: int) -> str:
    oldest = listing.commits[0]
    if 0 <= version < oldest:
        return (
            f"table {location} has no version {version} any more: versions before {oldest} "
            f"were expired (EXPIRE SNAPSHOTS); the oldest available version is {oldest} "
            f"(versions {oldest}..{listing.latest} exist)"
        )
    return (
        f"table {location} has no version {version} (commit files exist for versions "
        f"{oldest}..{listing.latest})"
    )


def _check_not_vacuumed(io: FileIO, location: str, snapshot: Snapshot) -> None:
    """Refuse an old version whose files VACUUM deleted, naming one, before any scan tries
    to open it. Only versions older than the vacuum record's ``intact_from`` can be
    affected, so newer ones cost one small read and no file checks."""
    intact_from = read_vacuum_record(io, location)
    if intact_from is None or snapshot.version >= intact_from:
        return
    for part in snapshot.parts:
        if not io.exists(join_url(location, part.path)):
            raise VersionNotFoundError(
                f"version {snapshot.version} of table {location} can no longer be read: its "
                f"part {part.path} was deleted by VACUUM (it had been removed from the table "
                f"longer ago than the retention); versions {intact_from} and later are intact"
            )


_EPOCH_MS = re.compile(r"-?[0-9]+")


def _zone(time_zone: str | None) -> dt.tzinfo:
    if time_zone is None:
        return dt.timezone.utc
    try:
        return parse_zone(time_zone)
    except PredicateError as e:
        raise OptionError(f"time zone {time_zone!r} for the time travel timestamp: {e}") from e


def time_travel_ms(value: str | int, *, time_zone: str | None = None) -> int:
    """The epoch milliseconds of a time travel ``timestamp`` (see :func:`open_table`); an
    ISO-8601 text without an offset is a wall-clock time in ``time_zone`` (None: UTC)."""
    if isinstance(value, bool):
        raise OptionError(f"timestamp {value!r} is neither epoch milliseconds nor ISO-8601")
    lo, hi = spark_timestamp_bounds("ms")
    ms: int | None
    if isinstance(value, int):
        ms = value
    elif _EPOCH_MS.fullmatch(value.strip()):
        text = value.strip()
        # Far too many digits for any instant (and for int(): Python caps its digit count).
        ms = int(text) if len(text) <= 20 else None
    else:
        try:
            parsed = parse_iso_datetime(value)
        except ValueError as e:
            raise OptionError(
                f"timestamp {value!r} is neither epoch milliseconds nor ISO-8601"
            ) from e
        # An explicit offset or Z says which instant it is; only a naive text needs the zone.
        zone = _zone(time_zone) if parsed.tzinfo is None else None
        ms = instant_micros(parsed, zone) // 1_000
    if ms is None or not lo <= ms <= hi:
        raise OptionError(
            f"timestamp {value!r} is outside the range of Spark timestamps "
            f"({SPARK_TIMESTAMP_RANGE}, i.e. {lo}..{hi} epoch milliseconds)"
        )
    return ms


def version_at(
    io: FileIO, location: str, listing: Listing, timestamp_ms: int, *, use_cache: bool
) -> int:
    """Binary search: commit timestamps strictly increase along the log."""
    table_uuid = identify(io, location, listing, use_cache=use_cache)
    versions = listing.commits
    lo, hi = 0, len(versions) - 1
    found = -1
    while lo <= hi:
        mid = (lo + hi) // 2
        info = commit_info(io, location, table_uuid, versions[mid], use_cache=use_cache)
        if info.timestamp_ms <= timestamp_ms:
            found, lo = mid, mid + 1
        else:
            hi = mid - 1
    if found < 0:
        when = dt.datetime.fromtimestamp(timestamp_ms / 1000, tz=dt.timezone.utc).isoformat()
        if versions[0] > 0:
            raise VersionNotFoundError(
                f"no version of table {location} at or before {when} is available: versions "
                f"before {versions[0]} were expired (EXPIRE SNAPSHOTS); the oldest available "
                f"version is {versions[0]}"
            )
        raise VersionNotFoundError(f"no version of table {location} at or before {when}")
    return versions[found]
