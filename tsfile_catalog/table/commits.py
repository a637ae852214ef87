"""Committing to a table: the optimistic commit loop and the commits of writes and DDL.

A commit is a list of actions prepared against the snapshot it read; the next commit file is
created with put-if-absent, and when another writer got that version first the pure
:func:`~tsfile_catalog.metadata.manifest.rebase` decides whether it still applies. Every
:data:`~tsfile_catalog.table.log.CHECKPOINT_INTERVAL` commits a checkpoint follows.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import random
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from tsfile_catalog.exceptions import (
    AlreadyCommittedError,
    CommitConflictError,
    CorruptManifestError,
    InvalidCommitError,
    StorageError,
    TableNotFoundError,
)
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.completeness import check_table_properties
from tsfile_catalog.metadata.key import new_table_properties
from tsfile_catalog.metadata.manifest import (
    Action,
    AddPart,
    Commit,
    Operation,
    RemovePart,
    SetProperties,
    SetSchema,
    Snapshot,
    StreamTxn,
    already_committed,
    apply,
    encode_commit,
    prepare_commit,
    rebase,
    replay,
    row_change_footprint,
)
from tsfile_catalog.metadata.parts import PartFile, validate_relative_path
from tsfile_catalog.metadata.schema import TableSchema
from tsfile_catalog.metadata.schema_merge import merge_schema as _merge_schema
from tsfile_catalog.metadata.table_time import check_time_change, written_properties
from tsfile_catalog.table.cache import CACHE, current_identity
from tsfile_catalog.table.log import (
    CHECKPOINT_INTERVAL,
    commit_url,
    list_log,
    read_commits,
    write_checkpoint,
)
from tsfile_catalog.table.purge import check_landed, drop_checkpoint_if_purged
from tsfile_catalog.table.snapshots import load_snapshot

__all__ = [
    "ENGINE_INFO",
    "MAX_COMMIT_ATTEMPTS",
    "append_parts",
    "commit",
    "latest_or_none",
    "now_ms",
    "set_properties",
]

# Every lost race means another writer committed (the table moves on), so the bound only
# stops a writer starved for very long; 8 writers x 25 appends on S3 lost 20 in a row.
MAX_COMMIT_ATTEMPTS = 100

_log = logging.getLogger(__name__)


def _engine_info() -> str:
    try:
        return f"tsfile-catalog/{importlib.metadata.version('tsfile-catalog')}"
    except importlib.metadata.PackageNotFoundError:
        return "tsfile-catalog"


ENGINE_INFO = _engine_info()


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def commit(
    io: FileIO,
    table_url: str,
    actions: Sequence[Action],
    *,
    read: Snapshot | None,
    operation: Operation,
    operation_parameters: Mapping[str, str] | None = None,
    overwrite: bool = False,
    max_attempts: int = MAX_COMMIT_ATTEMPTS,
    data_change: bool = True,
    complete_until: int | None = None,
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
        CommitConflictError: a concurrent commit conflicts, or ``max_attempts`` lost races,
            or ``read`` belongs to another table than the one at ``table_url`` now (it was
            dropped and recreated): nothing read from the old table is committed to the new.
        InvalidCommitError: the actions do not fit the table (a part added twice, ...).
    """
    location = io.normalize(table_url)
    if read is not None:
        _check_base(io, location, read)
    return _commit(
        io,
        location,
        actions,
        read=read,
        operation=operation,
        operation_parameters=operation_parameters,
        overwrite=overwrite,
        max_attempts=max_attempts,
        data_change=data_change,
        complete_until=complete_until,
    )


def _check_base(io: FileIO, location: str, read: Snapshot) -> None:
    """Refuse a commit prepared against another table than the one at ``location`` now.

    Without this, version ``read.version + 1`` of a recreated table may well be free, and
    the commit (say an overwrite removing the old table's parts) would land in a log it
    does not belong to.
    """
    current = current_identity(io, location)
    if current is None:
        raise CommitConflictError(
            f"commit to table {location} refused: the table it was prepared against (table "
            f"{read.table_uuid}, version {read.version}) is no longer there"
        )
    if current != read.table_uuid:
        raise CommitConflictError(
            f"commit to table {location} refused: it was prepared against table "
            f"{read.table_uuid} (version {read.version}), but the table there now is "
            f"{current} (dropped and recreated); nothing was committed: retry against the new "
            "table"
        )


def _commit(
    io: FileIO,
    location: str,
    actions: Sequence[Action],
    *,
    read: Snapshot | None,
    operation: Operation,
    operation_parameters: Mapping[str, str] | None,
    overwrite: bool,
    max_attempts: int = MAX_COMMIT_ATTEMPTS,
    data_change: bool = True,
    complete_until: int | None = None,
    txn: StreamTxn | None = None,
) -> Snapshot:
    """:func:`commit` once ``read`` is known to belong to the table at ``location``."""
    base = read
    pending = tuple(actions)
    # One identity for every attempt to create the table (the lost-response check compares
    # bytes); a creation that loses the race takes the winner's from the rebased base.
    new_table_uuid = str(uuid.uuid4())
    for attempt in range(max_attempts):
        draft = prepare_commit(
            pending,
            base=base,
            timestamp_ms=now_ms(),
            operation=operation,
            operation_parameters=operation_parameters,
            engine_info=ENGINE_INFO,
            read_version=None if read is None else read.version,
            new_table_uuid=new_table_uuid,
            data_change=data_change,
            complete_until=complete_until,
            txn=txn,
        )
        try:
            snapshot = apply(base, draft)
        except CorruptManifestError as e:
            raise InvalidCommitError(f"cannot commit to table {location}: {e}") from e
        data = encode_commit(draft, None if base is None else base.schema)
        url = commit_url(location, draft.version)
        try:
            io.create_exclusive(url, data)
        except (FileExistsError, StorageError) as e:
            # A store may retry a conditional PUT whose first response was lost; the retry
            # then fails against our own file, which must count as success, not a conflict.
            # A failure may equally have lost only the response: the commit is there (a
            # caller told otherwise would retry and write its rows twice).
            if _landed(io, url, e) == data:
                check_landed(io, location, url, snapshot)
                _after_commit(io, location, snapshot)
                return snapshot
            time.sleep(random.uniform(0, min(1.0, 0.005 * 2**attempt)))
            landed = _landed_since(io, location, base)
            try:
                # A row change's rows, computed only when a race is lost (rare, and a DELETE
                # may remove many parts).
                footprint = None if overwrite else row_change_footprint(pending, read, operation)
                pending = rebase(
                    pending, landed, read=base, overwrite=overwrite, txn=txn, footprint=footprint
                )
            except AlreadyCommittedError:
                raise  # not a failure: the caller skips the batch
            except CommitConflictError as e:
                raise CommitConflictError(f"commit to table {location} failed: {e}") from e
            if landed:
                base = replay(base, landed)
            continue
        check_landed(io, location, url, snapshot)
        _after_commit(io, location, snapshot)
        return snapshot
    raise CommitConflictError(
        f"commit to table {location} lost the race for a version {max_attempts} times; "
        "too many concurrent writers"
    )


def _landed(io: FileIO, url: str, error: FileExistsError | StorageError) -> bytes | None:
    """What the commit file ``url`` holds after creating it failed with ``error``; when
    nothing (a StorageError), that ``error`` is the answer: the commit did not happen."""
    try:
        found = _read_or_none(io, url)
    except StorageError as unknown:
        if isinstance(error, FileExistsError):
            raise
        raise StorageError(
            f"{error}; whether the commit landed is unknown, as reading it back failed too "
            f"({unknown}): check the table's history before retrying"
        ) from error
    if found is None and isinstance(error, StorageError):
        raise error
    return found


def _read_or_none(io: FileIO, url: str) -> bytes | None:
    try:
        return io.read_bytes(url)
    except FileNotFoundError:
        return None


def _landed_since(io: FileIO, location: str, base: Snapshot | None) -> list[Commit]:
    listing = list_log(io, location)
    start = 0 if base is None else base.version + 1
    if not listing.commits or listing.latest < start:
        return []
    return read_commits(
        io, location, listing, start, listing.latest, None if base is None else base.schema
    )


def _after_commit(io: FileIO, location: str, snapshot: Snapshot) -> None:
    # A new table (version 0) replaces the entries of one that was here before.
    CACHE.put(location, snapshot)
    if snapshot.version == 0 or snapshot.version % CHECKPOINT_INTERVAL:
        return
    # The commit is durable already; a failed checkpoint only makes later loads replay more
    # commits, so it must not surface as a failed write (the caller would retry and duplicate).
    try:
        write_checkpoint(io, location, snapshot)
        drop_checkpoint_if_purged(io, location, snapshot.version)
    except OSError as e:
        _log.warning("could not write checkpoint %d of %s: %s", snapshot.version, location, e)


def latest_or_none(io: FileIO, location: str) -> Snapshot | None:
    listing = list_log(io, location)
    if not listing.commits:
        return None
    return load_snapshot(io, location, listing, listing.latest, use_cache=True)


def append_parts(
    table_url: str,
    parts: Sequence[PartFile],
    incoming_schema: TableSchema,
    *,
    merge_schema: bool = False,
    overwrite: bool = False,
    operation: Operation | None = None,
    operation_parameters: Mapping[str, str] | None = None,
    properties: Mapping[str, str] | None = None,
    storage_options: Mapping[str, Any] | None = None,
    expected_table_uuid: str | None = None,
    complete_until: int | None = None,
    txn: StreamTxn | None = None,
    statement_properties: Mapping[str, str] | None = None,
) -> int:
    """Commit already-written part files to the table, creating it when there is none.

    Called once per write, on the driver, after every task has written its parts. Without a
    table, version 0 sets ``incoming_schema`` and ``properties`` and adds the parts.
    Otherwise the schema is merged (:func:`~tsfile_catalog.metadata.schema_merge.merge_schema`)
    and the parts appended; ``overwrite`` also removes every current part (the files stay
    for time travel until :func:`~tsfile_catalog.table.vacuum`).

    Args:
        parts: paths relative to the table root; their ``added_version`` and ``schema_id``
            are assigned by the commit.
        operation: the history entry's operation; defaults to :attr:`Operation.WRITE` /
            :attr:`Operation.OVERWRITE` (``ADOPT`` registers existing files,
            ``SET_TBLPROPERTIES`` a commit that only changes properties).
        properties: table properties to set (on creation, or changed ones afterwards).
        expected_table_uuid: the table the parts were prepared for (a writer's plan): if the
            location no longer holds it (dropped, maybe recreated), nothing is committed.
        complete_until: the writer declares every row with time < this value (raw units)
            committed (recorded in the commit's info; streams turn it into a watermark).
        txn: the streaming query and micro-batch the parts are (the sink's exactly-once
            record): a batch the table already holds is not committed again.
        statement_properties: a CREATE or REPLACE TABLE ... AS SELECT's TBLPROPERTIES, set
            in this commit (:func:`written_properties`): a statement is one commit.

    Returns:
        The committed version.

    Raises:
        AlreadyCommittedError: ``txn``'s batch is already in the table; nothing committed.
        SchemaMismatchError: the incoming schema does not fit the table's.
        CommitConflictError: a concurrent commit conflicts (see ``docs/manifest-format.md``),
            or the table is not ``expected_table_uuid`` any more.
        InvalidCommitError: a part path is invalid or already in the table.
    """
    stated = dict(statement_properties or {})
    check_table_properties({**(properties or {}), **stated})
    for part in parts:
        try:
            validate_relative_path(part.path)
        except CorruptManifestError as e:
            raise InvalidCommitError(str(e)) from e
    io = FileIO(table_url, storage_options)
    location = io.normalize(table_url)
    read = latest_or_none(io, location)
    if expected_table_uuid is not None and (read is None or read.table_uuid != expected_table_uuid):
        now = "no table" if read is None else f"table {read.table_uuid}"
        raise CommitConflictError(
            f"commit to table {location} refused: the write was prepared against table "
            f"{expected_table_uuid}, but the location holds {now} now (dropped and recreated "
            "while it ran); nothing was committed: retry the write"
        )
    if txn is not None and read is not None and already_committed(read.transactions, txn):
        raise AlreadyCommittedError(
            f"batch {txn.version} of streaming query {txn.app_id} is already in table "
            f"{location} (it holds batch {read.transactions[txn.app_id].version}); not "
            "committed again"
        )
    actions: list[Action] = []
    if read is None:
        actions.append(SetSchema(incoming_schema, 0))
        written = written_properties(None, properties or {}, stated, table=location)
        actions.append(SetProperties(new_table_properties(written)))
    else:
        schema = _merge_schema(read.schema, incoming_schema, merge=merge_schema)
        if schema != read.schema:
            actions.append(SetSchema(schema, read.schema_id + 1))
        changed = written_properties(read.properties, properties or {}, stated, table=location)
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
    # ``read`` was just loaded from this location's listing (its identity checked there).
    snapshot = _commit(
        io,
        location,
        actions,
        read=read,
        operation=operation or (Operation.OVERWRITE if overwrite else Operation.WRITE),
        operation_parameters=parameters,
        overwrite=overwrite,
        complete_until=complete_until,
        txn=txn,
    )
    return snapshot.version


def set_properties(
    table_url: str,
    properties: Mapping[str, str],
    *,
    storage_options: Mapping[str, Any] | None = None,
) -> int:
    """Set table properties (SQL ``ALTER TABLE … SET TBLPROPERTIES``) in one commit.

    A commit of its own kind, with only the properties that change: no parts are added, and
    no data changes (a stream reading the table sees nothing new).

    Returns:
        The committed version.

    Raises:
        TableNotFoundError: there is no table at ``table_url``.
        InvalidCommitError: a property is invalid (see ``check_table_properties``).
    """
    check_table_properties(properties)
    io = FileIO(table_url, storage_options)
    location = io.normalize(table_url)
    read = latest_or_none(io, location)
    if read is None:
        raise TableNotFoundError(f"no table at {location}")
    # Committed even when nothing changes, as Delta does: the history records the statement.
    changed = {k: v for k, v in properties.items() if read.properties.get(k) != v}
    check_time_change(read.properties, changed, table=location)
    snapshot = _commit(
        io,
        location,
        [SetProperties(changed)] if changed else [],
        read=read,
        operation=Operation.SET_TBLPROPERTIES,
        operation_parameters={"properties": json.dumps(dict(properties), sort_keys=True)},
        overwrite=False,
        data_change=False,
    )
    return snapshot.version
