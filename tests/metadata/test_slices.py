"""Partition planning: pack small parts, split large ones by device groups or time (pure)."""

from __future__ import annotations

from tests.factories import part_file, table_schema
from tsfile_catalog.metadata.expressions import Compare, ScanPushdown
from tsfile_catalog.metadata.expressions.model import INT64_MAX, INT64_MIN
from tsfile_catalog.metadata.expressions.pruning import PartEvaluator
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.metadata.slices import (
    FileSlice,
    MergeRead,
    narrow_slices,
    plan_slices,
    skip_unmatched_devices,
)
from tsfile_catalog.metadata.stats import DeviceStats, SeriesStats


def _part(path: str, devices: list[tuple[str, int]] | None, rows: int = 0) -> PartFile:
    stats = (
        None
        if devices is None
        else tuple(DeviceStats((name,), count, 0, 99) for name, count in devices)
    )
    total = rows if devices is None else sum(c for _, c in devices)
    return part_file(path, row_count=total, max_time=99, devices=stats)


def test_small_parts_are_packed_up_to_the_target() -> None:
    parts = [_part(f"p{i}", [("a", 40)]) for i in range(5)]
    groups = plan_slices(parts, ScanPushdown(), ["city"], target_rows=100, merges=())
    assert [[s.path for s in g] for g in groups] == [["p0", "p1"], ["p2", "p3"], ["p4"]]


def test_large_part_splits_by_device_groups_covering_every_device() -> None:
    part = _part("big", [(f"d{i}", 100) for i in range(10)])
    groups = plan_slices([part], ScanPushdown(), ["city"], target_rows=300, merges=())
    assert len(groups) == 4
    covered = [d for g in groups for s in g for d in (s.devices or ())]
    assert sorted(covered) == sorted((f"d{i}",) for i in range(10))


def test_large_part_without_device_list_splits_by_time_ranges() -> None:
    groups = plan_slices([_part("big", None, rows=1000)], ScanPushdown(), ["city"], 250, merges=())
    ranges = [(g[0].time_min, g[0].time_max) for g in groups]
    assert ranges == [(0, 24), (25, 49), (50, 74), (75, 99)]


def test_pushed_tags_skip_parts_and_shrink_estimates() -> None:
    parts = [_part("p0", [("a", 500), ("b", 500)]), _part("p1", [("c", 10)])]
    pushdown = ScanPushdown(tag_values=(("city", frozenset({"a"})),))
    groups = plan_slices(parts, pushdown, ["city"], target_rows=600, merges=())
    assert [[s.path for s in g] for g in groups] == [["p0"]]


def test_default_partitioning_spreads_rows_over_the_cores() -> None:
    from tsfile_catalog.metadata.slices import MIN_PARTITION_ROWS, rows_per_partition

    big = _part("big", [(f"c{i}", 100_000) for i in range(8)])
    target = rows_per_partition([big], ScanPushdown(), ["city"], partitions=4)
    assert target == 200_000
    assert len(plan_slices([big], ScanPushdown(), ["city"], target, merges=())) == 4
    # A TAG filter keeps two devices: two partitions' worth is one per core of two.
    pushdown = ScanPushdown(tag_values=(("city", frozenset({"c0", "c1"})),))
    assert rows_per_partition([big], pushdown, ["city"], partitions=2) == 100_000
    # Small scans stay in one partition whatever the core count.
    small = _part("small", None, rows=1_000)
    assert rows_per_partition([small], ScanPushdown(), ["city"], 8) == MIN_PARTITION_ROWS


def test_packing_leaves_no_partition_beyond_one_per_core() -> None:
    from tsfile_catalog.metadata.slices import rows_per_partition

    sizes = [50, 55, 52, 58, 51, 53, 49, 57, 54, 56]  # thousands of rows; a core's share: 267.5
    parts = [_part(f"p{i}", [("a", size * 1_000)]) for i, size in enumerate(sizes)]
    target = rows_per_partition(parts, ScanPushdown(), ["city"], partitions=2)
    groups = plan_slices(parts, ScanPushdown(), ["city"], target, merges=())
    # Packed up to the share alone, a third partition of one part would be left over.
    assert [len(g) for g in groups] == [5, 5]
    # Parts of exactly a share each stay one partition each.
    halves = [_part(f"h{i}", [("a", 70_000)]) for i in range(2)]
    target = rows_per_partition(halves, ScanPushdown(), ["city"], partitions=2)
    assert len(plan_slices(halves, ScanPushdown(), ["city"], target, merges=())) == 2


def _valued(path: str, ranges: dict[str, tuple[float, float]]) -> PartFile:
    """A part of one 10-row device per name, its DOUBLE ``v`` within the given range."""
    devices = tuple(
        DeviceStats((name,), 10, 0, 9, {"v": SeriesStats(10, min=lo, max=hi)})
        for name, (lo, hi) in ranges.items()
    )
    return part_file(path, row_count=10 * len(devices), max_time=9, devices=devices)


_V_SCHEMA = table_schema("t", tags=("city",), fields=[("v", DataType.DOUBLE)])
_ABOVE_29 = Compare("v", ">", 29.0, as_double=True)


def test_devices_whose_statistics_rule_out_a_match_are_not_read() -> None:
    mixed = _valued("mixed", {"cold": (10.0, 20.0), "warm": (25.0, 31.0), "hot": (30.0, 32.0)})
    cold = _valued("cold", {"cold": (10.0, 20.0)})
    skip = skip_unmatched_devices([mixed, cold], PartEvaluator(_ABOVE_29, _V_SCHEMA), merges=())
    assert skip.skipped == (("mixed", ("cold",)), ("cold", ("cold",)))
    assert [p.path for p in skip.parts] == ["mixed"] and skip.parts[0].row_count == 20
    groups = plan_slices(skip.parts, ScanPushdown(), ["city"], target_rows=100, merges=())
    assert narrow_slices(groups, skip.parts, skip.narrowed) == [
        [FileSlice("mixed", INT64_MIN, INT64_MAX, (("warm",), ("hot",)))]
    ]


def test_devices_a_merge_reads_are_never_skipped() -> None:
    older = _valued("older", {"cold": (10.0, 20.0)})
    newer = _valued("newer", {"cold": (10.0, 20.0)})
    merge = MergeRead((older, newer), (("cold",),))
    skip = skip_unmatched_devices(
        [older, newer], PartEvaluator(_ABOVE_29, _V_SCHEMA), merges=(merge,)
    )
    assert skip.skipped == () and skip.parts == (older, newer)
