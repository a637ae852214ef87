"""Which parts a top-N by time reads: every row among the first n in time order (ties
included) stays in a kept part, drawn against the rows themselves."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.factories import part_of_devices, weather_schema
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.scan import plan_scan
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.metadata.stats import DeviceStats
from tsfile_catalog.metadata.time_top import TimeTop, keep_time_top, time_top_threshold

SCHEMA = weather_schema(("v", DataType.DOUBLE))
DEVICES = [("a", "d1"), ("a", "d2"), ("b", "d3")]
WHERE = [
    None,
    "device = 'd2'",
    "city = 'a' AND time >= 20",
    "time < 45",
    "device IN ('d1', 'd3') AND time BETWEEN 10 AND 70",
    "v > 0",  # only rows can tell: nothing is counted, nothing dropped
]

# Per part, per device: the device's row times (a device may be absent from a part).
_times = st.lists(st.integers(0, 90), min_size=1, max_size=6, unique=True)
_parts = st.lists(
    st.lists(st.one_of(st.none(), _times), min_size=len(DEVICES), max_size=len(DEVICES)).filter(
        lambda devices: any(devices)
    ),
    min_size=1,
    max_size=6,
)


def _stats(layout: list[list[int] | None]) -> list[tuple[tuple[str, str], list[int]]]:
    return [(DEVICES[k], times) for k, times in enumerate(layout) if times]


def _part(index: int, layout: list[list[int] | None]) -> PartFile:
    devices = [
        DeviceStats(tags, len(times), min(times), max(times)) for tags, times in _stats(layout)
    ]
    return part_of_devices(f"p{index}.tsfile", *devices)


def _matches(where: str | None, tags: tuple[str, str], time: int) -> bool:
    city, device = tags
    return {
        None: True,
        "device = 'd2'": device == "d2",
        "city = 'a' AND time >= 20": city == "a" and time >= 20,
        "time < 45": time < 45,
        "device IN ('d1', 'd3') AND time BETWEEN 10 AND 70": device in ("d1", "d3")
        and 10 <= time <= 70,
        "v > 0": True,  # a superset: no part may be dropped anyway
    }[where]


@given(
    layouts=_parts,
    where=st.sampled_from(WHERE),
    n=st.integers(1, 30),
    descending=st.booleans(),
)
def test_kept_parts_hold_every_row_up_to_the_nth_time(
    layouts: list[list[list[int] | None]], where: str | None, n: int, descending: bool
) -> None:
    parts = [_part(i, layout) for i, layout in enumerate(layouts)]
    plan = plan_scan(SCHEMA, parts, where, key="keep")
    top = TimeTop(n, descending)
    kept, dropped = keep_time_top(plan, top)
    assert {p.path for p in kept.parts} | {p.path for p in dropped} == {p.path for p in plan.parts}
    assert not {p.path for p in kept.parts} & {p.path for p in dropped}
    rows = [
        (time, i)
        for i, layout in enumerate(layouts)
        for tags, times in _stats(layout)
        for time in times
        if _matches(where, tags, time)
    ]
    rows.sort(key=lambda r: r[0], reverse=descending)
    if len(rows) <= n or where == "v > 0":
        # Fewer rows than asked for, or none counted exactly: every part is read.
        assert not dropped
        return
    edge = rows[n - 1][0]
    wanted = {i for time, i in rows if (time >= edge if descending else time <= edge)}
    assert wanted <= {int(p.path[1:].split(".")[0]) for p in kept.parts}


def test_the_threshold_counts_only_what_statistics_know_exactly() -> None:
    old = part_of_devices("old.tsfile", DeviceStats(DEVICES[0], 10, 0, 9))
    new = part_of_devices(
        "new.tsfile", DeviceStats(DEVICES[0], 5, 20, 24), DeviceStats(DEVICES[1], 5, 25, 29)
    )
    plan = plan_scan(SCHEMA, [old, new], None, key="keep")
    assert time_top_threshold(plan, TimeTop(10, descending=True)) == 20
    assert time_top_threshold(plan, TimeTop(11, descending=True)) == 0
    assert time_top_threshold(plan, TimeTop(21, descending=True)) is None
    assert time_top_threshold(plan, TimeTop(3, descending=False)) == 9
    # A device straddling the time range is not counted: d1 of "new" counts nothing.
    ranged = plan_scan(SCHEMA, [old, new], "time >= 22", key="keep")
    assert time_top_threshold(ranged, TimeTop(5, descending=True)) == 25
    assert time_top_threshold(ranged, TimeTop(6, descending=True)) is None
    assert keep_time_top(plan, TimeTop(10, descending=True))[1] == (old,)


def test_a_key_merge_is_kept_or_dropped_whole() -> None:
    """Parts whose keys may overlap are merged on read: their rows are never counted, and a
    merge one of whose parts may hold a first row is read with all of its parts."""
    first = part_of_devices("first.tsfile", DeviceStats(DEVICES[0], 10, 0, 9)).with_version(0, 0)
    again = part_of_devices("again.tsfile", DeviceStats(DEVICES[0], 20, 5, 24)).with_version(1, 0)
    late = part_of_devices("late.tsfile", DeviceStats(DEVICES[1], 10, 20, 29)).with_version(2, 0)
    plan = plan_scan(SCHEMA, [first, again, late], None, key="last")
    assert plan.merges
    kept, dropped = keep_time_top(plan, TimeTop(10, descending=True))
    assert not dropped and kept.merges == plan.merges
    assert time_top_threshold(plan, TimeTop(11, descending=True)) is None
    older = part_of_devices("older.tsfile", DeviceStats(DEVICES[0], 20, 5, 14)).with_version(1, 0)
    plan = plan_scan(SCHEMA, [first, older, late], None, key="last")
    kept, dropped = keep_time_top(plan, TimeTop(10, descending=True))
    assert {p.path for p in dropped} == {"first.tsfile", "older.tsfile"} and not kept.merges
