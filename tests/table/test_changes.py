"""What streams read from a real table log (Spark-free): starting offsets, segments, the
table's completeness, and the watermark.interval property check."""

from __future__ import annotations

import shutil
import time
from dataclasses import replace
from pathlib import Path

import pytest

from tests.table.helpers import SCHEMA, part, wait_until_older_than_now
from tsfile_catalog.exceptions import (
    ChangeCommitError,
    OptionError,
    TableNotFoundError,
    VersionNotFoundError,
)
from tsfile_catalog.metadata.changes import StreamOffset, batch_parts, plan_batch
from tsfile_catalog.metadata.manifest import Operation, RemovePart
from tsfile_catalog.table import MANIFEST_DIR, append_parts, clear_cache, commit, open_table
from tsfile_catalog.table.changes import (
    current_table,
    current_version,
    starting_offset,
    stream_segments,
)
from tsfile_catalog.table.checkpoint_parquet import (
    decode_parquet_snapshot,
    encode_parquet_snapshot,
)
from tsfile_catalog.table.expire import expire_snapshots


def _table(tmp_path: Path, versions: int) -> str:
    url = str(tmp_path / "t")
    for v in range(versions):
        append_parts(url, [part(f"p{v}.tsfile", start=v * 10)], SCHEMA)
    return url


def _read_all(url: str, start: StreamOffset, *, skip: bool = False) -> list[str]:
    segments = stream_segments(url, start, current_version(url), skip_change_commits=skip)
    return [p.path for p in batch_parts(segments, start, plan_batch(segments, start))]


def test_starting_offsets_follow_deltas_options(tmp_path: Path) -> None:
    url = _table(tmp_path, 3)
    assert starting_offset(url) == StreamOffset(2, 0, snapshot=True)
    assert _read_all(url, starting_offset(url)) == ["p0.tsfile", "p1.tsfile", "p2.tsfile"]
    assert _read_all(url, starting_offset(url, starting_version=1)) == ["p1.tsfile", "p2.tsfile"]
    assert _read_all(url, starting_offset(url, starting_version="latest")) == []
    with pytest.raises(VersionNotFoundError, match="'startingVersion' = 7.*versions 0..2"):
        starting_offset(url, starting_version=7)
    # startingTimestamp: the first commit at or after the instant.
    at = open_table(url, version=1).timestamp_ms
    assert starting_offset(url, starting_timestamp=str(at)) == StreamOffset(1)
    assert starting_offset(url, starting_timestamp=str(at + 1)) == StreamOffset(2)
    assert starting_offset(url, starting_timestamp="1970-01-01T00:00:00Z") == StreamOffset(0)
    later = str(int(time.time() * 1000) + 3_600_000)
    assert starting_offset(url, starting_timestamp=later) == StreamOffset(3)


def test_a_removal_stops_the_stream_naming_it_unless_skipped(tmp_path: Path) -> None:
    url = _table(tmp_path, 2)
    table = open_table(url)
    commit(
        table.io,
        table.location,
        [RemovePart("p0.tsfile", 10)],
        read=table.snapshot,
        operation=Operation.DELETE,
    )
    append_parts(url, [part("p3.tsfile", start=30)], SCHEMA)
    with pytest.raises(ChangeCommitError, match=r"version 2 \(DELETE\)"):
        _read_all(url, StreamOffset(2))
    assert _read_all(url, StreamOffset(1)) == ["p1.tsfile"]  # stops before it
    assert _read_all(url, StreamOffset(1), skip=True) == ["p1.tsfile", "p3.tsfile"]


def test_a_stream_position_in_a_dropped_table_is_refused_in_the_recreated_one(
    tmp_path: Path,
) -> None:
    url = _table(tmp_path, 2)
    old = open_table(url).table_uuid
    segments = stream_segments(url, StreamOffset(0), 1, skip_change_commits=False)
    position = replace(plan_batch(segments, StreamOffset(0)), table=old)
    assert position == StreamOffset(2, 0, False, old)
    shutil.rmtree(url)  # dropped (DROP TABLE ... PURGE deletes the same log)
    for v in range(3):  # another table whose versions reach past the old position
        append_parts(url, [part(f"new{v}.tsfile", start=v * 10)], SCHEMA)
    new = open_table(url).table_uuid
    message = f"the stream read table {old} at {url}, which now holds table {new}"
    with pytest.raises(TableNotFoundError, match=message):
        stream_segments(url, position, 2, skip_change_commits=False)
    with pytest.raises(TableNotFoundError, match=message):
        current_table(url, table_uuid=old)
    assert current_table(url, table_uuid=new) == (2, new)
    # An offset written before offsets recorded the table is not checked (nothing to check).
    legacy = replace(position, table=None)
    assert _read_all(url, legacy) == ["new2.tsfile"]


def test_a_stream_resumes_after_expire_snapshots_kept_what_it_needs(tmp_path: Path) -> None:
    url = _table(tmp_path, 5)
    done = expire_snapshots(url, retention_ms=0, retain_last=2)
    assert done.versions == (0, 1, 2)  # 3 and 4 are kept, 3 from a checkpoint
    clear_cache()
    # An offset at the oldest version kept, and one past it, still read every later part.
    assert _read_all(url, StreamOffset(3)) == ["p3.tsfile", "p4.tsfile"]
    assert _read_all(url, StreamOffset(4)) == ["p4.tsfile"]
    assert _read_all(url, StreamOffset(3, 0, snapshot=True)) == [f"p{v}.tsfile" for v in range(5)]
    # One whose next version is gone fails naming the offset and the oldest version kept.
    message = "the stream's offset is at version 2 of table .*, but the oldest version kept is 3"
    with pytest.raises(VersionNotFoundError, match=message):
        _read_all(url, StreamOffset(2))
    with pytest.raises(VersionNotFoundError, match="offset is at version 1 .*startingVersion 3"):
        stream_segments(url, StreamOffset(1, 0, snapshot=True), 4, skip_change_commits=False)


def test_completeness_is_recorded_per_commit_and_shown_by_the_table(tmp_path: Path) -> None:
    url = _table(tmp_path, 1)
    assert open_table(url).complete_until() is None
    append_parts(url, [part("p1.tsfile", start=10)], SCHEMA, complete_until=500)
    append_parts(url, [part("p2.tsfile", start=20)], SCHEMA, complete_until=300)
    assert open_table(url).complete_until() == 500
    assert open_table(url, version=0).complete_until() is None


def test_completeness_survives_expire_snapshots(tmp_path: Path) -> None:
    url = _table(tmp_path, 1)
    append_parts(url, [part("p1.tsfile", start=10)], SCHEMA, complete_until=500)
    for v in range(2, 5):
        append_parts(url, [part(f"p{v}.tsfile", start=v * 10)], SCHEMA)
    wait_until_older_than_now(url)  # so that retain_last alone decides
    done = expire_snapshots(url, retention_ms=0, retain_last=2)
    assert done.versions == (0, 1, 2) and done.checkpoint_written
    clear_cache()
    table = open_table(url)
    assert [i.version for i in table.history()] == [4, 3]  # the declaring commit is gone
    assert table.complete_until() == 500
    assert open_table(url, version=3).complete_until() == 500
    # A stream starting from the snapshot gets it as the snapshot segment's declaration.
    (segment,) = stream_segments(url, starting_offset(url), 4, skip_change_commits=False)
    assert segment.complete_until == 500


def test_completeness_counts_commits_after_an_earlier_releases_checkpoint(
    tmp_path: Path,
) -> None:
    url = str(tmp_path / "t")
    append_parts(url, [part("p0.tsfile")], SCHEMA, complete_until=700)
    for v in range(1, 11):
        append_parts(url, [part(f"p{v}.tsfile", start=v * 10)], SCHEMA)
    # What an earlier release wrote at version 10: the snapshot without completeness.
    log = tmp_path / "t" / MANIFEST_DIR
    parquet = log / f"{10:020d}.checkpoint.parquet"
    snapshot = decode_parquet_snapshot(parquet.read_bytes(), source=parquet.name)
    parquet.write_bytes(encode_parquet_snapshot(replace(snapshot, complete_until=None)))
    clear_cache()
    assert open_table(url).snapshot.complete_until is None  # loaded from that checkpoint
    assert open_table(url).complete_until() == 700  # the log still holds the declaration


def test_an_invalid_watermark_interval_is_refused_and_nothing_committed(tmp_path: Path) -> None:
    url = _table(tmp_path, 1)
    with pytest.raises(OptionError, match="'watermark.interval' = 'hourly'"):
        append_parts(url, [], SCHEMA, properties={"watermark.interval": "hourly"})
    assert open_table(url).version == 0
    append_parts(url, [], SCHEMA, properties={"watermark.interval": "1 hour"})
    assert open_table(url).properties["watermark.interval"] == "1 hour"
