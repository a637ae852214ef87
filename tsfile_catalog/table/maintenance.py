"""Vacuum and purge: deleting only what the table owns; OPTIMIZE and DELETE: rewriting parts.

Both delete exactly what the plans of :mod:`tsfile_catalog.table.ownership` list, from the part
paths the log says any version added; the rules of what a table owns are pure
(:mod:`tsfile_catalog.metadata.ownership`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from tsfile_catalog.exceptions import OptionError, PredicateError, TableNotFoundError
from tsfile_catalog.formats.tsfile import WriteSettings
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
from tsfile_catalog.metadata.manifest import AddPart, Operation
from tsfile_catalog.metadata.ownership import MANIFEST_DIR
from tsfile_catalog.metadata.schema import TIME_COLUMN
from tsfile_catalog.table import ownership
from tsfile_catalog.table.commits import now_ms
from tsfile_catalog.table.handle import Table, open_table
from tsfile_catalog.table.log import (
    COMMIT_NAME,
    Listing,
    commit_url,
    list_log,
    log_url,
    read_commits,
)
from tsfile_catalog.table.rewrite import (
    Progress,
    RewriteJob,
    read_part_rows,
    remove_matching_rows,
)

__all__ = [
    "DEFAULT_RETENTION_MS",
    "purge",
    "vacuum",
    "OptimizeResult",
    "DeleteResult",
    "optimize",
    "delete",
]

DEFAULT_RETENTION_MS = 7 * 24 * 3600 * 1000


def _ever_added(io: FileIO, location: str, listing: Listing) -> frozenset[str]:
    """Every part path any version added: the table's data files, current or time-travel."""
    if not listing.commits:
        return frozenset()
    return frozenset(
        action.part.path
        for c in read_commits(io, location, listing, 0, listing.latest, None)
        for action in c.actions
        if isinstance(action, AddPart)
    )


def vacuum(
    url: str,
    *,
    dry_run: bool = True,
    retention_ms: int = DEFAULT_RETENTION_MS,
    storage_options: Mapping[str, Any] | None = None,
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
    the result is what a real run with the same arguments would delete.

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
    return found.urls() if dry_run else ownership.delete(io, found)


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
    near the target stay), packed in time order; each group's rows are read through the
    shared read path and written, sorted by device then time, as one new TsFile in this
    process. One commit (operation ``OPTIMIZE``, ``data_change`` false) removes the old parts
    and adds the new ones; the old files stay for time travel until VACUUM. Concurrent
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
            stored write options); default LZ4 and the per-type default encodings.
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
    with RewriteJob(table, settings) as job:
        total = len(compaction.groups)
        for done, group in enumerate(compaction.groups, start=1):
            rows = pa.concat_tables([read_part_rows(table, p) for p in group.parts])
            job.write(rows)
            if progress is not None:
                progress(done, total)
        removed = compaction.rewritten
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
