"""The pure rewrite plans: which parts OPTIMIZE merges, which a DELETE drops or rewrites."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.factories import part_file, table_schema
from tsfile_catalog.metadata.compaction import (
    DEFAULT_TARGET_FILE_SIZE,
    key_overlap_components,
    plan_batches,
    plan_compaction,
    plan_removal,
    target_file_size,
)
from tsfile_catalog.metadata.expressions import bind
from tsfile_catalog.metadata.expressions.parser import parse_predicate
from tsfile_catalog.metadata.key import close_over_key_overlap
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.metadata.stats import DeviceStats, FieldStats

SCHEMA = table_schema("weather", fields=[("temp", DataType.DOUBLE)])


def _name(label: str) -> str:
    """A writer-named part path (OPTIMIZE only compacts those), recognisable by ``label``."""
    _LABELS.add(label)
    return f"part-{label.encode().hex():0>32}-00000.tsfile"


def _part(
    label: str,
    *,
    size: int = 100,
    start: int = 0,
    rows: int = 10,
    cities: tuple[str, ...] = ("paris",),
    temp_nulls: int = 0,
) -> PartFile:
    return part_file(
        _name(label),
        size_bytes=size,
        row_count=rows * len(cities),
        min_time=start,
        max_time=start + rows - 1,
        devices=[DeviceStats((c,), rows, start, start + rows - 1) for c in cities],
        tag_names=["city"],
        fields={"temp": FieldStats(1.0, 2.0, temp_nulls)},
    )


def _paths(parts: tuple[PartFile, ...]) -> list[str]:
    """The labels of ``parts`` made by :func:`_part` (other parts by their path)."""
    labels = {_name(label): label for label in _LABELS}
    return [labels.get(p.path, p.path) for p in parts]


_LABELS: set[str] = set()


def test_small_parts_are_packed_in_time_order_up_to_the_target() -> None:
    parts = [_part(f"p{i}", size=300, start=(9 - i) * 10) for i in range(10)]
    plan = plan_compaction(parts, target_size=1000)
    # Time order (p9 holds the earliest rows), at most 3 x 300 bytes per group; the tenth
    # part alone is no gain and stays.
    assert [_paths(g.parts) for g in plan.groups] == [
        ["p9", "p8", "p7"],
        ["p6", "p5", "p4"],
        ["p3", "p2", "p1"],
    ]
    assert _paths(plan.kept) == ["p0"]
    assert all(g.size_bytes <= 1000 for g in plan.groups)


def test_parts_near_the_target_external_and_adopted_parts_stay() -> None:
    big = _part("big", size=800, start=0)
    external = dataclasses.replace(_part("x", start=10), path="x.parquet", format="parquet")
    linked = dataclasses.replace(_part("linked", start=20), external=True)
    adopted = dataclasses.replace(_part("adopted", start=30), path="2024/01/user.tsfile")
    small = [_part(f"s{i}", size=10, start=100 + i * 10) for i in range(3)]
    plan = plan_compaction([big, external, linked, adopted, *small], target_size=1000)
    assert [_paths(g.parts) for g in plan.groups] == [["s0", "s1", "s2"]]
    assert set(_paths(plan.kept)) == {"big", "x.parquet", "linked", "2024/01/user.tsfile"}


def test_parts_whose_times_overlap_or_interleave_are_merged_too() -> None:
    # A stream's micro-batches: the same devices at interleaved times, part after part. The
    # rewrite keeps any (device, time) two of them repeat in separate new parts.
    a = _part("a", start=0)
    b = _part("b", start=5)
    other_city = _part("c", start=0, cities=("rome",))
    plan = plan_compaction([a, b, other_city], target_size=1000)
    assert [_paths(g.parts) for g in plan.groups] == [["a", "c", "b"]]
    assert plan.kept == ()


def test_nothing_to_do_when_every_part_is_alone() -> None:
    plan = plan_compaction([_part("only")], target_size=1000)
    assert plan.groups == () and _paths(plan.kept) == ["only"]


def _written(part: PartFile, version: int) -> PartFile:
    return dataclasses.replace(part, added_version=version)


def test_a_last_table_rewrites_every_part_a_read_merges_whatever_its_size() -> None:
    # A large part and a later small one re-sending some of its keys: a read merges them
    # until OPTIMIZE resolves them, so the large one is rewritten too.
    big = _written(_part("big", size=900, start=0), 1)
    resent = _written(_part("resent", size=10, start=5), 2)
    elsewhere = _written(_part("elsewhere", size=900, start=100), 3)
    keep = plan_compaction([big, resent, elsewhere], target_size=1000)
    assert keep.groups == () and not keep.resolve_keys
    last = plan_compaction([big, resent, elsewhere], target_size=1000, key="last")
    assert [_paths(g.parts) for g in last.groups] == [["big", "resent"]]
    assert _paths(last.kept) == ["elsewhere"] and last.resolve_keys


def test_a_last_group_takes_every_part_that_may_share_a_key_with_it() -> None:
    # OPTIMIZE WHERE chose only the first part; a later part re-sends its keys, so the two
    # are rewritten together (the output takes the later sequence, which must not beat a
    # part that replaced some of the first part's rows and stayed out).
    first = _written(_part("first", size=10, start=0), 1)
    later = _written(_part("later", size=10, start=5, cities=("paris", "rome")), 2)
    apart = _written(_part("apart", size=10, start=50), 3)
    table = [first, later, apart]
    plan = plan_compaction([first], target_size=1000, key="last", table_parts=table)
    assert [_paths(g.parts) for g in plan.groups] == [["first", "later"]]
    # Packed apart by size, joined because they share keys.
    plan = plan_compaction(table, target_size=15, key="last")
    assert [_paths(g.parts) for g in plan.groups] == [["first", "later"]]
    assert _paths(plan.kept) == ["apart"]


def test_a_last_group_reaching_an_external_part_is_left_alone() -> None:
    # The external file is never rewritten: an output with the later sequence could hide
    # rows of it that are newer, so the group stays and reads keep merging it.
    first = _written(_part("first", size=10, start=0), 1)
    external = dataclasses.replace(
        _written(_part("x", start=5), 2), path="x.parquet", format="parquet"
    )
    later = _written(_part("later", size=10, start=8), 3)
    plan = plan_compaction([first, external, later], target_size=1000, key="last")
    assert plan.groups == ()
    assert set(_paths(plan.kept)) == {"first", "x.parquet", "later"}


_SPAN = st.tuples(st.integers(0, 30), st.integers(0, 8))
_PART = st.tuples(
    st.dictionaries(st.integers(0, 3), _SPAN, min_size=1, max_size=3),  # device -> span
    st.integers(0, 4),  # the write (key sequence)
    st.booleans(),  # kept its device list
    st.booleans(),  # has rows
)


@given(st.lists(_PART, min_size=1, max_size=12))
def test_key_overlap_components_are_the_closures_of_single_parts(
    specs: list[tuple[dict[int, tuple[int, int]], int, bool, bool]],
) -> None:
    # The one-sweep components OPTIMIZE plans with must be exactly what closing each part
    # over key overlap (the model's definition) gives.
    parts = []
    for i, (spans, version, listed, has_rows) in enumerate(specs):
        devices = [DeviceStats((f"d{d}",), 1, lo, lo + n) for d, (lo, n) in spans.items()]
        part = part_file(
            _name(f"k{i}"),
            row_count=5 if has_rows else 0,
            min_time=min(d.min_time for d in devices),
            max_time=max(d.max_time for d in devices),
            devices=devices if listed else None,
        )
        parts.append(_written(part, version))
    component = key_overlap_components(parts)
    for i in range(len(parts)):
        same = {j for j in range(len(parts)) if component[j] == component[i]}
        assert same == set(close_over_key_overlap(parts, [i]))


def test_target_file_size_comes_from_the_override_the_property_or_the_default() -> None:
    assert target_file_size(None) == DEFAULT_TARGET_FILE_SIZE == 128 * 1024 * 1024
    assert target_file_size({"targetFileSize": "1048576"}) == 1048576
    assert target_file_size({"targetFileSize": "1048576"}, 5) == 5
    with pytest.raises(ValueError, match="targetFileSize.*'lots'"):
        target_file_size({"targetFileSize": "lots"})
    with pytest.raises(ValueError, match="positive"):
        target_file_size(None, 0)


def _bound(sql: str) -> object:
    return bind(parse_predicate(sql), SCHEMA)


def test_removal_drops_parts_wholly_inside_and_rewrites_straddling_ones() -> None:
    inside = _part("inside", start=0)  # times 0..9
    straddling = _part("straddling", start=5)  # times 5..14
    outside = _part("outside", start=100)
    two_cities = _part("two", start=0, cities=("paris", "rome"))
    plan = plan_removal(
        [inside, straddling, outside, two_cities], _bound("time < 10 AND city = 'paris'"), SCHEMA
    )
    assert _paths(plan.drop) == ["inside"]
    assert _paths(plan.rewrite) == ["straddling", "two"]
    assert _paths(plan.untouched) == ["outside"]


def test_removal_never_drops_a_part_whose_rows_may_make_the_predicate_null() -> None:
    # temp > 0 holds for every non-null temp (min 1.0), but a null temp makes it NULL: such
    # rows stay, so the part must be read.
    no_nulls = _part("no_nulls", temp_nulls=0)
    nulls = _part("nulls", temp_nulls=3)
    plan = plan_removal([no_nulls, nulls], _bound("temp > 0"), SCHEMA)
    assert _paths(plan.drop) == ["no_nulls"]
    assert _paths(plan.rewrite) == ["nulls"]


def test_small_parts_batch_into_one_task_per_slot() -> None:
    # 200 parts of 100 KB under a 128 MiB target: two tasks, not 200.
    batches = plan_batches([100_000] * 200, max_bytes=DEFAULT_TARGET_FILE_SIZE, slots=2)
    assert batches == [range(100), range(100, 200)]
    # Uneven sizes: still two, of about equal bytes, not a third with the remainder.
    sizes = [8_600 + i % 7 for i in range(200)]
    batches = plan_batches(sizes, max_bytes=DEFAULT_TARGET_FILE_SIZE, slots=2)
    assert [len(b) for b in batches] == [100, 100]


def test_batches_hold_about_the_target_size() -> None:
    batches = plan_batches([100] * 12, max_bytes=400, slots=2)
    assert batches == [range(4), range(4, 8), range(8, 12)]
    assert len(plan_batches([100] * 12, max_bytes=350, slots=2)) == 4


def test_a_part_of_the_batch_size_is_a_batch_of_its_own() -> None:
    batches = plan_batches([10, 10, 500, 10, 10], max_bytes=200, slots=1)
    assert batches == [range(2), range(2, 3), range(3, 5)]


def test_skewed_sizes_still_fill_every_slot() -> None:
    # One big part takes most bytes; the small ones share the other three tasks.
    batches = plan_batches([1_000, 10, 10, 10, 10, 10, 10], max_bytes=1 << 30, slots=4)
    assert batches == [range(1), range(1, 3), range(3, 5), range(5, 7)]


def test_fewer_parts_than_slots_run_one_each() -> None:
    assert plan_batches([5, 5, 5], max_bytes=1 << 30, slots=8) == [
        range(1),
        range(1, 2),
        range(2, 3),
    ]
    assert plan_batches([], max_bytes=1, slots=2) == []
    assert plan_batches([0, 0, 0], max_bytes=1, slots=1) == [range(3)]


@given(
    st.lists(st.integers(min_value=0, max_value=10_000), max_size=60),
    st.integers(min_value=1, max_value=20_000),
    st.integers(min_value=1, max_value=16),
)
def test_batches_cover_every_part_once_in_order(sizes: list[int], target: int, slots: int) -> None:
    batches = plan_batches(sizes, max_bytes=target, slots=slots)
    assert [i for b in batches for i in b] == list(range(len(sizes)))
    assert all(len(b) for b in batches)
    wanted = max(slots, -(-sum(sizes) // target), 1)
    assert len(batches) == min(len(sizes), wanted)
