"""The batch reader: plans partitions from pruned parts and streams Arrow batches.

Filters reach the scan through the ``where`` option. The reader implements no Spark filter
pushdown (``pushFilters``): Spark keeps a Python reader's pushed filters and planned
partitions on the loaded relation, so a second query on the same DataFrame or temp view would
reuse the first query's pruning and silently return wrong rows (reproduced on 4.1 and 4.3).
Spark applies ``.where()`` and SQL filters itself, over the rows the ``where`` option kept.

The ``where`` predicate means what Spark means, and some literals mean different instants in
different session time zones. Planning runs in a Python process that has no session, so it
binds with the ``timeZone`` option if given and otherwise prunes conservatively; each task
binds again with the time zone Spark hands it (``spark.sql.session.timeZone``, a local
property of every SQL job) and filters rows exactly.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark import TaskContext
from pyspark.sql.datasource import (
    DataSourceReader,
    InputPartition,
)
from pyspark.sql.types import StructType

from tsfile_catalog.datasource.types import arrow_schema, to_output
from tsfile_catalog.exceptions import PredicateError
from tsfile_catalog.exec.read import read_slices
from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.exec.stamps import check_skipped_sources, check_sources
from tsfile_catalog.formats.base import coalesce_tables
from tsfile_catalog.metadata import expressions as ex
from tsfile_catalog.metadata.expressions import Expr, ScanPushdown
from tsfile_catalog.metadata.expressions.pruning import PartEvaluator
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.scan import ScanPlan, plan_bound
from tsfile_catalog.metadata.schema import TIME_COLUMN
from tsfile_catalog.metadata.slices import (
    ReadSlice,
    narrow_slices,
    plan_slices,
    rows_per_partition,
    skip_unmatched_devices,
)
from tsfile_catalog.metadata.time_top import TimeTop, keep_time_top
from tsfile_catalog.options import ReadOptions

__all__ = [
    "TsFilePartition",
    "TsFileScanReader",
    "plan_scan_slices",
    "prune_scan",
    "partition_slices",
]

_OUTPUT_ROWS = 65_536


class TsFilePartition(InputPartition):
    """The queries one Spark task runs; small and picklable."""

    def __init__(self, index: int, slices: Sequence[ReadSlice]) -> None:
        super().__init__(index)
        self.slices = tuple(slices)


def plan_scan_slices(
    scan: ResolvedScan, predicate: Expr | None, options: ReadOptions
) -> tuple[ScanPushdown, list[list[ReadSlice]]]:
    """Prune the scan's parts by ``predicate`` (the same ``plan_scan`` as ``Table.plan``),
    then their devices by the devices' own statistics where a FIELD predicate remains for
    the rows, and group the survivors into partitions."""
    pruned = prune_scan(scan, predicate, options)
    if options.time_top is not None:
        pruned, dropped = keep_time_top(pruned, options.time_top)
        check_skipped_sources(scan.io, dropped, ())
    if not options.pushdown or pruned.pushdown.residual is None:
        return pruned.pushdown, partition_slices(scan, pruned, options)
    evaluator = PartEvaluator(pruned.pushdown.residual, scan.schema)
    skip = skip_unmatched_devices(pruned.parts, evaluator, merges=pruned.merges)
    # Parts left with no device open no file: check them here (the rest are checked when read).
    still_read = {p.path for p in skip.parts}
    check_sources(scan.io, (p for p in pruned.parts if p.path not in still_read))
    groups = partition_slices(scan, pruned, options, skip.parts)
    return pruned.pushdown, narrow_slices(groups, skip.parts, skip.narrowed)


def prune_scan(scan: ResolvedScan, predicate: Expr | None, options: ReadOptions) -> ScanPlan:
    """The plan of ``predicate``: its pushdown, the parts it keeps and the slices to merge
    by key (without pushdown: every part, merged where writes may share a key, with the
    whole predicate left for the rows)."""
    scan.check_plannable()
    if not options.pushdown:
        plan = plan_bound(scan.schema, scan.parts, None, key=scan.key)
        return replace(plan, pushdown=ScanPushdown(residual=predicate), filter=predicate)
    plan = plan_bound(scan.schema, scan.parts, predicate, key=scan.key, candidates=scan.candidates)
    check_skipped_sources(scan.io, scan.parts, plan.parts)
    return plan


def partition_slices(
    scan: ResolvedScan,
    plan: ScanPlan,
    options: ReadOptions,
    parts: Sequence[PartFile] | None = None,
) -> list[list[ReadSlice]]:
    """``plan``'s parts (or ``parts``, a narrowing of them) and merges grouped into
    partitions of the ``rowsPerPartition`` option's size, else spread over the
    ``partitions`` option's (or this process's) cores."""
    pushdown, tags = plan.pushdown, scan.schema.tag_names
    parts = plan.parts if parts is None else parts
    target = options.rows_per_partition
    if target is None:
        partitions = options.partitions or default_partitions()
        target = rows_per_partition(parts, pushdown, tags, partitions)
    return plan_slices(parts, pushdown, tags, target, merges=plan.merges)


def default_partitions() -> int:
    """The cores this process may use: the planning worker runs next to the driver, so in
    local mode these are the cores the tasks share (a catalog scan passes Spark's own
    ``defaultParallelism`` in the ``partitions`` option instead)."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)


_SESSION_TIME_ZONE = "spark.sql.session.timeZone"


def _session_time_zone() -> str | None:
    """The session time zone of the running SQL job (Spark copies session settings into
    every task's local properties); None outside a task or when it was never set, in which
    case Spark uses the JVM's default zone, which this process cannot see."""
    context = TaskContext.get()
    return None if context is None else context.getLocalProperty(_SESSION_TIME_ZONE)


def _coalesce(tables: Iterable[pa.Table]) -> Iterator[pa.RecordBatch]:
    """Re-chunk into batches of about ``_OUTPUT_ROWS`` rows: every batch crossing into Spark
    has a fixed cost. Scans already hand out tables of that size in one chunk, which pass
    through uncopied; only what a filter thinned out is concatenated."""
    for table in coalesce_tables(tables, _OUTPUT_ROWS):
        yield from table.to_batches()


def _first_rows(tables: Iterable[pa.Table], limit: int) -> Iterator[pa.Table]:
    """The first ``limit`` rows of ``tables``; reading stops there (no further slice or file
    is opened)."""
    remaining = limit
    if remaining <= 0:
        return
    for table in tables:
        yield table.slice(0, remaining)
        remaining -= min(remaining, table.num_rows)
        if remaining <= 0:
            return  # before pulling the next table, which would open the next slice


def _time_top_rows(tables: Iterable[pa.Table], top: TimeTop, time: str) -> Iterator[pa.Table]:
    """The partition's first ``top.n`` rows in time order, with every row tied with the
    n-th: the query's own first rows are among them whatever its further sort keys, and
    Spark gets at most about ``n`` rows per partition to sort. Holds ``n`` rows and one
    batch at a time."""
    order = "descending" if top.descending else "ascending"
    kept: pa.Table | None = None
    for table in tables:
        if not table.num_rows:
            continue
        kept = table if kept is None else pa.concat_tables([kept, table])
        if kept.num_rows > top.n:
            first = pc.select_k_unstable(kept, k=top.n, sort_keys=[(time, order)])
            edge = (pc.min if top.descending else pc.max)(kept[time].take(first))
            beyond = pc.greater_equal if top.descending else pc.less_equal
            kept = kept.filter(beyond(kept[time], edge)).combine_chunks()
    if kept is not None:
        yield kept


class TsFileScanReader(DataSourceReader):
    def __init__(
        self,
        scan: ResolvedScan,
        options: ReadOptions,
        columns: Sequence[str],
        schema: StructType,
        where: Expr | None,
    ) -> None:
        self._scan = scan
        self._options = options
        self._columns = tuple(columns)
        self._out_schema = arrow_schema(schema)
        self._where = where

    def __getstate__(self) -> dict[str, Any]:
        # Spark pickles the reader once planned, for every task: tasks read their slices by
        # path and need no part statistics (see ResolvedScan.for_reading).
        state = dict(self.__dict__)
        state["_scan"] = self._scan.for_reading()
        return state

    def _predicate(self, session_time_zone: str | None) -> Expr | None:
        """``where`` bound for this scan."""
        if self._where is None:
            return None
        return ex.bind(
            self._where, self._scan.schema, self._options.bind_context(session_time_zone)
        )

    def partitions(self) -> list[InputPartition]:
        _, groups = plan_scan_slices(self._scan, self._predicate(None), self._options)
        return [TsFilePartition(i, group) for i, group in enumerate(groups)]

    def read(self, partition: InputPartition | None) -> Iterator[pa.RecordBatch]:
        # Spark 4.1 calls read(None) and 4.3 read(InputPartition(None)) for an empty scan.
        if not isinstance(partition, TsFilePartition):
            return iter(())
        tables = self._read_tables(partition)
        if self._options.limit is not None:
            tables = _first_rows(tables, self._options.limit)
        top = self._options.time_top
        if top is not None and TIME_COLUMN in self._columns:
            time = self._out_schema.names[self._columns.index(TIME_COLUMN)]
            tables = _time_top_rows(tables, top, time)
        return _coalesce(tables)

    def _read_tables(self, partition: TsFilePartition) -> Iterator[pa.Table]:
        scan, options = self._scan, self._options
        for table in self._read_raw(partition):
            # Positional: read_slices returns ``columns`` in order, and a user-specified
            # schema (a projection) may spell the names in another case.
            table = table.rename_columns(self._out_schema.names)
            yield to_output(table, scan.schema, self._out_schema, options.precision)

    def _read_raw(self, partition: TsFilePartition) -> Iterator[pa.Table]:
        """The partition's rows of ``self._columns``, exactly filtered, in the raw domain."""
        scan, options = self._scan, self._options
        predicate = self._predicate(_session_time_zone())
        if ex.needs_time_zone(predicate):
            raise PredicateError(
                f"option 'where' = {options.where!r} compares with a time whose instant depends "
                "on the session time zone, which Spark did not pass to this task (it does once "
                "spark.sql.session.timeZone is set); set it, or the 'timeZone' read option"
            )
        pushdown = (
            ex.split_pushdown(predicate, scan.schema)
            if options.pushdown
            else ScanPushdown(residual=predicate)
        )
        yield from read_slices(
            scan, partition.slices, pushdown, self._columns, batch_rows=_OUTPUT_ROWS
        )
