"""Which parts of one write may share a (device, time): decided from device stats alone."""

from __future__ import annotations

from tsfile_catalog.metadata.overlap import DeviceRange, overlapping_ranges
from tsfile_catalog.metadata.stats import DeviceStats


def _d(tag: str, lo: int, hi: int) -> DeviceStats:
    return DeviceStats((tag,), hi - lo + 1, lo, hi)


def test_disjoint_devices_or_times_need_no_read() -> None:
    # Partitioned by device, or by time: the usual layouts never overlap.
    assert overlapping_ranges([[_d("a", 0, 9)], [_d("b", 0, 9)]]) == {}
    assert overlapping_ranges([[_d("a", 0, 9)], [_d("a", 10, 19)], [_d("a", 20, 29)]]) == {}
    assert overlapping_ranges([[_d("a", 0, 9)]]) == {}
    assert overlapping_ranges([]) == {}


def test_overlap_is_narrowed_to_where_the_ranges_meet() -> None:
    parts = [
        [_d("a", 0, 10), _d("b", 0, 10)],
        [_d("a", 5, 20), _d("b", 11, 20)],  # b only touches part 0 at no shared time
        [_d("c", 0, 100)],
    ]
    assert overlapping_ranges(parts) == {
        0: (DeviceRange(("a",), 5, 10),),
        1: (DeviceRange(("a",), 5, 10),),
    }


def test_a_range_meeting_several_parts_reads_the_span_of_the_meetings() -> None:
    parts = [[_d("a", 0, 100)], [_d("a", 10, 20)], [_d("a", 50, 60)], [_d("a", 200, 300)]]
    assert overlapping_ranges(parts) == {
        0: (DeviceRange(("a",), 10, 60),),
        1: (DeviceRange(("a",), 10, 20),),
        2: (DeviceRange(("a",), 50, 60),),
    }


def test_single_instants_and_touching_ends_overlap() -> None:
    # INSERT ... VALUES (8,'a',1.0), (8,'a',2.0) split over two tasks: two one-row parts.
    assert overlapping_ranges([[_d("a", 8, 8)], [_d("a", 8, 8)]]) == {
        0: (DeviceRange(("a",), 8, 8),),
        1: (DeviceRange(("a",), 8, 8),),
    }
    assert overlapping_ranges([[_d("a", 0, 5)], [_d("a", 5, 9)]]) == {
        0: (DeviceRange(("a",), 5, 5),),
        1: (DeviceRange(("a",), 5, 5),),
    }
