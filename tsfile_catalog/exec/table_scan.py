"""Reading a table without Spark: :meth:`Table.scan` and the :class:`TableScan` it returns.

A scan is planned exactly as the Spark source plans one: the ``where`` predicate is bound with
Spark's semantics (:func:`~tsfile_catalog.metadata.expressions.bind`), parts are pruned by
:func:`~tsfile_catalog.metadata.scan.plan_bound`, grouped into read tasks by
:func:`~tsfile_catalog.metadata.slices.plan_slices` and read by
:func:`~tsfile_catalog.exec.read.read_slices`, the one read path every reader shares. Only
the last step differs: tasks run in a thread pool instead of Spark executors, and the output
stays Arrow (``timestampAs='timestamp'`` gives Arrow timestamps in the table's precision
instead of Spark's microseconds).

Other engines get the rows through Arrow, as pyiceberg hands them over: a
:class:`pyarrow.RecordBatchReader` that reads parts as it is consumed (DuckDB, polars, DataFusion
and pyarrow all take one, in a single pass, larger than memory), a DuckDB connection with the rows
registered as a view, and a polars DataFrame. DuckDB and polars are optional extras, imported
only when asked for.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

import pyarrow as pa

from tsfile_catalog.exceptions import OptionError, PredicateError
from tsfile_catalog.exec.read import read_slices
from tsfile_catalog.exec.source import ResolvedScan, TableVersion
from tsfile_catalog.exec.stamps import check_skipped_sources, check_sources
from tsfile_catalog.extras import require
from tsfile_catalog.formats.base import NORMALIZED_ARROW
from tsfile_catalog.metadata.expressions import (
    INT64_MAX,
    INT64_MIN,
    BindContext,
    Expr,
    TimestampAs,
    TimeUnit,
    bind,
    needs_time_zone,
)
from tsfile_catalog.metadata.expressions.parser import parse_predicate
from tsfile_catalog.metadata.key import key_mode
from tsfile_catalog.metadata.scan import ScanPlan, plan_bound
from tsfile_catalog.metadata.schema import TIME_COLUMN, DataType, TableSchema
from tsfile_catalog.metadata.slices import ReadSlice, plan_slices
from tsfile_catalog.metadata.stats_aggregates import metadata_count

if TYPE_CHECKING:
    import duckdb
    import pandas as pd
    import polars as pl

__all__ = ["TableScan", "resolve_columns"]

_T = TypeVar("_T")
_R = TypeVar("_R")

# Rows per read task, by default the kept rows shared among the threads within these bounds:
# a task has a fixed cost (opening a file, a native query), so tiny parts are packed together,
# and a part much larger than a share is split (by devices or time) so every thread has work.
MIN_ROWS_PER_TASK = 65_536
MAX_ROWS_PER_TASK = 1_000_000


def resolve_columns(
    schema: TableSchema, requested: Sequence[str] | None, *, what: str
) -> tuple[str, ...]:
    """The lower-cased names of ``requested`` columns (all when None, in the order users see
    them), in the order given.

    Raises:
        OptionError: a column the table does not have, or one named twice; ``what`` says
            which argument named it (``"option 'columns'"``).
    """
    names = schema.display_names
    if requested is None:
        return names
    if isinstance(requested, str):
        raise OptionError(f"{what} must be a list of column names, not the string {requested!r}")
    out: list[str] = []
    for name in requested:
        lowered = name.strip().lower()
        if lowered not in names:
            raise OptionError(
                f"{what} names '{name}', which table '{schema.table}' does not have "
                f"(it has {', '.join(names)})"
            )
        if lowered in out:
            raise OptionError(f"{what} names '{name}' twice")
        out.append(lowered)
    return tuple(out)


def _ordered_map(fn: Callable[[_T], _R], items: Sequence[_T], workers: int) -> Iterator[_R]:
    """``fn`` over ``items`` in a pool of ``workers`` threads, results in input order, at most
    ``workers`` results ahead of the consumer (memory stays bounded for ``to_batches``)."""
    if workers <= 1 or len(items) <= 1:
        yield from map(fn, items)
        return
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tsfile-scan")
    pending: deque[Future[_R]] = deque()
    try:
        upcoming = iter(items)
        for item in upcoming:
            pending.append(pool.submit(fn, item))
            if len(pending) == workers:
                break
        while pending:
            result = pending.popleft().result()
            following = next(upcoming, None)
            if following is not None:
                pending.append(pool.submit(fn, following))
            yield result
    finally:
        # A consumer that stops early (or an error) leaves nothing running behind it.
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)


class TableScan:
    """A planned read of one table version; nothing is read until a ``to_*`` or ``count``.

    Build one with :meth:`Table.scan`. The rows are exactly those Spark returns for
    ``spark.read.format("tsfile").option("where", where).option("columns", ...)`` on the same
    version with the same ``timestampAs`` / ``timestampPrecision`` and session time zone.
    """

    def __init__(
        self,
        table: TableVersion,
        *,
        where: str | Expr | None = None,
        columns: Sequence[str] | None = None,
        timestamp_as: TimestampAs = "long",
        unit: TimeUnit = "ms",
        time_zone: str | None = None,
        max_workers: int | None = None,
        rows_per_task: int | None = None,
    ) -> None:
        if timestamp_as not in ("long", "timestamp"):
            raise OptionError(f"timestamp_as = {timestamp_as!r}; use 'long' or 'timestamp'")
        if unit not in ("ms", "us", "ns"):
            raise OptionError(f"unit = {unit!r}; use 'ms', 'us' or 'ns' (the table's precision)")
        if max_workers is not None and max_workers < 1:
            raise OptionError(f"max_workers = {max_workers} must be at least 1")
        if rows_per_task is not None and rows_per_task < 1:
            raise OptionError(f"rows_per_task = {rows_per_task} must be at least 1")
        schema = table.schema
        self._table = table
        self._columns = resolve_columns(schema, columns, what="columns")
        self._timestamp_as: TimestampAs = timestamp_as
        self._unit: TimeUnit = unit
        self._where = where
        self._workers = max_workers or min(8, os.cpu_count() or 1)
        context = BindContext(unit=unit, timestamp_as=timestamp_as, time_zone=time_zone)
        expr = parse_predicate(where) if isinstance(where, str) else where
        bound = None if expr is None else bind(expr, schema, context)
        if needs_time_zone(bound):
            raise PredicateError(
                f"where {where!r} compares with a time written without an offset, whose instant "
                "depends on the time zone; pass time_zone= (e.g. 'UTC' or 'Asia/Shanghai'), "
                "as Spark uses its session time zone"
            )
        # table.parts() lists the snapshot's parts in order, as the index does.
        self._plan = plan_bound(
            schema,
            table.snapshot.parts,
            bound,
            key=key_mode(table.snapshot.properties),
            candidates=table.candidates,
        )
        check_skipped_sources(table.io, table.snapshot.parts, self._plan.parts)
        if rows_per_task is None:
            share = -(-sum(p.row_count for p in self._plan.parts) // self._workers)
            rows_per_task = max(MIN_ROWS_PER_TASK, min(MAX_ROWS_PER_TASK, share))
        self._rows_per_task = rows_per_task

    def __repr__(self) -> str:
        return (
            f"TableScan({self._table.location!r}, version={self._table.version}, "
            f"where={self._where!r}, columns={list(self._columns)!r})"
        )

    @property
    def table(self) -> TableVersion:
        return self._table

    @property
    def columns(self) -> tuple[str, ...]:
        return self._columns

    @property
    def plan(self) -> ScanPlan:
        """The parts kept and pruned, the pushed time range and TAG sets, and the residual."""
        return self._plan

    @property
    def tasks(self) -> list[list[ReadSlice]]:
        """The read tasks (each a list of part slices, or of slices merged by key), as the
        Spark source would partition."""
        plan = self._plan
        return plan_slices(
            plan.parts,
            plan.pushdown,
            plan.schema.tag_names,
            self._rows_per_task,
            merges=plan.merges,
        )

    @property
    def arrow_schema(self) -> pa.Schema:
        """The schema of every batch: ``time`` and TIMESTAMP columns are raw int64 with
        ``timestampAs='long'``, else ``timestamp[<unit>, tz=UTC]``."""
        time_type = (
            pa.timestamp(self._unit, tz="UTC") if self._timestamp_as == "timestamp" else None
        )
        fields = []
        for name in self._columns:
            if name == TIME_COLUMN:
                fields.append(pa.field(name, time_type or pa.int64(), nullable=False))
                continue
            column = self._table.schema.column(name)
            assert column is not None
            arrow = NORMALIZED_ARROW[column.type]
            if column.type is DataType.TIMESTAMP and time_type is not None:
                arrow = time_type
            fields.append(pa.field(name, arrow))
        return pa.schema(fields)

    def _resolved(self) -> ResolvedScan:
        # Reading needs the external parts only (TsFile parts are read by their slice's path).
        table = self._table
        return ResolvedScan.of_table(
            table, unit=self._unit, timestamp_as=self._timestamp_as
        ).for_reading()

    def _read(self, columns: Sequence[str]) -> Iterator[list[pa.Table]]:
        """The raw-domain tables of each task, in task order."""
        resolved, pushdown = self._resolved(), self._plan.pushdown

        def run(task: list[ReadSlice]) -> list[pa.Table]:
            return list(read_slices(resolved, task, pushdown, columns))

        return _ordered_map(run, self.tasks, self._workers)

    def _output(self, raw: pa.Table) -> pa.Table:
        schema = self.arrow_schema
        # int64 -> timestamp of the same unit reinterprets the raw values (no arithmetic).
        arrays = [raw.column(f.name).cast(f.type) for f in schema]
        return pa.Table.from_arrays(arrays, schema=schema)

    def to_batches(self) -> Iterator[pa.RecordBatch]:
        """The rows as Arrow record batches, parts in path order (threads read ahead)."""
        for tables in self._read(self._columns):
            for raw in tables:
                yield from self._output(raw).to_batches()

    def to_arrow_batch_reader(self) -> pa.RecordBatchReader:
        """The rows as a :class:`pyarrow.RecordBatchReader` of :attr:`arrow_schema`, read as it
        is consumed: parts are read only when the reader reaches them, at most
        ``max_workers`` read tasks ahead, so memory holds a few tasks' rows (a task is at most
        a million rows), never the table. For reads larger than memory, and for any engine that
        takes a reader (``duckdb.from_arrow(reader)``, ``polars.from_arrow(reader)``,
        ``pyarrow.dataset.write_dataset``). A reader is read once.
        """
        return pa.RecordBatchReader.from_batches(self.arrow_schema, self.to_batches())

    def to_arrow(self) -> pa.Table:
        """All rows as one Arrow table."""
        return pa.Table.from_batches(list(self.to_batches()), schema=self.arrow_schema)

    def to_pandas(self) -> pd.DataFrame:
        """All rows as a pandas DataFrame (timestamps as ``datetime64[<unit>, UTC]``)."""
        return self.to_arrow().to_pandas()

    def to_duckdb(
        self, table_name: str, connection: duckdb.DuckDBPyConnection | None = None
    ) -> duckdb.DuckDBPyConnection:
        """The rows registered as the view ``table_name`` of ``connection`` (default: a new
        in-memory DuckDB database), which is returned; the view can be queried any number of
        times, as pyiceberg's ``to_duckdb``. The rows are read into memory once
        (:meth:`to_arrow`); for one pass over more rows than memory holds, hand DuckDB
        :meth:`to_arrow_batch_reader` instead.

        Raises:
            MissingExtraError: duckdb is not installed (the ``duckdb`` extra).
        """
        duckdb = require("duckdb", what="TableScan.to_duckdb()")
        con = connection if connection is not None else duckdb.connect(database=":memory:")
        con.register(table_name, self.to_arrow())
        return con

    def to_polars(self) -> pl.DataFrame:
        """All rows as a polars DataFrame (``time`` and TIMESTAMP columns as polars
        ``Datetime`` in UTC with ``timestamp_as='timestamp'``, else Int64).

        Raises:
            MissingExtraError: polars is not installed (the ``polars`` extra).
        """
        polars = require("polars", what="TableScan.to_polars()")
        frame = polars.from_arrow(self.to_arrow())
        assert isinstance(frame, polars.DataFrame)  # a table gives a frame, never a Series
        return frame

    @property
    def metadata_count(self) -> int | None:
        """The row count from part statistics alone, when they make it exact, else None.

        Raises:
            DataError: an external part it counts changed after ``ADD PART`` (one metadata
                request per external part kept; see
                :func:`~tsfile_catalog.exec.read.check_sources`).
        """
        known = metadata_count(self._plan)
        if known is not None:
            check_sources(self._table.io, self._plan.parts)
        return known

    def count(self) -> int:
        """The number of rows: from statistics when exact, else by reading ``time`` (plus the
        residual's columns)."""
        known = self.metadata_count
        if known is not None:
            return known
        return sum(t.num_rows for tables in self._read([TIME_COLUMN]) for t in tables)

    def explain(self) -> str:
        """What the scan will do: the version, the pushdown, the parts kept and pruned."""
        plan, table = self._plan, self._table
        pushdown = plan.pushdown
        lines = [
            f"scan of {table.location} at version {table.version}",
            f"columns: {', '.join(self._columns)}",
            f"where: {self._where if self._where is not None else '(none)'}",
        ]
        if pushdown.empty:
            lines.append("pushed: a range no row can be in (nothing is read)")
        else:
            low = "-inf" if pushdown.time_min == INT64_MIN else str(pushdown.time_min)
            high = "+inf" if pushdown.time_max == INT64_MAX else str(pushdown.time_max)
            lines.append(f"pushed time range (raw {self._unit}): [{low}, {high}]")
            for tag, values in pushdown.tag_values:
                lines.append(f"pushed {tag} IN ({', '.join(sorted(values))})")
            lines.append(
                "residual filter: " + ("none" if pushdown.residual is None else "on the rows read")
            )
        total = len(plan.parts) + len(plan.pruned)
        lines.append(f"parts: {len(plan.parts)} of {total} read, {len(plan.pruned)} pruned")
        lines.extend(f"  read   {p.path} ({p.row_count} rows)" for p in plan.parts)
        lines.extend(f"  pruned {p.path} ({p.row_count} rows)" for p in plan.pruned)
        for merge in plan.merges:
            # Rows a later write may replace: read together and resolved by key.
            devices = "every device" if merge.devices is None else f"{len(merge.devices)} devices"
            paths = ", ".join(p.path for p in merge.parts)
            lines.append(f"  merged by key ({devices}): {paths}")
        known = metadata_count(plan)  # what count() would do, without checking files
        lines.append("count(): " + ("by reading" if known is None else f"{known} from statistics"))
        return "\n".join(lines)
