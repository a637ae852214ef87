"""Table maintenance: vacuum, purge, snapshot expiry, restore, schema evolution, and the
rewrites OPTIMIZE and DELETE.

Vacuum and purge delete exactly what the plans of :mod:`tsfile_catalog.table.ownership` list;
which removed parts and which log files may go is decided by the pure plans of
:mod:`tsfile_catalog.metadata.retention`, and the rules of what a table owns are pure too
(:mod:`tsfile_catalog.metadata.ownership`). Restore and the ALTER TABLE changes are ordinary
commits through :func:`tsfile_catalog.table.commits.commit`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tsfile_catalog.exceptions import (
    OptionError,
    PredicateError,
    SchemaError,
    SchemaMismatchError,
    TableNotFoundError,
    VersionNotFoundError,
)
from tsfile_catalog.io import FileIO, join_url
from tsfile_catalog.metadata.compaction import plan_compaction
from tsfile_catalog.metadata.compaction import target_file_size as target_file_size_of
from tsfile_catalog.metadata.expressions import (
    Expr,
    TimestampAs,
    TimeUnit,
    columns_of,
    needs_time_zone,
)
from tsfile_catalog.metadata.manifest import (
    Action,
    AddPart,
    Commit,
    Operation,
    RemovePart,
    SetSchema,
    Snapshot,
    decode_commit_info,
    replay,
)
from tsfile_catalog.metadata.ownership import MANIFEST_DIR, owns_part
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.retention import (
    DEFAULT_DELETED_FILE_RETENTION_MS,
    DEFAULT_LOG_RETENTION_MS,
    DELETED_FILE_RETENTION,
    LOG_RETENTION,
    ExpirePlan,
    check_retention,
    plan_expire,
    plan_vacuum,
    retention_property,
)
from tsfile_catalog.metadata.schema import TIME_COLUMN, Category, Column, DataType, TableSchema
from tsfile_catalog.metadata.schema_merge import widens
from tsfile_catalog.progress import Progress
from tsfile_catalog.table import ownership
from tsfile_catalog.table.commits import commit, now_ms
from tsfile_catalog.table.handle import Table, load_snapshot, open_table, time_travel_ms
from tsfile_catalog.table.log import (
    COMMIT_NAME,
    Listing,
    checkpoint_urls,
    commit_url,
    list_log,
    log_url,
    read_commits,
    read_log_file,
    read_vacuum_record,
    vacuum_record_url,
)

if TYPE_CHECKING:
    from tsfile_catalog.formats.tsfile import WriteSettings

# OPTIMIZE and DELETE import the rewrite machinery (pyarrow, pandas, the TsFile writer) when
# they run: the metadata-only verbs here (vacuum, expire, restore) and every importer of
# tsfile_catalog.table (the CLI's history, say) must not pay for it.

__all__ = [
    "DEFAULT_RETENTION_MS",
    "Expired",
    "Maintenance",
    "Progress",
    "Vacuumed",
    "add_columns",
    "alter_column_type",
    "expire_snapshots",
    "purge",
    "restore",
    "vacuum",
    "vacuum_table",
    "OptimizeResult",
    "DeleteResult",
    "optimize",
    "delete",
]

DEFAULT_RETENTION_MS = DEFAULT_DELETED_FILE_RETENTION_MS


def _open_log(io: FileIO, location: str) -> Listing:
    listing = list_log(io, location)
    if not listing.commits:
        raise TableNotFoundError(f"no tsfile-catalog table at {location} (no {MANIFEST_DIR}/)")
    return listing


def _known_log(io: FileIO, location: str, listing: Listing) -> tuple[Snapshot, list[Commit]]:
    """The oldest version the log can load (version 0, or the checkpoint an expiry kept) and
    every commit after it: all the log still knows of the table's parts."""
    oldest = listing.commits[0]
    base = load_snapshot(io, location, listing, oldest, use_cache=True)
    return base, read_commits(io, location, listing, oldest + 1, listing.latest, base.schema)


def _ever_added(io: FileIO, location: str, listing: Listing) -> frozenset[str]:
    """Every part path a known version holds that the table owns: its data files, current or
    time-travel (external parts are the user's, never deleted: ``owns_part``)."""
    if not listing.commits:
        return frozenset()
    base, commits = _known_log(io, location, listing)
    added = (
        a.part.path
        for c in commits
        for a in c.actions
        if isinstance(a, AddPart) and owns_part(a.part)
    )
    return frozenset(p.path for p in base.parts if owns_part(p)).union(added)


# -- VACUUM -----------------------------------------------------------------------------------


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
    listing = _open_log(io, location)
    base, commits = _known_log(io, location, listing)
    latest = replay(base, commits) if commits else base
    if retention_ms is None:
        retention_ms = retention_property(
            latest.properties, DELETED_FILE_RETENTION, DEFAULT_DELETED_FILE_RETENTION_MS
        )
    check_retention(retention_ms, latest.properties, enabled=retention_check)
    cutoff = now_ms() - retention_ms
    plan = plan_vacuum(base, commits, cutoff_ms=cutoff)
    removed = ownership.replaced(io, location, {r.path for r in plan.reclaimable})
    orphans = ownership.orphans(
        io, location, plan.referenced, modified_before_ms=cutoff if retention_ms else None
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


# -- EXPIRE SNAPSHOTS -------------------------------------------------------------------------


@dataclass(frozen=True)
class Expired:
    """What EXPIRE SNAPSHOTS removed (or would remove): the versions whose commit files go,
    the checkpoints that go, and the oldest version left (covered by a checkpoint)."""

    oldest_kept: int
    versions: tuple[int, ...]
    checkpoints: tuple[int, ...]
    checkpoint_written: bool


def expire_snapshots(
    url: str,
    *,
    older_than: str | int | None = None,
    retention_ms: int | None = None,
    retain_last: int | None = None,
    time_zone: str | None = None,
    dry_run: bool = False,
    storage_options: Mapping[str, Any] | None = None,
) -> Expired:
    """Remove the commit files and checkpoints of versions that stopped being current
    before a cutoff (Iceberg's ``expire_snapshots``, Delta's log cleanup).

    The version current at the cutoff stays, and a checkpoint of it is written first when
    none exists, so it and every later version still load; older versions are gone from
    history and time travel (a :class:`VersionNotFoundError` names the oldest available
    version). Data files are not touched: parts only old versions used are VACUUM's.

    Args:
        older_than: the cutoff instant (epoch ms or ISO-8601, naive in ``time_zone``).
        retention_ms: the cutoff is this long ago (default: the table property
            ``logRetention``, 30 days), when ``older_than`` is not given.
        retain_last: keep at least this many of the newest versions.

    Raises:
        TableNotFoundError: no manifest at ``url``.
        OptionError: both ``older_than`` and ``retention_ms``, a negative retention,
            ``retain_last`` below 1, or a table written before table UUIDs (its identity is
            derived from its first commit file, which must stay).
    """
    if older_than is not None and retention_ms is not None:
        raise OptionError("pass either older_than or retention_ms, not both")
    if retention_ms is not None and retention_ms < 0:
        raise OptionError(f"the retention must be >= 0, got {retention_ms} ms")
    io = FileIO(url, storage_options)
    location = io.normalize(url)
    listing = _open_log(io, location)
    latest = load_snapshot(io, location, listing, listing.latest, use_cache=True)
    if older_than is not None:
        cutoff: int | None = time_travel_ms(older_than, time_zone=time_zone)
    elif retention_ms is not None or retain_last is None:
        if retention_ms is None:
            retention_ms = retention_property(
                latest.properties, LOG_RETENTION, DEFAULT_LOG_RETENTION_MS
            )
        cutoff = now_ms() - retention_ms
    else:
        cutoff = None
    infos = []
    for version in listing.commits:
        source = commit_url(location, version)
        info, table_uuid = decode_commit_info(read_log_file(io, source, "commit"), source=source)
        infos.append((version, info.timestamp_ms, table_uuid))
    plan = plan_expire(
        [(v, ts) for v, ts, _ in infos],
        listing.checkpoints,
        cutoff_ms=cutoff,
        retain_last=retain_last,
    )
    if plan.expired_versions:
        kept_uuid = next(u for v, _, u in infos if v == plan.oldest_kept)
        if kept_uuid is None:
            raise OptionError(
                f"EXPIRE SNAPSHOTS on table {location}: its commits record no table UUID "
                "(written by an older release), so its identity comes from its first commit "
                "file, which must stay; nothing was expired"
            )
    if dry_run or not plan.expired_versions:
        return _expired(plan, written=False)
    written = False
    if plan.checkpoint_needed:
        snapshot = load_snapshot(io, location, listing, plan.oldest_kept, use_cache=True)
        from tsfile_catalog.table.checkpoint_parquet import write_checkpoint

        try:
            write_checkpoint(io, location, snapshot, hint=False)
            written = True
        except FileExistsError:
            pass  # a concurrent expiry wrote the same checkpoint
    # Oldest first: the log stays a contiguous run of versions, whatever stops this.
    for version in plan.expired_versions:
        io.delete_files([commit_url(location, version)])
    io.delete_files([u for v in plan.expired_checkpoints for u in checkpoint_urls(location, v)])
    return _expired(plan, written=written)


def _expired(plan: ExpirePlan, *, written: bool) -> Expired:
    return Expired(plan.oldest_kept, plan.expired_versions, plan.expired_checkpoints, written)


# -- RESTORE ----------------------------------------------------------------------------------


def restore(
    url: str,
    *,
    version: int | None = None,
    timestamp: str | int | None = None,
    time_zone: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> int:
    """Commit a new version whose parts and schema equal an older version's (history
    operation ``RESTORE``); later versions stay in history.

    Returns:
        The new version.

    Raises:
        VersionNotFoundError: no such version (or it was expired), or one of its parts was
            deleted by VACUUM (the error names it).
        CommitConflictError: a concurrent commit added or removed parts meanwhile.
    """
    if (version is None) == (timestamp is None):
        raise OptionError("RESTORE needs exactly one of version or timestamp")
    target = open_table(
        url,
        version=version,
        timestamp=timestamp,
        time_zone=time_zone,
        storage_options=storage_options,
    )
    io = target.io
    latest = open_table(url, storage_options=storage_options)
    current = {p.path for p in latest.parts()}
    wanted = {p.path for p in target.parts()}
    back = [p for p in target.parts() if p.path not in current]
    for part in back:
        if not io.exists(target.part_url(part)):
            raise VersionNotFoundError(
                f"cannot restore table {target.location} to version {target.version}: its "
                f"part {part.path} was deleted by VACUUM"
            )
    actions: list[Action] = [
        RemovePart(p.path, p.row_count, p.size_bytes)
        for p in latest.parts()
        if p.path not in wanted
    ]
    actions.extend(AddPart(p) for p in back)
    if target.schema != latest.schema:
        actions.append(SetSchema(target.schema, 0))
    snapshot = commit(
        io,
        target.location,
        actions,
        read=latest.snapshot,
        operation=Operation.RESTORE,
        operation_parameters={"version": str(target.version)},
        overwrite=True,
    )
    return snapshot.version


# -- schema evolution -------------------------------------------------------------------------

_NO_COLUMN_IDS = (
    "columns are matched by name in every part file (the table has no column ids yet), so "
    "older parts would read another column's data or lose it"
)


def add_columns(
    url: str,
    columns: Sequence[tuple[str, DataType]],
    *,
    storage_options: Mapping[str, Any] | None = None,
) -> int:
    """Add FIELD columns at the end of the schema (``ALTER TABLE … ADD COLUMNS``); parts
    written before read them as null. One commit, operation ``ADD COLUMNS``.

    Returns:
        The new version.

    Raises:
        SchemaError: a name that exists already, is repeated, or is ``time``.
    """
    table = open_table(url, storage_options=storage_options)
    schema = table.schema
    seen: set[str] = set()
    added: list[Column] = []
    for name, data_type in columns:
        name = name.lower()
        if name == TIME_COLUMN or schema.column(name) is not None or name in seen:
            raise SchemaError(
                f"cannot add column {name!r} to table {schema.table}: a column of that name "
                "exists already"
            )
        seen.add(name)
        added.append(Column(name, data_type, Category.FIELD))
    if not added:
        raise SchemaError(f"ALTER TABLE {schema.table} ADD COLUMNS: no columns given")
    new = TableSchema(table=schema.table, columns=(*schema.columns, *added))
    parameters = {"columns": json.dumps([[c.name, c.type.value] for c in added])}
    return _change_schema(table, new, Operation.ADD_COLUMNS, parameters)


def alter_column_type(
    url: str,
    column: str,
    data_type: DataType,
    *,
    storage_options: Mapping[str, Any] | None = None,
) -> int:
    """Widen a FIELD column (INT32 -> INT64, FLOAT -> DOUBLE): readers cast older parts up,
    nothing is rewritten. One commit, operation ``CHANGE COLUMN``; the same type is a no-op.

    Returns:
        The new version (the current one when nothing changes).

    Raises:
        SchemaError: no such column, or a TAG column.
        SchemaMismatchError: a change other than the two widenings.
    """
    table = open_table(url, storage_options=storage_options)
    schema = table.schema
    name = column.lower()
    current = schema.column(name)
    if current is None:
        raise SchemaError(
            f"table {schema.table} has no column {name!r} (columns: {', '.join(schema.names)})"
        )
    if current.category is Category.TAG:
        raise SchemaError(
            f"cannot change TAG column {name!r} of table {schema.table}: TAG columns identify "
            "the devices in every part file and never change"
        )
    if current.type is data_type:
        return table.version
    if not widens(current.type, data_type):
        raise SchemaMismatchError(
            f"cannot change column {name!r} of table {schema.table} from "
            f"{current.type.value} to {data_type.value}: only INT32 -> INT64 and FLOAT -> "
            f"DOUBLE widen without rewriting data; other changes are refused because "
            f"{_NO_COLUMN_IDS}"
        )
    new = TableSchema(
        table=schema.table,
        columns=tuple(
            Column(c.name, data_type, c.category) if c.name == name else c for c in schema.columns
        ),
    )
    parameters = {"column": name, "from": current.type.value, "to": data_type.value}
    return _change_schema(table, new, Operation.CHANGE_COLUMN, parameters)


def _change_schema(
    table: Table, schema: TableSchema, operation: Operation, parameters: Mapping[str, str]
) -> int:
    snapshot = commit(
        table.io,
        table.location,
        [SetSchema(schema, 0)],
        read=table.snapshot,
        operation=operation,
        operation_parameters=parameters,
    )
    return snapshot.version


# -- the Table handle's namespace -------------------------------------------------------------


class Maintenance:
    """``table.maintenance``: the maintenance verbs on one table (pyiceberg's
    ``tbl.maintenance``, deltalake's ``dt.vacuum()``). Each acts on the table's location,
    at its latest version, whatever version the handle shows."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def _storage(self) -> Mapping[str, Any]:
        return self._table.io.storage_options

    def vacuum(
        self,
        *,
        retention_hours: float | None = None,
        dry_run: bool = True,
        retention_check: bool = True,
        progress: Progress | None = None,
    ) -> Vacuumed:
        """See :func:`vacuum_table`; ``retention_hours`` defaults to the table's
        ``deletedFileRetention``."""
        return vacuum_table(
            self._table.location,
            dry_run=dry_run,
            retention_ms=None if retention_hours is None else round(retention_hours * 3.6e6),
            retention_check=retention_check,
            storage_options=self._storage(),
            progress=progress,
        )

    def expire_snapshots(
        self,
        *,
        older_than: str | int | None = None,
        retention_hours: float | None = None,
        retain_last: int | None = None,
        dry_run: bool = False,
    ) -> Expired:
        """See :func:`expire_snapshots`."""
        return expire_snapshots(
            self._table.location,
            older_than=older_than,
            retention_ms=None if retention_hours is None else round(retention_hours * 3.6e6),
            retain_last=retain_last,
            dry_run=dry_run,
            storage_options=self._storage(),
        )

    def restore(self, *, version: int | None = None, timestamp: str | int | None = None) -> int:
        """See :func:`restore`."""
        return restore(
            self._table.location,
            version=version,
            timestamp=timestamp,
            storage_options=self._storage(),
        )

    def add_columns(self, columns: Sequence[tuple[str, DataType]]) -> int:
        """See :func:`add_columns`."""
        return add_columns(self._table.location, columns, storage_options=self._storage())

    def alter_column_type(self, column: str, data_type: DataType) -> int:
        """See :func:`alter_column_type`."""
        return alter_column_type(
            self._table.location, column, data_type, storage_options=self._storage()
        )


# -- OPTIMIZE and DELETE ----------------------------------------------------------------------


@dataclass(frozen=True)
class OptimizeResult:
    """What OPTIMIZE did. ``version`` is None when nothing needed compacting (no commit)."""

    version: int | None
    files_removed: int
    files_added: int
    bytes_removed: int
    bytes_added: int
    rows: int  # rows rewritten: the same rows, now in ``files_added`` parts


@dataclass(frozen=True)
class DeleteResult:
    """What DELETE did. ``version`` is None when no row matched (no commit)."""

    version: int | None
    num_deleted_rows: int
    files_removed: int
    files_added: int
    files_dropped: int  # removed in metadata only: every row matched
    files_rewritten: int  # rewritten without the matching rows


def _as_table(table: Table | str, storage_options: Mapping[str, Any] | None) -> Table:
    return table if isinstance(table, Table) else open_table(table, storage_options=storage_options)


def optimize(
    table: Table | str,
    *,
    where: str | Expr | None = None,
    target_file_size: int | None = None,
    settings: WriteSettings | None = None,
    unit: TimeUnit = "ms",
    timestamp_as: TimestampAs = "long",
    time_zone: str | None = None,
    progress: Progress | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> OptimizeResult:
    """Compact small TsFile parts into parts of about ``target_file_size`` bytes.

    Which parts go together is :func:`~tsfile_catalog.metadata.compaction.plan_compaction`'s
    pure plan: the table's own TsFile parts below 3/4 of the target (external parts and parts
    near the target stay), packed in time order whatever their time ranges; each group's rows
    are read through the shared read path and written, sorted by device then time, as one new
    TsFile in this process (:func:`~tsfile_catalog.table.rewrite.compact_parts`: parts that
    repeat a (device, time) keep both rows, in one new part per repeat). One commit
    (operation ``OPTIMIZE``, ``data_change`` false) removes the old parts and adds the new
    ones; the old files stay for time travel until VACUUM. Concurrent
    appends keep working (the commit rebases on them); a concurrent commit that removed one
    of the rewritten parts makes it fail with :class:`CommitConflictError`, with nothing
    committed.

    Args:
        table: an open table (its version is the one compacted) or a table URL (the latest).
        where: limit the candidates to parts that may hold rows matching this predicate on
            ``time`` and TAG columns (Spark SQL or a bound-able expression); the parts are
            still rewritten whole.
        target_file_size: bytes; default the table property ``targetFileSize``, else 128 MiB.
        settings: the TsFile writer's compression and encoding (a catalog table passes its
            stored write options); default ZSTD and the per-type default encodings.
        unit, timestamp_as, time_zone: how ``where`` binds (see :meth:`Table.plan`).
        progress: called as ``progress(done, total)`` after each new part is written.

    Raises:
        OptionError: ``target_file_size`` or the ``targetFileSize`` property is not a positive
            integer.
        PredicateError: ``where`` cannot be parsed, or reads a FIELD column.
        CommitConflictError: a concurrent commit removed a part this one rewrote.
    """
    table = _as_table(table, storage_options)
    try:
        target = target_file_size_of(dict(table.properties), target_file_size)
    except ValueError as e:
        raise OptionError(str(e)) from e
    candidates = table.parts()
    if where is not None:
        plan = table.plan(where, unit=unit, timestamp_as=timestamp_as, time_zone=time_zone)
        allowed = {TIME_COLUMN, *table.schema.tag_names}
        others = sorted(columns_of(plan.filter) - allowed)
        if others:
            raise PredicateError(
                f"OPTIMIZE WHERE may only read time and TAG columns; it reads FIELD column "
                f"'{others[0]}'"
            )
        candidates = list(plan.parts)
    compaction = plan_compaction(candidates, target_size=target)
    if not compaction.groups:
        return OptimizeResult(None, 0, 0, 0, 0, 0)
    from tsfile_catalog.table.rewrite import RewriteJob, compact_parts

    # Rows are read in commit order, so where parts repeat a (device, time) the earlier row
    # lands in the first new part.
    order = {p.path: i for i, p in enumerate(candidates)}
    with RewriteJob(table, settings) as job:
        total = len(compaction.groups)
        removed_parts: list[PartFile] = []
        for done, group in enumerate(compaction.groups, start=1):
            parts = sorted(group.parts, key=lambda p: order[p.path])
            if compact_parts(job, parts):
                removed_parts.extend(parts)
            if progress is not None:
                progress(done, total)
        if not removed_parts:
            return OptimizeResult(None, 0, 0, 0, 0, 0)
        removed = tuple(removed_parts)
        parameters = {
            "targetFileSize": str(target),
            "numRemovedFiles": str(len(removed)),
            "numAddedFiles": str(len(job.staged)),
        }
        if where is not None:
            parameters["predicate"] = where if isinstance(where, str) else repr(where)
        snapshot = job.commit(
            removed, operation=Operation.OPTIMIZE, parameters=parameters, data_change=False
        )
        added = job.staged
    return OptimizeResult(
        version=snapshot.version,
        files_removed=len(removed),
        files_added=len(added),
        bytes_removed=sum(p.size_bytes for p in removed),
        bytes_added=sum(s.part.size_bytes for s in added),
        rows=sum(s.part.row_count for s in added),
    )


def delete(
    table: Table | str,
    where: str | Expr | None,
    *,
    settings: WriteSettings | None = None,
    unit: TimeUnit = "ms",
    timestamp_as: TimestampAs = "long",
    time_zone: str | None = None,
    progress: Progress | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> DeleteResult:
    """Delete the rows where ``where`` is TRUE (None: every row), in one ``DELETE`` commit.

    ``where`` means what it means to Spark over the table's scan (``unit``, ``timestamp_as``,
    ``time_zone`` as for :meth:`Table.plan`; a catalog passes the session time zone). Parts
    whose statistics prove every row matches are removed in metadata only; parts that may
    hold some matching rows are rewritten without them (copy-on-write: one new part per
    rewritten part); the old files stay for time travel until VACUUM. Concurrent appends
    rebase (their rows are not deleted: they commit after the delete); a concurrent commit
    that removed a part this one removes conflicts.

    Raises:
        PredicateError: ``where`` cannot be parsed or bound, or needs a time zone it was not
            given.
        InvalidCommitError: the predicate may match an external part.
        CommitConflictError: a concurrent commit removed a part this one removes.
    """
    table = _as_table(table, storage_options)
    bound = _bind_exact(table, where, unit=unit, timestamp_as=timestamp_as, time_zone=time_zone)
    from tsfile_catalog.table.rewrite import RewriteJob, remove_matching_rows

    with RewriteJob(table, settings) as job:
        removal = remove_matching_rows(job, bound, progress=progress)
        if not removal.removed:
            return DeleteResult(None, 0, 0, 0, 0, 0)
        parameters = {
            "predicate": "true" if where is None else _predicate_text(where),
            "numDeletedRows": str(removal.deleted_rows),
        }
        snapshot = job.commit(
            removal.removed, operation=Operation.DELETE, parameters=parameters, data_change=True
        )
        return DeleteResult(
            version=snapshot.version,
            num_deleted_rows=removal.deleted_rows,
            files_removed=len(removal.removed),
            files_added=len(job.staged),
            files_dropped=removal.dropped,
            files_rewritten=removal.rewritten,
        )


def _predicate_text(where: str | Expr) -> str:
    return where if isinstance(where, str) else repr(where)


def _bind_exact(
    table: Table,
    where: str | Expr | None,
    *,
    unit: TimeUnit,
    timestamp_as: TimestampAs,
    time_zone: str | None,
) -> Expr | None:
    """``where`` bound for row-level evaluation: a predicate that needs a time zone it was
    not given may prune but cannot decide which rows go."""
    if where is None:
        return None
    plan = table.plan(where, unit=unit, timestamp_as=timestamp_as, time_zone=time_zone)
    if needs_time_zone(plan.filter):
        raise PredicateError(
            f"{_predicate_text(where)!r} compares with a time whose instant depends on the "
            "time zone; pass time_zone (a catalog passes spark.sql.session.timeZone)"
        )
    return plan.filter
