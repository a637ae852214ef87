"""The streaming sink on real streaming queries (local[2]): one commit per micro-batch,
exactly once across restarts, append mode only.

The input is Spark's file source over small JSON files (``maxFilesPerTrigger=1``: one file,
one micro-batch), run with ``Trigger.AvailableNow`` so every run ends by itself.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery
from pyspark.testing import assertDataFrameEqual

import tsfile_catalog
from tsfile_catalog.metadata.manifest import Operation
from tsfile_catalog.metadata.ownership import STAGING_DIR

pytestmark = pytest.mark.spark

SCHEMA = "time bigint, city string, temp double"


def add_file(source: Path, index: int, rows: int = 3) -> None:
    """Input file ``index``: ``rows`` rows at times index*10, index*10+1, ... (two cities)."""
    source.mkdir(exist_ok=True)
    lines = [
        json.dumps({"time": index * 10 + t, "city": ["bj", "sh"][t % 2], "temp": index + t / 4})
        for t in range(rows)
    ]
    path = source / f"in-{index:03d}.json"
    path.write_text("\n".join(lines) + "\n")
    # The file source takes files oldest first: make that the index order.
    os.utime(path, (1_700_000_000 + index, 1_700_000_000 + index))


def stream(spark: SparkSession, source: Path) -> DataFrame:
    return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source))


def run(
    spark: SparkSession, source: Path, table: str, checkpoint: Path, **options: str
) -> StreamingQuery:
    """Run the query to the end of the input (AvailableNow) and return it."""
    query = (
        stream(spark, source)
        .writeStream.format("tsfile")
        .options(table="weather", tagColumns="city", **options)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start(table)
    )
    query.awaitTermination()
    return query


def batches(query: StreamingQuery) -> list[tuple[int, int]]:
    """(batch id, input rows) of each micro-batch the run executed."""
    return [(p["batchId"], p["numInputRows"]) for p in query.recentProgress]


def expected(spark: SparkSession, source: Path) -> DataFrame:
    return spark.read.schema(SCHEMA).json(str(source)).select("time", "city", "temp")


def table_rows(spark: SparkSession, table: str, **options: str) -> DataFrame:
    return spark.read.format("tsfile").options(**options).load(table).select("time", "city", "temp")


def test_each_micro_batch_commits_once_across_restarts(spark: SparkSession, tmp_path: Path) -> None:
    source, table, checkpoint = tmp_path / "in", str(tmp_path / "t"), tmp_path / "ck"
    add_file(source, 0)
    add_file(source, 1)
    query = run(spark, source, table, checkpoint, completeUntilDelay="5 milliseconds")
    assert batches(query) == [(0, 3), (1, 3)]

    history = list(reversed(tsfile_catalog.open_table(table).history()))
    assert [(c.version, c.operation) for c in history] == [
        (0, Operation.STREAMING_UPDATE),
        (1, Operation.STREAMING_UPDATE),
    ]
    for batch_id, commit in enumerate(history):
        assert commit.operation_parameters["outputMode"] == "Append"
        assert commit.operation_parameters["queryId"] == query.id
        assert commit.operation_parameters["epochId"] == str(batch_id)
        assert commit.txn is not None
        assert (commit.txn.app_id, commit.txn.version) == (query.id, batch_id)
    # completeUntilDelay: the newest time of every batch so far (2, then 12) less 5 ms.
    assert [c.complete_until for c in history] == [2 - 5, 12 - 5]

    # A crash after batch 1's table commit, before Spark logged the batch as done: Spark's
    # commit log lacks it, so the restart runs batch 1 again, and the sink skips it.
    commits = checkpoint / "commits"
    for name in ("1", ".1.crc"):
        (commits / name).unlink(missing_ok=True)
    replay = run(spark, source, table, checkpoint)
    assert replay.id == query.id and batches(replay) == [(1, 3)]  # really replayed
    assert tsfile_catalog.open_table(table).version == 1  # ... and not committed twice

    # A crash between write and commit: batch 1's tasks staged and published its files but
    # the table commit never happened (its commit file is not there), nor Spark's log entry.
    (tmp_path / "t" / "_tsfile_manifest" / f"{1:020d}.json").unlink()
    for name in ("1", ".1.crc"):
        (commits / name).unlink(missing_ok=True)
    tsfile_catalog.table.clear_cache()
    assert tsfile_catalog.open_table(table).version == 0
    restarted = run(spark, source, table, checkpoint, completeUntilDelay="5 milliseconds")
    assert batches(restarted) == [(1, 3)]

    handle = tsfile_catalog.open_table(table)
    assert [c.txn.version for c in reversed(handle.history()) if c.txn] == [0, 1]
    assert handle.snapshot.transactions[query.id].version == 1
    # No batch twice, no row lost: the table holds exactly the input.
    assertDataFrameEqual(table_rows(spark, table), expected(spark, source))
    assert not (tmp_path / "t" / STAGING_DIR).exists()


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("complete", "supports output mode 'append' only, and this query uses output mode"),
        ("update", "does not support Update mode"),
    ],
)
def test_only_output_mode_append_is_accepted(
    spark: SparkSession, tmp_path: Path, mode: str, message: str
) -> None:
    add_file(tmp_path / "in", 0)
    counts = stream(spark, tmp_path / "in").groupBy("city").count().withColumnRenamed("count", "n")
    query = (
        counts.withColumn("time", counts.n)
        .writeStream.format("tsfile")
        .options(table="weather", tagColumns="city")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .outputMode(mode)
        .trigger(availableNow=True)
        .start(str(tmp_path / "t"))
    )
    with pytest.raises(Exception, match=message):
        query.awaitTermination()
    assert not (tmp_path / "t" / "_tsfile_manifest").exists()


def test_a_bad_sink_option_is_named(spark: SparkSession, tmp_path: Path) -> None:
    add_file(tmp_path / "in", 0)
    with pytest.raises(Exception, match="option 'completeUntilDelay' = 'soon'"):
        run(spark, tmp_path / "in", str(tmp_path / "t"), tmp_path / "ck", completeUntilDelay="soon")
    assert not (tmp_path / "t" / "_tsfile_manifest").exists()


@pytest.mark.s3
def test_the_sink_writes_to_s3(
    spark: SparkSession, tmp_path: Path, s3_table: tuple[str, dict[str, Any]]
) -> None:
    url, storage = s3_table
    fs_options = {f"fs.{k}": str(v) for k, v in storage.items()}
    source, checkpoint = tmp_path / "in", tmp_path / "ck"
    add_file(source, 0)
    add_file(source, 1)
    assert batches(run(spark, source, url, checkpoint, **fs_options)) == [(0, 3), (1, 3)]
    handle = tsfile_catalog.open_table(url, storage_options=storage)
    assert [c.operation for c in handle.history()] == [Operation.STREAMING_UPDATE] * 2
    assertDataFrameEqual(table_rows(spark, url, **fs_options), expected(spark, source))
