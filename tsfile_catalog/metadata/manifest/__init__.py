"""The table manifest: commits as data, snapshots, and the pure conflict check.

A table's history is a sequence of commits, version 0, 1, 2, ... Each commit is a list of
actions (add a part, remove a part, set the schema, set properties) plus a
:class:`CommitInfo` describing it. :func:`replay` applies commits to the previous
:class:`Snapshot`; :func:`rebase` decides whether a commit prepared against an older snapshot
can still be applied after other commits landed. Storage (put-if-absent, listing) lives in
``tsfile_catalog.table``; nothing here touches it. ``docs/manifest-format.md`` describes the
on-disk JSON.

The package is shaped like pyiceberg's ``table/update/``: :mod:`.model` (the actions,
:class:`Commit`, :class:`Snapshot`), :mod:`.snapshot` (stamping and applying commits),
:mod:`.conflicts` (the rebase rules, pyiceberg's ``validate.py``) and :mod:`.codec` (files
as bytes). This module only re-exports them; modules of the package import each other
directly, never through it.
"""

from __future__ import annotations

from tsfile_catalog.metadata.manifest.codec import (
    commit_table_uuid,
    decode_commit,
    decode_commit_info,
    decode_snapshot,
    derived_table_uuid,
    encode_commit,
    encode_snapshot,
)
from tsfile_catalog.metadata.manifest.conflicts import already_committed, foreign_commit, rebase
from tsfile_catalog.metadata.manifest.footprint import (
    ROW_CHANGES,
    RowFootprint,
    footprint_of,
    row_change_footprint,
)
from tsfile_catalog.metadata.manifest.model import (
    BASE_FORMAT_VERSION,
    COLUMN_MAPPING_FORMAT_VERSION,
    COLUMN_ORDER_FORMAT_VERSION,
    FORMAT_VERSION,
    Action,
    AddPart,
    Commit,
    CommitInfo,
    Operation,
    RemovePart,
    RemoveProperties,
    SetProperties,
    SetSchema,
    Snapshot,
    StreamTxn,
    written_format_version,
)
from tsfile_catalog.metadata.manifest.snapshot import apply, prepare_commit, replay

__all__ = [
    "ROW_CHANGES",
    "RowFootprint",
    "footprint_of",
    "row_change_footprint",
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
