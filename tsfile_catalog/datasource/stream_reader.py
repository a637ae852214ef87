"""The streaming reader: ``spark.readStream.format("tsfile").load(path)`` (Spark 4.2+).

Offsets are positions in the table's log (:class:`~tsfile_catalog.metadata.changes.
StreamOffset`): a micro-batch reads the parts the commits in (start, end] added, in commit
order, each once across restarts from the checkpoint (the table layer decides which,
:mod:`tsfile_catalog.table.changes`). A stream is a change feed: it emits each commit's rows
as written, also on a ``key.duplicates = last`` table, where a row a later commit replaces was
emitted before the commit replacing it (docs/streaming.md). Reading a batch's parts is the
batch reader's job on a scan of just those parts, so ``where``, ``columns`` and
``timestampAs`` mean the same as in ``spark.read``; streaming readers get no filter pushdown
from Spark (measured on 4.3).

Spark calls ``initialOffset``/``latestOffset``/``partitions`` in one long-lived planner
process per query, but ``read()`` on executors, on a reader rebuilt from the data source: a
partition carries what ``read()`` needs (its parts and slices, or a marker's time).

With ``partWatermark=true`` the stream also carries *marker rows*: one per batch in which the
table's completeness advanced (docs/streaming.md), ``time`` set to the completeness bound and
the hidden column :data:`~tsfile_catalog.datasource.watermark.MARKER_COLUMN` to the same
value, which no user row has (it is null in every data row).
:func:`~tsfile_catalog.datasource.watermark.with_source_watermark` turns them into Spark's
event-time watermark and removes them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxFiles,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from tsfile_catalog.datasource.change_feed import output_batch
from tsfile_catalog.datasource.reader import TsFilePartition, TsFileScanReader
from tsfile_catalog.datasource.types import arrow_schema, to_output
from tsfile_catalog.datasource.watermark import MARKER_COLUMN
from tsfile_catalog.exec.change_feed import commit_changes
from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.metadata.change_feed import CommitChanges
from tsfile_catalog.metadata.changes import (
    Segment,
    StreamOffset,
    batch_changes,
    batch_complete_until,
    batch_parts,
    plan_batch,
)
from tsfile_catalog.metadata.expressions import Expr
from tsfile_catalog.metadata.schema import TIME_COLUMN
from tsfile_catalog.metadata.slices import ReadSlice
from tsfile_catalog.options import ReadOptions, StreamOptions
from tsfile_catalog.table.changes import (
    current_table,
    current_version,
    starting_offset,
    stream_segments,
)

__all__ = ["TsFileStreamReader"]


class TsFileStreamPartition(InputPartition):
    """One task of a micro-batch: slices of the batch's parts, or one marker row."""

    def __init__(
        self,
        index: int,
        scan: ResolvedScan | None,
        slices: Sequence[ReadSlice] = (),
        marker: int | None = None,
        change: CommitChanges | None = None,
    ) -> None:
        super().__init__(index)
        self.scan = scan
        self.slices = tuple(slices)
        self.marker = marker
        self.change = change  # a change feed's task: one commit's changes


class TsFileStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(
        self,
        scan: ResolvedScan,
        read: ReadOptions,
        stream: StreamOptions,
        columns: Sequence[str],
        schema: StructType,
        where: Expr | None,
        *,
        change_feed: bool = False,
    ) -> None:
        self._scan = scan
        # readChangeFeed: every commit's changes (schema: the change feed's), none refused.
        self._change_feed = change_feed
        self._read = read
        self._stream = stream
        self._columns = tuple(columns)
        self._schema = schema  # the batch schema (without the marker column)
        self._where = where
        # Trigger.AvailableNow: the version current when the query started (never beyond).
        self._target: int | None = None

    def __getstate__(self) -> dict[str, Any]:
        # Tasks get the reader pickled: they read what their partition names and need none
        # of the table's part statistics (see ResolvedScan.for_reading).
        state = dict(self.__dict__)
        state["_scan"] = self._scan.for_reading()
        return state

    # -- planning (one process per query) -------------------------------------------------

    def initialOffset(self) -> dict:
        stream = self._stream
        _, table = self._current(None)
        start = starting_offset(
            self._scan.base,
            starting_version=stream.starting_version,
            starting_timestamp=stream.starting_timestamp,
            time_zone=self._read.time_zone,
            storage_options=self._read.storage_options,
        )
        # Every offset records the table it is a position of: see _current.
        return replace(start, table=table).to_json()

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = self._latest()

    def getDefaultReadLimit(self) -> ReadLimit:
        # Spark takes one limit; with both options set, latestOffset applies both.
        if self._stream.max_parts is not None:
            return ReadMaxFiles(self._stream.max_parts)
        if self._stream.max_rows is not None:
            return ReadMaxRows(self._stream.max_rows)
        return ReadAllAvailable()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        begin = StreamOffset.from_json(start)
        latest, table = self._current(begin.table)
        stop = self._target if self._target is not None else latest
        if begin.version > stop:
            return start
        max_parts, max_rows = self._limits(limit)
        segments = self._segments(begin, stop)
        end = plan_batch(segments, begin, max_parts=max_parts, max_rows=max_rows)
        if end.same_position(begin):
            return start  # nothing new: the same text, so Spark runs no batch
        # An offset from before offsets recorded the table gets it from here on.
        return replace(end, table=table).to_json()

    def _limits(self, limit: ReadLimit) -> tuple[int | None, int | None]:
        """Spark's ``ReadAllAvailable`` overrides the options (its contract); any other
        limit is the one :meth:`getDefaultReadLimit` derived from them, so both apply."""
        if isinstance(limit, ReadAllAvailable):
            return None, None
        max_parts, max_rows = self._stream.max_parts, self._stream.max_rows
        if isinstance(limit, ReadMaxFiles):
            max_parts = min(limit.max_files, max_parts or limit.max_files)
        if isinstance(limit, ReadMaxRows):
            max_rows = min(limit.max_rows, max_rows or limit.max_rows)
        return max_parts, max_rows

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        begin, finish = StreamOffset.from_json(start), StreamOffset.from_json(end)
        if begin.same_position(finish):
            return []
        # A batch replayed from the checkpoint after a restart is checked like a new one.
        begin = replace(begin, table=begin.table or finish.table)
        # The last version the batch touches: a batch ending mid-version reads part of it.
        last = finish.version if finish.index > 0 else finish.version - 1
        segments = self._segments(begin, last)
        if self._change_feed:
            scan = self._scan.for_reading()
            changes = batch_changes(segments, begin, finish)
            return [TsFileStreamPartition(i, scan, change=c) for i, c in enumerate(changes)]
        parts = batch_parts(segments, begin, finish)
        out: list[InputPartition] = []
        if parts:
            # The batch's parts at its last version, planned afresh (no table pre-filter).
            # Each commit's rows as written, never merged by key: a change feed (a row a
            # later commit replaces was emitted by then, whatever the batch boundaries).
            scan = replace(
                self._scan,
                parts=tuple(parts),
                version=last,
                read_only=False,
                candidates=None,
                key="keep",
            )
            for planned in self._batch_reader(scan).partitions():
                assert isinstance(planned, TsFilePartition)
                out.append(TsFileStreamPartition(len(out), scan.for_reading(), planned.slices))
        if self._stream.part_watermark:
            bound = batch_complete_until(segments, begin, finish)
            if bound is not None:
                out.append(TsFileStreamPartition(len(out), None, marker=bound))
        return out

    def _latest(self) -> int:
        return current_version(self._scan.base, storage_options=self._read.storage_options)

    def _current(self, table: str | None) -> tuple[int, str]:
        """The latest version and UUID of the table at the path, refusing (TableNotFoundError,
        naming the path and both UUIDs) another table than ``table``, the one the stream's
        offsets were positions of: a table dropped and recreated there restarts its versions,
        which would otherwise pass for the old table's."""
        return current_table(
            self._scan.base, table_uuid=table, storage_options=self._read.storage_options
        )

    def _segments(self, begin: StreamOffset, stop: int) -> list[Segment]:
        return stream_segments(
            self._scan.base,
            begin,
            stop,
            skip_change_commits=self._stream.skip_change_commits,
            change_feed=self._change_feed,
            storage_options=self._read.storage_options,
        )

    def _batch_reader(self, scan: ResolvedScan) -> TsFileScanReader:
        return TsFileScanReader(scan, self._read, self._columns, self._schema, self._where)

    # -- executors ------------------------------------------------------------------------

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, TsFileStreamPartition):
            return iter(())
        if partition.marker is not None:
            return iter([self._marker(partition.marker)])
        assert partition.scan is not None
        if partition.change is not None:
            raw = commit_changes(partition.scan, partition.change)
            return iter(output_batch(raw, partition.scan, self._schema, self._read).to_batches())
        batches = self._batch_reader(partition.scan).read(
            TsFilePartition(partition.value, partition.slices)
        )
        if not self._stream.part_watermark:
            return batches
        return (_with_marker(batch, None) for batch in batches)

    def _marker(self, bound: int) -> pa.RecordBatch:
        """The one-row batch of a marker: ``time`` = ``bound``, every other column null."""
        out = arrow_schema(self._schema)
        raw = pa.table(
            {
                f.name: pa.array([bound], pa.int64())
                if f.name == TIME_COLUMN
                else pa.nulls(1, pa.int64() if pa.types.is_timestamp(f.type) else f.type)
                for f in out
            }
        )
        table = to_output(raw, self._scan.schema, out, self._read.precision)
        return _with_marker(table.to_batches()[0], table.column(TIME_COLUMN).chunk(0))

    def commit(self, end: dict) -> None:
        # Nothing to release: parts stay until VACUUM, whose retention streams must outlast.
        return None


def _with_marker(batch: pa.RecordBatch, value: pa.Array | None) -> pa.RecordBatch:
    time_type = batch.schema.field(TIME_COLUMN).type
    column = value if value is not None else pa.nulls(batch.num_rows, time_type)
    # The schema keeps ``time`` NOT NULL: Spark checks nullability of what read() returns.
    schema = batch.schema.append(pa.field(MARKER_COLUMN, time_type, nullable=True))
    return pa.RecordBatch.from_arrays([*batch.columns, column], schema=schema)
