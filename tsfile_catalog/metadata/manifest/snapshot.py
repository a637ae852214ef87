"""Commits applied to snapshots: stamping a commit after its base, and replaying the log.

:func:`prepare_commit` turns a list of actions into the commit right after a snapshot;
:func:`apply` and :func:`replay` are the pure functions from (snapshot, commits) to the next
snapshot (pyiceberg's ``update_table_metadata``). Storage lives in ``tsfile_catalog.table``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence

from tsfile_catalog.exceptions import CorruptManifestError
from tsfile_catalog.metadata.manifest.model import (
    Action,
    AddPart,
    Commit,
    CommitInfo,
    Operation,
    RemovePart,
    RemoveProperties,
    SetSchema,
    Snapshot,
    StreamTxn,
)
from tsfile_catalog.metadata.part_list import PartList, part_positions
from tsfile_catalog.metadata.parts import PartEntry, PartFile, PendingPart
from tsfile_catalog.metadata.schema import evolve

__all__ = ["prepare_commit", "apply", "replay"]


def prepare_commit(
    actions: Sequence[Action],
    *,
    base: Snapshot | None,
    timestamp_ms: int,
    operation: Operation,
    operation_parameters: Mapping[str, str] | None = None,
    engine_info: str = "",
    read_version: int | None = None,
    new_table_uuid: str | None = None,
    data_change: bool = True,
    complete_until: int | None = None,
    txn: StreamTxn | None = None,
) -> Commit:
    """Stamp ``actions`` as the commit right after ``base``.

    Assigns the version, schema ids (one past ``base``'s) and each added part's
    ``added_version``/``schema_id``, and counts parts and rows for the :class:`CommitInfo`.
    The timestamp is raised to one past ``base``'s so the log stays strictly increasing even
    when writers' clocks disagree. The commit carries ``base.table_uuid``; without a base it
    creates a table, identified by ``new_table_uuid`` (a random UUID when omitted).
    """
    if base is not None:
        table_uuid = base.table_uuid
    else:
        table_uuid = str(uuid.UUID(new_table_uuid)) if new_table_uuid else str(uuid.uuid4())
    version = 0 if base is None else base.version + 1
    schema_id = 0 if base is None else base.schema_id
    schema_seen = False
    current = None if base is None else base.schema
    stamped: list[Action] = []
    for action in actions:
        if isinstance(action, SetSchema):
            schema_id = schema_id + 1 if (base is not None or schema_seen) else 0
            schema_seen = True
            # Ids kept and given, dropped columns recorded: whatever built the schema. A new
            # column is never given a physical name here other than its name, which its parts
            # were staged under (evolve refuses when that name is taken).
            current = evolve(action.schema, current, fresh_names=False)
            stamped.append(SetSchema(current, schema_id))
        else:
            stamped.append(action)
    stamped = [
        AddPart(a.part.with_version(version, schema_id)) if isinstance(a, AddPart) else a
        for a in stamped
    ]
    added = [a.part for a in stamped if isinstance(a, AddPart)]
    removed = [a for a in stamped if isinstance(a, RemovePart)]
    info = CommitInfo(
        version=version,
        timestamp_ms=timestamp_ms if base is None else max(timestamp_ms, base.timestamp_ms + 1),
        operation=operation,
        operation_parameters=dict(operation_parameters or {}),
        engine_info=engine_info,
        read_version=read_version,
        parts_added=len(added),
        rows_added=sum(p.row_count for p in added),
        parts_removed=len(removed),
        rows_removed=sum(r.row_count for r in removed),
        data_change=data_change,
        complete_until=complete_until,
        txn=txn,
    )
    return Commit(info, tuple(stamped), table_uuid)


def apply(previous: Snapshot | None, commit: Commit) -> Snapshot:
    """The snapshot after ``commit``; ``previous`` is None for version 0.

    Raises:
        CorruptManifestError: the commit does not follow ``previous`` (wrong version, adds a
            part twice, removes a missing part, version 0 without a schema, another table's
            UUID).
    """
    return replay(previous, (commit,))


def replay(previous: Snapshot | None, commits: Iterable[Commit]) -> Snapshot:
    """Apply consecutive commits in one pass (one part index, however many commits).

    Every commit must belong to the table of ``previous`` (or of version 0): a log that
    mixes two tables' commits (one dropped and recreated while it was being read) is
    corrupt, never merged.
    """
    before: Sequence[PartFile] = () if previous is None else previous.parts
    commits = list(commits)
    # Positions of the parts before that the commits name, by path (looked up in a
    # checkpoint's columns, so no part is built and the other paths are never listed), the
    # positions removed since, and the parts added since, in order (as read: a part of a
    # commit file is built when first used).
    position = part_positions(before, _named_paths(commits))
    removed: set[int] = set()
    added: dict[str, PartEntry] = {}
    schema = None if previous is None else previous.schema
    schema_id = 0 if previous is None else previous.schema_id
    properties = {} if previous is None else dict(previous.properties)
    version = -1 if previous is None else previous.version
    timestamp_ms = 0 if previous is None else previous.timestamp_ms
    table_uuid = None if previous is None else previous.table_uuid
    transactions = {} if previous is None else dict(previous.transactions)
    complete_until = None if previous is None else previous.complete_until
    for commit in commits:
        if commit.version != version + 1:
            raise CorruptManifestError(
                f"commit for version {commit.version} follows version {version}; expected "
                f"version {version + 1}"
            )
        if table_uuid is None:
            table_uuid = commit.table_uuid
            if table_uuid is None:
                raise CorruptManifestError(
                    f"version {commit.version} creates the table without a table UUID"
                )
        elif commit.table_uuid is not None and commit.table_uuid != table_uuid:
            raise CorruptManifestError(
                f"version {commit.version} belongs to table {commit.table_uuid}, not to table "
                f"{table_uuid} like the versions before it (was the table dropped and "
                "recreated while it was being read?)"
            )
        version, timestamp_ms = commit.version, commit.info.timestamp_ms
        if commit.info.txn is not None:
            transactions[commit.info.txn.app_id] = commit.info.txn
        complete_until = _later_declaration(complete_until, commit.info.complete_until)
        for action in commit.actions:
            if isinstance(action, AddPart):
                path = action.path
                at = position.get(path)
                if path in added or (at is not None and at not in removed):
                    raise CorruptManifestError(
                        f"version {version} adds part '{path}', which the table already has"
                    )
                added[path] = action.entry
            elif isinstance(action, RemovePart):
                at = position.get(action.path)
                if action.path in added:
                    del added[action.path]
                elif at is not None and at not in removed:
                    removed.add(at)
                else:
                    raise CorruptManifestError(
                        f"version {version} removes part '{action.path}', which the table "
                        "does not have"
                    )
            elif isinstance(action, SetSchema):
                schema, schema_id = action.schema, action.schema_id
            elif isinstance(action, RemoveProperties):
                for key in action.keys:
                    properties.pop(key, None)
            else:
                properties.update(action.properties)
        if schema is None:
            raise CorruptManifestError(f"version {version} creates the table without a schema")
    if schema is None or table_uuid is None:
        raise CorruptManifestError("no commits to build a table snapshot from")
    return Snapshot(
        version=version,
        timestamp_ms=timestamp_ms,
        schema=schema,
        schema_id=schema_id,
        parts=_remaining(before, removed, tuple(added.values())),
        properties=properties,
        table_uuid=table_uuid,
        transactions=transactions,
        complete_until=complete_until,
    )


def _named_paths(commits: Iterable[Commit]) -> set[str]:
    """The paths ``commits`` add or remove."""
    named: set[str] = set()
    for commit in commits:
        for action in commit.actions:
            if isinstance(action, AddPart):
                named.add(action.path)
            elif isinstance(action, RemovePart):
                named.add(action.path)
    return named


def _remaining(
    before: Sequence[PartFile], removed: set[int], added: tuple[PartEntry, ...]
) -> Sequence[PartFile]:
    """``before`` without the parts at ``removed``, then ``added``: still unbuilt parts stay
    so (a :class:`PartList`), built parts stay a tuple."""
    if isinstance(before, PartList):
        return before.without(removed, added)
    kept = before if not removed else [p for i, p in enumerate(before) if i not in removed]
    if any(isinstance(p, PendingPart) for p in added):
        return PartList(None, (), (*kept, *added))
    return (*kept, *(p for p in added if isinstance(p, PartFile)))


def _later_declaration(held: int | None, declared: int | None) -> int | None:
    """Completeness only grows: the larger of two declarations (None: none made)."""
    if declared is None:
        return held
    return declared if held is None else max(held, declared)
