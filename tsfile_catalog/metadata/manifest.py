"""The table manifest model: commits as data, snapshots, and the pure conflict check.

A table's history is a sequence of commits, version 0, 1, 2, ... Each commit is a list of
actions (add a part, remove a part, set the schema, set properties) plus a
:class:`CommitInfo` describing it. :func:`replay` applies commits to the previous
:class:`Snapshot`; :func:`rebase` decides whether a commit prepared against an older snapshot
can still be applied after other commits landed. Storage (put-if-absent, listing) lives in
``tsfile_catalog.table``; nothing here touches it. ``docs/manifest-format.md`` describes the
on-disk JSON.
"""

from __future__ import annotations

import enum
import hashlib
import json
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeAlias

from tsfile_catalog.exceptions import (
    AlreadyCommittedError,
    CommitConflictError,
    CorruptManifestError,
    TsFileCatalogError,
)
from tsfile_catalog.metadata.gc_pause import gc_paused
from tsfile_catalog.metadata.part_list import PartList, has_external, part_paths
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import DataType, TableSchema

__all__ = [
    "FORMAT_VERSION",
    "BASE_FORMAT_VERSION",
    "written_format_version",
    "AddPart",
    "RemovePart",
    "SetSchema",
    "SetProperties",
    "Action",
    "Operation",
    "CommitInfo",
    "StreamTxn",
    "already_committed",
    "Commit",
    "Snapshot",
    "derived_table_uuid",
    "foreign_commit",
    "apply",
    "replay",
    "prepare_commit",
    "rebase",
    "encode_commit",
    "decode_commit",
    "decode_commit_info",
    "commit_table_uuid",
    "encode_snapshot",
    "decode_snapshot",
]

FORMAT_VERSION = 2
# What a file is written with when it records no external part: version 1 readers read such
# files exactly as before, so only files that would mislead them (an external part's absolute
# path and foreign format) carry version 2 and make them stop with "upgrade tsfile-catalog".
BASE_FORMAT_VERSION = 1


def written_format_version(parts: Iterable[PartFile]) -> int:
    """The ``format_version`` a commit or checkpoint recording ``parts`` is written with."""
    return FORMAT_VERSION if has_external(parts) else BASE_FORMAT_VERSION


# Names the UUIDs derived for tables written before table UUIDs (see derived_table_uuid).
_DERIVED_UUID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "tsfile-catalog:table_uuid")


@dataclass(frozen=True, slots=True)
class AddPart:
    part: PartFile


@dataclass(frozen=True, slots=True)
class RemovePart:
    """Drop a part from the table; the file stays on storage for time travel."""

    path: str
    row_count: int = 0
    size_bytes: int = 0


@dataclass(frozen=True, slots=True)
class SetSchema:
    schema: TableSchema
    schema_id: int


@dataclass(frozen=True, slots=True)
class SetProperties:
    """Set (insert or overwrite) the given table properties; others are kept."""

    properties: Mapping[str, str]


Action: TypeAlias = AddPart | RemovePart | SetSchema | SetProperties


class Operation(str, enum.Enum):
    """What a commit did: the ``operation`` of its history entry.

    The values are the strings stored in commit files, so they never change.
    """

    CREATE = "CREATE"
    WRITE = "WRITE"
    OVERWRITE = "OVERWRITE"
    ADOPT = "ADOPT"
    SET_TBLPROPERTIES = "SET TBLPROPERTIES"
    ADD_PART = "ADD PART"
    DROP_PART = "DROP PART"
    # Table maintenance and schema evolution (Delta's names for the same commits).
    RESTORE = "RESTORE"
    ADD_COLUMNS = "ADD COLUMNS"
    CHANGE_COLUMN = "CHANGE COLUMN"
    # Issue 13 (rewrite): compaction, deletes. OPTIMIZE commits carry data_change=False.
    OPTIMIZE = "OPTIMIZE"
    DELETE = "DELETE"
    # Issue 11: one micro-batch of a streaming query (Delta's name).
    STREAMING_UPDATE = "STREAMING UPDATE"

    def __str__(self) -> str:
        # Messages and f-strings show the stored string, as for a plain str (Python 3.11+
        # would otherwise show "Operation.WRITE").
        return self.value


@dataclass(frozen=True, slots=True)
class StreamTxn:
    """A streaming sink's progress, recorded in its commits (Delta's ``txn`` action).

    ``app_id`` is the streaming query's id (stable across restarts from its checkpoint) and
    ``version`` the id of the micro-batch the commit holds: a batch whose ``version`` is not
    above the table's recorded one for ``app_id`` is already in the table. ``max_time`` is
    the greatest ``time`` (raw units) of every batch the query committed, so the sink's
    completeness declaration (``completeUntilDelay``) survives restarts and never goes back.
    """

    app_id: str
    version: int
    max_time: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"app_id": self.app_id, "version": self.version}
        if self.max_time is not None:
            out["max_time"] = self.max_time
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> StreamTxn:
        app_id = obj["app_id"]
        if not isinstance(app_id, str) or not app_id:
            raise ValueError(f"txn app_id must be a non-empty string, got {app_id!r}")
        version = _optional_int_key(obj, "version")
        if version is None:
            raise ValueError("txn version is missing")
        return cls(app_id, version, _optional_int_key(obj, "max_time"))


def already_committed(transactions: Mapping[str, StreamTxn], txn: StreamTxn) -> bool:
    """Whether the batch ``txn`` names is in a table whose recorded progress is
    ``transactions`` (batch ids only grow, so any recorded id at or above it)."""
    recorded = transactions.get(txn.app_id)
    return recorded is not None and recorded.version >= txn.version


@dataclass(frozen=True)
class CommitInfo:
    """Who did what in one commit; shown by ``Table.history()`` / ``DESCRIBE HISTORY``.

    ``timestamp_ms`` is stored in the commit (not taken from file modification times) and is
    strictly increasing along the log, so time travel by timestamp can binary-search it.
    ``operation`` is an :class:`Operation` when this process made the commit; read back from
    a commit file it is the stored string, kept as written (equal to the :class:`Operation`
    of the same value; a name this release does not know stays readable).
    """

    version: int
    timestamp_ms: int
    operation: str
    operation_parameters: Mapping[str, str] = field(default_factory=dict)
    engine_info: str = ""
    read_version: int | None = None
    parts_added: int = 0
    rows_added: int = 0
    parts_removed: int = 0
    rows_removed: int = 0
    # False when the commit only reorganised rows the table already had (OPTIMIZE): the
    # table's rows are the same before and after, so streams and incremental reads skip it.
    data_change: bool = True
    # The writer's declaration that every row with time < this value (raw time units of the
    # table) is committed as of this commit (issue 11's part watermark); None: no declaration.
    complete_until: int | None = None
    # The streaming query and micro-batch this commit holds (STREAMING UPDATE); None otherwise.
    txn: StreamTxn | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "version": self.version,
            "timestamp_ms": self.timestamp_ms,
            "operation": self.operation,
            "operation_parameters": dict(self.operation_parameters),
            "engine_info": self.engine_info,
            "read_version": self.read_version,
            "parts_added": self.parts_added,
            "rows_added": self.rows_added,
            "parts_removed": self.parts_removed,
            "rows_removed": self.rows_removed,
        }
        # An optional key (docs/manifest-format.md): written only when false, so commits that
        # change data stay byte-identical to earlier releases' and older readers ignore it.
        if not self.data_change:
            out["data_change"] = False
        if self.complete_until is not None:
            out["complete_until"] = self.complete_until
        # Optional like complete_until: readers that do not know it ignore it (no bump).
        if self.txn is not None:
            out["txn"] = self.txn.to_json()
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> CommitInfo:
        read_version = obj.get("read_version")
        return cls(
            version=int(obj["version"]),
            timestamp_ms=int(obj["timestamp_ms"]),
            operation=str(obj["operation"]),
            operation_parameters={
                str(k): str(v) for k, v in (obj.get("operation_parameters") or {}).items()
            },
            engine_info=str(obj.get("engine_info", "")),
            read_version=None if read_version is None else int(read_version),
            parts_added=int(obj.get("parts_added", 0)),
            rows_added=int(obj.get("rows_added", 0)),
            parts_removed=int(obj.get("parts_removed", 0)),
            rows_removed=int(obj.get("rows_removed", 0)),
            data_change=_bool_key(obj, "data_change", default=True),
            complete_until=_optional_int_key(obj, "complete_until"),
            txn=None if obj.get("txn") is None else StreamTxn.from_json(obj["txn"]),
        )


def _optional_int_key(obj: Mapping[str, Any], key: str) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{key} must be an integer, got {value!r}")
    return value


def _bool_key(obj: Mapping[str, Any], key: str, *, default: bool) -> bool:
    value = obj.get(key, default)
    if not isinstance(value, bool):
        raise ValueError(f"{key} must be true or false, got {value!r}")
    return value


@dataclass(frozen=True)
class Commit:
    """One version of the log: its actions, who made it, and the table it belongs to.

    ``table_uuid`` is recorded in every commit (version 0 assigns it), so a commit read after
    a cached or checkpointed snapshot can be checked to belong to the same table. It is None
    only for commits written before table UUIDs existed; version 0 of such a table is given
    :func:`derived_table_uuid` when decoded, so every snapshot has an identity.
    """

    info: CommitInfo
    actions: tuple[Action, ...]
    table_uuid: str | None = None

    @property
    def version(self) -> int:
        return self.info.version

    def new_schema(self) -> TableSchema | None:
        """The schema this commit sets, if it sets one."""
        out = None
        for action in self.actions:
            if isinstance(action, SetSchema):
                out = action.schema
        return out

    def to_json(self, schema: TableSchema | None) -> dict[str, Any]:
        """``schema`` is the table schema before this commit (types of the part stats)."""
        types = _field_types(self.new_schema() or schema)
        added = (a.part for a in self.actions if isinstance(a, AddPart))
        out: dict[str, Any] = {"format_version": written_format_version(added)}
        if self.table_uuid is not None:
            out["table_uuid"] = self.table_uuid
        out["commit_info"] = self.info.to_json()
        out["actions"] = [_action_to_json(a, types) for a in self.actions]
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], schema: TableSchema | None) -> Commit:
        """``schema`` is the table schema before this commit (None before version 0)."""
        _check_format_version(obj)
        raw_actions = obj["actions"]
        for raw in raw_actions:
            if "set_schema" in raw:
                schema = TableSchema.from_json(raw["set_schema"]["schema"])
        types = _field_types(schema)
        return cls(
            info=CommitInfo.from_json(obj["commit_info"]),
            actions=tuple(_action_from_json(raw, types) for raw in raw_actions),
            table_uuid=_recorded_uuid(obj),
        )


def _field_types(schema: TableSchema | None) -> dict[str, DataType]:
    return {} if schema is None else {c.name: c.type for c in schema.fields}


def _action_to_json(action: Action, types: Mapping[str, DataType]) -> dict[str, Any]:
    if isinstance(action, AddPart):
        return {"add": action.part.to_json(types)}
    if isinstance(action, RemovePart):
        return {
            "remove": {
                "path": action.path,
                "row_count": action.row_count,
                "size_bytes": action.size_bytes,
            }
        }
    if isinstance(action, SetSchema):
        return {"set_schema": {"schema_id": action.schema_id, "schema": action.schema.to_json()}}
    return {"set_properties": dict(action.properties)}


def _action_from_json(raw: Mapping[str, Any], types: Mapping[str, DataType]) -> Action:
    if "add" in raw:
        return AddPart(PartFile.from_json(raw["add"], types))
    if "remove" in raw:
        body = raw["remove"]
        return RemovePart(
            path=str(body["path"]),
            row_count=int(body.get("row_count", 0)),
            size_bytes=int(body.get("size_bytes", 0)),
        )
    if "set_schema" in raw:
        body = raw["set_schema"]
        return SetSchema(TableSchema.from_json(body["schema"]), int(body["schema_id"]))
    if "set_properties" in raw:
        return SetProperties({str(k): str(v) for k, v in raw["set_properties"].items()})
    raise CorruptManifestError(f"unknown action {sorted(raw)!r}")


def _recorded_uuid(obj: Mapping[str, Any]) -> str | None:
    """The ``table_uuid`` a commit or checkpoint records (canonical form), None if absent."""
    value = obj.get("table_uuid")
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"table_uuid {value!r} is not a UUID string")
    return str(uuid.UUID(value))


def derived_table_uuid(commit_file: bytes) -> str:
    """The identity of a table written before table UUIDs: a name-based UUID of the exact
    bytes of its oldest commit file (version 0), which never change while the table exists
    and differ for a table recreated at the same location (another timestamp, other parts).
    """
    return str(uuid.uuid5(_DERIVED_UUID_NAMESPACE, hashlib.sha256(commit_file).hexdigest()))


def _check_format_version(obj: Mapping[str, Any]) -> None:
    found = int(obj["format_version"])
    if found > FORMAT_VERSION:
        raise CorruptManifestError(
            f"written with manifest format_version {found}; this tsfile-catalog reads up to "
            f"{FORMAT_VERSION}: upgrade tsfile-catalog"
        )


@dataclass(frozen=True)
class Snapshot:
    """The table as of one version: what a reader plans scans from.

    ``table_uuid`` is the identity of the table (assigned by version 0, like Iceberg's
    ``table-uuid``): a table dropped and recreated at the same location is another table,
    even though its versions restart at 0.
    """

    version: int
    timestamp_ms: int
    schema: TableSchema
    schema_id: int
    # A tuple, or a PartList whose parts are built on first use (read from a checkpoint).
    parts: Sequence[PartFile]
    properties: Mapping[str, str]
    table_uuid: str
    # The latest StreamTxn of each streaming query that wrote the table, by query id: how a
    # sink knows a replayed micro-batch is already in (kept by checkpoints too).
    transactions: Mapping[str, StreamTxn] = field(default_factory=dict)
    # The table's completeness as of this version: the largest ``complete_until`` any commit
    # up to it declared (raw time units), None when none did. Carried here, and so by
    # checkpoints, so that EXPIRE SNAPSHOTS deleting the declaring commits does not lose it.
    complete_until: int | None = None

    def to_json(self) -> dict[str, Any]:
        types = _field_types(self.schema)
        out: dict[str, Any] = {
            "format_version": written_format_version(self.parts),
            "table_uuid": self.table_uuid,
            "version": self.version,
            "timestamp_ms": self.timestamp_ms,
            "schema_id": self.schema_id,
            "schema": self.schema.to_json(),
            "properties": dict(self.properties),
            "parts": [p.to_json(types) for p in self.parts],
        }
        # An optional key, written only when a stream wrote the table (so other checkpoints
        # stay byte-identical to earlier releases').
        if self.transactions:
            out["transactions"] = [t.to_json() for t in self.transactions.values()]
        # Optional like ``transactions``: an earlier reader ignores it and falls back on the
        # commits it still has (no bump); absent when nothing was declared.
        if self.complete_until is not None:
            out["complete_until"] = self.complete_until
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], *, table_uuid: str | None = None) -> Snapshot:
        """``table_uuid`` is used when ``obj`` records none (written before table UUIDs)."""
        _check_format_version(obj)
        recorded = _recorded_uuid(obj) or table_uuid
        if recorded is None:
            raise KeyError("table_uuid")
        schema = TableSchema.from_json(obj["schema"])
        types = _field_types(schema)
        return cls(
            version=int(obj["version"]),
            timestamp_ms=int(obj["timestamp_ms"]),
            schema=schema,
            schema_id=int(obj["schema_id"]),
            parts=tuple(PartFile.from_json(p, types) for p in obj["parts"]),
            properties={str(k): str(v) for k, v in obj["properties"].items()},
            table_uuid=recorded,
            transactions=_transactions(obj.get("transactions") or ()),
            complete_until=_optional_int_key(obj, "complete_until"),
        )


def _transactions(raw: Iterable[Mapping[str, Any]]) -> dict[str, StreamTxn]:
    out: dict[str, StreamTxn] = {}
    for item in raw:
        txn = StreamTxn.from_json(item)
        out[txn.app_id] = txn
    return out


def foreign_commit(table_uuid: str, commits: Iterable[Commit]) -> Commit | None:
    """The first of ``commits`` that records another table's UUID, if any (commits written
    before table UUIDs record none and cannot be told apart)."""
    return next(
        (c for c in commits if c.table_uuid is not None and c.table_uuid != table_uuid), None
    )


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
    # Positions of the parts before, by path (read from a checkpoint's columns, so no part
    # is built), the positions removed since, and the parts added since, in order.
    position = {path: i for i, path in enumerate(part_paths(before))}
    removed: set[int] = set()
    added: dict[str, PartFile] = {}
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
                path = action.part.path
                at = position.get(path)
                if path in added or (at is not None and at not in removed):
                    raise CorruptManifestError(
                        f"version {version} adds part '{path}', which the table already has"
                    )
                added[path] = action.part
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


def _remaining(
    before: Sequence[PartFile], removed: set[int], added: tuple[PartFile, ...]
) -> Sequence[PartFile]:
    """``before`` without the parts at ``removed``, then ``added``: still unbuilt parts stay
    so (a :class:`PartList`), plain parts stay a tuple."""
    if isinstance(before, PartList):
        return before.without(removed, added)
    kept = before if not removed else [p for i, p in enumerate(before) if i not in removed]
    return (*kept, *added)


def _later_declaration(held: int | None, declared: int | None) -> int | None:
    """Completeness only grows: the larger of two declarations (None: none made)."""
    if declared is None:
        return held
    return declared if held is None else max(held, declared)


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
    stamped: list[Action] = []
    for action in actions:
        if isinstance(action, SetSchema):
            schema_id = schema_id + 1 if (base is not None or schema_seen) else 0
            schema_seen = True
            stamped.append(SetSchema(action.schema, schema_id))
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


def rebase(
    pending: Sequence[Action],
    landed: Sequence[Commit],
    *,
    read: Snapshot | None,
    overwrite: bool = False,
    txn: StreamTxn | None = None,
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

    Raises:
        CommitConflictError: explaining which landed version conflicts and why.
        AlreadyCommittedError: ``txn``'s batch landed meanwhile (a CommitConflictError).
    """
    if not landed:
        return tuple(pending)
    _check_txn(txn, landed)
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
        if read is not None and new_schema is not None and after.schema != target:
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

    if pending_schema is not None and pending_schema == after.schema:
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
    return "; ".join(changes) or f"now {_describe(after)}"


# Everything a hostile or damaged file can make decoding raise: malformed JSON and wrong types
# (ValueError, TypeError, KeyError, AttributeError), `Infinity` where an integer belongs
# (OverflowError), nesting deeper than the parser's stack (RecursionError).
_DECODE_ERRORS = (
    ValueError,
    KeyError,
    TypeError,
    AttributeError,
    OverflowError,
    RecursionError,
    TsFileCatalogError,
)


def encode_commit(commit: Commit, schema: TableSchema | None) -> bytes:
    """One compact JSON document; ``schema`` is the table schema before the commit."""
    return json.dumps(commit.to_json(schema), separators=(",", ":")).encode()


def decode_commit(data: bytes, schema: TableSchema | None, *, source: str) -> Commit:
    """Parse a commit file; ``source`` names it in errors.

    A version-0 commit written before table UUIDs is given :func:`derived_table_uuid`.

    Raises:
        CorruptManifestError: truncated or invalid JSON, or content violating the format.
    """
    try:
        with gc_paused():
            commit = Commit.from_json(json.loads(data), schema)
    except _DECODE_ERRORS as e:
        raise _corrupt("commit", source, e) from e
    if commit.table_uuid is None and commit.version == 0:
        return replace(commit, table_uuid=derived_table_uuid(data))
    return commit


def decode_commit_info(data: bytes, *, source: str) -> tuple[CommitInfo, str | None]:
    """A commit file's :class:`CommitInfo` and the table UUID it records (derived for a
    version 0 written before table UUIDs; None for a later one), without decoding actions.

    Raises:
        CorruptManifestError: truncated or invalid JSON, or content violating the format.
    """
    try:
        obj = json.loads(data)
        _check_format_version(obj)
        info = CommitInfo.from_json(obj["commit_info"])
        table_uuid = _recorded_uuid(obj)
    except _DECODE_ERRORS as e:
        raise _corrupt("commit", source, e) from e
    if table_uuid is None and info.version == 0:
        table_uuid = derived_table_uuid(data)
    return info, table_uuid


def commit_table_uuid(data: bytes, *, source: str) -> str:
    """The identity a table's oldest commit file gives it: the UUID it records, or for a
    table written before table UUIDs one derived from the file's bytes.

    Raises:
        CorruptManifestError: truncated or invalid JSON, or an invalid ``table_uuid``.
    """
    try:
        obj = json.loads(data)
        _check_format_version(obj)
        recorded = _recorded_uuid(obj)
    except _DECODE_ERRORS as e:
        raise _corrupt("commit", source, e) from e
    return recorded if recorded is not None else derived_table_uuid(data)


def _corrupt(kind: str, source: str, error: BaseException) -> CorruptManifestError:
    reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
    return CorruptManifestError(f"{kind} file {source} is corrupt or truncated: {reason}")


def encode_snapshot(snapshot: Snapshot) -> bytes:
    return json.dumps(snapshot.to_json(), separators=(",", ":")).encode()


def decode_snapshot(
    data: bytes, *, source: str, legacy_table_uuid: Callable[[], str] | None = None
) -> Snapshot:
    """Parse a checkpoint file; ``source`` names it in errors.

    Args:
        legacy_table_uuid: asked for the table's UUID only when the checkpoint records none
            (written before table UUIDs; the caller derives it from the oldest commit).
            Without it such a checkpoint is refused as corrupt.

    Raises:
        CorruptManifestError: truncated or invalid JSON, or content violating the format.
    """
    try:
        with gc_paused():
            obj = json.loads(data)
            _check_format_version(obj)
            recorded = _recorded_uuid(obj)
    except _DECODE_ERRORS as e:
        raise _corrupt("checkpoint", source, e) from e
    if recorded is None:
        if legacy_table_uuid is None:
            raise CorruptManifestError(f"checkpoint file {source} records no table_uuid")
        recorded = legacy_table_uuid()
    try:
        with gc_paused():
            return Snapshot.from_json(obj, table_uuid=recorded)
    except _DECODE_ERRORS as e:
        raise _corrupt("checkpoint", source, e) from e
