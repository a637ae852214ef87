"""The streaming sink's commit called directly (no SparkSession), with parts staged the way
its tasks stage them: what one micro-batch commits, and what a replayed one does not."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

from tsfile_catalog.datasource.staging import TsFileCommitMessage
from tsfile_catalog.datasource.stream_writer import TsFileStreamWriter
from tsfile_catalog.datasource.writer import plan_write
from tsfile_catalog.exceptions import CommitConflictError, TsFileCatalogError
from tsfile_catalog.metadata.manifest import Operation, StreamTxn
from tsfile_catalog.metadata.ownership import STAGING_DIR, new_job_id
from tsfile_catalog.options import StreamWriteOptions, parse_stream_write_options
from tsfile_catalog.table import open_table
from tsfile_catalog.write.staging import stage_task

SPARK_SCHEMA = StructType(
    [
        StructField("time", LongType()),
        StructField("city", StringType()),
        StructField("temp", DoubleType()),
    ]
)
ARROW_SCHEMA = pa.schema([("time", pa.int64()), ("city", pa.string()), ("temp", pa.float64())])
QUERY = "5f0c9a3e-8d1b-4c2e-9a57-2b6f1e0d4c3a"


def sink(root: Path, **options: str) -> TsFileStreamWriter:
    """The writer Spark makes for a micro-batch (planned against the table as of now)."""
    parsed = parse_stream_write_options(
        {"path": str(root), "table": "weather", "tagColumns": "city", **options}
    )
    return TsFileStreamWriter(plan_write(SPARK_SCHEMA, parsed.write), parsed)


def staged(
    root: Path, options: StreamWriteOptions, times: list[int], batch_id: int, query: str = QUERY
) -> TsFileCommitMessage:
    """One task's message for ``batch_id``: its rows staged as the sink's write() stages."""
    writer = sink(root)
    plan = writer._plan
    rows = pa.RecordBatch.from_pydict(
        {"time": times, "city": ["bj"] * len(times), "temp": [float(t) for t in times]},
        schema=ARROW_SCHEMA,
    )
    job = new_job_id()
    parts, staging = stage_task(
        iter([rows]),
        schema=plan.schema,
        time_source=plan.time_source,
        sources=plan.sources,
        unit=plan.unit,
        options=options.write,
        job=job,
        partition=0,
        attempt=0,
    )
    return TsFileCommitMessage(parts, staging, None, job, query_id=query, batch_id=batch_id)


def part_files(root: Path) -> list[str]:
    return sorted(p.name for p in root.glob("part-*.tsfile"))


def test_a_batch_commits_once_and_a_replay_removes_its_files(tmp_path: Path) -> None:
    root = tmp_path / "t"
    options = sink(root, completeUntilDelay="10 milliseconds")._options
    sink(root, completeUntilDelay="10 milliseconds").commit([staged(root, options, [1, 50], 0)], 0)
    table = open_table(str(root))
    assert (table.version, table.snapshot.transactions[QUERY]) == (0, StreamTxn(QUERY, 0, 50))
    info = table.history()[0]
    assert info.operation == Operation.STREAMING_UPDATE
    assert dict(info.operation_parameters) == {
        "mode": "append",
        "mergeSchema": "false",
        "outputMode": "Append",
        "queryId": QUERY,
        "epochId": "0",
    }
    assert info.complete_until == 40
    committed = part_files(root)

    # The same batch again (a replay after a restart): nothing committed, its files gone.
    replay = staged(root, options, [1, 50], 0)
    assert (root / STAGING_DIR).exists()
    sink(root, completeUntilDelay="10 milliseconds").commit([replay], 0)
    assert open_table(str(root)).version == 0
    assert part_files(root) == committed
    assert not (root / STAGING_DIR).exists()

    # The next batch lands; its older rows do not move the declared bound back.
    sink(root, completeUntilDelay="10 milliseconds").commit([staged(root, options, [20, 30], 1)], 1)
    table = open_table(str(root), use_cache=False)
    assert table.version == 1
    assert table.snapshot.transactions[QUERY] == StreamTxn(QUERY, 1, 50)
    assert table.history()[0].complete_until == 40
    assert table.parts()[-1].row_count == 2


def test_an_empty_batch_commits_nothing(tmp_path: Path) -> None:
    root = tmp_path / "t"
    options = sink(root)._options
    sink(root).commit([staged(root, options, [], 0)], 0)
    assert not (root / "_tsfile_manifest").exists()


def test_messages_of_another_batch_are_refused_and_cleaned_up(tmp_path: Path) -> None:
    root = tmp_path / "t"
    options = sink(root)._options
    with pytest.raises(TsFileCatalogError, match="batch ids \\[3\\]; expected one query"):
        sink(root).commit([staged(root, options, [1], 3)], 4)
    assert not (root / "_tsfile_manifest").exists()
    assert not (root / STAGING_DIR).exists()
    assert part_files(root) == []


def test_a_sink_planned_against_a_dropped_table_commits_nothing_to_its_successor(
    tmp_path: Path,
) -> None:
    # The sink's exactly-once record lives in the table's own snapshot, and every batch
    # commit names the table the query planned against: a table recreated at the path can
    # neither make the running query skip a batch nor receive one meant for the old table.
    root = tmp_path / "t"
    options = sink(root)._options
    sink(root).commit([staged(root, options, [1], 0)], 0)
    old = open_table(str(root)).table_uuid
    running = sink(root)  # the query's sink, planned against the table of batch 0
    shutil.rmtree(root)
    sink(root).commit([staged(root, options, [5], 0, query="another")], 0)
    recreated = open_table(str(root))
    batch = staged(root, options, [2], 1)
    with pytest.raises(CommitConflictError, match=f"{old}.*dropped and recreated"):
        running.commit([batch], 1)
    after = open_table(str(root), use_cache=False)
    assert (after.table_uuid, after.version) == (recreated.table_uuid, 0)
    assert after.parts() == recreated.parts() and QUERY not in after.snapshot.transactions
    assert not (root / STAGING_DIR).exists()
    assert len(part_files(root)) == 1


def test_write_outside_a_streaming_task_fails_clearly(tmp_path: Path) -> None:
    rows = pa.RecordBatch.from_pydict({"time": [1], "city": ["bj"], "temp": [1.0]})
    with pytest.raises(TsFileCatalogError, match="no streaming query id"):
        sink(tmp_path / "t").write(iter([rows]))


def test_the_sink_writes_in_the_tables_own_unit(tmp_path: Path) -> None:
    """Into a table that stores nanoseconds, the sink given no unit converts its declared
    delay to nanoseconds; one naming another unit is refused when Spark plans the batch."""
    from tsfile_catalog import OptionError, write_table

    root = tmp_path / "t"
    first = pa.table({"time": [1], "city": ["bj"], "temp": [1.0]}, schema=ARROW_SCHEMA)
    write_table(
        str(root),
        first,
        table="weather",
        tag_columns=["city"],
        options={"timestampPrecision": "ns"},
    )
    writer = sink(root, completeUntilDelay="10 milliseconds")
    assert writer._plan.unit == "ns"
    writer.commit([staged(root, writer._options, [50_000_000_000], 0)], 0)
    table = open_table(str(root), use_cache=False)
    assert table.history()[0].complete_until == 50_000_000_000 - 10_000_000
    assert table.properties["time.unit"] == "ns"
    with pytest.raises(OptionError, match="stores time in nanoseconds"):
        sink(root, timestampPrecision="ms")


def test_a_stream_that_creates_a_table_records_its_time(tmp_path: Path) -> None:
    root = tmp_path / "t"
    writer = sink(root, timestampPrecision="us")
    writer.commit([staged(root, writer._options, [1], 0)], 0)
    table = open_table(str(root))
    assert (table.properties["time.unit"], table.properties["time.type"]) == ("us", "BIGINT")
