"""The change data feed of a table, read from its log: which versions a range covers and what
each commit's changes are computed from (:mod:`tsfile_catalog.metadata.change_feed` decides,
:mod:`tsfile_catalog.exec.change_feed` reads and compares). Spark-free: ``Table.changes``,
the ``readChangeFeed`` option of the Spark source, ``table_changes`` and ``CHANGES FROM``
all plan here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from tsfile_catalog.exceptions import OptionError, VersionNotFoundError
from tsfile_catalog.exec.change_feed import change_schema, commit_changes, net_changes
from tsfile_catalog.exec.read import NORMALIZED_ARROW
from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.change_feed import (
    CommitChanges,
    check_range,
    oldest_readable,
    plan_commit,
)
from tsfile_catalog.metadata.expressions import TimestampAs, TimeUnit
from tsfile_catalog.metadata.key import key_mode
from tsfile_catalog.metadata.manifest import Snapshot
from tsfile_catalog.metadata.manifest.snapshot import apply
from tsfile_catalog.metadata.schema import TIME_COLUMN, DataType
from tsfile_catalog.table.cache import identify
from tsfile_catalog.table.log import list_log, no_table, read_commits, read_vacuum_record
from tsfile_catalog.table.snapshots import (
    commit_info,
    load_snapshot,
    time_travel_ms,
    version_at,
)

__all__ = ["ChangeFeed", "changes_table", "plan_change_feed"]


@dataclass(frozen=True)
class ChangeFeed:
    """The changes of versions ``start..end`` (both included) of the table at ``scan.base``:
    one :class:`~tsfile_catalog.metadata.change_feed.CommitChanges` per commit that may have
    changed rows, read with ``scan`` (the schema of version ``end``)."""

    scan: ResolvedScan
    start: int
    end: int
    end_timestamp_ms: int
    commits: tuple[CommitChanges, ...]

    @property
    def raw_schema(self) -> pa.Schema:
        """The rows' schema: the table's columns in the raw domain, then the change columns."""
        return change_schema(_raw_schema(self.scan))

    def read(self, commit: CommitChanges) -> pa.Table:
        """One commit's change rows (raw domain)."""
        return commit_changes(self.scan, commit)

    def batches(self) -> Iterator[pa.Table]:
        for commit in self.commits:
            table = self.read(commit)
            if table.num_rows:
                yield table

    def to_arrow(self, *, net: bool = False) -> pa.Table:
        """Every change row, commit by commit (raw domain); with ``net``, the net changes of
        the whole range instead (:func:`~tsfile_catalog.exec.change_feed.net_changes`)."""
        tables = [t.cast(self.raw_schema) for t in self.batches()]
        rows = pa.concat_tables(tables) if tables else self.raw_schema.empty_table()
        if not net:
            return rows
        keys = [*self.scan.schema.tag_names, TIME_COLUMN]
        return net_changes(rows, keys, self.end, self.end_timestamp_ms)


def _raw_schema(scan: ResolvedScan) -> pa.Schema:
    fields = []
    for name in scan.schema.display_names:
        if name == TIME_COLUMN:
            fields.append(pa.field(name, pa.int64()))
            continue
        column = scan.schema.column(name)
        assert column is not None
        fields.append(pa.field(name, NORMALIZED_ARROW[column.type]))
    return pa.schema(fields)


def plan_change_feed(
    url: str,
    *,
    starting_version: int | None = None,
    ending_version: int | None = None,
    starting_timestamp: str | int | None = None,
    ending_timestamp: str | int | None = None,
    time_zone: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
    use_cache: bool = True,
) -> ChangeFeed:
    """The change feed of the table at ``url`` between two versions, both included (Delta's
    ``startingVersion``/``endingVersion``; the timestamp forms take the first commit at or
    after ``starting_timestamp`` and the last at or before ``ending_timestamp``). Without an
    end, up to the latest version.

    Raises:
        OptionError: no start, both forms of one bound, an end before the start, a start or
            end after the latest version.
        VersionNotFoundError: a start before the oldest version whose changes can be read
            (EXPIRE SNAPSHOTS, VACUUM), naming it.
        TableNotFoundError: no table at ``url``.
    """
    io = FileIO(url, storage_options)
    location = io.normalize(url)
    listing = list_log(io, location)
    if not listing.commits:
        raise no_table(io, location)
    latest = listing.latest
    intact_from = read_vacuum_record(io, location) if listing.vacuumed else None
    oldest = oldest_readable(listing.commits[0], intact_from)

    def at_ms(value: str | int) -> int:
        return time_travel_ms(value, time_zone=time_zone)

    def commit_ms(version: int) -> int:
        uuid = identify(io, location, listing, use_cache=use_cache)
        return commit_info(io, location, uuid, version, use_cache=use_cache).timestamp_ms

    if starting_version is not None and starting_timestamp is not None:
        raise OptionError(
            "options 'startingVersion' and 'startingTimestamp' are mutually exclusive"
        )
    if ending_version is not None and ending_timestamp is not None:
        raise OptionError("options 'endingVersion' and 'endingTimestamp' are mutually exclusive")
    what = "startingVersion"
    if starting_version is not None:
        start = starting_version
    elif starting_timestamp is not None:
        what = "the first version at or after startingTimestamp, version"
        wanted = at_ms(starting_timestamp)
        try:
            before = version_at(io, location, listing, wanted, use_cache=use_cache)
            start = before if commit_ms(before) == wanted else before + 1
        except VersionNotFoundError:
            start = listing.commits[0]
        if start > latest:
            raise OptionError(
                f"change feed of {location}: startingTimestamp {starting_timestamp!r} is after "
                f"the latest commit (version {latest})"
            )
    else:
        raise OptionError(
            "a change feed needs option 'startingVersion' or 'startingTimestamp' (the first "
            "version whose changes are read)"
        )
    if ending_version is not None:
        if ending_version > latest:
            raise OptionError(
                f"change feed of {location}: endingVersion {ending_version} is after the "
                f"latest version, {latest}"
            )
        end = ending_version
    elif ending_timestamp is not None:
        try:
            end = version_at(io, location, listing, at_ms(ending_timestamp), use_cache=use_cache)
        except VersionNotFoundError as e:
            raise OptionError(
                f"change feed of {location}: endingTimestamp {ending_timestamp!r} is before the "
                "first commit kept"
            ) from e
    else:
        end = latest
    if start < 0:
        raise OptionError(f"option 'startingVersion' = {start} must be at least 0")
    check_range(start, end, oldest=oldest, latest=latest, location=location, what=what)

    previous = (
        None if start == 0 else load_snapshot(io, location, listing, start - 1, use_cache=use_cache)
    )
    commits = read_commits(
        io, location, listing, start, end, None if previous is None else previous.schema
    )
    planned = []
    snapshot: Snapshot | None = previous
    for commit in commits:
        after = apply(snapshot, commit)
        planned.append(_plan(snapshot, after, commit.info.data_change))
        snapshot = after
    assert snapshot is not None
    scan = ResolvedScan(location, snapshot.schema, (), snapshot.version, io=io)
    return ChangeFeed(
        scan, start, end, snapshot.timestamp_ms, tuple(c for c in planned if not c.empty)
    )


def _plan(before: Snapshot | None, after: Snapshot, data_change: bool) -> CommitChanges:
    return plan_commit(
        after.version,
        after.timestamp_ms,
        data_change=data_change,
        before=() if before is None else tuple(before.parts),
        after=tuple(after.parts),
        before_key=key_mode(after.properties if before is None else before.properties),
        after_key=key_mode(after.properties),
    )


def changes_table(
    url: str,
    *,
    timestamp_as: TimestampAs,
    unit: TimeUnit,
    net: bool = False,
    **range_options: Any,
) -> pa.Table:
    """:func:`plan_change_feed`'s rows as one Arrow table (``Table.changes``).

    Columns: the table's (the schema of the range's last version), then ``_change_type``
    (``insert``, ``delete``, ``update_preimage``, ``update_postimage``), ``_commit_version``
    and ``_commit_timestamp``. ``time`` and TIMESTAMP columns are raw int64
    (``timestamp_as='long'``) or UTC timestamps in ``unit``.

    Args:
        net: the net changes of the whole range instead (a row changed and changed back
            shows nothing; each row carries the range's last version): the key-wise
            difference between the version before the range and its last.
        range_options: :func:`plan_change_feed`'s bounds (versions, or timestamps: the
            first commit at or after ``starting_timestamp``, the last at or before
            ``ending_timestamp``; epoch ms or ISO-8601, naive ones in ``time_zone``).

    Raises:
        OptionError: no start, an end before the start or after the latest version.
        VersionNotFoundError: a start whose changes expiry or VACUUM removed, naming the
            oldest readable version.
    """
    feed = plan_change_feed(url, **range_options)
    raw = feed.to_arrow(net=net)
    if timestamp_as == "long":
        return raw
    if timestamp_as != "timestamp":
        raise OptionError(f"timestamp_as = {timestamp_as!r}; use 'long' or 'timestamp'")
    stamp = pa.timestamp(unit, tz="UTC")
    timestamps = {TIME_COLUMN} | {
        c.name for c in feed.scan.schema.columns if c.type is DataType.TIMESTAMP
    }
    fields = [
        pa.field(f.name, stamp, f.nullable) if f.name in timestamps else f for f in raw.schema
    ]
    return raw.cast(pa.schema(fields))
