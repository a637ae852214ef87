"""Which files VACUUM and which log files EXPIRE SNAPSHOTS may drop: pure plans.

Retention is time-based, as in Delta Lake. A part removed from the table (by an overwrite, a
restore, ...) is still read by the versions before its removal; VACUUM deletes it only once
the commit that removed it is older than the retention, so every version that was current at
some instant within the retention stays readable (Delta's ``deletedFileRetentionDuration``).
EXPIRE SNAPSHOTS drops the commit files (and checkpoints) of versions that stopped being
current before its cutoff, keeping the version that was current at the cutoff, which a
checkpoint must cover so that it and every later version still load.

Storage, clocks and the table layer live elsewhere (:mod:`tsfile_catalog.table.vacuum`,
:mod:`tsfile_catalog.table.expire`);
everything here is a function of commits, snapshots and instants, tested in milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.metadata.manifest.model import AddPart, Commit, RemovePart, Snapshot
from tsfile_catalog.metadata.ownership import owns_part
from tsfile_catalog.metadata.parts import PartFile

__all__ = [
    "DEFAULT_DELETED_FILE_RETENTION_MS",
    "DEFAULT_LOG_RETENTION_MS",
    "DELETED_FILE_RETENTION",
    "LOG_RETENTION",
    "ExpirePlan",
    "ReclaimablePart",
    "VacuumPlan",
    "check_retention",
    "duration_ms",
    "format_duration",
    "plan_expire",
    "plan_vacuum",
    "retention_property",
]

HOUR_MS = 3_600_000
DELETED_FILE_RETENTION = "deletedFileRetention"
"""Table property: the shortest retention VACUUM accepts without ``retention_check=False``,
and its default retention (Delta's ``delta.deletedFileRetentionDuration``)."""
LOG_RETENTION = "logRetention"
"""Table property: EXPIRE SNAPSHOTS' default retention (Delta's ``delta.logRetentionDuration``)."""

DEFAULT_DELETED_FILE_RETENTION_MS = 7 * 24 * HOUR_MS
DEFAULT_LOG_RETENTION_MS = 30 * 24 * HOUR_MS

_UNITS_MS = {
    "ms": 1,
    "millisecond": 1,
    "second": 1_000,
    "s": 1_000,
    "minute": 60_000,
    "m": 60_000,
    "hour": HOUR_MS,
    "h": HOUR_MS,
    "day": 24 * HOUR_MS,
    "d": 24 * HOUR_MS,
    "week": 7 * 24 * HOUR_MS,
    "w": 7 * 24 * HOUR_MS,
}
_DURATION = re.compile(r"(?:interval\s+)?(\d+(?:\.\d+)?)\s*([a-z]+?)s?", re.IGNORECASE)


def duration_ms(text: str, *, what: str) -> int:
    """Milliseconds of a duration such as ``7 days``, ``interval 168 hours`` or ``30d``
    (Delta's ``interval`` spelling is accepted).

    Raises:
        OptionError: naming ``what`` (the property) and the text.
    """
    match = _DURATION.fullmatch(text.strip())
    unit = None if match is None else _UNITS_MS.get(match.group(2).lower())
    if match is None or unit is None:
        raise OptionError(
            f"{what} {text!r} is not a duration: use a number and a unit, such as '7 days', "
            "'168 hours' or 'interval 30 days' (units: ms, seconds, minutes, hours, days, "
            "weeks)"
        )
    return round(float(match.group(1)) * unit)


def format_duration(ms: int) -> str:
    """``ms`` in the largest whole unit (``7 days``, ``36 hours``, ``90 seconds``)."""
    for name, unit in (("day", 24 * HOUR_MS), ("hour", HOUR_MS), ("second", 1_000)):
        if ms >= unit and ms % unit == 0:
            count = ms // unit
            return f"{count} {name}" if count == 1 else f"{count} {name}s"
    return f"{ms} ms"


def retention_property(properties: Mapping[str, str], key: str, default_ms: int) -> int:
    """The duration table property ``key`` in milliseconds, ``default_ms`` when unset."""
    value = properties.get(key)
    return default_ms if value is None else duration_ms(value, what=f"table property {key!r}")


def check_retention(retention_ms: int, properties: Mapping[str, str], *, enabled: bool) -> None:
    """Refuse a VACUUM retention below the table's ``deletedFileRetention`` (Delta's
    ``retentionDurationCheck``): a shorter one may delete files that readers of a recent
    version or a running write still need.

    Raises:
        OptionError: the retention is negative, or below the property while ``enabled``.
    """
    if retention_ms < 0:
        raise OptionError(f"the retention must be >= 0, got {retention_ms} ms")
    floor = retention_property(
        properties, DELETED_FILE_RETENTION, DEFAULT_DELETED_FILE_RETENTION_MS
    )
    if enabled and retention_ms < floor:
        raise OptionError(
            f"a retention of {format_duration(retention_ms)} is below the table's "
            f"{DELETED_FILE_RETENTION} of {format_duration(floor)}: VACUUM could delete files "
            "that readers of recent versions or a running write still use. If you are sure, "
            "pass retention_check=False (SQL: set spark.tsfile.retentionDurationCheck.enabled "
            f"to false), or lower the table property {DELETED_FILE_RETENTION}"
        )


# -- VACUUM -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReclaimablePart:
    """A part no retained version references: removed by ``removed_version`` at
    ``removed_ms``, before the cutoff."""

    path: str
    size_bytes: int
    removed_version: int
    removed_ms: int


@dataclass(frozen=True, slots=True)
class VacuumPlan:
    """What VACUUM may delete of the parts the log knows.

    ``referenced`` holds every part path the known versions add or hold (an orphan is a
    writer-named file outside it). ``intact_from`` is the oldest version whose parts are all
    kept: versions before it may have lost files (None: nothing is reclaimed).
    """

    reclaimable: tuple[ReclaimablePart, ...]
    referenced: frozenset[str]
    intact_from: int | None

    @property
    def bytes(self) -> int:
        return sum(p.size_bytes for p in self.reclaimable)


def plan_vacuum(base: Snapshot, commits: Sequence[Commit], *, cutoff_ms: int) -> VacuumPlan:
    """The parts removed before ``cutoff_ms`` and not in the table again since.

    ``base`` is the oldest version the log can load (version 0, or the checkpoint an expiry
    kept) and ``commits`` the commits after it, in order. A part is reclaimable when its last
    removal committed strictly before ``cutoff_ms`` and no later commit added it back (RESTORE
    re-adds paths): then only versions older than the cutoff ever read it. Parts that are
    not the table's own data (:func:`~tsfile_catalog.metadata.ownership.owns_part`: an
    external part) are never reclaimable.
    """
    known: dict[str, PartFile] = {p.path: p for p in base.parts}
    removed: dict[str, ReclaimablePart] = {}
    for commit in commits:
        for action in commit.actions:
            if isinstance(action, AddPart):
                known[action.part.path] = action.part
                removed.pop(action.part.path, None)
            elif isinstance(action, RemovePart):
                part = known.get(action.path)
                size = action.size_bytes or (part.size_bytes if part is not None else 0)
                removed[action.path] = ReclaimablePart(
                    action.path, size, commit.version, commit.info.timestamp_ms
                )
    reclaimable = tuple(
        sorted(
            (
                r
                for r in removed.values()
                if r.removed_ms < cutoff_ms and (r.path not in known or owns_part(known[r.path]))
            ),
            key=lambda r: r.path,
        )
    )
    intact_from = max((r.removed_version for r in reclaimable), default=None)
    return VacuumPlan(reclaimable, frozenset(known), intact_from)


# -- EXPIRE SNAPSHOTS -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExpirePlan:
    """Which log files go: the commits of versions before ``oldest_kept`` and the
    checkpoints before it. ``checkpoint_needed`` says no checkpoint covers ``oldest_kept``
    yet: one must be written before anything is deleted."""

    oldest_kept: int
    expired_versions: tuple[int, ...]
    expired_checkpoints: tuple[int, ...]
    checkpoint_needed: bool


def plan_expire(
    commits: Iterable[tuple[int, int]],
    checkpoints: Iterable[int],
    *,
    cutoff_ms: int | None,
    retain_last: int | None = None,
) -> ExpirePlan:
    """Which versions EXPIRE SNAPSHOTS drops.

    Args:
        commits: (version, commit timestamp in epoch ms) of every commit file, oldest first.
        checkpoints: the versions checkpoints exist for.
        cutoff_ms: versions that stopped being current before this instant go; the version
            current at the instant stays (``TIMESTAMP AS OF`` the cutoff still works). None:
            no time limit (only ``retain_last`` applies).
        retain_last: keep at least this many of the newest versions.

    Raises:
        OptionError: ``retain_last`` is below 1, or neither limit is given.
    """
    if retain_last is not None and retain_last < 1:
        raise OptionError(f"RETAIN LAST needs at least 1 version, got {retain_last}")
    if cutoff_ms is None and retain_last is None:
        raise OptionError("EXPIRE SNAPSHOTS needs a retention, a cutoff or RETAIN LAST")
    log = list(commits)
    if not log:
        raise OptionError("the table has no commits to expire")
    versions = [v for v, _ in log]
    keep = versions[-1]
    if cutoff_ms is not None:
        # The newest version committed at or before the cutoff was current at the cutoff.
        at_cutoff = [v for v, ts in log if ts <= cutoff_ms]
        keep = at_cutoff[-1] if at_cutoff else versions[0]
    if retain_last is not None:
        keep = min(keep, versions[max(len(versions) - retain_last, 0)])
    keep = max(keep, versions[0])
    present = set(checkpoints)
    expired = tuple(v for v in versions if v < keep)
    return ExpirePlan(
        oldest_kept=keep,
        expired_versions=expired,
        expired_checkpoints=tuple(sorted(c for c in present if c < keep)),
        checkpoint_needed=bool(expired) and keep not in present,
    )
