"""The keys a batch of parts may hold, and whether a part may hold any (table/key_ranges.py),
against a row-by-row reading of the same rule: any keys (null TAGs, repeated devices, two TAG
columns), any parts (devices with fewer TAG values than the table, parts without per-device
statistics, overlapping ranges). The rule itself, on a real table:
tests/table/test_rewrite_tasks.py."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.factories import part_file
from tsfile_catalog.metadata.parts import DeviceStats, PartFile
from tsfile_catalog.table.key_ranges import KeyIndex, keys_within

_TAGS = st.sampled_from(["a", "b", "c", None])
_TIMES = st.integers(-5, 40)


@st.composite
def _keys(draw: st.DrawFn) -> pa.Table:
    rows = draw(st.lists(st.tuples(_TAGS, _TAGS, _TIMES), max_size=60))
    # Catalog.sql's keys come time first: the index takes the key columns in any order.
    return pa.table(
        {
            "time": pa.array([r[2] for r in rows], pa.int64()),
            "city": pa.array([r[0] for r in rows], pa.string()),
            "site": pa.array([r[1] for r in rows], pa.string()),
        }
    )


@st.composite
def _part(draw: st.DrawFn) -> PartFile:
    low = draw(_TIMES)
    high = draw(st.integers(low, 45))
    if draw(st.booleans()):
        return part_file(min_time=low, max_time=high)  # no per-device statistics
    devices = []
    for _ in range(draw(st.integers(0, 4))):
        start = draw(st.integers(low, high))
        end = draw(st.integers(start, high))
        # A device written before the second TAG column was added lists one value.
        tags = draw(st.one_of(st.tuples(_TAGS, _TAGS), st.tuples(_TAGS)))
        devices.append(DeviceStats(tags, 1, start, end))
    return part_file(min_time=low, max_time=high, devices=devices)


def _may_hold(row: dict[str, Any], part: PartFile) -> bool:
    time = row["time"]
    if part.devices is None:
        return part.min_time is not None and part.min_time <= time <= (part.max_time or 0)
    values = (row["city"], row["site"])
    return any(
        tuple(d.tags) + (None,) * (2 - len(d.tags)) == values and d.min_time <= time <= d.max_time
        for d in part.devices
    )


def _sorted(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted(((r["time"], r["city"], r["site"]) for r in rows), key=repr)


@settings(max_examples=300, deadline=None)
@given(keys=_keys(), batches=st.lists(st.lists(_part(), max_size=4), min_size=1, max_size=3))
def test_a_batch_gets_exactly_the_keys_its_parts_may_hold(
    keys: pa.Table, batches: list[list[PartFile]]
) -> None:
    index = KeyIndex.of(keys)
    for parts in batches:  # one index answers every batch
        expected = [r for r in keys.to_pylist() if any(_may_hold(r, p) for p in parts)]
        got = index.within(parts)
        assert got.schema == keys.schema
        assert _sorted(got.to_pylist()) == _sorted(expected)
        assert keys_within(keys, parts).num_rows == len(expected)
        # Which parts a key change rewrites at all: those that may hold one of the keys.
        for part in parts:
            assert index.may_hold(part) == any(_may_hold(r, part) for r in keys.to_pylist())


def test_keys_without_tag_columns_go_by_time_alone() -> None:
    keys = pa.table({"time": pa.array([5, 1, 9, 1], pa.int64())})
    parts = [part_file(min_time=1, max_time=5), part_file(min_time=4, max_time=6)]
    assert sorted(keys_within(keys, parts).column("time").to_pylist()) == [1, 1, 5]
    assert keys_within(keys.slice(0, 0), parts).num_rows == 0
