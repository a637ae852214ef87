"""Tables on storage: the manifest log, time travel, optimistic commits and vacuum.

A table is a directory holding part files and a ``_tsfile_manifest/`` folder of numbered
commit files (``00000000000000000000.json``, ...), a checkpoint of the full snapshot every
:data:`CHECKPOINT_INTERVAL` commits (``00000000000000000010.checkpoint.json``) and a
``_last_checkpoint`` hint. The committed versions are exactly the commit files a listing
finds; checkpoints and the hint are derived data and never trusted over the commits.
``docs/manifest-format.md`` has the details. All storage access goes through
:class:`~tsfile_catalog.io.FileIO`; the model and the conflict rules are pure
(:mod:`tsfile_catalog.metadata.manifest`).
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import logging
import posixpath
import random
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fsspec.core import strip_protocol

from tsfile_catalog.exceptions import (
    CommitConflictError,
    CorruptManifestError,
    InvalidCommitError,
    OptionError,
    TableExistsError,
    TableNotFoundError,
    VersionNotFoundError,
)
from tsfile_catalog.io import FileIO, join_url
from tsfile_catalog.metadata.expressions import (
    BindContext,
    Expr,
    TimestampAs,
    TimeUnit,
    to_raw_time,
)
from tsfile_catalog.metadata.manifest import (
    FORMAT_VERSION,
    Action,
    AddPart,
    Commit,
    CommitInfo,
    RemovePart,
    SetProperties,
    SetSchema,
    Snapshot,
    apply,
    decode_commit,
    decode_snapshot,
    encode_commit,
    encode_snapshot,
    prepare_commit,
    rebase,
    replay,
)
from tsfile_catalog.metadata.parts import PartFile, validate_relative_path
from tsfile_catalog.metadata.scan import ScanPlan, plan_scan
from tsfile_catalog.metadata.schema import TableSchema
from tsfile_catalog.metadata.schema_merge import merge_schema as _merge_schema

__all__ = [
    "MANIFEST_DIR",
    "STAGING_DIR",
    "CHECKPOINT_INTERVAL",
    "DEFAULT_RETENTION_MS",
    "Table",
    "open_table",
    "create_table",
    "append_parts",
    "commit",
    "vacuum",
    "clear_cache",
]

MANIFEST_DIR = "_tsfile_manifest"
STAGING_DIR = "_staging"
LAST_CHECKPOINT = "_last_checkpoint"
CHECKPOINT_INTERVAL = 10
DEFAULT_RETENTION_MS = 7 * 24 * 3600 * 1000
MAX_COMMIT_ATTEMPTS = 20

_COMMIT_NAME = re.compile(r"^(\d{20})\.json$")
_CHECKPOINT_NAME = re.compile(r"^(\d{20})\.checkpoint\.json$")

_log = logging.getLogger(__name__)


def _engine_info() -> str:
    try:
        return f"tsfile-catalog/{importlib.metadata.version('tsfile-catalog')}"
    except importlib.metadata.PackageNotFoundError:
        return "tsfile-catalog"


ENGINE_INFO = _engine_info()


# -- the log folder ---------------------------------------------------------------------------


def _log_url(location: str) -> str:
    return join_url(location, MANIFEST_DIR)


def _commit_url(location: str, version: int) -> str:
    return join_url(location, MANIFEST_DIR, f"{version:020d}.json")


def _checkpoint_url(location: str, version: int) -> str:
    return join_url(location, MANIFEST_DIR, f"{version:020d}.checkpoint.json")


@dataclass(frozen=True)
class _Listing:
    commits: tuple[int, ...]
    checkpoints: tuple[int, ...]

    @property
    def latest(self) -> int:
        return self.commits[-1]


def _list_log(io: FileIO, location: str) -> _Listing:
    commits: list[int] = []
    checkpoints: list[int] = []
    for name in io.list_names(_log_url(location)):
        if match := _COMMIT_NAME.match(name):
            commits.append(int(match.group(1)))
        elif match := _CHECKPOINT_NAME.match(name):
            checkpoints.append(int(match.group(1)))
    return _Listing(tuple(sorted(commits)), tuple(sorted(checkpoints)))


def _read_commits(
    io: FileIO, location: str, listing: _Listing, start: int, stop: int, schema: TableSchema | None
) -> list[Commit]:
    """Commits ``start..stop`` (inclusive), each decoded with the schema in force before it."""
    present = set(listing.commits)
    out = []
    for version in range(start, stop + 1):
        url = _commit_url(location, version)
        if version not in present:
            raise CorruptManifestError(f"commit file {url} for version {version} is missing")
        try:
            data = io.read_bytes(url)
        except FileNotFoundError as e:
            raise CorruptManifestError(f"commit file {url} disappeared while reading") from e
        commit = decode_commit(data, schema, source=url)
        if commit.version != version:
            raise CorruptManifestError(f"commit file {url} claims to be version {commit.version}")
        schema = commit.new_schema() or schema
        out.append(commit)
    return out


def _read_checkpoint(io: FileIO, location: str, version: int) -> Snapshot:
    url = _checkpoint_url(location, version)
    try:
        data = io.read_bytes(url)
    except FileNotFoundError as e:
        raise CorruptManifestError(f"checkpoint file {url} disappeared while reading") from e
    snapshot = decode_snapshot(data, source=url)
    if snapshot.version != version:
        raise CorruptManifestError(f"checkpoint file {url} holds version {snapshot.version}")
    return snapshot


# -- the in-process metadata cache ------------------------------------------------------------


class _MetadataCache:
    """Snapshots and commit infos by (table location, version): both are immutable on disk.

    Bounded LRU over tables, and over snapshots within a table (a 10k-part snapshot is a few
    megabytes). A table recreated at the same location in this process goes through
    :func:`commit` at version 0, which drops the location's entries.
    """

    def __init__(self, max_tables: int = 32, snapshots_per_table: int = 4) -> None:
        self._lock = threading.Lock()
        self._snapshots: OrderedDict[str, OrderedDict[int, Snapshot]] = OrderedDict()
        self._infos: dict[str, dict[int, CommitInfo]] = {}
        self._max_tables = max_tables
        self._per_table = snapshots_per_table

    def snapshot(self, location: str, version: int) -> Snapshot | None:
        with self._lock:
            table = self._snapshots.get(location)
            if table is None or version not in table:
                return None
            self._snapshots.move_to_end(location)
            table.move_to_end(version)
            return table[version]

    def newest_at_or_before(self, location: str, version: int) -> Snapshot | None:
        with self._lock:
            table = self._snapshots.get(location)
            if table is None:
                return None
            best = max((v for v in table if v <= version), default=None)
            return None if best is None else table[best]

    def put(self, location: str, snapshot: Snapshot) -> None:
        with self._lock:
            table = self._snapshots.setdefault(location, OrderedDict())
            self._snapshots.move_to_end(location)
            table[snapshot.version] = snapshot
            table.move_to_end(snapshot.version)
            while len(table) > self._per_table:
                table.popitem(last=False)
            while len(self._snapshots) > self._max_tables:
                evicted, _ = self._snapshots.popitem(last=False)
                self._infos.pop(evicted, None)

    def info(self, location: str, version: int) -> CommitInfo | None:
        with self._lock:
            return self._infos.get(location, {}).get(version)

    def put_info(self, location: str, info: CommitInfo) -> None:
        with self._lock:
            self._infos.setdefault(location, {})[info.version] = info

    def drop(self, location: str) -> None:
        with self._lock:
            self._snapshots.pop(location, None)
            self._infos.pop(location, None)

    def clear(self) -> None:
        with self._lock:
            self._snapshots.clear()
            self._infos.clear()


_CACHE = _MetadataCache()


def clear_cache() -> None:
    """Forget every cached snapshot (tests; a table deleted and recreated out of process)."""
    _CACHE.clear()


def _load_snapshot(
    io: FileIO, location: str, listing: _Listing, version: int, *, use_cache: bool
) -> Snapshot:
    """The snapshot at ``version`` from the best base: a cached snapshot or a checkpoint."""
    if use_cache:
        cached = _CACHE.snapshot(location, version)
        if cached is not None:
            return cached
    base = _CACHE.newest_at_or_before(location, version) if use_cache else None
    for checkpoint in reversed(listing.checkpoints):
        if checkpoint > version:
            continue
        if base is not None and base.version >= checkpoint:
            break
        try:
            base = _read_checkpoint(io, location, checkpoint)
            break
        except CorruptManifestError as e:
            # Checkpoints are derived data: fall back to an older base and the commits.
            _log.warning("ignoring checkpoint: %s", e)
    start = 0 if base is None else base.version + 1
    commits = _read_commits(
        io, location, listing, start, version, None if base is None else base.schema
    )
    snapshot = replay(base, commits) if commits else base
    assert snapshot is not None
    if use_cache:
        _CACHE.put(location, snapshot)
    return snapshot


def _commit_info(io: FileIO, location: str, version: int, *, use_cache: bool) -> CommitInfo:
    if use_cache:
        cached = _CACHE.info(location, version)
        if cached is not None:
            return cached
    url = _commit_url(location, version)
    try:
        obj = json.loads(io.read_bytes(url))
        info = CommitInfo.from_json(obj["commit_info"])
    except FileNotFoundError as e:
        raise CorruptManifestError(f"commit file {url} for version {version} is missing") from e
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise CorruptManifestError(f"commit file {url} is corrupt or truncated: {e}") from e
    if use_cache:
        _CACHE.put_info(location, info)
    return info


# -- reading ----------------------------------------------------------------------------------


class Table:
    """One version of a table: its schema, parts and properties, plus its history."""

    def __init__(self, io: FileIO, location: str, snapshot: Snapshot, *, use_cache: bool) -> None:
        self._io = io
        self._location = location
        self._snapshot = snapshot
        self._use_cache = use_cache

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
        return join_url(self._location, part.path)

    def history(self, *, limit: int | None = None) -> list[CommitInfo]:
        """Commit infos up to this version, newest first (like Delta's DESCRIBE HISTORY)."""
        last = self.version
        first = 0 if limit is None else max(0, last - limit + 1)
        return [
            _commit_info(self._io, self._location, v, use_cache=self._use_cache)
            for v in range(last, first - 1, -1)
        ]

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
        return plan_scan(self.schema, self._snapshot.parts, where, context)


def open_table(
    url: str,
    *,
    version: int | None = None,
    timestamp: str | int | None = None,
    storage_options: Mapping[str, Any] | None = None,
    use_cache: bool = True,
) -> Table:
    """Open the latest version of the table at ``url``, or an older one (time travel).

    Args:
        url: the table root (a local path or an fsspec URL).
        version: exactly this version.
        timestamp: the latest version committed at or before this instant: epoch
            milliseconds, or an ISO-8601 string (naive means UTC).
        storage_options: passed to fsspec (credentials, ``endpoint_url``, ...).
        use_cache: reuse and fill the in-process metadata cache.

    Raises:
        TableNotFoundError: no manifest at ``url``.
        VersionNotFoundError: no such version, or nothing committed at or before
            ``timestamp``.
        CorruptManifestError: a commit file needed for the version is unreadable.
        OptionError: both ``version`` and ``timestamp``, or an unparseable timestamp.
    """
    if version is not None and timestamp is not None:
        raise OptionError(
            "pass either version (versionAsOf) or timestamp (timestampAsOf), not both"
        )
    io = FileIO(url, storage_options)
    location = io.normalize(url)
    listing = _list_log(io, location)
    if not listing.commits:
        raise TableNotFoundError(f"no tsfile-catalog table at {location} (no {MANIFEST_DIR}/)")
    if version is not None:
        if version not in set(listing.commits):
            raise VersionNotFoundError(
                f"table {location} has no version {version} (commit files exist for "
                f"versions {listing.commits[0]}..{listing.latest})"
            )
        target = version
    elif timestamp is not None:
        target = _version_at(io, location, listing, _timestamp_ms(timestamp), use_cache=use_cache)
    else:
        target = listing.latest
    return Table(
        io,
        location,
        _load_snapshot(io, location, listing, target, use_cache=use_cache),
        use_cache=use_cache,
    )


def _timestamp_ms(value: str | int) -> int:
    if isinstance(value, bool):
        raise OptionError(f"timestamp {value!r} is neither epoch milliseconds nor ISO-8601")
    if isinstance(value, int):
        return value
    text = value.strip()
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as e:
        raise OptionError(f"timestamp {value!r} is neither epoch milliseconds nor ISO-8601") from e
    return to_raw_time(parsed, "ms")


def _version_at(
    io: FileIO, location: str, listing: _Listing, timestamp_ms: int, *, use_cache: bool
) -> int:
    """Binary search: commit timestamps strictly increase along the log."""
    versions = listing.commits
    lo, hi = 0, len(versions) - 1
    found = -1
    while lo <= hi:
        mid = (lo + hi) // 2
        info = _commit_info(io, location, versions[mid], use_cache=use_cache)
        if info.timestamp_ms <= timestamp_ms:
            found, lo = mid, mid + 1
        else:
            hi = mid - 1
    if found < 0:
        when = dt.datetime.fromtimestamp(timestamp_ms / 1000, tz=dt.timezone.utc).isoformat()
        raise VersionNotFoundError(f"no version of table {location} at or before {when}")
    return versions[found]


# -- committing -------------------------------------------------------------------------------


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def commit(
    io: FileIO,
    table_url: str,
    actions: Sequence[Action],
    *,
    read: Snapshot | None,
    operation: str,
    operation_parameters: Mapping[str, str] | None = None,
    overwrite: bool = False,
    max_attempts: int = MAX_COMMIT_ATTEMPTS,
) -> Snapshot:
    """Commit ``actions``, prepared against ``read`` (None: the table does not exist yet).

    Optimistic concurrency: the next commit file is created with put-if-absent. When another
    writer got that version first, the commits that landed are read, the pure
    :func:`~tsfile_catalog.metadata.manifest.rebase` decides whether this commit still
    applies, and it is retried at the next version after an exponential backoff with jitter.
    Schema ids and the parts' ``added_version``/``schema_id`` are assigned here.

    Returns:
        The table snapshot at the new version.

    Raises:
        CommitConflictError: a concurrent commit conflicts, or ``max_attempts`` lost races.
        InvalidCommitError: the actions do not fit the table (a part added twice, ...).
    """
    location = io.normalize(table_url)
    base = read
    pending = tuple(actions)
    for attempt in range(max_attempts):
        draft = prepare_commit(
            pending,
            base=base,
            timestamp_ms=_now_ms(),
            operation=operation,
            operation_parameters=operation_parameters,
            engine_info=ENGINE_INFO,
            read_version=None if read is None else read.version,
        )
        try:
            snapshot = apply(base, draft)
        except CorruptManifestError as e:
            raise InvalidCommitError(f"cannot commit to table {location}: {e}") from e
        data = encode_commit(draft, None if base is None else base.schema)
        url = _commit_url(location, draft.version)
        try:
            io.create_exclusive(url, data)
        except FileExistsError:
            # A store may retry a conditional PUT whose first response was lost; the retry
            # then fails against our own file, which must count as success, not a conflict.
            if _read_or_none(io, url) == data:
                _after_commit(io, location, snapshot)
                return snapshot
            time.sleep(random.uniform(0, min(1.0, 0.005 * 2**attempt)))
            landed = _landed_since(io, location, base)
            try:
                pending = rebase(pending, landed, read=base, overwrite=overwrite)
            except CommitConflictError as e:
                raise CommitConflictError(f"commit to table {location} failed: {e}") from e
            if landed:
                base = replay(base, landed)
            continue
        _after_commit(io, location, snapshot)
        return snapshot
    raise CommitConflictError(
        f"commit to table {location} lost the race for a version {max_attempts} times; "
        "too many concurrent writers"
    )


def _read_or_none(io: FileIO, url: str) -> bytes | None:
    try:
        return io.read_bytes(url)
    except FileNotFoundError:
        return None


def _landed_since(io: FileIO, location: str, base: Snapshot | None) -> list[Commit]:
    listing = _list_log(io, location)
    start = 0 if base is None else base.version + 1
    if not listing.commits or listing.latest < start:
        return []
    return _read_commits(
        io, location, listing, start, listing.latest, None if base is None else base.schema
    )


def _after_commit(io: FileIO, location: str, snapshot: Snapshot) -> None:
    if snapshot.version == 0:
        _CACHE.drop(location)
    _CACHE.put(location, snapshot)
    if snapshot.version == 0 or snapshot.version % CHECKPOINT_INTERVAL:
        return
    # The commit is durable already; a failed checkpoint only makes later loads replay more
    # commits, so it must not surface as a failed write (the caller would retry and duplicate).
    try:
        io.create_exclusive(_checkpoint_url(location, snapshot.version), encode_snapshot(snapshot))
        hint = {"version": snapshot.version, "format_version": FORMAT_VERSION}
        io.write_bytes(join_url(location, MANIFEST_DIR, LAST_CHECKPOINT), json.dumps(hint).encode())
    except OSError as e:
        _log.warning("could not write checkpoint %d of %s: %s", snapshot.version, location, e)


def _latest_or_none(io: FileIO, location: str) -> Snapshot | None:
    listing = _list_log(io, location)
    if not listing.commits:
        return None
    return _load_snapshot(io, location, listing, listing.latest, use_cache=True)


def append_parts(
    table_url: str,
    parts: Sequence[PartFile],
    incoming_schema: TableSchema,
    *,
    merge_schema: bool = False,
    overwrite: bool = False,
    operation: str | None = None,
    operation_parameters: Mapping[str, str] | None = None,
    properties: Mapping[str, str] | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> int:
    """Commit already-written part files to the table, creating it when there is none.

    Called once per write, on the driver, after every task has written its parts. Without a
    table, version 0 sets ``incoming_schema`` and ``properties`` and adds the parts.
    Otherwise the schema is merged (:func:`~tsfile_catalog.metadata.schema_merge.merge_schema`)
    and the parts appended; ``overwrite`` also removes every current part (the files stay
    for time travel until :func:`vacuum`).

    Args:
        parts: paths relative to the table root; their ``added_version`` and ``schema_id``
            are assigned by the commit.
        operation: the history entry's operation; defaults to ``WRITE`` / ``OVERWRITE``
            (``ADOPT``, ``ADD PARTS`` for callers registering existing files).
        properties: table properties to set (on creation, or changed ones afterwards).

    Returns:
        The committed version.

    Raises:
        SchemaMismatchError: the incoming schema does not fit the table's.
        CommitConflictError: a concurrent commit conflicts (see ``docs/manifest-format.md``).
        InvalidCommitError: a part path is invalid or already in the table.
    """
    for part in parts:
        try:
            validate_relative_path(part.path)
        except CorruptManifestError as e:
            raise InvalidCommitError(str(e)) from e
    io = FileIO(table_url, storage_options)
    location = io.normalize(table_url)
    read = _latest_or_none(io, location)
    actions: list[Action] = []
    if read is None:
        actions.append(SetSchema(incoming_schema, 0))
        actions.append(SetProperties(dict(properties or {})))
    else:
        schema = _merge_schema(read.schema, incoming_schema, merge=merge_schema)
        if schema != read.schema:
            actions.append(SetSchema(schema, read.schema_id + 1))
        changed = {k: v for k, v in (properties or {}).items() if read.properties.get(k) != v}
        if changed:
            actions.append(SetProperties(changed))
        if overwrite:
            actions.extend(RemovePart(p.path, p.row_count, p.size_bytes) for p in read.parts)
    actions.extend(AddPart(p) for p in parts)
    parameters = {
        "mode": "overwrite" if overwrite else "append",
        "mergeSchema": "true" if merge_schema else "false",
        **(operation_parameters or {}),
    }
    snapshot = commit(
        io,
        location,
        actions,
        read=read,
        operation=operation or ("OVERWRITE" if overwrite else "WRITE"),
        operation_parameters=parameters,
        overwrite=overwrite,
    )
    return snapshot.version


def create_table(
    url: str,
    schema: TableSchema,
    *,
    properties: Mapping[str, str] | None = None,
    exist_ok: bool = False,
    storage_options: Mapping[str, Any] | None = None,
) -> Table:
    """Create an empty table (SQL ``CREATE TABLE``).

    Raises:
        TableExistsError: a table is already at ``url`` (unless ``exist_ok``, which returns
            it unchanged, whatever its schema).
    """
    io = FileIO(url, storage_options)
    location = io.normalize(url)
    if _list_log(io, location).commits:
        if exist_ok:
            return open_table(location, storage_options=storage_options)
        raise TableExistsError(f"a table already exists at {location}")
    actions: list[Action] = [SetSchema(schema, 0), SetProperties(dict(properties or {}))]
    try:
        snapshot = commit(io, location, actions, read=None, operation="CREATE")
    except CommitConflictError as e:
        if exist_ok:
            return open_table(location, storage_options=storage_options)
        raise TableExistsError(f"a table was created concurrently at {location}") from e
    return Table(io, location, snapshot, use_cache=True)


# -- vacuum -----------------------------------------------------------------------------------


def vacuum(
    url: str,
    *,
    dry_run: bool = True,
    retention_ms: int = DEFAULT_RETENTION_MS,
    storage_options: Mapping[str, Any] | None = None,
) -> list[str]:
    """Orphan files: ``*.tsfile`` files and anything under ``_staging/`` that no version uses.

    A file referenced by any version (current or older) is never returned, so time travel
    keeps working. Files modified within ``retention_ms`` are left alone too: they may
    belong to a write that has not committed yet. ``retention_ms=0`` is only safe when no
    write is running. With ``dry_run`` (the default) nothing is deleted: the result is what
    a real run with the same arguments would delete.

    Returns:
        The orphan file URLs, sorted.

    Raises:
        TableNotFoundError: no manifest at ``url``.
        CorruptManifestError: a commit file is unreadable (nothing is deleted then).
    """
    if retention_ms < 0:
        raise OptionError(f"retention_ms must be >= 0, got {retention_ms}")
    io = FileIO(url, storage_options)
    location = io.normalize(url)
    listing = _list_log(io, location)
    if not listing.commits:
        raise TableNotFoundError(f"no tsfile-catalog table at {location} (no {MANIFEST_DIR}/)")
    referenced = {
        action.part.path
        for c in _read_commits(io, location, listing, 0, listing.latest, None)
        for action in c.actions
        if isinstance(action, AddPart)
    }
    root = strip_protocol(location).rstrip("/")
    cutoff = _now_ms() - retention_ms
    orphans = []
    for file_url, _ in io.walk_files(location):
        relative = posixpath.relpath(strip_protocol(file_url), root)
        if relative.startswith(f"{MANIFEST_DIR}/") or relative in referenced:
            continue
        if not (relative.endswith(".tsfile") or relative.startswith(f"{STAGING_DIR}/")):
            continue
        if retention_ms:
            modified = io.modified_ms(file_url)
            if modified is None or modified > cutoff:
                continue
        orphans.append(file_url)
    orphans.sort()
    if not dry_run:
        for file_url in orphans:
            io.delete(file_url)
    return orphans
