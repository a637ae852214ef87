"""The ``_tsfile_manifest/`` folder: how its files are named, listed and read.

A table's log holds numbered commit files (``00000000000000000000.json``, ...), a checkpoint
of the full snapshot every :data:`CHECKPOINT_INTERVAL` commits
(``00000000000000000010.checkpoint.parquet``; earlier releases wrote
``00000000000000000010.checkpoint.json``, still read) and a ``_last_checkpoint`` hint. The committed
versions are exactly the commit files a listing finds; checkpoints and the hint are derived
data and never trusted over the commits. ``docs/manifest-format.md`` has the details.
Nothing here caches, and the only file written is a checkpoint (derived data): this is the
storage side of the log, below the commit loop.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from tsfile_catalog.exceptions import CorruptManifestError, TableNotFoundError
from tsfile_catalog.io import FileIO, join_url
from tsfile_catalog.metadata.manifest import (
    Commit,
    Snapshot,
    decode_commit,
    decode_snapshot,
    written_format_version,
)
from tsfile_catalog.metadata.ownership import MANIFEST_DIR
from tsfile_catalog.metadata.schema import TableSchema

__all__ = [
    "CHECKPOINT_INTERVAL",
    "COMMIT_NAME",
    "LAST_CHECKPOINT",
    "Listing",
    "checkpoint_url",
    "checkpoint_urls",
    "parquet_checkpoint_url",
    "commit_url",
    "has_start",
    "list_log",
    "log_intact",
    "log_url",
    "no_table",
    "open_log",
    "read_checkpoint",
    "read_commits",
    "read_log_file",
    "write_checkpoint",
    "VACUUM_RECORD",
    "read_vacuum_record",
    "vacuum_record_url",
]

LAST_CHECKPOINT = "_last_checkpoint"
# Written by VACUUM before it deletes removed parts: versions before ``intact_from`` may
# have lost files (derived data, like the checkpoint hint; see docs/manifest-format.md).
VACUUM_RECORD = "_vacuumed"
CHECKPOINT_INTERVAL = 10

COMMIT_NAME = re.compile(r"^(\d{20})\.json$")
_CHECKPOINT_NAME = re.compile(r"^(\d{20})\.checkpoint\.(json|parquet)$")


def log_url(location: str) -> str:
    return join_url(location, MANIFEST_DIR)


def commit_url(location: str, version: int) -> str:
    return join_url(location, MANIFEST_DIR, f"{version:020d}.json")


def checkpoint_url(location: str, version: int) -> str:
    """The JSON checkpoint of ``version`` (written by earlier releases)."""
    return join_url(location, MANIFEST_DIR, f"{version:020d}.checkpoint.json")


def parquet_checkpoint_url(location: str, version: int) -> str:
    """The Parquet checkpoint of ``version`` (what this release writes)."""
    return join_url(location, MANIFEST_DIR, f"{version:020d}.checkpoint.parquet")


def checkpoint_urls(location: str, version: int) -> tuple[str, str]:
    """Both forms a checkpoint of ``version`` may have (what expiry deletes)."""
    return checkpoint_url(location, version), parquet_checkpoint_url(location, version)


@dataclass(frozen=True)
class Listing:
    commits: tuple[int, ...]
    checkpoints: tuple[int, ...]
    # The oldest commit file and its storage stamp, taken with the listing (None when the
    # store gives no stamp): it identifies the table without reading it (see
    # tsfile_catalog.table.cache.identify).
    oldest: tuple[int, str] | None = None
    # Whether the log holds a vacuum record (so time travel reads it only after a vacuum).
    vacuumed: bool = False
    # The versions in ``checkpoints`` that have a Parquet checkpoint (read in preference to
    # a JSON one of the same version).
    parquet_checkpoints: frozenset[int] = frozenset()

    @property
    def latest(self) -> int:
        return self.commits[-1]


def list_log(io: FileIO, location: str) -> Listing:
    commits: list[int] = []
    checkpoints: set[int] = set()
    parquet: set[int] = set()
    stamps = io.list_stamped(log_url(location))
    for name in stamps:
        if match := COMMIT_NAME.match(name):
            commits.append(int(match.group(1)))
        elif match := _CHECKPOINT_NAME.match(name):
            checkpoints.add(int(match.group(1)))
            if match.group(2) == "parquet":
                parquet.add(int(match.group(1)))
    commits.sort()
    oldest = None
    if commits:
        first = commits[0]
        stamp = stamps[f"{first:020d}.json"] or io.stamp(commit_url(location, first))
        oldest = None if stamp is None else (first, stamp)
    return Listing(
        tuple(commits),
        tuple(sorted(checkpoints)),
        oldest,
        VACUUM_RECORD in stamps,
        frozenset(parquet),
    )


def has_start(listing: Listing) -> bool:
    """Whether the log in ``listing`` can be loaded from somewhere: it holds version 0, or a
    checkpoint whose own commit is there (what an expiry leaves, finished or interrupted). A
    purge removes the checkpoints and then the oldest commit before anything else of the
    log, so from then on no process can load the table, and a commit that lands is known to
    have landed in a dropped table."""
    present = set(listing.commits)
    return 0 in present or any(c in present for c in listing.checkpoints)


def log_intact(io: FileIO, location: str) -> bool:
    """:func:`has_start` for the log at ``location`` now: one existence check for most
    tables (version 0 is there), a listing for an expired one."""
    return io.exists(commit_url(location, 0)) or has_start(list_log(io, location))


def no_table(io: FileIO, location: str) -> TableNotFoundError:
    if io.isdir(log_url(location)):
        return TableNotFoundError(
            f"no tsfile-catalog table at {location}: its {MANIFEST_DIR}/ holds no commit (the "
            "first commit never completed; the first write creates the table)"
        )
    return TableNotFoundError(f"no tsfile-catalog table at {location} (no {MANIFEST_DIR}/)")


def open_log(io: FileIO, location: str) -> Listing:
    """The listing of the table at ``location``, which maintenance requires to exist.

    Raises:
        TableNotFoundError: the log holds no commit.
    """
    listing = list_log(io, location)
    if not listing.commits:
        raise TableNotFoundError(f"no tsfile-catalog table at {location} (no {MANIFEST_DIR}/)")
    return listing


def read_log_file(io: FileIO, url: str, what: str) -> bytes:
    """The bytes of a commit or checkpoint file; whatever stands in its place instead of a
    readable file is a :class:`CorruptManifestError` naming it."""
    try:
        return io.read_bytes(url)
    except FileNotFoundError as e:
        raise CorruptManifestError(f"{what} file {url} is missing") from e
    except IsADirectoryError as e:
        raise CorruptManifestError(f"{what} file {url} is a directory, not a file") from e


def read_commits(
    io: FileIO, location: str, listing: Listing, start: int, stop: int, schema: TableSchema | None
) -> list[Commit]:
    """Commits ``start..stop`` (inclusive), each decoded with the schema in force before it."""
    present = set(listing.commits)
    out = []
    for version in range(start, stop + 1):
        url = commit_url(location, version)
        if version not in present:
            raise CorruptManifestError(f"commit file {url} for version {version} is missing")
        commit = decode_commit(read_log_file(io, url, "commit"), schema, source=url)
        if commit.version != version:
            raise CorruptManifestError(f"commit file {url} claims to be version {commit.version}")
        schema = commit.new_schema() or schema
        out.append(commit)
    return out


def read_checkpoint(
    io: FileIO,
    location: str,
    version: int,
    legacy_table_uuid: Callable[[], str],
    *,
    parquet: bool = False,
) -> Snapshot:
    """The checkpoint of ``version``: the Parquet one with ``parquet``, else the JSON one."""
    if parquet:
        # Imported here: the codec needs pyarrow, which only tables that have a Parquet
        # checkpoint load (the CLI's metadata commands on a young table never do).
        from tsfile_catalog.table.checkpoint_parquet import decode_parquet_snapshot

        url = parquet_checkpoint_url(location, version)
        data = read_log_file(io, url, "checkpoint")
        snapshot = decode_parquet_snapshot(data, source=url, legacy_table_uuid=legacy_table_uuid)
    else:
        url = checkpoint_url(location, version)
        data = read_log_file(io, url, "checkpoint")
        snapshot = decode_snapshot(data, source=url, legacy_table_uuid=legacy_table_uuid)
    if snapshot.version != version:
        raise CorruptManifestError(f"checkpoint file {url} holds version {snapshot.version}")
    return snapshot


def write_checkpoint(io: FileIO, location: str, snapshot: Snapshot, *, hint: bool = True) -> None:
    """Create the Parquet checkpoint of ``snapshot`` (only if absent) and, with ``hint``,
    point the ``_last_checkpoint`` hint at it (expiry checkpoints an older version: no hint).

    Raises:
        FileExistsError: the checkpoint exists (a concurrent writer made the same one).
        OSError: storage failed (checkpoints are derived data: callers log and go on).
    """
    # Imported here: the codec needs pyarrow, loaded only when a checkpoint is due.
    from tsfile_catalog.table.checkpoint_parquet import encode_parquet_snapshot

    io.create_exclusive(
        parquet_checkpoint_url(location, snapshot.version), encode_parquet_snapshot(snapshot)
    )
    if hint:
        latest = {
            "version": snapshot.version,
            "format_version": written_format_version(snapshot.parts, snapshot.schema),
            "format": "parquet",
        }
        hint_bytes = json.dumps(latest, separators=(",", ":")).encode()
        io.write_bytes(join_url(location, MANIFEST_DIR, LAST_CHECKPOINT), hint_bytes)


def vacuum_record_url(location: str) -> str:
    return join_url(location, MANIFEST_DIR, VACUUM_RECORD)


def read_vacuum_record(io: FileIO, location: str) -> int | None:
    """The oldest version VACUUM left intact (every older one may miss files), or None when
    no vacuum deleted removed parts. An unreadable record reads as None: it only sharpens
    the error of a read that would fail anyway."""
    try:
        obj = json.loads(io.read_bytes(vacuum_record_url(location)))
        return int(obj["intact_from"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
