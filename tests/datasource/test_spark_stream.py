"""spark.readStream over a table: batches and admission control, restarts, change commits,
and the part watermark closing hourly windows on time (issue 11's acceptance scenario).

Streaming queries cost seconds each on local[2]: every test keeps to a few small ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from tests.table.helpers import SCHEMA, append_rows
from tsfile_catalog import purge, with_source_watermark
from tsfile_catalog.table import append_parts, open_table

pytestmark = pytest.mark.spark

HOUR = 3_600_000


def _rows(start: int, n: int, city: str = "paris") -> pa.Table:
    return pa.table(
        {
            "time": pa.array([start + i * 1000 for i in range(n)], pa.int64()),
            "city": pa.array([city] * n),
            "temp": pa.array([float(i) for i in range(n)], pa.float32()),
        }
    )


def _run(df: DataFrame, checkpoint: Path, **options: Any) -> list[list[tuple[Any, ...]]]:
    """One Trigger.AvailableNow run; the rows of each non-empty batch, sorted."""
    batches: list[list[tuple[Any, ...]]] = []

    def collect(batch: DataFrame, _: int) -> None:
        rows = sorted(tuple(r) for r in batch.collect())
        if rows:
            batches.append(rows)
        if "during" in options:
            options.pop("during")()

    query = (
        df.writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(checkpoint))
        .outputMode(options.get("mode", "append"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return batches


def test_available_now_honours_the_limits_stops_at_its_start_and_resumes(
    spark: SparkSession, tmp_path: Path
) -> None:
    url = str(tmp_path / "t")
    for v, n in enumerate([2, 3, 4, 5]):
        append_rows(url, _rows(v * 100_000, n), SCHEMA)
    ck = tmp_path / "ck"
    stream = spark.readStream.format("tsfile").option("maxPartsPerTrigger", 3).load(url)
    # A commit landing while the run reads is for the next run (AvailableNow stops at the
    # version current when it started).
    late = lambda: append_rows(url, _rows(900_000, 6), SCHEMA)  # noqa: E731
    first = _run(stream.select("time"), ck, during=late)
    assert [len(b) for b in first] == [2 + 3 + 4, 5]
    assert open_table(url).version == 4
    # Restarted from the checkpoint, by rows now: only the part committed since, once.
    again = spark.readStream.format("tsfile").option("maxRowsPerTrigger", 1).load(url)
    second = _run(again.select("time"), ck)
    assert second == [[(900_000 + i * 1000,) for i in range(6)]]
    everything = sorted(r[0] for b in first + second for r in b)
    assert everything == sorted(r.time for r in spark.read.format("tsfile").load(url).collect())


def test_starting_versions_and_change_commits(spark: SparkSession, tmp_path: Path) -> None:
    url = str(tmp_path / "t")
    for v in range(2):
        append_rows(url, _rows(v * 100_000, 2), SCHEMA)
    # Version 2: the same rows rewritten, never streamed again.
    open_table(url).maintenance.optimize()
    append_rows(url, _rows(300_000, 1), SCHEMA)  # version 3
    reader = spark.readStream.format("tsfile").option("startingVersion", 1)
    got = _run(reader.load(url).select("time"), tmp_path / "a")
    assert got == [[(100_000,), (101_000,), (300_000,)]]
    latest = spark.readStream.format("tsfile").option("startingVersion", "latest")
    assert _run(latest.load(url).select("time"), tmp_path / "b") == []
    with pytest.raises(Exception, match="'startingVersion' applies to spark.readStream only"):
        spark.read.format("tsfile").option("startingVersion", 1).load(url).collect()

    open_table(url).delete("time < 100000")  # version 4 removes rows
    append_rows(url, _rows(500_000, 1), SCHEMA)
    stopped = spark.readStream.format("tsfile").option("startingVersion", 4).load(url)
    with pytest.raises(Exception, match=r"version 4 \(DELETE\).*skipChangeCommits"):
        _run(stopped.select("time"), tmp_path / "c")
    skipping = reader.option("startingVersion", 4).option("skipChangeCommits", "true")
    assert _run(skipping.load(url).select("time"), tmp_path / "d") == [[(500_000,)]]


def _write_hour(spark: SparkSession, url: str, hour: int, **options: str) -> None:
    rows = [(hour * HOUR + m * 60_000, city, float(hour * 100 + m)) for m in (0, 20, 59)
            for city in ("paris", "rome")]  # fmt: skip
    writer = spark.createDataFrame(rows, "time long, city string, temp float").write
    writer = writer.format("tsfile").option("table", "weather").option("tagColumns", "city")
    writer.options(**options).mode("append").save(url)


def _hourly_windows(spark: SparkSession, url: str, checkpoint: Path) -> list[list[tuple[Any, ...]]]:
    stream = (
        spark.readStream.format("tsfile")
        .option("timestampAs", "timestamp")
        .option("partWatermark", "true")
        .load(url)
    )
    windows = (
        with_source_watermark(stream)
        .groupBy(F.window("time", "1 hour"))
        .agg(F.count("*").alias("n"), F.avg("temp").alias("avg"))
        .select(F.col("window.start").alias("start"), "n", "avg")
    )
    return _run(windows, checkpoint)


def _expected(spark: SparkSession, url: str) -> dict[int, tuple[Any, ...]]:
    """Spark's own evaluation of the hourly windows over a batch read of the table."""
    df = spark.read.format("tsfile").option("timestampAs", "timestamp").load(url)
    rows = df.groupBy(F.window("time", "1 hour")).agg(F.count("*"), F.avg("temp")).collect()
    return {r[0].start.hour: (r[1], r[2]) for r in rows}


def test_the_interval_property_closes_each_hour_in_the_run_that_reads_it(
    spark: SparkSession, tmp_path: Path
) -> None:
    url = str(tmp_path / "t")
    append_rows(url, _rows(9 * HOUR, 4), SCHEMA)  # hour 9, before the property: no declaration
    append_parts(url, [], SCHEMA, properties={"watermark.interval": "1 hour"})
    _write_hour(spark, url, 10)
    assert open_table(url).complete_until() == 11 * HOUR  # hour 10's commit completed it
    ck = tmp_path / "ck"
    first = [row for batch in _hourly_windows(spark, url, ck) for row in batch]
    # Hour 10's window closes now, before any row of hour 11 exists, with its rows only.
    assert [r[0].hour for r in first] == [9, 10]
    _write_hour(spark, url, 11)
    second = [row for batch in _hourly_windows(spark, url, ck) for row in batch]
    expected = _expected(spark, url)
    assert [(r[0].hour, r[1], r[2]) for r in first + second] == [
        (h, *expected[h]) for h in (9, 10, 11)
    ]


def test_complete_until_closes_the_window_it_declares(spark: SparkSession, tmp_path: Path) -> None:
    url = str(tmp_path / "t")
    _write_hour(spark, url, 10, completeUntil="1970-01-01T11:00:00Z")
    assert open_table(url).complete_until() == 11 * HOUR
    got = [row for batch in _hourly_windows(spark, url, tmp_path / "ck") for row in batch]
    assert [(r[0].hour, r[1], r[2]) for r in got] == [(10, *_expected(spark, url)[10])]


def test_a_stream_fails_on_a_table_dropped_and_recreated_at_its_path(
    spark: SparkSession, tmp_path: Path
) -> None:
    url = str(tmp_path / "t")
    for v in range(2):
        append_rows(url, _rows(v * 100_000, 2), SCHEMA)
    ck = tmp_path / "ck"
    first = _run(spark.readStream.format("tsfile").load(url).select("time"), ck)
    assert sorted(r for b in first for r in b) == [(0,), (1000,), (100_000,), (101_000,)]
    old = open_table(url).table_uuid
    purge(url)
    for v in range(3):  # another table, whose versions 0..2 reach past the stream's offset
        append_rows(url, _rows(v * 1_000_000, 1), SCHEMA)
    new = open_table(url).table_uuid
    restarted = spark.readStream.format("tsfile").load(url).select("time")
    with pytest.raises(Exception, match=rf"(?s)read table {old} at .*now holds table {new}"):
        _run(restarted, ck)


@pytest.mark.slow
def test_a_stream_resumes_after_expire_snapshots_and_names_a_gap(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A restarted stream reads on from the versions EXPIRE SNAPSHOTS kept; when it kept too
    few, the error names the stream's offset and the oldest version kept."""
    url = str(tmp_path / "t")
    for v in range(2):
        append_rows(url, _rows(v * 100_000, 1), SCHEMA)
    ck = tmp_path / "ck"

    def stream() -> DataFrame:  # as a restarted process loads it: at the latest version
        return spark.readStream.format("tsfile").load(url).select("time")

    # Loaded at version 1, started again after EXPIRE SNAPSHOTS removed version 1.
    reused = stream()
    batch = spark.read.format("tsfile").load(url).select("time")
    assert sorted(r for b in _run(reused, ck) for r in b) == [(0,), (100_000,)]
    for v in range(2, 5):
        append_rows(url, _rows(v * 100_000, 1), SCHEMA)
    # The stream's next version is 2, which stays: 2, 3 and 4 are kept.
    assert open_table(url).maintenance.expire_snapshots(
        retention_hours=0, retain_last=3
    ).versions == (0, 1)
    assert _run(stream(), ck) == [[(200_000,), (300_000,), (400_000,)]]
    append_rows(url, _rows(500_000, 1), SCHEMA)
    # The reused DataFrame plans at the latest version; its offsets say what it reads.
    assert _run(reused, ck) == [[(500_000,)]]
    # A batch read's rows are its version's: that one is gone.
    with pytest.raises(Exception, match="no version 1 any more"):
        batch.collect()

    lagging = tmp_path / "lagging"
    assert _run(stream(), lagging)
    for v in range(6, 9):
        append_rows(url, _rows(v * 100_000, 1), SCHEMA)
    open_table(url).maintenance.expire_snapshots(
        retention_hours=0, retain_last=1
    )  # keeps version 8 only
    with pytest.raises(Exception, match="offset is at version 6 .* oldest version kept is 8"):
        _run(stream(), lagging)


def test_a_key_table_streams_each_commits_rows_as_written(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A stream is a change feed (docs/streaming.md): on a ``key.duplicates = last`` table a
    row that a later commit replaces is emitted, and so is the replacing row, in one batch or
    in two alike; a batch read merges."""
    url = str(tmp_path / "t")
    append_rows(url, _rows(0, 3), SCHEMA)
    append_rows(url, _rows(1000, 3), SCHEMA)  # re-sends times 1000 and 2000
    assert open_table(url).snapshot.properties["key.duplicates"] == "last"
    written = sorted([(t, float(i)) for i, t in enumerate((0, 1000, 2000))])
    written += [(1000 + i * 1000, float(i)) for i in range(3)]
    one = spark.readStream.format("tsfile").load(url).select("time", "temp")
    assert _run(one, tmp_path / "one") == [sorted(written)]
    two = spark.readStream.format("tsfile").option("maxPartsPerTrigger", 1).load(url)
    batches = _run(two.select("time", "temp"), tmp_path / "two")
    assert sorted(r for b in batches for r in b) == sorted(written) and len(batches) == 2
    merged = spark.read.format("tsfile").load(url).select("time", "temp").collect()
    assert sorted(tuple(r) for r in merged) == [(0, 0.0), (1000, 0.0), (2000, 1.0), (3000, 2.0)]
