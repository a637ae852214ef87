"""Commit and checkpoint files as bytes: compact JSON out, checked JSON in.

Decoding names the file in every error: a damaged or hostile file raises
:class:`~tsfile_catalog.exceptions.CorruptManifestError`, never a stray ``KeyError``. A table
written before table UUIDs gets its identity from its oldest commit's bytes
(:func:`derived_table_uuid`).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable
from dataclasses import replace

from tsfile_catalog.exceptions import CorruptManifestError, TsFileCatalogError
from tsfile_catalog.metadata.gc_pause import gc_paused
from tsfile_catalog.metadata.manifest.model import (
    Commit,
    CommitInfo,
    Snapshot,
    check_format_version,
    recorded_uuid,
)
from tsfile_catalog.metadata.schema import TableSchema

__all__ = [
    "derived_table_uuid",
    "encode_commit",
    "decode_commit",
    "decode_commit_info",
    "commit_table_uuid",
    "encode_snapshot",
    "decode_snapshot",
]


# Names the UUIDs derived for tables written before table UUIDs (see derived_table_uuid).
_DERIVED_UUID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "tsfile-catalog:table_uuid")


def derived_table_uuid(commit_file: bytes) -> str:
    """The identity of a table written before table UUIDs: a name-based UUID of the exact
    bytes of its oldest commit file (version 0), which never change while the table exists
    and differ for a table recreated at the same location (another timestamp, other parts).
    """
    return str(uuid.uuid5(_DERIVED_UUID_NAMESPACE, hashlib.sha256(commit_file).hexdigest()))


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
            commit = Commit.from_json(json.loads(data), schema, source=source)
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
        check_format_version(obj)
        info = CommitInfo.from_json(obj["commit_info"])
        table_uuid = recorded_uuid(obj)
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
        check_format_version(obj)
        recorded = recorded_uuid(obj)
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
            check_format_version(obj)
            recorded = recorded_uuid(obj)
    except _DECODE_ERRORS as e:
        raise _corrupt("checkpoint", source, e) from e
    if recorded is None:
        if legacy_table_uuid is None:
            raise CorruptManifestError(f"checkpoint file {source} records no table_uuid")
        recorded = legacy_table_uuid()
    try:
        with gc_paused():
            return Snapshot.from_json(obj, table_uuid=recorded, source=source)
    except _DECODE_ERRORS as e:
        raise _corrupt("checkpoint", source, e) from e
