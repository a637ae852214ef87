"""RESTORE: committing an older version's parts and schema as the newest version.

An ordinary commit through :func:`tsfile_catalog.table.commits.commit`, read against the
latest snapshot; the version brought back is resolved as time travel resolves it
(:func:`tsfile_catalog.table.snapshots.resolve_snapshot`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from tsfile_catalog.exceptions import OptionError, VersionNotFoundError
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.manifest import Action, AddPart, Operation, RemovePart, SetSchema
from tsfile_catalog.table.commits import commit
from tsfile_catalog.table.ownership import part_url
from tsfile_catalog.table.snapshots import resolve_snapshot

__all__ = ["restore"]


def restore(
    url: str,
    *,
    version: int | None = None,
    timestamp: str | int | None = None,
    time_zone: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> int:
    """Commit a new version whose parts and schema equal an older version's (history
    operation ``RESTORE``); later versions stay in history.

    Returns:
        The new version.

    Raises:
        VersionNotFoundError: no such version (or it was expired), or one of its parts was
            deleted by VACUUM (the error names it).
        CommitConflictError: a concurrent commit added or removed parts meanwhile.
    """
    if (version is None) == (timestamp is None):
        raise OptionError("RESTORE needs exactly one of version or timestamp")
    io = FileIO(url, storage_options)
    location = io.normalize(url)
    target = resolve_snapshot(
        io, location, version=version, timestamp=timestamp, time_zone=time_zone
    )
    latest = resolve_snapshot(io, location)
    current = {p.path for p in latest.parts}
    wanted = {p.path for p in target.parts}
    back = [p for p in target.parts if p.path not in current]
    for part in back:
        if not io.exists(part_url(location, part)):
            raise VersionNotFoundError(
                f"cannot restore table {location} to version {target.version}: its "
                f"part {part.path} was deleted by VACUUM"
            )
    actions: list[Action] = [
        RemovePart(p.path, p.row_count, p.size_bytes) for p in latest.parts if p.path not in wanted
    ]
    # Each part brought back keeps its key sequence: the commit stamps every added part with
    # the new version, and in a `last` table two parts of one key, equal then, would read as
    # one write and give both rows instead of the later one.
    actions.extend(AddPart(replace(p, sequence=p.key_sequence)) for p in back)
    # Compared with the physical names too: the restored parts hold the target's (a column
    # dropped and added back since has the same name under another physical name).
    if not target.schema.same_mapping(latest.schema):
        actions.append(SetSchema(target.schema, 0))
    snapshot = commit(
        io,
        location,
        actions,
        read=latest,
        operation=Operation.RESTORE,
        operation_parameters={"version": str(target.version)},
        overwrite=True,
    )
    return snapshot.version
