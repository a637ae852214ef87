"""Reading a table: :class:`Table`, :func:`open_table` and time travel.

A version is loaded from the best base at hand (a cached snapshot of the table the location
holds now, or a checkpoint) plus the commits after it; time travel by timestamp
binary-searches the commit timestamps, which strictly increase along the log.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tsfile_catalog.exceptions import (
    CorruptManifestError,
    OptionError,
    PredicateError,
    TableNotFoundError,
    VersionNotFoundError,
)
from tsfile_catalog.io import FileIO, join_url
from tsfile_catalog.metadata.completeness import completeness
from tsfile_catalog.metadata.expressions import (
    BindContext,
    Expr,
    TimestampAs,
    TimeUnit,
    parse_iso_datetime,
)
from tsfile_catalog.metadata.gc_pause import gc_paused
from tsfile_catalog.metadata.literals import instant_micros, parse_zone
from tsfile_catalog.metadata.manifest import (
    CommitInfo,
    Snapshot,
    decode_commit_info,
    foreign_commit,
    replay,
)
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.scan import PartWindow, ScanPlan, plan_scan
from tsfile_catalog.metadata.schema import TableSchema
from tsfile_catalog.metadata.spark_time import SPARK_TIMESTAMP_RANGE, spark_timestamp_bounds
from tsfile_catalog.progress import Progress
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

if TYPE_CHECKING:
    from tsfile_catalog.exec.table_scan import TableScan
    from tsfile_catalog.formats.tsfile import WriteSettings
    from tsfile_catalog.table.maintenance import DeleteResult, Maintenance, OptimizeResult
    from tsfile_catalog.table.part_index import PartIndex

__all__ = ["Table", "load_snapshot", "open_table", "time_travel_ms"]

_log = logging.getLogger(__name__)


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


def _commit_info(
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


class Table:
    """One version of a table: its schema, parts and properties, plus its history."""

    def __init__(self, io: FileIO, location: str, snapshot: Snapshot, *, use_cache: bool) -> None:
        self._io = io
        self._location = location
        self._snapshot = snapshot
        self._use_cache = use_cache
        self._index: PartIndex | None = None

    def __repr__(self) -> str:
        return f"Table({self._location!r}, version={self.version})"

    @property
    def location(self) -> str:
        """The table root URL (local paths absolute, without a scheme)."""
        return self._location

    @property
    def io(self) -> FileIO:
        return self._io

    @property
    def table_uuid(self) -> str:
        """The table's identity, assigned when it was created (version 0) and kept by every
        version: a table dropped and recreated at the same location has another one. Tables
        written before table UUIDs get one derived from their version-0 commit file."""
        return self._snapshot.table_uuid

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    @property
    def version(self) -> int:
        return self._snapshot.version

    @property
    def timestamp_ms(self) -> int:
        """When this version was committed (epoch milliseconds)."""
        return self._snapshot.timestamp_ms

    @property
    def schema(self) -> TableSchema:
        return self._snapshot.schema

    @property
    def schema_id(self) -> int:
        return self._snapshot.schema_id

    @property
    def properties(self) -> Mapping[str, str]:
        return self._snapshot.properties

    def parts(self) -> list[PartFile]:
        return list(self._snapshot.parts)

    def part_url(self, part: PartFile) -> str:
        # An external part records its absolute URL (it may live outside the table root).
        return part.path if part.external else join_url(self._location, part.path)

    def history(self, *, limit: int | None = None) -> list[CommitInfo]:
        """Commit infos up to this version, newest first (like Delta's DESCRIBE HISTORY);
        versions expired by EXPIRE SNAPSHOTS are no longer listed.

        Raises:
            TableNotFoundError: the table was dropped (and maybe another created at its
                location) since this handle was opened.
        """
        listing = list_log(self._io, self._location)
        current = (
            identify(self._io, self._location, listing, use_cache=self._use_cache)
            if listing.commits
            else None
        )
        if current != self.table_uuid:
            now = "no table" if current is None else f"table {current}"
            raise TableNotFoundError(
                f"table {self.table_uuid} is no longer at {self._location}: it holds {now} now "
                "(the table was dropped)"
            )
        last = self.version
        # Versions before the oldest commit file were expired (EXPIRE SNAPSHOTS).
        oldest = listing.commits[0]
        first = oldest if limit is None else max(oldest, last - limit + 1)
        return [
            _commit_info(self._io, self._location, self.table_uuid, v, use_cache=self._use_cache)
            for v in range(last, first - 1, -1)
        ]

    @property
    def maintenance(self) -> Maintenance:
        """Vacuum, expire snapshots, restore and schema changes of this table (they act on
        its latest version): ``table.maintenance.vacuum(retention_hours=168)``."""
        # Imported here: maintenance commits through the commit loop, which opens tables.
        from tsfile_catalog.table.maintenance import Maintenance

        return Maintenance(self)

    def plan(
        self,
        where: str | Expr | None = None,
        *,
        unit: TimeUnit = "ms",
        timestamp_as: TimestampAs = "long",
        time_zone: str | None = None,
    ) -> ScanPlan:
        """The parts a scan with ``where`` (Spark SQL or an expression) must read.

        ``where`` means what it means to Spark over a scan read with ``timestampPrecision``
        ``unit`` and ``timestampAs`` ``timestamp_as`` in a session whose time zone is
        ``time_zone`` (None: unknown, so comparisons that need it prune conservatively and
        ``plan.pushdown.residual`` keeps them).

        Raises:
            PredicateError: the predicate cannot be parsed or does not fit the schema.
        """
        context = BindContext(unit=unit, timestamp_as=timestamp_as, time_zone=time_zone)
        return plan_scan(
            self.schema, self._snapshot.parts, where, context, candidates=self.candidates
        )

    def candidates(self, window: PartWindow) -> Sequence[int]:
        """The vectorised time/TAG/row-count pre-filter over this snapshot's parts (a
        :data:`~tsfile_catalog.metadata.scan.Candidates`): its columns are cached with the
        snapshot, so a warm plan only runs the compute, and the visitor on what survives.
        Built on the first plan with a predicate (pyarrow is imported only then: the CLI's
        metadata commands never load it)."""
        index = self._index
        if index is None:
            from tsfile_catalog.table.part_index import PartIndex

            if self._use_cache:
                index = CACHE.part_index(self._location, self._snapshot)
            else:
                index = PartIndex(self._snapshot.parts)
            self._index = index
        return index.candidates(window)

    def scan(
        self,
        *,
        where: str | Expr | None = None,
        columns: Sequence[str] | None = None,
        version: int | None = None,
        timestamp: str | int | None = None,
        timestamp_as: TimestampAs = "long",
        unit: TimeUnit = "ms",
        time_zone: str | None = None,
        max_workers: int | None = None,
    ) -> TableScan:
        """A Spark-free read of this version (or of ``version`` / ``timestamp`` of the same
        table): call ``to_arrow()``, ``to_pandas()``, ``to_batches()`` or ``count()`` on it.

        Planning, pruning, pushdown and the rows returned are those of
        ``spark.read.format("tsfile")`` with the ``where`` and ``columns`` options.

        Args:
            where: a Spark SQL predicate (or a bound-able expression).
            columns: the columns to return, in this order (default: all).
            version: read this version instead (time travel).
            timestamp: read the version current at this instant (epoch ms or ISO-8601).
            timestamp_as: ``'long'`` returns ``time`` and TIMESTAMP columns as raw int64,
                ``'timestamp'`` as Arrow timestamps in ``unit`` (UTC); literals in ``where``
                are read as Spark reads them for that choice.
            unit: the table's time precision (the ``timestampPrecision`` it was written with).
            time_zone: the zone of times written without an offset, in ``where`` and
                ``timestamp`` (Spark's session time zone); needed only when they have one.
            max_workers: threads reading parts (default: the CPU count, at most 8).

        Raises:
            PredicateError: ``where`` cannot be parsed, does not fit the schema, or needs a
                ``time_zone``.
            OptionError: an unknown or repeated column, or a bad argument.
            VersionNotFoundError: no such ``version`` / nothing at or before ``timestamp``.
            TableNotFoundError: the location holds another table now.
        """
        # Imported here: the scan imports pyarrow, which opening a table never needs.
        from tsfile_catalog.exec.table_scan import TableScan

        table = self
        if version is not None or timestamp is not None:
            table = open_table(
                self._location,
                version=version,
                timestamp=timestamp,
                time_zone=time_zone,
                storage_options=self._io.storage_options,
                use_cache=self._use_cache,
            )
            if table.table_uuid != self.table_uuid:
                raise TableNotFoundError(
                    f"table {self.table_uuid} is no longer at {self._location}: it holds "
                    f"table {table.table_uuid} now (the table was dropped and recreated)"
                )
        return TableScan(
            table,
            where=where,
            columns=columns,
            timestamp_as=timestamp_as,
            unit=unit,
            time_zone=time_zone,
            max_workers=max_workers,
        )

    # -- maintenance (issue 13): thin methods over tsfile_catalog.table.maintenance, imported
    # when called because that module builds on this one.

    def optimize(
        self,
        *,
        where: str | Expr | None = None,
        target_file_size: int | None = None,
        settings: WriteSettings | None = None,
        unit: TimeUnit = "ms",
        timestamp_as: TimestampAs = "long",
        time_zone: str | None = None,
        progress: Progress | None = None,
    ) -> OptimizeResult:
        """Compact this version's small parts into larger TsFiles, in one ``OPTIMIZE``
        commit (see :func:`tsfile_catalog.table.maintenance.optimize`)."""
        from tsfile_catalog.table.maintenance import optimize

        return optimize(
            self,
            where=where,
            target_file_size=target_file_size,
            settings=settings,
            unit=unit,
            timestamp_as=timestamp_as,
            time_zone=time_zone,
            progress=progress,
        )

    def delete(
        self,
        where: str | Expr | None,
        *,
        settings: WriteSettings | None = None,
        unit: TimeUnit = "ms",
        timestamp_as: TimestampAs = "long",
        time_zone: str | None = None,
        progress: Progress | None = None,
    ) -> DeleteResult:
        """Delete the rows where ``where`` is TRUE (None: every row), in one ``DELETE``
        commit (see :func:`tsfile_catalog.table.maintenance.delete`)."""
        from tsfile_catalog.table.maintenance import delete

        return delete(
            self,
            where,
            settings=settings,
            unit=unit,
            timestamp_as=timestamp_as,
            time_zone=time_zone,
            progress=progress,
        )

    def complete_until(self) -> int | None:
        """The table's completeness as of this version: every row with time < the result
        (raw time units) is committed, as writers declared (``watermark.interval`` or
        ``completeUntil``, see docs/streaming.md); None when none declared anything.

        The snapshot carries it (so do checkpoints), so it survives EXPIRE SNAPSHOTS; the
        commits still in the log count too, for a snapshot loaded from a checkpoint an
        earlier release wrote without it."""
        declared = [
            c for c in (self.snapshot.complete_until, completeness(self.history())) if c is not None
        ]
        return max(declared) if declared else None


def open_table(
    url: str,
    *,
    version: int | None = None,
    timestamp: str | int | None = None,
    time_zone: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
    use_cache: bool = True,
) -> Table:
    """Open the latest version of the table at ``url``, or an older one (time travel).

    Args:
        url: the table root (a local path or an fsspec URL).
        version: exactly this version.
        timestamp: the latest version committed at or before this instant: epoch
            milliseconds, or an ISO-8601 string (naive means UTC unless ``time_zone``).
        time_zone: the zone of a ``timestamp`` without an offset (``Asia/Shanghai``,
            ``+08:00``), as Spark reads one in its session time zone; None means UTC.
        storage_options: passed to fsspec (credentials, ``endpoint_url``, ...).
        use_cache: reuse and fill the in-process metadata cache.

    Raises:
        TableNotFoundError: no manifest at ``url``.
        VersionNotFoundError: no such version, or nothing committed at or before
            ``timestamp``.
        CorruptManifestError: a commit file needed for the version is unreadable.
        OptionError: both ``version`` and ``timestamp``, an unparseable timestamp or an
            unknown ``time_zone``.
    """
    if version is not None and timestamp is not None:
        raise OptionError(
            "pass either version (versionAsOf) or timestamp (timestampAsOf), not both"
        )
    io = FileIO(url, storage_options)
    location = io.normalize(url)
    listing = list_log(io, location)
    if not listing.commits:
        raise no_table(io, location)
    if version is not None:
        if version not in set(listing.commits):
            raise VersionNotFoundError(_missing_version(location, listing, version))
        target = version
    elif timestamp is not None:
        at = time_travel_ms(timestamp, time_zone=time_zone)
        target = _version_at(io, location, listing, at, use_cache=use_cache)
    else:
        target = listing.latest
    snapshot = load_snapshot(io, location, listing, target, use_cache=use_cache)
    if target != listing.latest and listing.vacuumed:
        _check_not_vacuumed(io, location, snapshot)
    return Table(io, location, snapshot, use_cache=use_cache)


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


def _version_at(
    io: FileIO, location: str, listing: Listing, timestamp_ms: int, *, use_cache: bool
) -> int:
    """Binary search: commit timestamps strictly increase along the log."""
    table_uuid = identify(io, location, listing, use_cache=use_cache)
    versions = listing.commits
    lo, hi = 0, len(versions) - 1
    found = -1
    while lo <= hi:
        mid = (lo + hi) // 2
        info = _commit_info(io, location, table_uuid, versions[mid], use_cache=use_cache)
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
