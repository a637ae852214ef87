"""The pure rewrite plans: which parts OPTIMIZE merges, which a DELETE drops or rewrites."""

from __future__ import annotations

import dataclasses

import pytest

from tests.factories import part_file, table_schema
from tsfile_catalog.metadata.compaction import (
    DEFAULT_TARGET_FILE_SIZE,
    plan_compaction,
    plan_removal,
    target_file_size,
)
from tsfile_catalog.metadata.expressions import bind
from tsfile_catalog.metadata.expressions.parser import parse_predicate
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


def test_parts_that_may_share_a_device_and_time_are_never_merged() -> None:
    # Two appends of the same device and times: TsFile holds one row per (device, time).
    a = _part("a", start=0)
    b = _part("b", start=5)
    other_city = _part("c", start=0, cities=("rome",))
    plan = plan_compaction([a, b, other_city], target_size=1000)
    # Time order is a, c (rome), b; b may repeat a's rows, so it closes the group.
    assert [_paths(g.parts) for g in plan.groups] == [["a", "c"]]
    assert _paths(plan.kept) == ["b"]


def test_nothing_to_do_when_every_part_is_alone() -> None:
    plan = plan_compaction([_part("only")], target_size=1000)
    assert plan.groups == () and _paths(plan.kept) == ["only"]


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
