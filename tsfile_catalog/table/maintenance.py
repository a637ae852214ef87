"""``table.maintenance``: the namespace of a table's maintenance verbs, and nothing else.

The verbs live one family per module below the handle, each taking a location (or the open
table it rewrites): :mod:`~tsfile_catalog.table.optimize` (OPTIMIZE, DELETE),
:mod:`~tsfile_catalog.table.vacuum` (VACUUM, purge), :mod:`~tsfile_catalog.table.expire`
(EXPIRE SNAPSHOTS) and :mod:`~tsfile_catalog.table.restore` (RESTORE); schema and property
changes are ``table.alter`` (:mod:`~tsfile_catalog.table.alter`). As in pyiceberg's
``table/maintenance.py``, this module imports the :class:`Table` it wraps only for type
checking: the handle on top imports its verbs, never the other way round.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tsfile_catalog.metadata.expressions import Expr, TimestampAs, TimeUnit
from tsfile_catalog.progress import Progress
from tsfile_catalog.table.expire import Expired, expire_snapshots
from tsfile_catalog.table.optimize import OptimizeResult, optimize
from tsfile_catalog.table.restore import restore
from tsfile_catalog.table.vacuum import Vacuumed, vacuum_table

if TYPE_CHECKING:
    from tsfile_catalog.formats.tsfile import WriteSettings
    from tsfile_catalog.table.handle import Table
    from tsfile_catalog.table.rewrite_tasks import TaskRunner

__all__ = ["Maintenance"]


class Maintenance:
    """``table.maintenance``: the maintenance verbs on one table (pyiceberg's
    ``tbl.maintenance``, deltalake's ``dt.optimize`` / ``dt.vacuum()``). VACUUM, EXPIRE
    SNAPSHOTS and RESTORE act on the table's location, at its latest version, whatever
    version the handle shows; OPTIMIZE compacts the handle's version (and rebases on what
    was committed since)."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def _storage(self) -> Mapping[str, Any]:
        return self._table.io.storage_options

    def vacuum(
        self,
        *,
        retention_hours: float | None = None,
        dry_run: bool = True,
        retention_check: bool = True,
        progress: Progress | None = None,
    ) -> Vacuumed:
        """See :func:`vacuum_table`; ``retention_hours`` defaults to the table's
        ``deletedFileRetention``."""
        return vacuum_table(
            self._table.location,
            dry_run=dry_run,
            retention_ms=None if retention_hours is None else round(retention_hours * 3.6e6),
            retention_check=retention_check,
            storage_options=self._storage(),
            progress=progress,
        )

    def expire_snapshots(
        self,
        *,
        older_than: str | int | None = None,
        retention_hours: float | None = None,
        retain_last: int | None = None,
        dry_run: bool = False,
    ) -> Expired:
        """See :func:`expire_snapshots`."""
        return expire_snapshots(
            self._table.location,
            older_than=older_than,
            retention_ms=None if retention_hours is None else round(retention_hours * 3.6e6),
            retain_last=retain_last,
            dry_run=dry_run,
            storage_options=self._storage(),
        )

    def restore(self, *, version: int | None = None, timestamp: str | int | None = None) -> int:
        """See :func:`restore`."""
        return restore(
            self._table.location,
            version=version,
            timestamp=timestamp,
            storage_options=self._storage(),
        )

    def optimize(
        self,
        *,
        where: str | Expr | None = None,
        target_file_size: int | None = None,
        settings: WriteSettings | None = None,
        unit: TimeUnit = "ms",
        timestamp_as: TimestampAs = "long",
        time_zone: str | None = None,
        progress: Progress | None = None,
        runner: TaskRunner | None = None,
    ) -> OptimizeResult:
        """Compact this version's small parts into larger TsFiles, in one ``OPTIMIZE``
        commit (see :func:`tsfile_catalog.table.optimize.optimize`); with
        ``runner=SparkTasks(spark)`` the groups are rewritten in Spark tasks."""
        return optimize(
            self._table,
            where=where,
            target_file_size=target_file_size,
            settings=settings,
            unit=unit,
            timestamp_as=timestamp_as,
            time_zone=time_zone,
            progress=progress,
            runner=runner,
        )
