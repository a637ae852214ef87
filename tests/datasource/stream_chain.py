"""Two streaming queries chained through a table (issue 11): a sink that declares completeness
from the stream's own event time, and a source whose part watermark closes hourly windows as
soon as that declaration covers them. Shared by the local[2] test and the cluster test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pyspark.sql import Row, SparkSession
from pyspark.sql import functions as F

from tsfile_catalog import open_table, with_source_watermark

HOUR = 3_600_000


def write_input(directory: Path) -> None:
    """Hour 10 for two cities, and one row at exactly 11:00 (the newest event time)."""
    rows = [
        {"time": 10 * HOUR + m * 60_000, "city": city, "temp": float(m)}
        for m in (0, 20, 59)
        for city in ("paris", "rome")
    ]
    rows.append({"time": 11 * HOUR, "city": "paris", "temp": 99.0})
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "0.json").write_text("".join(json.dumps(r) + "\n" for r in rows))


def run_chain(
    spark: SparkSession,
    workdir: Path,
    table: str,
    fs_options: dict[str, str],
    storage_options: dict[str, Any],
) -> tuple[int | None, list[Row], list[Row]]:
    """Run the sink query, then the windowed source query (each to the end of its input).

    Returns the table's completeness after the sink, the windows the source query emitted,
    and Spark's own evaluation of the same windows over a batch read of the table.
    """
    write_input(workdir / "in")
    sink = (
        spark.readStream.schema("time bigint, city string, temp double")
        .json(str(workdir / "in"))
        .writeStream.format("tsfile")
        .options(table="weather", tagColumns="city", completeUntilDelay="0 seconds")
        .options(**fs_options)
        .option("checkpointLocation", str(workdir / "sink-checkpoint"))
        .trigger(availableNow=True)
        .start(table)
    )
    sink.awaitTermination()
    complete_until = open_table(table, storage_options=storage_options).complete_until()

    stream = (
        spark.readStream.format("tsfile")
        .options(timestampAs="timestamp", partWatermark="true", **fs_options)
        .load(table)
    )
    windows = (
        with_source_watermark(stream)
        .groupBy(F.window("time", "1 hour"))
        .agg(F.count("*").alias("n"), F.avg("temp").alias("avg"))
    )
    emitted: list[Row] = []
    source = (
        windows.writeStream.foreachBatch(lambda batch, _: emitted.extend(batch.collect()))
        .option("checkpointLocation", str(workdir / "source-checkpoint"))
        .outputMode("append")
        .trigger(availableNow=True)
        .start()
    )
    source.awaitTermination()

    batch = spark.read.format("tsfile").options(timestampAs="timestamp", **fs_options).load(table)
    expected = (
        batch.groupBy(F.window("time", "1 hour"))
        .agg(F.count("*").alias("n"), F.avg("temp").alias("avg"))
        .collect()
    )
    return complete_until, emitted, expected
