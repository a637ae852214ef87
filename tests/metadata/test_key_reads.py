"""Merge planning for one scan: narrowed to what its key terms keep, never pruned by FIELD
statistics, and every (part, device) slice read exactly once, plainly or merged."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from tests.factories import part_of_devices, table_schema
from tsfile_catalog.metadata.expressions import Compare, ScanPushdown, bind
from tsfile_catalog.metadata.expressions.model import And
from tsfile_catalog.metadata.key_reads import key_predicate, plan_merges
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.scan import plan_scan
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.metadata.slices import FileSlice, MergeSlice, plan_slices
from tsfile_catalog.metadata.stats import DeviceStats, FieldStats, SeriesStats
from tsfile_catalog.metadata.stats_aggregates import Aggregate, metadata_count, plan_aggregates

SCHEMA = table_schema("t", tags=("city",), fields=(("v", DataType.INT64),))
A, B, C = ("a",), ("b",), ("c",)


def _part(name: str, version: int, *devices: tuple[tuple[str, ...], int, int, int]) -> PartFile:
    stats = [
        DeviceStats(tags, hi - lo + 1, lo, hi, {"v": SeriesStats(hi - lo + 1, min=v, max=v)})
        for tags, lo, hi, v in devices
    ]
    values = [v for _, _, _, v in devices]
    part = part_of_devices(name, *stats).with_version(version, 0)
    return replace(part, fields={"v": FieldStats(min(values), max(values), 0)})


PARTS = [
    _part("old", 0, (A, 0, 10, 1), (B, 0, 10, 1)),
    _part("new", 1, (A, 5, 15, -1), (C, 0, 10, -1)),
]


def test_the_key_predicate_keeps_only_time_and_tag_terms() -> None:
    bound = bind(
        And((Compare("time", ">", 3), Compare("v", ">", 0), Compare("city", "=", "a"))), SCHEMA
    )
    assert key_predicate(bound, SCHEMA.tag_names) == bind(
        And((Compare("time", ">", 3), Compare("city", "=", "a"))), SCHEMA
    )
    assert key_predicate(bind(Compare("v", ">", 0), SCHEMA), SCHEMA.tag_names) is None


def test_a_merge_is_narrowed_to_the_pushed_range() -> None:
    (merge,) = plan_merges(PARTS, ScanPushdown(), SCHEMA.tag_names)
    assert [p.path for p in merge.parts] == ["old", "new"] and merge.devices == (A,)
    # Before 5 only the old write holds a: nothing to merge.
    assert plan_merges(PARTS, ScanPushdown(time_max=4), SCHEMA.tag_names) == ()
    assert plan_merges(PARTS, ScanPushdown(tag_values=(("city", frozenset("b")),)), ("city",)) == ()


def test_field_statistics_never_drop_a_part_a_merge_reads() -> None:
    # No row of "new" has v > 0, but its row for a at 5..10 hides "old"'s, which match.
    plan = plan_scan(SCHEMA, PARTS, "v > 0", key="last")
    assert [p.path for p in plan.parts] == ["old", "new"] and len(plan.merges) == 1
    keep = plan_scan(SCHEMA, PARTS, "v > 0", key="keep")
    assert [p.path for p in keep.parts] == ["old"] and keep.merges == ()


def test_statistics_answer_no_merged_device() -> None:
    plan = plan_scan(SCHEMA, PARTS, None, key="last")
    assert metadata_count(plan) is None
    planned = plan_aggregates(plan, [Aggregate("count")])
    assert planned is not None
    assert sorted(d.tags for d in planned.known) == [B, C]
    (read,) = planned.reads
    assert isinstance(read, MergeSlice) and read.sequences == (0, 1)
    assert [(s.path, s.devices) for s in read.slices] == [("old", (A,)), ("new", (A,))]


@given(target=st.integers(1, 40), low=st.integers(-5, 20))
def test_every_slice_is_read_once_plainly_or_merged(target: int, low: int) -> None:
    pushdown = ScanPushdown(time_min=low)
    plan = plan_scan(SCHEMA, PARTS, f"time >= {low}", key="last")
    tasks = plan_slices(plan.parts, pushdown, SCHEMA.tag_names, target, merges=plan.merges)
    seen: list[tuple[str, tuple[str | None, ...], int, int]] = []
    for task in tasks:
        for piece in task:
            queries = piece.slices if isinstance(piece, MergeSlice) else (piece,)
            for query in queries:
                assert isinstance(query, FileSlice)
                part = next(p for p in PARTS if p.path == query.path)
                # A whole-part slice reads the devices with rows in its time range.
                devices = query.devices or tuple(
                    d.tags
                    for d in part.devices or ()
                    if d.max_time >= query.time_min and d.min_time <= query.time_max
                )
                seen.extend((query.path, d, query.time_min, query.time_max) for d in devices)
    held = {(p.path, d.tags) for p in PARTS for d in p.devices or () if d.max_time >= low}
    assert {(path, tags) for path, tags, _, _ in seen} == held
    # Time pieces of one (part, device) never overlap: no row is read twice.
    for path, tags in held:
        spans = sorted((lo, hi) for p, t, lo, hi in seen if (p, t) == (path, tags))
        assert all(a[1] < b[0] for a, b in zip(spans, spans[1:], strict=False))
