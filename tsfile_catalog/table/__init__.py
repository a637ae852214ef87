"""Tables on storage: the manifest log, time travel, optimistic commits, vacuum and purge.

A table is a directory holding part files and a ``_tsfile_manifest/`` folder of numbered
commit files, checkpoints and a ``_last_checkpoint`` hint (``docs/manifest-format.md``). All
storage access goes through :class:`~tsfile_catalog.io.FileIO`; the model and the conflict
rules are pure (:mod:`tsfile_catalog.metadata.manifest`). The package is split by job:

- :mod:`~tsfile_catalog.table.log`: the log folder's naming, listing and reading;
- :mod:`~tsfile_catalog.table.cache`: the in-process metadata cache and table identity;
- :mod:`~tsfile_catalog.table.handle`: :class:`Table`, :func:`open_table`, time travel;
- :mod:`~tsfile_catalog.table.commits`: the commit loop, :func:`append_parts`,
  :func:`create_table`, :func:`add_files` / :func:`drop_parts` (external parts, found and
  validated by :mod:`~tsfile_catalog.table.external`);
- :mod:`~tsfile_catalog.table.maintenance`: :func:`vacuum`, :func:`purge`,
  :func:`expire_snapshots`, :func:`restore`, the ALTER TABLE schema changes, :func:`optimize`
  and :func:`delete` (rewriting parts with :mod:`~tsfile_catalog.table.rewrite`).

This module re-exports their public names, so ``from tsfile_catalog.table import ...`` is
the import to use.
"""

from __future__ import annotations

from tsfile_catalog.metadata.ownership import MANIFEST_DIR, STAGING_DIR
from tsfile_catalog.table.cache import clear_cache
from tsfile_catalog.table.commits import (
    add_files,
    append_parts,
    commit,
    create_table,
    drop_parts,
    set_properties,
)
from tsfile_catalog.table.handle import Table, open_table
from tsfile_catalog.table.log import CHECKPOINT_INTERVAL
from tsfile_catalog.table.maintenance import (
    DEFAULT_RETENTION_MS,
    DeleteResult,
    OptimizeResult,
    add_columns,
    alter_column_type,
    delete,
    expire_snapshots,
    optimize,
    purge,
    restore,
    vacuum,
    vacuum_table,
)

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
    "commit",
    "vacuum",
    "purge",
    "vacuum_table",
    "expire_snapshots",
    "restore",
    "add_columns",
    "alter_column_type",
    "clear_cache",
    "optimize",
    "delete",
    "OptimizeResult",
    "DeleteResult",
]
