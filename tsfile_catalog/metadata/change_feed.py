"""The change data feed, the pure decisions: which versions a range covers and which parts each
commit's changes are computed from (no I/O, no Arrow).

The changes of commit ``v`` are the difference between the table's rows at ``v - 1`` and at
``v`` (Delta's Change Data Feed, Iceberg's changelog view). They are not recorded at commit
time: the parts a commit removed stay on storage until VACUUM, so the rows before and after
are still there to compare (docs/sql.md, "Change data feed"). Only rows that can differ are
read:

* a ``key.duplicates = keep`` table is the multiset of its parts' rows, so what commit ``v``
  changed is exactly the rows of the parts it removed against the rows of the parts it added;
* in a ``last`` table a row holds a key (TAG values, time) that a later write may replace, so
  the rows compared are those of every part that may share a key with a part the commit
  removed or added, merged by key, before and after (a key no such part holds reads the same
  on both sides, so it shows no change);
* a commit that changed the key mode itself compares the whole table.

Commits that only rearranged rows (``data_change = False``: OPTIMIZE) change nothing. The
reading and the comparison are :mod:`tsfile_catalog.exec.change_feed`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tsfile_catalog.exceptions import OptionError, VersionNotFoundError
from tsfile_catalog.metadata.key import KeyMode, may_share_key
from tsfile_catalog.metadata.parts import PartFile

__all__ = [
    "CHANGE_TYPE",
    "COMMIT_VERSION",
    "COMMIT_TIMESTAMP",
    "CHANGE_COLUMNS",
    "INSERT",
    "DELETE",
    "UPDATE_PREIMAGE",
    "UPDATE_POSTIMAGE",
    "CommitChanges",
    "plan_commit",
    "oldest_readable",
    "check_range",
]

CHANGE_TYPE = "_change_type"
COMMIT_VERSION = "_commit_version"
COMMIT_TIMESTAMP = "_commit_timestamp"
CHANGE_COLUMNS = (CHANGE_TYPE, COMMIT_VERSION, COMMIT_TIMESTAMP)
"""The columns a change feed adds to the table's (Delta's and Spark's ``Changelog`` names)."""

INSERT = "insert"
DELETE = "delete"
UPDATE_PREIMAGE = "update_preimage"
UPDATE_POSTIMAGE = "update_postimage"


@dataclass(frozen=True)
class CommitChanges:
    """What the changes of commit ``version`` are computed from: the rows of ``before``
    (parts of version ``version - 1``, read with ``before_key``) against those of ``after``
    (parts of ``version``, read with ``after_key``)."""

    version: int
    timestamp_ms: int
    before: tuple[PartFile, ...]
    after: tuple[PartFile, ...]
    before_key: KeyMode
    after_key: KeyMode
    # The parts the commit removed or added (paths), when the other parts of ``before`` and
    # ``after`` were taken only because they may share a key with them: only the keys these
    # hold can have changed.
    touched: frozenset[str] = frozenset()

    @property
    def empty(self) -> bool:
        return not self.before and not self.after

    @property
    def row_count(self) -> int:
        """The rows read to compute it (what a stream's row limit counts)."""
        return sum(p.row_count for p in (*self.before, *self.after))


def plan_commit(
    version: int,
    timestamp_ms: int,
    *,
    data_change: bool,
    before: Sequence[PartFile],
    after: Sequence[PartFile],
    before_key: KeyMode,
    after_key: KeyMode,
) -> CommitChanges:
    """The parts commit ``version`` is compared by: ``before`` and ``after`` are every part of
    the versions before and after it (empty before version 0).

    Parts are matched by path: a part in both lists is unchanged (parts are immutable).
    """
    if not data_change:
        return CommitChanges(version, timestamp_ms, (), (), before_key, after_key)
    if before_key != after_key:
        # The same parts read differently: every row may have changed.
        return CommitChanges(
            version, timestamp_ms, tuple(before), tuple(after), before_key, after_key
        )
    after_paths = {p.path for p in after}
    before_paths = {p.path for p in before}
    removed = [p for p in before if p.path not in after_paths]
    added = [p for p in after if p.path not in before_paths]
    if after_key == "keep" or not (removed or added):
        return CommitChanges(
            version, timestamp_ms, tuple(removed), tuple(added), before_key, after_key
        )
    touched = [*removed, *added]
    scope_before = _key_scope(before, touched)
    scope_after = _key_scope(after, touched)
    if not removed and min(p.key_sequence for p in added) > max(
        (p.key_sequence for p in scope_before), default=-1
    ):
        # An append that outranks every row it may replace (a correction, a MERGE's new
        # rows): after it, each of its keys reads its own rows, so the other parts need
        # reading only once, for the rows before.
        scope_after = tuple(added)
    return CommitChanges(
        version,
        timestamp_ms,
        scope_before,
        scope_after,
        before_key,
        after_key,
        frozenset(p.path for p in touched),
    )


def _key_scope(parts: Sequence[PartFile], touched: Sequence[PartFile]) -> tuple[PartFile, ...]:
    """The parts of one version that may hold a key a part of ``touched`` holds (themselves
    included): every row those keys resolve to on that side."""
    paths = {p.path for p in touched}
    return tuple(
        p
        for p in parts
        if p.path in paths or any(may_share_key(p, t) for t in touched if t.path != p.path)
    )


def oldest_readable(first_logged: int, intact_from: int | None) -> int:
    """The oldest version whose changes can be read: the changes of ``v`` need version
    ``v - 1`` (its log, and its parts on storage).

    Args:
        first_logged: the oldest version the log keeps (EXPIRE SNAPSHOTS removes older ones).
        intact_from: the vacuum record's oldest version whose parts are all on storage, None
            when nothing was vacuumed.
    """
    oldest = 0 if first_logged == 0 else first_logged + 1
    if intact_from is not None and intact_from > 0:
        oldest = max(oldest, intact_from + 1)
    return oldest


def check_range(
    start: int, end: int, *, oldest: int, latest: int, location: str, what: str = "startingVersion"
) -> None:
    """Refuse a range ``start..end`` (both included) the log cannot answer.

    Raises:
        OptionError: ``end`` before ``start``, or ``start`` after the latest version.
        VersionNotFoundError: ``start`` before the oldest readable version (expired or
            vacuumed), naming it.
    """
    if start > latest:
        raise OptionError(
            f"change feed of {location}: {what} {start} is after the latest version, {latest}"
        )
    if end < start:
        raise OptionError(
            f"change feed of {location}: the range ends at version {end}, before it starts "
            f"({start})"
        )
    if start < oldest:
        raise VersionNotFoundError(
            f"change feed of {location}: the changes of version {start} are no longer "
            "readable (EXPIRE SNAPSHOTS or VACUUM removed the versions before them); the "
            f"oldest version whose changes can be read is {oldest}"
        )
