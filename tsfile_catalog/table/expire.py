"""EXPIRE SNAPSHOTS: removing the commit files and checkpoints of old versions.

Which versions and checkpoints go is the pure plan of :mod:`tsfile_catalog.metadata.retention`;
this module reads the commit timestamps it plans on, writes the checkpoint the oldest kept
version needs, and deletes the rest. Data files are VACUUM's (:mod:`tsfile_catalog.table.vacuum`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.manifest import decode_commit_info
from tsfile_catalog.metadata.retention import (
    DEFAULT_LOG_RETENTION_MS,
    LOG_RETENTION,
    ExpirePlan,
    plan_expire,
    retention_property,
)
from tsfile_catalog.table.commits import now_ms
from tsfile_catalog.table.log import (
    checkpoint_urls,
    commit_url,
    open_log,
    read_log_file,
    write_checkpoint,
)
from tsfile_catalog.table.snapshots import load_snapshot, time_travel_ms

__all__ = ["Expired", "expire_snapshots"]


@dataclass(frozen=True)
class Expired:
    """What EXPIRE SNAPSHOTS removed (or would remove): the versions whose commit files go,
    the checkpoints that go, and the oldest version left (covered by a checkpoint)."""

    oldest_kept: int
    versions: tuple[int, ...]
    checkpoints: tuple[int, ...]
    checkpoint_written: bool


def expire_snapshots(
    url: str,
    *,
    older_than: str | int | None = None,
    retention_ms: int | None = None,
    retain_last: int | None = None,
    time_zone: str | None = None,
    dry_run: bool = False,
    storage_options: Mapping[str, Any] | None = None,
) -> Expired:
    """Remove the commit files and checkpoints of versions that stopped being current
    before a cutoff (Iceberg's ``expire_snapshots``, Delta's log cleanup).

    The version current at the cutoff stays, and a checkpoint of it is written first when
    none exists, so it and every later version still load; older versions are gone from
    history and time travel (a :class:`VersionNotFoundError` names the oldest available
    version). Data files are not touched: parts only old versions used are VACUUM's.

    Args:
        older_than: the cutoff instant (epoch ms or ISO-8601, naive in ``time_zone``).
        retention_ms: the cutoff is this long ago, when ``older_than`` is not given. Without
            either, the cutoff is the table property ``logRetention`` ago (default 30 days).
        retain_last: a floor: keep at least this many of the newest versions even when they
            are older than the cutoff. It never makes a younger version expire (Iceberg's
            ``retain_last``).

    Raises:
        TableNotFoundError: no manifest at ``url``.
        OptionError: both ``older_than`` and ``retention_ms``, a negative retention,
            ``retain_last`` below 1, or a table written before table UUIDs (its identity is
            derived from its first commit file, which must stay).
    """
    if older_than is not None and retention_ms is not None:
        raise OptionError("pass either older_than or retention_ms, not both")
    if retention_ms is not None and retention_ms < 0:
        raise OptionError(f"the retention must be >= 0, got {retention_ms} ms")
    io = FileIO(url, storage_options)
    location = io.normalize(url)
    listing = open_log(io, location)
    latest = load_snapshot(io, location, listing, listing.latest, use_cache=True)
    # Iceberg's semantics: only versions older than the cutoff go, whatever ``retain_last``
    # says; the cutoff defaults to the table's age (RETAIN LAST alone once expired versions
    # made minutes ago).
    if older_than is not None:
        cutoff = time_travel_ms(older_than, time_zone=time_zone)
    else:
        if retention_ms is None:
            retention_ms = retention_property(
                latest.properties, LOG_RETENTION, DEFAULT_LOG_RETENTION_MS
            )
        cutoff = now_ms() - retention_ms
    infos = []
    for version in listing.commits:
        source = commit_url(location, version)
        info, table_uuid = decode_commit_info(read_log_file(io, source, "commit"), source=source)
        infos.append((version, info.timestamp_ms, table_uuid))
    plan = plan_expire(
        [(v, ts) for v, ts, _ in infos],
        listing.checkpoints,
        cutoff_ms=cutoff,
        retain_last=retain_last,
    )
    if plan.expired_versions:
        kept_uuid = next(u for v, _, u in infos if v == plan.oldest_kept)
        if kept_uuid is None:
            raise OptionError(
                f"EXPIRE SNAPSHOTS on table {location}: its commits record no table UUID "
                "(written by an older release), so its identity comes from its first commit "
                "file, which must stay; nothing was expired"
            )
    if dry_run or not plan.expired_versions:
        return _expired(plan, written=False)
    written = False
    if plan.checkpoint_needed:
        snapshot = load_snapshot(io, location, listing, plan.oldest_kept, use_cache=True)
        try:
            write_checkpoint(io, location, snapshot, hint=False)
            written = True
        except FileExistsError:
            pass  # a concurrent expiry wrote the same checkpoint
    # Oldest first: the log stays a contiguous run of versions, whatever stops this.
    for version in plan.expired_versions:
        io.delete_files([commit_url(location, version)])
    io.delete_files([u for v in plan.expired_checkpoints for u in checkpoint_urls(location, v)])
    return _expired(plan, written=written)


def _expired(plan: ExpirePlan, *, written: bool) -> Expired:
    return Expired(plan.oldest_kept, plan.expired_versions, plan.expired_checkpoints, written)
