"""The commits of external parts: ``ALTER TABLE … ADD PART`` (:func:`add_files`, the
user's files added in place) and ``DROP PART`` (:func:`drop_parts`, parts removed from the
manifest, no file deleted), through the commit loop of :mod:`~tsfile_catalog.table.commits`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, cast

from tsfile_catalog.exceptions import (
    InvalidCommitError,
    TableNotFoundError,
)
from tsfile_catalog.io import FileIO, join_url
from tsfile_catalog.metadata.expressions import TimeUnit
from tsfile_catalog.metadata.manifest import Action, AddPart, Operation, RemovePart, SetSchema
from tsfile_catalog.metadata.parts import PartFile, is_absolute_url
from tsfile_catalog.metadata.table_time import table_unit
from tsfile_catalog.progress import Progress
from tsfile_catalog.table.commits import commit, latest_or_none

__all__ = ["add_files", "drop_parts"]


def add_files(
    table_url: str,
    path: str,
    *,
    format: str,
    options: Mapping[str, str] | None = None,
    storage_options: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
) -> int:
    """Add existing Parquet, ORC or CSV files to the table in place (SQL ``ALTER TABLE …
    ADD PART``), like Iceberg's ``add_files`` and CarbonData's "add segment".

    A file adds one part; a directory (recursively) or a glob adds one part per data file.
    Each file is validated against the table and gets full part statistics; the files stay
    where they are and stay the user's: no drop, purge or vacuum ever deletes them. All files
    are added in one commit (history operation ``ADD PART``), or none.

    Args:
        path: a file, directory or glob, on any store ``storage_options`` reach.
        format: ``parquet``, ``orc`` or ``csv``.
        options: the other ``ADD PART`` options, keys case-insensitive: ``partition``
            (``'city:string,…'``, the keys of ``key=value`` folders), ``timeColumn``,
            ``timestampPrecision`` (``ms``/``us``/``ns``: the unit TIMESTAMP/DATE times are
            stored in), ``mergeSchema``, and for CSV ``header``, ``delimiter``, ``quote``,
            ``nullValue``. See ``docs/external-parts.md``.
        progress: called as ``progress(done, total)`` after each file's metadata is read.

    Returns:
        The committed version.

    Raises:
        OptionError: a bad option (named), including the partition option rules.
        SchemaError: a file that does not fit the table, naming the file, column and fix.
        TableNotFoundError: no table at ``table_url``, or nothing at ``path``.
        InvalidCommitError: a file is already a part of the table.
    """
    from tsfile_catalog.metadata.external import parse_add_part_options
    from tsfile_catalog.table.external import file_identity, read_external_parts

    parsed = parse_add_part_options({**(options or {}), "path": path, "format": format})
    io = FileIO(table_url, storage_options)
    location = io.normalize(table_url)
    read = latest_or_none(io, location)
    if read is None:
        raise TableNotFoundError(f"no tsfile-catalog table at {location}; create it first")
    # The files' times become raw values in the table's own unit.
    given = any(k.lower() == "timestampprecision" for k in options or {})
    unit = cast(TimeUnit, parsed.precision) if given else None
    option = "ADD PART option 'timestampPrecision'"
    unit = table_unit(read.properties, unit, table=location, option=option)
    parsed = replace(parsed, precision=unit)
    files_io = FileIO(parsed.path, storage_options)
    schema, parts = read_external_parts(files_io, read.schema, parsed, progress=progress)
    # Parts recorded before paths were resolved may spell a file another way: compare the
    # files they reach.
    local = files_io.is_local
    present = {
        file_identity(files_io, p.path) if local and p.path.startswith("/") else p.path: p.path
        for p in read.parts
    }
    for part in parts:
        if part.path in present:
            shown = present[part.path]
            raise InvalidCommitError(
                f"{part.path} is already a part of table {location}"
                f"{'' if shown == part.path else f' (as {shown})'}; DROP PART it first to "
                "add it again"
            )
    actions: list[Action] = []
    if schema != read.schema:
        actions.append(SetSchema(schema, read.schema_id + 1))
    actions.extend(AddPart(p) for p in parts)
    parameters = {"path": parsed.path, "format": parsed.format, "files": str(len(parts))}
    if parsed.partition is not None:
        parameters["partition"] = ",".join(parsed.partition)
    snapshot = commit(
        io,
        location,
        actions,
        read=read,
        operation=Operation.ADD_PART,
        operation_parameters=parameters,
        overwrite=False,
    )
    return snapshot.version


def drop_parts(
    table_url: str,
    pattern: str,
    *,
    all_parts: bool = False,
    storage_options: Mapping[str, Any] | None = None,
) -> int:
    """Remove the parts ``pattern`` names from the table (SQL ``ALTER TABLE … DROP PART``).

    ``pattern`` is a part's path (an external part's URL, or an internal part's path
    relative to the table), a folder (every part below it) or a glob over either. Only the
    manifest changes: a new version without the parts, so time travel still reads them, and
    no file is deleted (external files never are; internal ones go with a later purge). A
    table is emptied only on request: an empty pattern, or a glob or folder matching every
    part, needs ``all_parts=True`` (then an empty pattern names every part).

    Returns:
        The committed version.

    Raises:
        TableNotFoundError: no table at ``table_url``.
        InvalidCommitError: ``pattern`` names no current part, or is empty or names every
            part without ``all_parts``.
    """
    io = FileIO(table_url, storage_options)
    location = io.normalize(table_url)
    read = latest_or_none(io, location)
    if read is None:
        raise TableNotFoundError(f"no tsfile-catalog table at {location}")
    every = not pattern.strip()
    matched = [p for p in read.parts if every or _part_matches(io, location, p, pattern)]
    # A glob or folder that happens to match every part empties the table by accident; a
    # path naming the one part there is explicit.
    one_named = len(matched) == 1 and not any(c in pattern for c in "*?[")
    if not all_parts and (every or (len(matched) == len(read.parts) > 0 and not one_named)):
        what = "the path or glob is empty" if every else f"{pattern!r} matches every part"
        raise InvalidCommitError(
            f"DROP PART: {what}; to drop every part of table {location}, pass all_parts=True "
            "(SQL: DELETE FROM the table)"
        )
    if not matched:
        raise InvalidCommitError(
            f"DROP PART {pattern!r}: no part of table {location} matches (SHOW PARTS lists "
            "them; external parts by their full URL)"
        )
    actions: list[Action] = [RemovePart(p.path, p.row_count, p.size_bytes) for p in matched]
    snapshot = commit(
        io,
        location,
        actions,
        read=read,
        operation=Operation.DROP_PART,
        operation_parameters={"pattern": pattern, "parts": str(len(matched))},
        overwrite=False,
    )
    return snapshot.version


def _part_matches(io: FileIO, location: str, part: PartFile, pattern: str) -> bool:
    """Whether ``pattern`` (a path, folder or glob) names ``part``."""
    url = part.path if part.external else join_url(location, part.path)
    other = FileIO(pattern, io.storage_options)
    wanted = other.normalize(pattern) if is_absolute_url(pattern) else join_url(location, pattern)
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(url, wanted) or fnmatch.fnmatchcase(part.path, pattern)
    wanted = wanted.rstrip("/")
    return url == wanted or url.startswith(wanted + "/") or part.path == pattern
