"""The table key's merge planning: every pair of slices that may share a key is merged
together, and nothing else is."""

from __future__ import annotations

from dataclasses import replace
from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.factories import part_file, part_of_devices
from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.metadata.key import (
    KEY_DUPLICATES,
    MergeGroup,
    close_over_key_overlap,
    key_mode,
    merge_groups,
    merged_slices,
    new_table_properties,
)
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.stats import DeviceStats

DEVICES = [("bj", "d1"), ("bj", "d2"), ("sh", "d1")]


def test_key_mode_defaults_to_keep_for_tables_that_never_set_it() -> None:
    assert key_mode({}) == "keep"
    assert key_mode({KEY_DUPLICATES: "LAST"}) == "last"
    assert new_table_properties(None) == {KEY_DUPLICATES: "last"}
    assert new_table_properties({KEY_DUPLICATES: "keep", "a": "b"})[KEY_DUPLICATES] == "keep"


def test_a_bad_mode_is_refused_naming_the_property_and_value() -> None:
    with pytest.raises(OptionError, match=r"'key.duplicates' = 'first'"):
        key_mode({KEY_DUPLICATES: "first"})


def _part(name: str, version: int, *devices: tuple[tuple[str, str], int, int]) -> PartFile:
    stats = [DeviceStats(tags, hi - lo + 1, lo, hi) for tags, lo, hi in devices]
    return part_of_devices(name, *stats).with_version(version, 0)


def test_only_the_devices_whose_ranges_meet_across_writes_are_merged() -> None:
    parts = [
        _part("a", 1, (DEVICES[0], 0, 10), (DEVICES[1], 0, 10)),
        _part("b", 2, (DEVICES[0], 5, 20), (DEVICES[1], 11, 20)),
        _part("c", 2, (DEVICES[2], 0, 100)),
    ]
    assert merge_groups(parts) == (MergeGroup((0, 1), (DEVICES[0],)),)
    assert merged_slices(parts) == 2


def test_one_writes_parts_never_merge_with_each_other() -> None:
    parts = [_part("a", 1, (DEVICES[0], 0, 10)), _part("b", 1, (DEVICES[0], 5, 20))]
    assert merge_groups(parts) == ()


def test_a_rewritten_part_keeps_the_sequence_of_what_it_rewrote() -> None:
    old = _part("a", 1, (DEVICES[0], 0, 10))
    newer = _part("b", 2, (DEVICES[0], 0, 10))
    rewritten = _part("c", 5, (DEVICES[0], 0, 10)).rewritten_from([old])
    assert rewritten.key_sequence == 1
    assert merge_groups([newer, rewritten]) == (MergeGroup((1, 0), (DEVICES[0],)),)
    # The sequence survives the manifest's JSON.
    assert PartFile.from_json(rewritten.to_json({}), {}).key_sequence == 1
    assert "sequence" not in newer.to_json({})


def test_a_part_without_a_device_list_merges_whole() -> None:
    wide = replace(part_file("w", min_time=0, max_time=50, row_count=9), added_version=1)
    parts = [wide, _part("b", 2, (DEVICES[0], 40, 60))]
    assert merge_groups(parts) == (MergeGroup((0, 1), None),)


@st.composite
def _tables(draw: st.DrawFn) -> list[PartFile]:
    parts = []
    for i in range(draw(st.integers(1, 6))):
        version = draw(st.integers(0, 3))
        chosen = draw(st.lists(st.sampled_from(DEVICES), min_size=1, max_size=3, unique=True))
        ranges = []
        for tags in chosen:
            lo = draw(st.integers(0, 30))
            ranges.append((tags, lo, lo + draw(st.integers(0, 10))))
        parts.append(_part(f"p{i}", version, *ranges))
    return parts


def _meet(a: PartFile, b: PartFile, tags: tuple[str, str]) -> bool:
    da = {d.tags: d for d in a.devices or ()}.get(tags)
    db = {d.tags: d for d in b.devices or ()}.get(tags)
    return (
        da is not None
        and db is not None
        and da.min_time <= db.max_time
        and db.min_time <= da.max_time
    )


@given(_tables())
def test_every_slice_pair_that_may_share_a_key_is_in_one_group(parts: list[PartFile]) -> None:
    groups = merge_groups(parts)
    home: dict[tuple[int, tuple[str | None, ...]], MergeGroup] = {}
    for group in groups:
        assert group.devices is not None
        for i in group.parts:
            for tags in group.devices:
                assert (i, tags) not in home, "a slice is merged in one group only"
                home[(i, tags)] = group
        assert len({parts[i].key_sequence for i in group.parts}) > 1
    for (i, a), (j, b) in combinations(enumerate(parts), 2):
        for tags in DEVICES:
            if a.key_sequence != b.key_sequence and _meet(a, b, tags):
                assert home[(i, tags)] is home[(j, tags)]
    # Closure: a rewrite of any part takes every part it may share a key with.
    for i in range(len(parts)):
        closed = close_over_key_overlap(parts, [i])
        for j, other in enumerate(parts):
            for k in closed:
                if j not in closed and parts[k].key_sequence != other.key_sequence:
                    assert not any(_meet(parts[k], other, t) for t in DEVICES)
