"""The pure decisions of a stream: segments of commits, admission control, offsets."""

from __future__ import annotations

import json

import pytest

from tests.factories import part_file
from tsfile_catalog.exceptions import ChangeCommitError, OptionError
from tsfile_catalog.metadata.changes import (
    Segment,
    StreamOffset,
    batch_complete_until,
    batch_parts,
    commit_segment,
    plan_batch,
)
from tsfile_catalog.metadata.manifest import (
    AddPart,
    Commit,
    CommitInfo,
    Operation,
    RemovePart,
)


def _seg(
    version: int, *rows: int, complete_until: int | None = None, snapshot: bool = False
) -> Segment:
    parts = tuple(part_file(f"v{version}-{i}.tsfile", row_count=n) for i, n in enumerate(rows))
    return Segment(version, parts, complete_until, snapshot)


def _commit(version: int, *actions: AddPart | RemovePart, data_change: bool = True) -> Commit:
    op = Operation.WRITE if data_change else Operation.OPTIMIZE
    return Commit(CommitInfo(version, version, op, data_change=data_change), tuple(actions))


def _batches(segments: list[Segment], start: StreamOffset, **limits: int) -> list[list[str]]:
    """Every batch a stream reads from ``start`` until nothing is new, as part paths."""
    out = []
    while True:
        end = plan_batch(segments, start, **limits)
        if end == start:
            return out
        out.append([p.path for p in batch_parts(segments, start, end)])
        start = end


def test_batches_read_every_part_once_in_commit_order_within_the_limits() -> None:
    segments = [_seg(3, 5, 5, 5), _seg(4), _seg(5, 5, 20), _seg(6, 5)]
    all_parts = [p.path for s in segments for p in s.parts]
    assert _batches(segments, StreamOffset(3)) == [all_parts]
    by_two = _batches(segments, StreamOffset(3), max_parts=2)
    assert by_two == [["v3-0.tsfile", "v3-1.tsfile"], ["v3-2.tsfile", "v5-0.tsfile"],
                      ["v5-1.tsfile", "v6-0.tsfile"]]  # fmt: skip
    # A part larger than maxRows is never split, and still read (alone).
    by_rows = _batches(segments, StreamOffset(3), max_rows=10)
    assert by_rows == [["v3-0.tsfile", "v3-1.tsfile"], ["v3-2.tsfile", "v5-0.tsfile"],
                       ["v5-1.tsfile"], ["v6-0.tsfile"]]  # fmt: skip
    assert [p for b in by_rows for p in b] == all_parts


def test_an_offset_has_one_spelling_and_round_trips_as_stable_json() -> None:
    segments = [_seg(0, 1, 1, snapshot=True)]
    end = plan_batch(segments, StreamOffset(0, 0, snapshot=True))
    assert end == StreamOffset(1, 0, False)  # a fully read version is the next one's start
    half = plan_batch(segments, StreamOffset(0, 0, snapshot=True), max_parts=1)
    assert half == StreamOffset(0, 1, True)
    text = json.dumps(half.to_json())
    assert text == '{"version": 0, "index": 1, "snapshot": true}'
    assert StreamOffset.from_json(json.loads(text)) == half
    for bad in ({"version": 1}, {"version": "1", "index": 0, "snapshot": False}, [1]):
        with pytest.raises(OptionError, match="not a tsfile offset"):
            StreamOffset.from_json(bad)  # type: ignore[arg-type]


def test_an_offset_records_its_table_last_and_offsets_without_it_still_read() -> None:
    uuid = "5f0c9a3e-8d1b-4c2e-9a57-2b6f1e0d4c3a"
    offset = StreamOffset(3, 1, False, uuid)
    text = json.dumps(offset.to_json())
    assert text == f'{{"version": 3, "index": 1, "snapshot": false, "table": "{uuid}"}}'
    assert StreamOffset.from_json(json.loads(text)) == offset
    # Written before offsets recorded the table: the same position, no table to check.
    earlier = StreamOffset.from_json({"version": 3, "index": 1, "snapshot": False})
    assert earlier.table is None and earlier.same_position(offset) and earlier != offset
    assert not earlier.same_position(StreamOffset(3, 2, False, uuid))
    for bad in ("", 7):
        with pytest.raises(OptionError, match="not a tsfile offset"):
            StreamOffset.from_json({**offset.to_json(), "table": bad})


def test_optimize_is_skipped_and_a_removal_stops_the_stream_unless_skipped() -> None:
    a, b = part_file("a.tsfile", row_count=3), part_file("b.tsfile", row_count=3)
    optimize = _commit(2, RemovePart("a.tsfile", 3), AddPart(b), data_change=False)
    assert commit_segment(optimize, skip_change_commits=False).parts == ()
    overwrite = Commit(
        CommitInfo(3, 3, Operation.OVERWRITE), (RemovePart("b.tsfile", 3), AddPart(a))
    )
    refused = commit_segment(overwrite, skip_change_commits=False)
    segments = [_seg(1, 1), _seg(2), refused, _seg(4, 1)]
    # The batch before the removal is still read; the next one stops, naming the commit.
    assert plan_batch(segments, StreamOffset(1)) == StreamOffset(3)
    with pytest.raises(ChangeCommitError, match=r"version 3 \(OVERWRITE\).*skipChangeCommits"):
        plan_batch(segments, StreamOffset(3))
    skipped = commit_segment(overwrite, skip_change_commits=True)
    assert skipped.parts == () and skipped.refusal is None
    assert _batches([_seg(1, 1), _seg(2), skipped, _seg(4, 1)], StreamOffset(1)) == [
        ["v1-0.tsfile", "v4-0.tsfile"]
    ]


def test_completeness_counts_once_its_commit_is_fully_read() -> None:
    segments = [_seg(1, 1, 1, complete_until=100), _seg(2, complete_until=50), _seg(3, 1)]
    first = plan_batch(segments, StreamOffset(1), max_parts=1)
    assert batch_complete_until(segments, StreamOffset(1), first) is None
    second = plan_batch(segments, first, max_parts=1)
    # Version 1's last part (its declaration holds now), and the part-less version 2 too.
    assert second == StreamOffset(3)
    assert batch_complete_until(segments, first, second) == 100
    third = plan_batch(segments, second, max_parts=1)
    assert third == StreamOffset(4) and batch_complete_until(segments, second, third) is None
