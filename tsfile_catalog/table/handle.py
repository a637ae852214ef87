"""The table handle: :class:`Table`, :func:`open_table` and :func:`create_table`.

This is the only module that builds a :class:`Table`. It sits on top of the table layer: the
snapshot it holds comes from :mod:`~tsfile_catalog.table.snapshots` (loading and time travel),
and its verbs are namespaces over the modules below it (``table.maintenance``,
``table.alter``), which import :class:`Table` only for type checking.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from tsfile_catalog.exceptions import (
    TableNotFoundError,
)
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.completeness import completeness
from tsfile_catalog.metadata.expressions import BindContext, Expr, TimestampAs, TimeUnit
from tsfile_catalog.metadata.key import key_mode
from tsfile_catalog.metadata.manifest import (
    CommitInfo,
    Snapshot,
)
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.scan import PartWindow, ScanPlan, plan_scan
from tsfile_catalog.metadata.schema import TableSchema
from tsfile_catalog.metadata.table_time import (
    TableTime,
    table_time,
    table_unit,
)
from tsfile_catalog.progress import Progress
from tsfile_catalog.table import ownership
from tsfile_catalog.table.alter import Alter
from tsfile_catalog.table.cache import CACHE, identify
from tsfile_catalog.table.log import list_log
from tsfile_catalog.table.maintenance import Maintenance
from tsfile_catalog.table.optimize import DeleteResult, delete
from tsfile_catalog.table.snapshots import commit_info, resolve_snapshot

if TYPE_CHECKING:
    import pyarrow as pa

    from tsfile_catalog.exec.table_scan import TableScan
    from tsfile_catalog.formats.tsfile import WriteSettings
    from tsfile_catalog.table.part_index import PartIndex
    from tsfile_catalog.table.rewrite_tasks import TaskRunner
    from tsfile_catalog.table.update import UpdateResult
    from tsfile_catalog.write.rows import WriteData

__all__ = ["Table", "open_table"]


class Table:
    """One version of a table: its schema, parts and properties, plus its history."""

    def __init__(self, io: FileIO, location: str, snapshot: Snapshot, *, use_cache: bool) -> None:
        self._io = io
        self._location = location
        self._snapshot = snapshot
        self._use_cache = use_cache
        self._index: PartIndex | None = None

    def __repr__(self) -> str:
        return f"Table({self._location!r}, version={self.version})"

    @property
    def location(self) -> str:
        """The table root URL (local paths absolute, without a scheme)."""
        return self._location

    @property
    def io(self) -> FileIO:
        return self._io

    @property
    def table_uuid(self) -> str:
        """The table's identity, assigned when it was created (version 0) and kept by every
        version: a table dropped and recreated at the same location has another one. Tables
        written before table UUIDs get one derived from their version-0 commit file."""
        return self._snapshot.table_uuid

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    @property
    def version(self) -> int:
        return self._snapshot.version

    @property
    def timestamp_ms(self) -> int:
        """When this version was committed (epoch milliseconds)."""
        return self._snapshot.timestamp_ms

    @property
    def schema(self) -> TableSchema:
        return self._snapshot.schema

    @property
    def schema_id(self) -> int:
        return self._snapshot.schema_id

    @property
    def properties(self) -> Mapping[str, str]:
        return self._snapshot.properties

    @property
    def time(self) -> TableTime | None:
        """What the table records about its time: the unit of its raw times and whether
        ``time`` is a TIMESTAMP or a BIGINT (``time.unit``/``time.type`` properties); None
        for a table created before they were recorded (read in the unit the caller says,
        ``ms`` by default, as it always was)."""
        return table_time(self.properties)

    def time_unit(self, unit: TimeUnit | None = None) -> TimeUnit:
        """The unit this table's raw times are read and written in: its own; for a table
        that records none, ``unit`` (default ``ms``).

        Raises:
            OptionError: ``unit`` names another unit than the table records.
        """
        return table_unit(self.properties, unit, table=self._location, option="unit")

    def time_read_as(self, timestamp_as: TimestampAs | None = None) -> TimestampAs:
        """How ``time`` reads: ``timestamp_as`` when given (it wins), else as the table
        records it (:attr:`time`), else ``long`` (a table created before it was recorded
        reads as it always did)."""
        if timestamp_as is not None:
            return timestamp_as
        time = self.time
        return "long" if time is None else time.timestamp_as

    def parts(self) -> list[PartFile]:
        return list(self._snapshot.parts)

    def part_url(self, part: PartFile) -> str:
        return ownership.part_url(self._location, part)

    def history(self, *, limit: int | None = None) -> list[CommitInfo]:
        """Commit infos up to this version, newest first (like Delta's DESCRIBE HISTORY);
        versions expired by EXPIRE SNAPSHOTS are no longer listed.

        Raises:
            TableNotFoundError: the table was dropped (and maybe another created at its
                location) since this handle was opened.
        """
        listing = list_log(self._io, self._location)
        current = (
            identify(self._io, self._location, listing, use_cache=self._use_cache)
            if listing.commits
            else None
        )
        if current != self.table_uuid:
            now = "no table" if current is None else f"table {current}"
            raise TableNotFoundError(
                f"table {self.table_uuid} is no longer at {self._location}: it holds {now} now "
                "(the table was dropped)"
            )
        last = self.version
        # Versions before the oldest commit file were expired (EXPIRE SNAPSHOTS).
        oldest = listing.commits[0]
        first = oldest if limit is None else max(oldest, last - limit + 1)
        return [
            commit_info(self._io, self._location, self.table_uuid, v, use_cache=self._use_cache)
            for v in range(last, first - 1, -1)
        ]

    @property
    def maintenance(self) -> Maintenance:
        """OPTIMIZE, VACUUM, EXPIRE SNAPSHOTS and RESTORE of this table:
        ``table.maintenance.vacuum(retention_hours=168)``."""
        return Maintenance(self)

    @property
    def alter(self) -> Alter:
        """Schema and property changes of this table (they act on its latest version):
        ``table.alter.add_columns([("rain", DataType.DOUBLE)])``."""
        return Alter(self)

    def plan(
        self,
        where: str | Expr | None = None,
        *,
        unit: TimeUnit | None = None,
        timestamp_as: TimestampAs | None = None,
        time_zone: str | None = None,
    ) -> ScanPlan:
        """The parts a scan with ``where`` (Spark SQL or an expression) must read.

        ``where`` means what it means to Spark over a scan read with ``timestampPrecision``
        ``unit`` and ``timestampAs`` ``timestamp_as`` (both by default the table's own, see
        :attr:`time`) in a session whose time zone is ``time_zone`` (None: unknown, so
        comparisons that need it prune conservatively and ``plan.pushdown.residual`` keeps
        them).

        Raises:
            PredicateError: the predicate cannot be parsed or does not fit the schema.
            OptionError: ``unit`` contradicts the table's own.
        """
        context = BindContext(
            unit=self.time_unit(unit),
            timestamp_as=self.time_read_as(timestamp_as),
            time_zone=time_zone,
        )
        return plan_scan(
            self.schema,
            self._snapshot.parts,
            where,
            context,
            key=key_mode(self._snapshot.properties),
            candidates=self.candidates,
        )

    def candidates(self, window: PartWindow) -> Sequence[int]:
        """The vectorised time/TAG/row-count pre-filter over this snapshot's parts (a
        :data:`~tsfile_catalog.metadata.scan.Candidates`): its columns are cached with the
        snapshot, so a warm plan only runs the compute, and the visitor on what survives.
        Built on the first plan with a predicate (pyarrow is imported only then: the CLI's
        metadata commands never load it)."""
        index = self._index
        if index is None:
            from tsfile_catalog.table.part_index import PartIndex

            if self._use_cache:
                index = CACHE.part_index(self._location, self._snapshot)
            else:
                index = PartIndex(self._snapshot.parts)
            self._index = index
        return index.candidates(window)

    def scan(
        self,
        *,
        where: str | Expr | None = None,
        columns: Sequence[str] | None = None,
        version: int | None = None,
        timestamp: str | int | None = None,
        timestamp_as: TimestampAs | None = None,
        unit: TimeUnit | None = None,
        time_zone: str | None = None,
        max_workers: int | None = None,
    ) -> TableScan:
        """A Spark-free read of this version (or of ``version`` / ``timestamp`` of the same
        table): call ``to_arrow()``, ``to_pandas()``, ``to_batches()`` or ``count()`` on it.

        Planning, pruning, pushdown and the rows returned are those of
        ``spark.read.format("tsfile")`` with the ``where`` and ``columns`` options.

        Args:
            where: a Spark SQL predicate (or a bound-able expression).
            columns: the columns to return, in this order (default: all).
            version: read this version instead (time travel).
            timestamp: read the version current at this instant (epoch ms or ISO-8601).
            timestamp_as: ``'long'`` returns ``time`` and TIMESTAMP columns as raw int64,
                ``'timestamp'`` as Arrow timestamps in ``unit`` (UTC); literals in ``where``
                are read as Spark reads them for that choice. Default: as the table records
                its time (``time TIMESTAMP`` reads as timestamps), ``'long'`` for a table
                that records none.
            unit: the table's time precision: its own (:attr:`time`), which another value
                contradicts; for a table that records none, the ``timestampPrecision`` it was
                written with (default ``ms``).
            time_zone: the zone of times written without an offset, in ``where`` and
                ``timestamp`` (Spark's session time zone); needed only when they have one.
            max_workers: threads reading parts (default: the CPU count, at most 8).

        Raises:
            PredicateError: ``where`` cannot be parsed, does not fit the schema, or needs a
                ``time_zone``.
            OptionError: an unknown or repeated column, or a bad argument.
            VersionNotFoundError: no such ``version`` / nothing at or before ``timestamp``.
            TableNotFoundError: the location holds another table now.
        """
        # Imported here: the scan imports pyarrow, which opening a table never needs.
        from tsfile_catalog.exec.table_scan import TableScan

        table = self
        if version is not None or timestamp is not None:
            table = open_table(
                self._location,
                version=version,
                timestamp=timestamp,
                time_zone=time_zone,
                storage_options=self._io.storage_options,
                use_cache=self._use_cache,
            )
            if table.table_uuid != self.table_uuid:
                raise TableNotFoundError(
                    f"table {self.table_uuid} is no longer at {self._location}: it holds "
                    f"table {table.table_uuid} now (the table was dropped and recreated)"
                )
        return TableScan(
            table,
            where=where,
            columns=columns,
            timestamp_as=table.time_read_as(timestamp_as),
            unit=table.time_unit(unit),
            time_zone=time_zone,
            max_workers=max_workers,
        )

    def changes(
        self,
        starting_version: int | None = None,
        ending_version: int | None = None,
        *,
        starting_timestamp: str | int | None = None,
        ending_timestamp: str | int | None = None,
        timestamp_as: TimestampAs = "long",
        time_zone: str | None = None,
        net: bool = False,
    ) -> pa.Table:
        """The change data feed: the rows the commits ``starting_version`` through
        ``ending_version`` (both included; default this version) inserted, deleted or
        updated; the columns, bounds, ``net`` and errors of
        :func:`~tsfile_catalog.table.change_feed.changes_table` (docs/sql.md, "Change data
        feed"). ``timestamp_as``: ``time`` and TIMESTAMP columns as raw int64 or timestamps.
        """
        # Imported here: the change feed reads with pyarrow, which opening a table never needs.
        from tsfile_catalog.table.change_feed import changes_table

        if ending_version is None and ending_timestamp is None:
            ending_version = self.version
        return changes_table(
            self._location,
            starting_version=starting_version,
            ending_version=ending_version,
            starting_timestamp=starting_timestamp,
            ending_timestamp=ending_timestamp,
            timestamp_as=timestamp_as,
            unit=self.time_unit(),
            time_zone=time_zone,
            net=net,
            storage_options=self._io.storage_options,
            use_cache=self._use_cache,
        )

    # -- data verbs (deltalake's dt.delete, pyiceberg's append/overwrite): the rest are
    # namespaces above. Writes go through the writer Spark uses (tsfile_catalog.write).

    def append(self, data: WriteData, *, options: Mapping[str, Any] | None = None) -> None:
        """Append ``data`` (pyarrow or pandas) to this table in one commit, without Spark:
        ``df.write.format("tsfile").mode("append")`` with the same ``options`` (see
        :func:`tsfile_catalog.write_table`).

        Raises:
            TableNotFoundError: this table is no longer at its location.
            (and as :func:`tsfile_catalog.write_table`)
        """
        self._write(data, options, overwrite=False, where=None)

    def overwrite(
        self,
        data: WriteData,
        *,
        where: str | None = None,
        options: Mapping[str, Any] | None = None,
        runner: TaskRunner | None = None,
    ) -> None:
        """Replace this table's rows with ``data`` in one commit, without Spark; with
        ``where``, only the rows matching it (the writer's ``replaceWhere``: every row of
        ``data`` must match, parts straddling it are rewritten without the matching rows,
        in Spark tasks given ``runner=SparkTasks(spark)``, here otherwise).

        Raises:
            DataError: a row of ``data`` outside ``where``; nothing was committed.
            TableNotFoundError: this table is no longer at its location.
            (and as :func:`tsfile_catalog.write_table`)
        """
        self._write(data, options, overwrite=True, where=where, runner=runner)

    def _write(
        self,
        data: WriteData,
        options: Mapping[str, Any] | None,
        *,
        overwrite: bool,
        where: str | None,
        runner: TaskRunner | None = None,
    ) -> None:
        # Imported here: writing imports pyarrow and the TsFile writer, which opening a
        # table never needs.
        from tsfile_catalog.options import parse_write_options
        from tsfile_catalog.write.rows import write_options, write_rows

        parsed = parse_write_options(write_options(self._location, options, replace_where=where))
        parsed = replace(
            parsed, storage_options={**self._io.storage_options, **parsed.storage_options}
        )
        write_rows(parsed, data, table=self.latest(), overwrite=overwrite, runner=runner)

    def latest(self) -> Table:
        """The latest version of this table (a new handle; this one stays as it is).

        Raises:
            TableNotFoundError: the location no longer holds this table (dropped, or
                dropped and recreated).
        """
        table = open_table(
            self._location, storage_options=self._io.storage_options, use_cache=self._use_cache
        )
        if table.table_uuid != self.table_uuid:
            raise TableNotFoundError(
                f"table {self.table_uuid} is no longer at {self._location}: it holds "
                f"table {table.table_uuid} now (the table was dropped and recreated)"
            )
        return table

    def delete(
        self,
        where: str | Expr | None,
        *,
        settings: WriteSettings | None = None,
        unit: TimeUnit | None = None,
        timestamp_as: TimestampAs | None = None,
        time_zone: str | None = None,
        progress: Progress | None = None,
        runner: TaskRunner | None = None,
    ) -> DeleteResult:
        """Delete the rows where ``where`` is TRUE (None: every row), in one ``DELETE``
        commit (see :func:`tsfile_catalog.table.optimize.delete`); with
        ``runner=SparkTasks(spark)`` the parts are rewritten in Spark tasks. ``unit`` and
        ``timestamp_as`` (how ``where`` compares ``time``) default to the table's own."""
        return delete(
            self,
            where,
            settings=settings,
            unit=self.time_unit(unit),
            timestamp_as=self.time_read_as(timestamp_as),
            time_zone=time_zone,
            progress=progress,
            runner=runner,
        )

    def update(
        self,
        set: Mapping[str, Any],
        where: str | Expr | None = None,
        *,
        settings: WriteSettings | None = None,
        unit: TimeUnit | None = None,
        timestamp_as: TimestampAs | None = None,
        time_zone: str | None = None,
        runner: TaskRunner | None = None,
    ) -> UpdateResult:
        """Set columns in the rows where ``where`` (Spark SQL) is TRUE, in one ``UPDATE``
        commit, without Spark: ``table.update({"temp": pc.field("temp") + 1}, "city =
        'bj'")``; with ``runner=SparkTasks(spark)`` a ``keep`` table's parts are rewritten
        in Spark tasks.

        The values of ``set`` are literals or ``pyarrow.compute`` expressions over the row
        (raw domain: ``time`` and TIMESTAMP columns as int64 in the table's precision); a
        Spark SQL expression needs ``Catalog.sql("UPDATE ...")``. TAG columns and ``time``
        (the table key) cannot be set. ``unit`` and ``timestamp_as`` (how ``where`` compares
        ``time``) default to the table's own (:attr:`time`). See
        :func:`tsfile_catalog.table.update.update`.
        """
        # Imported here: the update evaluates with pyarrow, which opening a table never needs.
        from tsfile_catalog.table.update import update

        return update(
            self,
            set,
            where,
            settings=settings,
            unit=self.time_unit(unit),
            timestamp_as=self.time_read_as(timestamp_as),
            time_zone=time_zone,
            runner=runner,
        )

    def complete_until(self) -> int | None:
        """The table's completeness as of this version: every row with time < the result
        (raw time units) is committed, as writers declared (``watermark.interval`` or
        ``completeUntil``, see docs/streaming.md); None when none declared anything.

        The snapshot carries it (so do checkpoints), so it survives EXPIRE SNAPSHOTS; the
        commits still in the log count too, for a snapshot loaded from a checkpoint an
        earlier release wrote without it."""
        declared = [
            c for c in (self.snapshot.complete_until, completeness(self.history())) if c is not None
        ]
        return max(declared) if declared else None


def open_table(
    url: str,
    *,
    version: int | None = None,
    timestamp: str | int | None = None,
    time_zone: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
    use_cache: bool = True,
    table_uuid: str | None = None,
) -> Table:
    """Open the latest version of the table at ``url``, or an older one (time travel).

    Args:
        url: the table root (a local path or an fsspec URL).
        version: exactly this version.
        timestamp: the latest version committed at or before this instant: epoch
            milliseconds, or an ISO-8601 string (naive means UTC unless ``time_zone``).
        time_zone: the zone of a ``timestamp`` without an offset (``Asia/Shanghai``,
            ``+08:00``), as Spark reads one in its session time zone; None means UTC.
        storage_options: passed to fsspec (credentials, ``endpoint_url``, ...).
        use_cache: reuse and fill the in-process metadata cache.
        table_uuid: with ``version``, the table that version must belong to (one opened
            before, as a catalog's scan calls reopen the version its query loaded). A version
            of a table never changes, so a cached one is returned without listing the log;
            else it is loaded, and refused if the location now holds another table.

    Raises:
        TableNotFoundError: no manifest at ``url``, or (``table_uuid``) another table there.
        VersionNotFoundError: no such version, or nothing committed at or before
            ``timestamp``.
        CorruptManifestError: a commit file needed for the version is unreadable.
        OptionError: both ``version`` and ``timestamp``, an unparseable timestamp or an
            unknown ``time_zone``.
    """
    io = FileIO(url, storage_options)
    location = io.normalize(url)
    if table_uuid is not None and version is not None and use_cache:
        cached = CACHE.snapshot(location, table_uuid, version)
        if cached is not None:
            return Table(io, location, cached, use_cache=use_cache)
    snapshot = resolve_snapshot(
        io, location, version=version, timestamp=timestamp, time_zone=time_zone, use_cache=use_cache
    )
    if table_uuid is not None and snapshot.table_uuid != table_uuid:
        # Dropped and recreated since: the new table's version of that number is other rows.
        raise TableNotFoundError(
            f"the table at {location} is not the one opened before (table UUID "
            f"{table_uuid}): it was dropped and another table created there since; run the "
            "query again"
        )
    return Table(io, location, snapshot, use_cache=use_cache)
