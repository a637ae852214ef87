"""Finding and validating the files of one ``ADD PART``: listing, Hive partitions, the
adapter's statistics. Nothing is committed here (:func:`tsfile_catalog.table.add_files`
commits the result in one version)."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence

from tsfile_catalog.exceptions import (
    InvalidCommitError,
    OptionError,
    TableNotFoundError,
    TsFileCatalogError,
)
from tsfile_catalog.formats.registry import EXTERNAL
from tsfile_catalog.io import GLOB_CHARS, FileIO
from tsfile_catalog.metadata.external import AddPartOptions, partition_keys, partition_values
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import TableSchema
from tsfile_catalog.progress import Progress, tracked

__all__ = ["file_identity", "list_data_files", "read_external_parts"]


def _visible(relative: str) -> bool:
    # Like Spark's file sources: _SUCCESS, _committed_*, .crc files are not data.
    return not any(p.startswith((".", "_")) for p in relative.split("/"))


def list_data_files(io: FileIO, path: str, extensions: Sequence[str]) -> tuple[str, list[str]]:
    """(root, absolute file URLs) of ``path``: the file itself, the ``extensions`` files of
    a directory (recursively), or the matches of a glob (directories walked).

    Raises:
        TableNotFoundError: nothing at ``path``, or no data file there.
    """

    def data_files(directory: str) -> list[str]:
        base = io.normalize(directory)
        out = []
        for url, _ in io.walk_files(directory):
            relative = posixpath.relpath(io.normalize(url), base)
            if _visible(relative) and relative.lower().endswith(tuple(extensions)):
                out.append(io.normalize(url))
        return out

    if any(c in path for c in GLOB_CHARS):
        fixed = path[: min(path.index(c) for c in GLOB_CHARS if c in path)]
        root = io.normalize(fixed.rsplit("/", 1)[0] or "/")
        files: list[str] = []
        for match in io.glob(path):
            files.extend(data_files(match) if io.isdir(match) else [io.normalize(match)])
    elif io.isdir(path):
        root = io.normalize(path)
        files = data_files(path)
    elif io.exists(path):
        full = io.normalize(path)
        root, files = posixpath.dirname(full), [full]
    else:
        raise TableNotFoundError(f"ADD PART path {path} does not exist")
    if not files:
        raise TableNotFoundError(
            f"ADD PART path {path} holds no {'/'.join(extensions)} file (hidden and _-prefixed "
            "files are skipped)"
        )
    return root, sorted(set(files))


def file_identity(io: FileIO, url: str) -> str:
    """The one URL a file is recorded and compared under, however it was spelled: local
    paths absolute with symbolic links and ``..`` resolved (a link to a file and the file
    are one part), other stores' URLs normalized."""
    if io.is_local:
        # Resolving links is a path computation, not a read: FileIO keeps links unfollowed
        # for walks, but a part's identity is the file its path reaches.
        return os.path.realpath(io.normalize(url))
    return io.normalize(url)


def read_external_parts(
    io: FileIO, table: TableSchema, options: AddPartOptions, *, progress: Progress | None = None
) -> tuple[TableSchema, list[PartFile]]:
    """Every file ``options.path`` names, validated against ``table``, as external parts.

    Returns the table schema the files need (``mergeSchema`` may add FIELDs) and one part per
    file, recorded under its :func:`file_identity` (``progress`` counts the files read).
    Nothing is written.

    Raises:
        OptionError: a partitioned directory without ``partition``, or a partition key the
            folders lack.
        SchemaError: a file that does not fit the table (naming file, column, fix).
        InvalidCommitError: two of the paths (a link and its target) are one file.
    """
    adapter = EXTERNAL[options.format]
    root, files = list_data_files(io, options.path, adapter.extensions)
    relative = [posixpath.relpath(f, root) if f.startswith(root) else f for f in files]
    found = partition_keys(relative)
    keys = options.partition or ()
    if found and options.partition is None:
        raise OptionError(
            f"the partition option is required when the files are partitioned (found keys "
            f"{', '.join(found)} under {root}); add partition "
            f"'{','.join(k + ':string' for k in found)}'"
        )
    seen: dict[str, str] = {}
    for url in files:
        identity = file_identity(io, url)
        if identity in seen:
            raise InvalidCommitError(
                f"ADD PART path {options.path} reaches the file {identity} twice (as "
                f"{seen[identity]} and {url}); a file is one part: leave out the link"
            )
        seen[identity] = url
    schema = table
    parts: list[PartFile] = []
    for url in tracked(files, progress):
        # The partition folders are those of the path as given (a link keeps its place).
        values = partition_values(url, keys)
        try:
            schema, part = adapter.read_part(
                io,
                file_identity(io, url),
                table=schema,
                options=options,
                partition_values=values,
                size_bytes=io.size(url),
            )
        except TsFileCatalogError:
            raise
        except (OSError, ValueError) as e:
            raise TsFileCatalogError(f"cannot read {url} as {options.format}: {e}") from e
        parts.append(part)
    return schema, parts
