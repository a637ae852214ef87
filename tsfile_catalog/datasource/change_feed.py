"""The change data feed through the ``tsfile`` source: ``option("readChangeFeed", "true")``.

The range is planned in the planning process (:func:`~tsfile_catalog.table.change_feed.
plan_change_feed`); each commit that changed rows becomes one task, which reads and compares
its parts on an executor (:func:`~tsfile_catalog.exec.change_feed.commit_changes`). The net
changes of a range (``deduplicationMode = netChanges``) are one task over the whole range.
Rows are the table's columns as a batch read shows them (``timestampAs``, the table's unit),
then ``_change_type``, ``_commit_version`` and ``_commit_timestamp``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
from pyspark.sql import types as T
from pyspark.sql.datasource import DataSourceReader, InputPartition

from tsfile_catalog.datasource.types import arrow_schema, spark_schema, to_output
from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.exec.change_feed import commit_changes
from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.metadata.change_feed import (
    CHANGE_COLUMNS,
    CHANGE_TYPE,
    COMMIT_TIMESTAMP,
    COMMIT_VERSION,
    CommitChanges,
)
from tsfile_catalog.options import ChangeFeedOptions, ReadOptions, StreamOptions
from tsfile_catalog.table.change_feed import ChangeFeed, plan_change_feed

__all__ = [
    "TsFileChangeFeedReader",
    "change_feed_schema",
    "check_batch_options",
    "check_stream_options",
    "output_batch",
]


def change_feed_schema(scan: ResolvedScan, read: ReadOptions) -> T.StructType:
    """Every column of the table as a batch read shows it, then the change columns."""
    schema = spark_schema(scan.schema, scan.schema.display_names, read.timestamp_as)
    return (
        schema.add(CHANGE_TYPE, T.StringType(), nullable=False)
        .add(COMMIT_VERSION, T.LongType(), nullable=False)
        .add(COMMIT_TIMESTAMP, T.TimestampType(), nullable=False)
    )


def check_batch_options(read: ReadOptions, stream: Sequence[str]) -> None:
    """Refuse the options a change feed cannot honour, by name: it returns every column of
    every changed row (a filter on some columns would split an update's two images; Spark
    filters the rows it returns), over a range rather than one version."""
    given = {
        "where": read.where is not None,
        "columns": read.columns is not None,
        "versionAsOf": read.version_as_of is not None,
        "timestampAsOf": read.timestamp_as_of is not None,
        "partialAggregate": read.partial_aggregate is not None,
        "limit": read.limit is not None,
        "onlyParts": read.only_parts is not None,
        "timeTop": read.time_top is not None,
    }
    given.update(
        {name: True for name in stream if name not in ("startingVersion", "startingTimestamp")}
    )
    refused = [name for name, present in given.items() if present]
    if refused:
        raise OptionError(
            f"option '{refused[0]}' does not apply to a change feed (readChangeFeed=true): it "
            "returns every column of each changed row between startingVersion and "
            "endingVersion; filter or select in the query instead"
        )


def check_stream_options(read: ReadOptions, stream: StreamOptions) -> None:
    """Refuse, by name, what a change feed stream cannot honour: the batch options
    :func:`check_batch_options` refuses, and the plain stream's ``skipChangeCommits`` (a change
    feed reads every commit) and ``partWatermark``."""
    check_batch_options(read, ())
    if stream.skip_change_commits:
        raise OptionError(
            "option 'skipChangeCommits' does not apply to a change feed stream "
            "(readChangeFeed=true): it reads every commit's changes, removals included"
        )
    if stream.part_watermark:
        raise OptionError(
            "option 'partWatermark' does not apply to a change feed stream (readChangeFeed=true)"
        )


def output_batch(
    raw: pa.Table, scan: ResolvedScan, out: T.StructType, read: ReadOptions
) -> pa.Table:
    """Change rows in the raw domain (:func:`~tsfile_catalog.exec.change_feed.commit_changes`)
    as ``out``, Spark's Arrow types."""
    target = arrow_schema(out)
    data = pa.schema([f for f in target if f.name not in CHANGE_COLUMNS])
    table = to_output(raw.select(data.names), scan.schema, data, read.precision)
    for name in CHANGE_COLUMNS:
        field = target.field(name)
        table = table.append_column(field, raw.column(name).cast(field.type))
    return table


class ChangeFeedPartition(InputPartition):
    """One commit's changes, or (``commits`` holding several) a range's net changes."""

    def __init__(self, index: int, commits: Sequence[CommitChanges], net: tuple[int, int] | None):
        super().__init__(index)
        self.commits = tuple(commits)
        self.net = net  # (last version, its commit time in ms) of a net-changes task


class TsFileChangeFeedReader(DataSourceReader):
    def __init__(
        self, scan: ResolvedScan, read: ReadOptions, feed: ChangeFeedOptions, schema: T.StructType
    ) -> None:
        self._scan = scan
        self._read = read
        self._feed = feed
        self._schema = schema

    def _plan(self) -> ChangeFeed:
        feed = self._feed
        return plan_change_feed(
            self._scan.base,
            starting_version=feed.starting_version,
            ending_version=feed.ending_version,
            starting_timestamp=feed.starting_timestamp,
            ending_timestamp=feed.ending_timestamp,
            time_zone=self._read.time_zone,
            storage_options=self._read.storage_options,
        )

    def partitions(self) -> Sequence[InputPartition]:
        planned = self._plan()
        if self._feed.net:
            return [
                ChangeFeedPartition(0, planned.commits, (planned.end, planned.end_timestamp_ms))
            ]
        return [ChangeFeedPartition(i, [c], None) for i, c in enumerate(planned.commits)]

    def read(self, partition: InputPartition | None) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, ChangeFeedPartition):
            return iter(())
        # Rows in the schema this DataFrame was loaded with (a column added after the
        # range's end reads as nulls, as in a batch read of an older version).
        scan = self._scan.for_reading()
        if partition.net is None:
            raws = [commit_changes(scan, c) for c in partition.commits]
        else:
            feed = ChangeFeed(scan, 0, partition.net[0], partition.net[1], partition.commits)
            raws = [feed.to_arrow(net=True)]
        out: list[pa.RecordBatch] = []
        for raw in raws:
            if raw.num_rows:
                out.extend(output_batch(raw, scan, self._schema, self._read).to_batches())
        return iter(out)
