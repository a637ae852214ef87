"""Which files a table owns, as pure rules over locations and relative paths.

A table owns exactly three kinds of file (``docs/manifest-format.md``, "Ownership"):

* the part files any version of its manifest added (the manifest decides, not the name),
  except external parts: Parquet, ORC or CSV files added in place stay the user's
  (:func:`owns_part`), so no drop, purge or vacuum ever deletes them,
* everything directly in its ``_tsfile_manifest/`` folder,
* the files its own writers stage under ``_staging/<job>/<task>/`` (parts, and the record of
  a replaceWhere's pre-staged rewrites).

Nothing else under the location is the table's, whatever its name, and a file the manifest
records as not the table's (:func:`kept_paths`: an external part of any known version) is
never deleted even where its name and place are the writer's. Vacuum may delete only
files the writer itself names — a part at the table root (``part-<uuid>-<partition>.tsfile``,
published by a write that died before committing) or a file in a writer's job folder — so a
user's file, another table's file or an adopted layout is never an orphan. The names are made
here and recognized here, so the writer and vacuum cannot drift apart. Storage walks live in
:mod:`tsfile_catalog.table.ownership`.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable

from tsfile_catalog.metadata.parts import PartFile

__all__ = [
    "MANIFEST_DIR",
    "STAGING_DIR",
    "PRESTAGED_NAME",
    "new_job_id",
    "is_job_id",
    "new_part_name",
    "task_dir_name",
    "is_part_name",
    "is_vacuum_candidate",
    "TSFILE_MAGIC",
    "holds_writers_bytes",
    "is_staging_dir",
    "is_within",
    "ancestors",
    "is_root",
    "owns_part",
    "kept_paths",
]

MANIFEST_DIR = "_tsfile_manifest"
STAGING_DIR = "_staging"
# What a replaceWhere's pre-staged rewrites record, in their job's task folder 0
# (tsfile_catalog.write.replace_staging).
PRESTAGED_NAME = "replace-staged.json"

_PART = re.compile(r"part-[0-9a-f]{32}-\d{5}\.tsfile")
_JOB = re.compile(r"[0-9a-f]{12}")
_TASK = re.compile(r"\d{5}-\d+")

# Object stores whose first path component is a bucket (container): the bucket is their root.
_BUCKET_SCHEMES = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "oss"})


def new_job_id() -> str:
    """A write job's staging folder name."""
    return uuid.uuid4().hex[:12]


def task_dir_name(partition: int, attempt: int) -> str:
    """A task attempt's folder inside its job's staging folder."""
    return f"{partition:05d}-{attempt}"


def new_part_name(partition: int) -> str:
    """A fresh part file name; the writer publishes parts under it at the table root."""
    return f"part-{uuid.uuid4().hex}-{partition:05d}.tsfile"


def is_job_id(name: str) -> bool:
    """Whether ``name`` is a job id :func:`new_job_id` makes (a staging folder's name)."""
    return _JOB.fullmatch(name) is not None


def is_part_name(name: str) -> bool:
    """Whether ``name`` is a file name :func:`new_part_name` makes."""
    return _PART.fullmatch(name) is not None


def is_vacuum_candidate(relative: str) -> bool:
    """Whether ``relative`` (to the table root) is where only the table's writer puts files.

    True for a part name at the root, and for a part name or :data:`PRESTAGED_NAME` in a
    task folder of a job folder under ``_staging/``. The caller still checks that no version
    references the file, that it is older than the retention, and that no folder on the way
    is a link or another table.
    """
    parts = relative.split("/")
    if len(parts) == 1:
        return is_part_name(parts[0])
    return (
        len(parts) == 4
        and parts[0] == STAGING_DIR
        and _JOB.fullmatch(parts[1]) is not None
        and _TASK.fullmatch(parts[2]) is not None
        and (is_part_name(parts[3]) or parts[3] == PRESTAGED_NAME)
    )


# The bytes every TsFile starts with.
TSFILE_MAGIC = b"TsFile"


def holds_writers_bytes(relative: str, head: bytes) -> bool:
    """Whether a :func:`is_vacuum_candidate` file whose first bytes are ``head`` (up to
    ``len(TSFILE_MAGIC)``) can be one the table's writers left: their parts are TsFiles, so
    it starts with :data:`TSFILE_MAGIC`, or with a piece of it (a writer killed before it
    wrote the header). A Parquet, ORC or CSV file is never one, whatever its name: an
    external part the log no longer records (after EXPIRE SNAPSHOTS) is still the user's.
    """
    if relative.rsplit("/", 1)[-1] == PRESTAGED_NAME:
        return True
    return TSFILE_MAGIC.startswith(head)


def is_staging_dir(relative: str) -> bool:
    """Whether ``relative`` is ``_staging`` or one of the job or task folders writers make."""
    parts = relative.split("/")
    if parts[0] != STAGING_DIR or len(parts) > 3:
        return False
    if len(parts) >= 2 and _JOB.fullmatch(parts[1]) is None:
        return False
    return len(parts) < 3 or _TASK.fullmatch(parts[2]) is not None


def _split(location: str) -> tuple[str, list[str]]:
    """(``scheme://`` or ``/``, path components) of a normalized location."""
    scheme, sep, rest = location.partition("://")
    if not sep:
        return "/", [p for p in location.split("/") if p]
    return f"{scheme}://", [p for p in rest.split("/") if p]


def is_within(location: str, other: str) -> bool:
    """Whether ``location`` is ``other`` or below it (both normalized, same scheme)."""
    prefix, parts = _split(location)
    other_prefix, other_parts = _split(other)
    return prefix == other_prefix and parts[: len(other_parts)] == other_parts


def ancestors(location: str) -> list[str]:
    """The folders above ``location``, nearest first, down to the file-system root (a bare
    ``scheme://`` is not a folder; a bucket is)."""
    prefix, parts = _split(location)
    out = [prefix + "/".join(parts[:n]) for n in range(len(parts) - 1, 0, -1)]
    if prefix == "/" and parts:
        out.append("/")
    return out


def is_root(location: str) -> bool:
    """Whether ``location`` is a file-system root: ``/``, ``scheme://`` or a bucket."""
    prefix, parts = _split(location)
    if prefix.removesuffix("://") in _BUCKET_SCHEMES:
        return len(parts) <= 1
    return not parts


def owns_part(part: PartFile) -> bool:
    """Whether the table owns ``part``'s file and so may ever delete it.

    The one rule every deleting path asks: an external part (added in place with ``ADD
    PART``) is only referenced, like Iceberg's ``add_files`` or CarbonData's external
    segments; dropping it from the manifest, purging or vacuuming the table never touches
    the file.
    """
    # Only the table writes TsFiles; a part of another format is a user's file even if some
    # producer forgot to mark it external.
    return part.format == "tsfile" and not part.external


def kept_paths(parts: Iterable[PartFile]) -> frozenset[str]:
    """The paths of ``parts`` the table must never delete, whatever their names.

    Every deleting path removes these from its plan: a user's Parquet file named
    ``part-<uuid>-00000.tsfile`` at the table root, or sitting in a staging folder, is still
    the user's when a version of the manifest records it as an external part.
    """
    return frozenset(p.path for p in parts if not owns_part(p))
