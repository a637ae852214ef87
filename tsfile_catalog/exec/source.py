"""What a scan reads: :class:`ResolvedScan`, a table version's or plain files' parts.

Built by :func:`~tsfile_catalog.discovery.resolve_files` for plain files and by
:meth:`ResolvedScan.of_table` for a table version; every reader (the Spark source, the
catalog's driver-side reads, ``Table.scan``) takes one, so none needs to know which it is.
It carries the :class:`~tsfile_catalog.io.FileIO` its parts are read through and the time
unit and ``timestampAs`` its ``where`` predicates are bound with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from tsfile_catalog.exec.stamps import check_skipped_sources
from tsfile_catalog.formats.tsfile import TSFILE
from tsfile_catalog.io import FileIO, join_url
from tsfile_catalog.metadata.expressions import BindContext, Expr, TimestampAs, TimeUnit
from tsfile_catalog.metadata.key import KeyMode, key_mode
from tsfile_catalog.metadata.manifest import Snapshot
from tsfile_catalog.metadata.part_list import parts_not_in_format
from tsfile_catalog.metadata.parts import PartFile, is_absolute_url
from tsfile_catalog.metadata.scan import Candidates, PartWindow, ScanPlan, plan_scan
from tsfile_catalog.metadata.schema import TableSchema

__all__ = ["ResolvedScan", "TableVersion"]


class TableVersion(Protocol):
    """What a scan needs of one version of a table: a
    :class:`~tsfile_catalog.table.Table` is one. A protocol, so that the read path never
    imports the table layer above it."""

    @property
    def location(self) -> str: ...

    @property
    def io(self) -> FileIO: ...

    @property
    def snapshot(self) -> Snapshot: ...

    @property
    def version(self) -> int: ...

    @property
    def schema(self) -> TableSchema: ...

    def candidates(self, window: PartWindow) -> Sequence[int]: ...


@dataclass(frozen=True)
class ResolvedScan:
    """What a scan reads: ``parts`` (paths relative to ``base``) under ``schema``, through
    ``io``; ``where`` predicates mean what they mean to Spark over a scan read with
    ``timestampPrecision`` ``unit`` and ``timestampAs`` ``timestamp_as``."""

    base: str
    schema: TableSchema
    # A table's parts stay as its snapshot holds them (built on first use from a checkpoint).
    parts: Sequence[PartFile]
    version: int | None = None
    # Set by for_reading(): the parts are no longer all there, so this scan cannot plan.
    read_only: bool = False
    # A table's columnar pre-filter over ``parts`` (see Table.candidates): a plan then builds
    # and checks only the parts a time range keeps. Dropped by for_reading().
    candidates: Candidates | None = field(default=None, compare=False, repr=False)
    # The file system of ``base``; it pickles without its live client (FileIO.__getstate__).
    io: FileIO = field(kw_only=True, compare=False, repr=False)
    unit: TimeUnit = field(default="ms", kw_only=True)
    timestamp_as: TimestampAs = field(default="long", kw_only=True)
    # The table's key.duplicates: "last" plans merges by key. Plain files are no writes of a
    # table (no sequence orders them): every row stays. A stream reads each commit's rows as
    # written ("keep", see docs/streaming.md).
    key: KeyMode = field(default="keep", kw_only=True)

    @classmethod
    def of_table(
        cls, table: TableVersion, *, unit: TimeUnit = "ms", timestamp_as: TimestampAs = "long"
    ) -> ResolvedScan:
        """What a scan of ``table`` reads (its parts, with its pre-filter)."""
        snapshot = table.snapshot
        return cls(
            table.location,
            snapshot.schema,
            snapshot.parts,
            snapshot.version,
            candidates=table.candidates,
            io=table.io,
            unit=unit,
            timestamp_as=timestamp_as,
            key=key_mode(snapshot.properties),
        )

    def for_reading(self) -> ResolvedScan:
        """This scan as read tasks need it, once planned: the schema, the base and the
        external parts (each read through its own adapter). Internal TsFile parts are read by
        the path their slice names, so they and their statistics, which pickle to megabytes
        at a hundred parts with FIELD statistics and went to every task, are dropped."""
        if self.read_only:
            return self
        external = parts_not_in_format(self.parts, TSFILE.name)
        return replace(self, parts=external, read_only=True, candidates=None)

    def check_plannable(self) -> None:
        if self.read_only:
            raise AssertionError("a scan reduced by for_reading() cannot be planned again")

    def url_of(self, path: str) -> str:
        # External parts record their absolute URL; internal paths never look absolute.
        if is_absolute_url(path):
            return path
        return join_url(self.base, path) if self.base else path

    def plan(self, where: str | Expr | None = None, *, time_zone: str | None = None) -> ScanPlan:
        """The parts a scan with ``where`` must read, exactly as
        :meth:`~tsfile_catalog.table.Table.plan` plans a table's, with this scan's ``unit``
        and ``timestamp_as``: a plain path's parts carry the statistics its footers hold."""
        self.check_plannable()
        context = BindContext(unit=self.unit, timestamp_as=self.timestamp_as, time_zone=time_zone)
        plan = plan_scan(
            self.schema, self.parts, where, context, key=self.key, candidates=self.candidates
        )
        # An external part pruned by statistics its file no longer matches would silently
        # drop the rows a rewrite added: refused as a read of it would be.
        check_skipped_sources(self.io, self.parts, plan.parts)
        return plan
