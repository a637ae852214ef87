"""Tables on storage: the manifest log, time travel, optimistic commits, vacuum and purge.

A table is a directory holding part files and a ``_tsfile_manifest/`` folder of numbered
commit files, checkpoints and a ``_last_checkpoint`` hint (``docs/manifest-format.md``). All
storage access goes through :class:`~tsfile_catalog.io.FileIO`; the model and the conflict
rules are pure (:mod:`tsfile_catalog.metadata.manifest`). The package is split by job:

- :mod:`~tsfile_catalog.table.log`: the log folder's naming, listing, reading, and writing
  checkpoints (encoded by :mod:`~tsfile_catalog.table.checkpoint_parquet`);
- :mod:`~tsfile_catalog.table.cache`: the in-process metadata cache and table identity;
- :mod:`~tsfile_catalog.table.snapshots`: loading a version, and time travel;
- :mod:`~tsfile_catalog.table.commits`: the commit loop, :func:`append_parts`,
  :func:`set_properties`; :mod:`~tsfile_catalog.table.part_commits`: :func:`add_files` /
  :func:`drop_parts` (external parts, found and validated by
  :mod:`~tsfile_catalog.table.external`);
- one verb family per module: :mod:`~tsfile_catalog.table.optimize` (:func:`optimize`,
  :func:`delete`, rewriting parts with :mod:`~tsfile_catalog.table.rewrite`),
  :mod:`~tsfile_catalog.table.vacuum` (:func:`vacuum`), :mod:`~tsfile_catalog.table.purge`
  (:func:`purge`),
  :mod:`~tsfile_catalog.table.expire` (:func:`expire_snapshots`),
  :mod:`~tsfile_catalog.table.restore` (:func:`restore`) and
  :mod:`~tsfile_catalog.table.alter` (the ALTER TABLE schema changes and :func:`unset_properties`);
- :mod:`~tsfile_catalog.table.handle`: :class:`Table` (with its ``maintenance`` and ``alter``
  namespaces of verbs, :mod:`~tsfile_catalog.table.maintenance`), :func:`open_table` and
  :func:`create_table`.

This module re-exports their public names, so ``from tsfile_catalog.table import ...`` is
the import to use.
"""

from __future__ import annotations

from tsfile_catalog.metadata.ownership import MANIFEST_DIR, STAGING_DIR
from tsfile_catalog.table.alter import (
    NewColumn,
    add_columns,
    alter_column_type,
    drop_columns,
    drop_not_null,
    move_column,
    rename_column,
    unset_properties,
)
from tsfile_catalog.table.cache import clear_cache
from tsfile_catalog.table.commits import (
    append_parts,
    commit,
    set_properties,
)
from tsfile_catalog.table.create import create_table
from tsfile_catalog.table.expire import expire_snapshots
from tsfile_catalog.table.handle import Table, open_table
from tsfile_catalog.table.log import CHECKPOINT_INTERVAL
from tsfile_catalog.table.optimize import DeleteResult, OptimizeResult, delete, optimize
from tsfile_catalog.table.part_commits import add_files, drop_parts
from tsfile_catalog.table.purge import purge
from tsfile_catalog.table.restore import restore
from tsfile_catalog.table.vacuum import DEFAULT_RETENTION_MS, vacuum, vacuum_table

__all__ = [
    "MANIFEST_DIR",
    "STAGING_DIR",
    "CHECKPOINT_INTERVAL",
    "DEFAULT_RETENTION_MS",
    "Table",
    "open_table",
    "create_table",
    "append_parts",
    "add_files",
    "drop_parts",
    "set_properties",
    "unset_properties",
    "commit",
    "vacuum",
    "purge",
    "vacuum_table",
    "expire_snapshots",
    "restore",
    "NewColumn",
    "add_columns",
    "alter_column_type",
    "rename_column",
    "drop_columns",
    "move_column",
    "drop_not_null",
    "clear_cache",
    "optimize",
    "delete",
    "OptimizeResult",
    "DeleteResult",
]
