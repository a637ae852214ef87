"""Everything Spark sends to executors pickles, and reopens storage in a process of its own.

Spark pickles the data source after ``schema()``, the reader and each partition on their way
to the tasks, the writer on its way to the tasks and each task's commit message on its way
back (with its own serializer, used here). A fresh process, started without the driver's
state and without credentials in its environment, reads and writes with what arrives.
No SparkSession: the objects are made and called the way Spark makes and calls them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.serializers import CPickleSerializer
from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

from tsfile_catalog.datasource.reader import TsFilePartition
from tsfile_catalog.datasource.source import TsFileDataSource
from tsfile_catalog.datasource.writer import TsFileCommitMessage
from tsfile_catalog.io import FileIO
from tsfile_catalog.table import open_table

REPO = Path(__file__).resolve().parents[2]
SPARK_SCHEMA = StructType(
    [
        StructField("time", LongType()),
        StructField("city", StringType()),
        StructField("device", StringType()),
        StructField("temp", DoubleType()),
    ]
)
WHERE = "city = 'bj' AND time >= 6"
SERIALIZER = CPickleSerializer()


def _batch(rows: list[tuple[int, str, str, float]]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(
        [dict(zip(SPARK_SCHEMA.names, r, strict=True)) for r in rows],
        schema=pa.schema(
            [("time", pa.int64()), ("city", pa.string()), ("device", pa.string())]
            + [("temp", pa.float64())]
        ),
    )


def _round_trip(obj: Any) -> Any:
    return SERIALIZER.loads(SERIALIZER.dumps(obj))


def _in_a_fresh_process(work: Any, tmp_path: Path) -> Any:
    """Run tests/datasource/executor_child.py on ``work``: its unpickled result."""
    work_file, result_file = tmp_path / "work.pickle", tmp_path / "result.pickle"
    work_file.write_bytes(SERIALIZER.dumps(work))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "FSSPEC_"))}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run(
        [sys.executable, str(REPO / "tests/datasource/executor_child.py")]
        + [str(work_file), str(result_file)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return SERIALIZER.loads(result_file.read_bytes())


@pytest.mark.parametrize("storage", ["local", pytest.param("s3", marks=pytest.mark.s3)])
def test_sources_readers_partitions_writers_and_messages_cross_to_a_fresh_process(
    storage: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if storage == "local":
        url, storage_options = str(tmp_path / "weather"), {}
    else:
        url, storage_options = request.getfixturevalue("s3_table")
    options = {"path": url, **{f"fs.{k}": str(v) for k, v in storage_options.items()}}
    first = [(t, ["bj", "sh"][t % 2], "d1", t * 0.5) for t in range(30)]
    second = [(t, "bj", "d2", -1.0) for t in range(100, 110)]
    # version 0, written here (the driver-side path): three parts of ten rows
    seed = TsFileDataSource(
        {**options, "table": "weather", "tagColumns": "city,device", "maxRowsPerFile": "10"}
    ).writer(SPARK_SCHEMA, overwrite=False)
    seed.commit([seed.write(iter([_batch(first)]))])

    # load(): schema() on the source, which Spark then pickles for planning
    source = TsFileDataSource({**options, "where": WHERE, "rowsPerPartition": "10"})
    read_schema = source.schema()
    reader = _round_trip(source).reader(read_schema)
    partitions = reader.partitions()
    assert len(partitions) > 1
    for partition in partitions:
        assert isinstance(partition, TsFilePartition)
        assert _round_trip(partition).slices == partition.slices
    writer = TsFileDataSource(options).writer(SPARK_SCHEMA, overwrite=False)

    message, tables = _in_a_fresh_process(
        (writer, [_batch(second[:5]), _batch(second[5:])], reader, partitions), tmp_path
    )

    read = sorted(row for table in tables for row in zip(*table.to_pydict().values(), strict=True))
    assert read == sorted(r for r in first if r[1] == "bj" and r[0] >= 6)
    here = [pa.Table.from_batches(list(reader.read(p))) for p in partitions]
    assert [t.to_pydict() for t in tables] == [t.to_pydict() for t in here]

    assert isinstance(message, TsFileCommitMessage)
    assert _round_trip(message) == message
    io = FileIO(url, storage_options)
    assert [io.exists(p.staged_url) for p in message.parts] == [True]  # staged by the child
    writer.commit([message])  # the driver's writer commits what the child staged
    table = open_table(url, storage_options=storage_options)
    assert table.version == 1
    rows = table.scan(where="device = 'd2'").to_arrow().to_pylist()
    assert sorted(tuple(r.values()) for r in rows) == second
    assert not io.exists(f"{url}/_staging")


def test_a_query_pickles_options_and_slices_not_the_snapshot(tmp_path: Path) -> None:
    """Spark pickles the source per query and the reader per task: with part statistics in
    them that was megabytes and seconds per query at a hundred parts. The source carries the
    version it resolved (reopened there, so a later commit stays invisible) and the reader
    only what reading its slices needs."""
    url = str(tmp_path / "weather")
    rows = [(t, ["bj", "sh"][t % 2], f"d{t % 7}", t * 0.5) for t in range(400)]
    seed = TsFileDataSource(
        {"path": url, "table": "weather", "tagColumns": "city,device", "maxRowsPerFile": "10"}
    ).writer(SPARK_SCHEMA, overwrite=False)
    seed.commit([seed.write(iter([_batch(rows)]))])
    assert len(open_table(url).parts()) == 40

    source = TsFileDataSource({"path": url, "where": "time >= 100"})
    read_schema = source.schema()
    pickled = SERIALIZER.dumps(source)
    assert len(pickled) < 4_000  # options and a version, whatever the number of parts

    more = TsFileDataSource({"path": url}).writer(SPARK_SCHEMA, overwrite=False)
    more.commit([more.write(iter([_batch([(1_000, "bj", "d9", 1.0)])]))])

    reader = SERIALIZER.loads(pickled).reader(read_schema)
    partitions = reader.partitions()
    task_reader = _round_trip(reader)
    assert len(SERIALIZER.dumps(task_reader)) < 4_000
    read = [r for p in partitions for b in task_reader.read(p) for r in b.to_pylist()]
    assert sorted(tuple(r.values()) for r in read) == [r for r in rows if r[0] >= 100]
    with pytest.raises(AssertionError, match="cannot be planned"):
        task_reader.partitions()
