"""The manifest's data model: actions, commits and snapshots, and their JSON form.

A table's history is a sequence of commits, version 0, 1, 2, ... Each commit is a list of
actions (add a part, remove a part, set the schema, set properties) plus a
:class:`CommitInfo` describing it; a :class:`Snapshot` is the table as of one version. Each
class converts to and from its JSON object here (``docs/manifest-format.md`` describes it);
bytes and the errors a damaged file raises are :mod:`~tsfile_catalog.metadata.manifest.codec`.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any, TypeAlias

from tsfile_catalog.exceptions import CorruptManifestError
from tsfile_catalog.metadata.part_list import has_external
from tsfile_catalog.metadata.parts import PartEntry, PartFile, PendingPart, built_part
from tsfile_catalog.metadata.schema import DataType, TableSchema

__all__ = [
    "FORMAT_VERSION",
    "BASE_FORMAT_VERSION",
    "COLUMN_MAPPING_FORMAT_VERSION",
    "COLUMN_ORDER_FORMAT_VERSION",
    "written_format_version",
    "AddPart",
    "RemovePart",
    "SetSchema",
    "SetProperties",
    "RemoveProperties",
    "Action",
    "Operation",
    "CommitInfo",
    "StreamTxn",
    "Commit",
    "Snapshot",
    "check_format_version",
    "recorded_uuid",
]


FORMAT_VERSION = 4


# What a file is written with when it records no external part: version 1 readers read such
# files exactly as before, so only files that would mislead them (an external part's absolute
# path and foreign format) carry version 2 and make them stop with "upgrade tsfile-catalog".
BASE_FORMAT_VERSION = 1

# The version of a file whose schema maps columns to other physical names or has dropped
# columns: a reader of version 2 matches part columns by name and would read a renamed
# column as null, or a column added back after a drop with the old data; it stops instead.
COLUMN_MAPPING_FORMAT_VERSION = 3

# The version of a file whose schema records a display order (a column moved before ``time``
# or among the TAGs, or ``time`` or a TAG moved): a reader of version 3 would show the
# canonical order, and a positional INSERT through it would put values in other columns.
COLUMN_ORDER_FORMAT_VERSION = 4


def written_format_version(parts: Iterable[PartFile], schema: TableSchema | None = None) -> int:
    """The ``format_version`` a commit or checkpoint recording ``parts`` (and ``schema``,
    when it records one) is written with."""
    if schema is not None and schema.order is not None:
        return COLUMN_ORDER_FORMAT_VERSION
    if schema is not None and schema.is_mapped:
        return COLUMN_MAPPING_FORMAT_VERSION
    return 2 if has_external(parts) else BASE_FORMAT_VERSION


class AddPart:
    """Add ``part`` to the table.

    A decoded commit's part is a :class:`PendingPart`, checked but built only when
    :attr:`part` is first read: replaying the commits after a checkpoint reads paths only,
    and a plan builds the parts it keeps. Equal (and hashed) by the part it adds.
    """

    __slots__ = ("_entry",)
    _entry: PartEntry

    def __init__(self, part: PartEntry) -> None:
        object.__setattr__(self, "_entry", part)

    @property
    def part(self) -> PartFile:
        return built_part(self._entry)

    @property
    def entry(self) -> PartEntry:
        """The part, or its checked JSON when it is not yet built (what replay keeps)."""
        return self._entry

    @property
    def path(self) -> str:
        return self._entry.path

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, AddPart):
            return self.part == other.part
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.part)

    def __repr__(self) -> str:
        return f"AddPart(part={self._entry!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (AddPart, (self.part,))


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


@dataclass(frozen=True, slots=True)
class RemoveProperties:
    """Remove the given table properties (absent ones are no change); others are kept."""

    keys: tuple[str, ...]


Action: TypeAlias = AddPart | RemovePart | SetSchema | SetProperties | RemoveProperties


class Operation(str, enum.Enum):
    """What a commit did: the ``operation`` of its history entry.

    The values are the strings stored in commit files, so they never change.
    """

    CREATE = "CREATE"
    WRITE = "WRITE"
    OVERWRITE = "OVERWRITE"
    ADOPT = "ADOPT"
    SET_TBLPROPERTIES = "SET TBLPROPERTIES"
    UNSET_TBLPROPERTIES = "UNSET TBLPROPERTIES"
    ADD_PART = "ADD PART"
    DROP_PART = "DROP PART"
    # Table maintenance and schema evolution (Delta's names for the same commits).
    RESTORE = "RESTORE"
    ADD_COLUMNS = "ADD COLUMNS"
    CHANGE_COLUMN = "CHANGE COLUMN"
    RENAME_COLUMN = "RENAME COLUMN"
    DROP_COLUMNS = "DROP COLUMNS"
    # One ALTER of several changes (one Spark alterTable call): Delta's name for REPLACE
    # COLUMNS, and ALTER TABLE listing each change for the other mixes. Readers of every
    # release keep an operation name they do not know as written: no format bump.
    REPLACE_COLUMNS = "REPLACE COLUMNS"
    ALTER_TABLE = "ALTER TABLE"
    # Issue 13 (rewrite): compaction, deletes. OPTIMIZE commits carry data_change=False.
    OPTIMIZE = "OPTIMIZE"
    DELETE = "DELETE"
    # Issue 25: row changes by the table key (Delta's names).
    UPDATE = "UPDATE"
    MERGE = "MERGE"
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
        version = written_format_version(added, self.new_schema())
        if any(isinstance(a, RemoveProperties) for a in self.actions):
            # A reader of format 1 would fail on the action as on a damaged file; the bump
            # makes it say "upgrade tsfile-catalog" instead.
            version = max(version, 2)
        out: dict[str, Any] = {"format_version": version}
        if self.table_uuid is not None:
            out["table_uuid"] = self.table_uuid
        out["commit_info"] = self.info.to_json()
        out["actions"] = [_action_to_json(a, types) for a in self.actions]
        return out

    @classmethod
    def from_json(
        cls, obj: Mapping[str, Any], schema: TableSchema | None, *, source: str | None = None
    ) -> Commit:
        """``schema`` is the table schema before this commit (None before version 0);
        ``source`` (the commit file) is named by errors of parts' lazily decoded maps."""
        check_format_version(obj)
        raw_actions = obj["actions"]
        for raw in raw_actions:
            if "set_schema" in raw:
                schema = TableSchema.from_json(raw["set_schema"]["schema"])
        types = _field_types(schema)
        return cls(
            info=CommitInfo.from_json(obj["commit_info"]),
            actions=tuple(_action_from_json(raw, types, source) for raw in raw_actions),
            table_uuid=recorded_uuid(obj),
        )


def _field_types(schema: TableSchema | None) -> dict[str, DataType]:
    # Part statistics are keyed by physical name (the names in the part files).
    return {} if schema is None else schema.stats_types()


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
    if isinstance(action, RemoveProperties):
        return {"remove_properties": list(action.keys)}
    return {"set_properties": dict(action.properties)}


def _action_from_json(
    raw: Mapping[str, Any], types: Mapping[str, DataType], source: str | None
) -> Action:
    if "add" in raw:
        # Checked now, built when read (see AddPart).
        return AddPart(PendingPart.of_json(raw["add"], types, source=source))
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
    if "remove_properties" in raw:
        return RemoveProperties(tuple(str(k) for k in raw["remove_properties"]))
    raise CorruptManifestError(f"unknown action {sorted(raw)!r}")


def recorded_uuid(obj: Mapping[str, Any]) -> str | None:
    """The ``table_uuid`` a commit or checkpoint records (canonical form), None if absent."""
    value = obj.get("table_uuid")
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"table_uuid {value!r} is not a UUID string")
    return str(uuid.UUID(value))


def check_format_version(obj: Mapping[str, Any]) -> None:
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
            "format_version": written_format_version(self.parts, self.schema),
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
    def from_json(
        cls,
        obj: Mapping[str, Any],
        *,
        table_uuid: str | None = None,
        source: str | None = None,
    ) -> Snapshot:
        """``table_uuid`` is used when ``obj`` records none (written before table UUIDs);
        ``source`` (the checkpoint file) is named by errors of parts' lazily decoded maps."""
        check_format_version(obj)
        recorded = recorded_uuid(obj) or table_uuid
        if recorded is None:
            raise KeyError("table_uuid")
        schema = TableSchema.from_json(obj["schema"])
        types = _field_types(schema)
        return cls(
            version=int(obj["version"]),
            timestamp_ms=int(obj["timestamp_ms"]),
            schema=schema,
            schema_id=int(obj["schema_id"]),
            parts=tuple(PartFile.from_json(p, types, source=source) for p in obj["parts"]),
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
