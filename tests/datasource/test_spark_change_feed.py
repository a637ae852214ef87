"""spark.read's change data feed (readChangeFeed) on the tsfile source, against what Spark
computes from each version's rows: what commit v removed is version v - 1 EXCEPT ALL version
v, what it added version v EXCEPT ALL version v - 1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from tsfile_catalog import open_table, write_table

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([("time", pa.int64()), ("city", pa.string()), ("temp", pa.float64())])


def _rows(*values: tuple[int, str, float | None]) -> pa.Table:
    return pa.Table.from_pylist(
        [{"time": t, "city": c, "temp": v} for t, c, v in values], schema=SCHEMA
    )


@pytest.fixture
def history(tmp_path: Path) -> str:
    """A `last` table: create, an append replacing a key, an UPDATE, a DELETE, OPTIMIZE."""
    url = str(tmp_path / "t")
    write_table(
        url, _rows((1, "a", 1.0), (2, "a", 2.0), (1, "b", 3.0)), table="w", tag_columns=["city"]
    )
    write_table(url, _rows((2, "a", 20.0), (3, "a", 3.0)))
    open_table(url).update({"temp": 99.0}, where="city = 'b'")
    open_table(url).delete("time = 3")
    open_table(url).maintenance.optimize()
    return url


def _feed(spark: SparkSession, url: str, **options: Any) -> DataFrame:
    reader = spark.read.format("tsfile").option("readChangeFeed", "true")
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return reader.load(url)


def _version(spark: SparkSession, url: str, version: int) -> DataFrame:
    if version < 0:
        return spark.read.format("tsfile").load(url).limit(0)
    return spark.read.format("tsfile").option("versionAsOf", version).load(url)


def test_each_commits_changes_are_what_spark_finds_between_its_versions(
    spark: SparkSession, history: str
) -> None:
    feed = _feed(spark, history, startingVersion=0, endingVersion=4)
    assert feed.columns == [
        "time",
        "city",
        "temp",
        "_change_type",
        "_commit_version",
        "_commit_timestamp",
    ]
    rows = feed.collect()
    for version in range(5):
        before, after = _version(spark, history, version - 1), _version(spark, history, version)
        removed = sorted(tuple(r) for r in before.exceptAll(after).collect())
        added = sorted(tuple(r) for r in after.exceptAll(before).collect())
        mine = [r for r in rows if r["_commit_version"] == version]
        lost = ("delete", "update_preimage")
        assert sorted(tuple(r)[:3] for r in mine if r["_change_type"] in lost) == removed
        assert sorted(tuple(r)[:3] for r in mine if r["_change_type"] not in lost) == added
    kinds = {(r["_commit_version"], r["time"], r["city"], r["_change_type"]) for r in rows}
    assert (1, 2, "a", "update_preimage") in kinds and (1, 2, "a", "update_postimage") in kinds
    assert (3, 3, "a", "delete") in kinds
    assert not any(r["_commit_version"] == 4 for r in rows)  # OPTIMIZE changed no row


def test_the_spark_feed_equals_the_spark_free_one(spark: SparkSession, history: str) -> None:
    spark_rows = _feed(spark, history, startingVersion=1).drop("_commit_timestamp").collect()
    table = open_table(history).changes(1).drop_columns(["_commit_timestamp"])
    assert sorted(tuple(r) for r in spark_rows) == sorted(
        tuple(r.values()) for r in table.to_pylist()
    )


def test_net_changes_are_the_difference_between_the_versions(
    spark: SparkSession, history: str
) -> None:
    net = _feed(spark, history, startingVersion=1, endingVersion=3, deduplicationMode="netChanges")
    before, after = _version(spark, history, 0), _version(spark, history, 3)
    lost = ("delete", "update_preimage")
    rows = net.collect()
    assert sorted(tuple(r)[:3] for r in rows if r["_change_type"] in lost) == sorted(
        tuple(r) for r in before.exceptAll(after).collect()
    )
    assert sorted(tuple(r)[:3] for r in rows if r["_change_type"] not in lost) == sorted(
        tuple(r) for r in after.exceptAll(before).collect()
    )
    assert {r["_commit_version"] for r in rows} == {3}


def test_options_a_change_feed_cannot_honour_are_refused(spark: SparkSession, history: str) -> None:
    with pytest.raises(Exception, match="option 'where' does not apply to a change feed"):
        _feed(spark, history, startingVersion=0, where="temp > 1").collect()
    with pytest.raises(Exception, match="option 'endingVersion' applies to a change feed only"):
        spark.read.format("tsfile").option("endingVersion", 2).load(history).collect()
    with pytest.raises(Exception, match="endingVersion 9 is after the latest version, 4"):
        _feed(spark, history, startingVersion=0, endingVersion=9).collect()


def _stream_once(spark: SparkSession, url: str, checkpoint: Path, **options: Any) -> list[Any]:
    """One Trigger.AvailableNow run of a change feed stream; every row it delivered."""
    rows: list[Any] = []
    reader = spark.readStream.format("tsfile").option("readChangeFeed", "true")
    for key, value in options.items():
        reader = reader.option(key, str(value))
    query = (
        reader.load(url)
        .writeStream.foreachBatch(lambda batch, _: rows.extend(batch.collect()))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return rows


@pytest.mark.slow
def test_a_change_feed_stream_gives_every_change_once_across_restarts(
    spark: SparkSession, history: str, tmp_path: Path
) -> None:
    checkpoint = tmp_path / "checkpoint"
    first = _stream_once(spark, history, checkpoint, startingVersion=1, maxPartsPerTrigger=1)
    # More commits that remove rows (a plain stream stops at these): an UPDATE and a DELETE.
    open_table(history).update({"temp": -1.0}, where="city = 'a'")
    open_table(history).delete("time = 2")
    second = _stream_once(spark, history, checkpoint, startingVersion=1, maxPartsPerTrigger=1)
    assert _stream_once(spark, history, checkpoint, startingVersion=1) == []
    expected = open_table(history).changes(1).drop_columns(["_commit_timestamp"])
    got = [tuple(r)[:-1] for r in (*first, *second)]
    assert sorted(got) == sorted(tuple(r.values()) for r in expected.to_pylist())
    assert {r["_commit_version"] for r in second} == {5, 6}
