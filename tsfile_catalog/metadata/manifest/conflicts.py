"""Concurrent commits: whether a commit prepared against an older snapshot still applies.

:func:`rebase` is the pure conflict check of the optimistic commit loop (pyiceberg's
``update/validate.py``): it decides from the landed commits alone, without storage, whether
the pending actions can go on top, and explains any conflict it finds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from tsfile_catalog.exceptions import AlreadyCommittedError, CommitConflictError
from tsfile_catalog.metadata.manifest.footprint import RowFootprint
from tsfile_catalog.metadata.manifest.model import (
    Action,
    AddPart,
    Commit,
    RemovePart,
    RemoveProperties,
    SetProperties,
    SetSchema,
    Snapshot,
    StreamTxn,
)
from tsfile_catalog.metadata.manifest.snapshot import replay
from tsfile_catalog.metadata.part_list import part_positions
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import TableSchema

__all__ = ["already_committed", "foreign_commit", "rebase"]


def already_committed(transactions: Mapping[str, StreamTxn], txn: StreamTxn) -> bool:
    """Whether the batch ``txn`` names is in a table whose recorded progress is
    ``transactions`` (batch ids only grow, so any recorded id at or above it)."""
    recorded = transactions.get(txn.app_id)
    return recorded is not None and recorded.version >= txn.version


def foreign_commit(table_uuid: str, commits: Iterable[Commit]) -> Commit | None:
    """The first of ``commits`` that records another table's UUID, if any (commits written
    before table UUIDs record none and cannot be told apart)."""
    return next(
        (c for c in commits if c.table_uuid is not None and c.table_uuid != table_uuid), None
    )


def rebase(
    pending: Sequence[Action],
    landed: Sequence[Commit],
    *,
    read: Snapshot | None,
    overwrite: bool = False,
    txn: StreamTxn | None = None,
    footprint: RowFootprint | None = None,
) -> tuple[Action, ...]:
    """Decide whether ``pending`` (prepared against ``read``) still applies after ``landed``.

    Returns the actions to commit on top of the newest landed commit. The rules:

    * Appends commute: adding parts never conflicts with other adds or removes, unless the
      very same path was added concurrently.
    * A schema change that landed conflicts with any pending commit that expected another
      schema (its own new schema, else the schema it read); if the landed schema equals the
      pending one (two writers merging the same column), the pending schema change is
      dropped as already done.
    * A pending commit made against no table (it creates the table) is rebased as an append
      when a concurrent creator used the same schema and it adds parts; a pure create
      (``CREATE TABLE``) conflicts.
    * Removing a part that a landed commit already removed conflicts.
    * An overwrite (``overwrite=True``) conflicts with any landed commit that added or removed
      parts: it must replace exactly the parts it read, so a concurrent append would
      otherwise survive it silently.
    * Setting a property that a landed commit set to another value conflicts.
    * A landed commit of another table (the table was dropped and recreated at its location)
      conflicts: nothing read from the old table may be committed to the new one.
    * A streaming micro-batch (``txn``) that a landed commit already holds (the same query
      id, a batch id at or above it: two runs of one batch racing) is not committed again.
    * A row change (``footprint``: the rows an UPDATE, MERGE, DELETE or overwrite by
      condition read and wrote) conflicts with any landed commit that changed rows
      (``data_change``) and added or removed a part holding rows of its footprint
      (:mod:`~tsfile_catalog.metadata.manifest.footprint`): Serializable for row changes,
      while appends commute (WriteSerializable).

    Raises:
        CommitConflictError: explaining which landed version conflicts and why.
        AlreadyCommittedError: ``txn``'s batch landed meanwhile (a CommitConflictError).
    """
    if not landed:
        return tuple(pending)
    _check_txn(txn, landed)
    if footprint:
        _check_footprint(footprint, landed, read)
    expected = read.table_uuid if read is not None else landed[0].table_uuid
    foreign = None if expected is None else foreign_commit(expected, landed)
    if foreign is not None:
        raise CommitConflictError(
            f"the table was dropped and recreated concurrently: version {foreign.version} "
            f"({foreign.info.operation}) belongs to table {foreign.table_uuid}, but this commit "
            f"was prepared against table {expected}; retry against the new table"
        )
    pending_schema = next((a.schema for a in reversed(pending) if isinstance(a, SetSchema)), None)
    target = pending_schema if pending_schema is not None else _schema_of(read)
    after = replay(read, landed)
    adds = {a.part.path for a in pending if isinstance(a, AddPart)}
    removes = {a.path for a in pending if isinstance(a, RemovePart)}
    props = {k: v for a in pending if isinstance(a, SetProperties) for k, v in a.properties.items()}
    unset = {k for a in pending if isinstance(a, RemoveProperties) for k in a.keys}

    if read is None:
        first = landed[0]
        if not adds:
            raise CommitConflictError(
                f"the table was created concurrently (version 0, {first.info.operation})"
            )
        if target != after.schema:
            raise CommitConflictError(
                f"the table was created concurrently (version 0, {first.info.operation}) with "
                f"schema {_describe(after.schema)}, not {_describe(target)}; retry the write"
            )

    for commit in landed:
        where = f"version {commit.version} ({commit.info.operation})"
        new_schema = commit.new_schema()
        if read is not None and new_schema is not None and not _same(after.schema, target):
            raise CommitConflictError(
                f"{where} changed the table schema concurrently "
                f"({_describe_change(target, after.schema)}); this commit was prepared against "
                "another schema: retry the write"
            )
        for action in commit.actions:
            if isinstance(action, AddPart):
                if overwrite:
                    raise CommitConflictError(
                        f"{where} added parts concurrently; an overwrite must replace exactly "
                        "the parts it read: retry the overwrite"
                    )
                if action.part.path in adds:
                    raise CommitConflictError(
                        f"part '{action.part.path}' was already added by {where}"
                    )
            elif isinstance(action, RemovePart):
                if action.path in removes:
                    raise CommitConflictError(
                        f"part '{action.path}' was already removed by {where}"
                    )
                if overwrite:
                    raise CommitConflictError(
                        f"{where} removed parts concurrently; an overwrite must replace "
                        "exactly the parts it read: retry the overwrite"
                    )
            elif isinstance(action, SetProperties):
                for key, value in action.properties.items():
                    if key in props and props[key] != value:
                        raise CommitConflictError(
                            f"{where} set table property '{key}' to '{value}' concurrently "
                            f"(this commit sets '{props[key]}')"
                        )
                    if key in unset:
                        raise CommitConflictError(
                            f"{where} set table property '{key}' to '{value}' concurrently "
                            "(this commit unsets it)"
                        )
            elif isinstance(action, RemoveProperties):
                for key in action.keys:
                    if key in props:
                        raise CommitConflictError(
                            f"{where} unset table property '{key}' concurrently (this commit "
                            f"sets it to '{props[key]}')"
                        )

    if pending_schema is not None and pending_schema.same_mapping(after.schema):
        return tuple(a for a in pending if not isinstance(a, SetSchema))
    return tuple(pending)


def _check_txn(txn: StreamTxn | None, landed: Sequence[Commit]) -> None:
    if txn is None:
        return
    for commit in landed:
        other = commit.info.txn
        if other is not None and already_committed({other.app_id: other}, txn):
            raise AlreadyCommittedError(
                f"batch {txn.version} of streaming query {txn.app_id} is already in the table "
                f"(version {commit.version} holds batch {other.version}); not committed again"
            )


def _check_footprint(
    footprint: RowFootprint, landed: Sequence[Commit], read: Snapshot | None
) -> None:
    """Refuse when a landed commit that changed rows added or removed a part touching
    ``footprint``."""
    changing = [c for c in landed if c.info.data_change]
    if not changing:
        return
    removed_paths = {a.path for c in changing for a in c.actions if isinstance(a, RemovePart)}
    # The parts those commits removed, with their statistics: from the version read, or
    # added by an earlier landed commit.
    known: dict[str, PartFile] = {}
    if removed_paths and read is not None:
        for path, position in part_positions(read.parts, removed_paths).items():
            known[path] = read.parts[position]
    for commit in landed:
        tag_names = None
        for action in commit.actions:
            if isinstance(action, AddPart):
                known.setdefault(action.part.path, action.part)
            if not commit.info.data_change:
                continue
            if isinstance(action, AddPart):
                part: PartFile | None = action.part
                verb = "added"
            elif isinstance(action, RemovePart):
                part = known.get(action.path)
                verb = "removed"
            else:
                continue
            if part is None:
                continue  # removed before this commit's read version: none of its rows
            touch = footprint.touched_by(part)
            if touch is None:
                continue
            if tag_names is None:
                schema = commit.new_schema() or _schema_of(read)
                tag_names = [] if schema is None else list(schema.tag_names)
            raise CommitConflictError(
                f"version {commit.version} ({commit.info.operation}) {verb} "
                f"{touch.describe(tag_names)} that this row change read or writes, after the "
                f"version it read ({'none' if read is None else read.version}); retry the "
                "statement"
            )


def _same(schema: TableSchema, target: TableSchema | None) -> bool:
    """The same columns under the same physical names: parts staged for ``target`` are
    read right under ``schema``."""
    return target is not None and schema.same_mapping(target)


def _schema_of(snapshot: Snapshot | None) -> TableSchema | None:
    return None if snapshot is None else snapshot.schema


def _describe(schema: TableSchema | None) -> str:
    if schema is None:
        return "(none)"
    cols = ", ".join(f"{c.name} {c.type.value} {c.category.value}" for c in schema.columns)
    return f"{schema.table}({cols})"


def _describe_change(before: TableSchema | None, after: TableSchema) -> str:
    if before is None:
        return f"now {_describe(after)}"
    changes = []
    for col in after.columns:
        old = before.column(col.name)
        if old is None:
            changes.append(f"added column '{col.name}' {col.type.value}")
        elif old != col:
            changes.append(
                f"column '{col.name}' {old.type.value} {old.category.value} -> "
                f"{col.type.value} {col.category.value}"
            )
    changes.extend(
        f"dropped column '{c.name}'" for c in before.columns if after.column(c.name) is None
    )
    if not changes and before.display_names != after.display_names:
        changes.append(f"columns moved: now {', '.join(after.display_names)}")
    return "; ".join(changes) or f"now {_describe(after)}"
