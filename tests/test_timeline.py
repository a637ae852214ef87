"""The timeline of a table's parts (tsfile_catalog.timeline): bars per device or TAG value,
narrowed by a scan's plan, and overlapping device ranges (tables of hand-made parts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.factories import part_of_ranges, weather_schema
from tsfile_catalog import inspect
from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.table import append_parts, clear_cache, open_table
from tsfile_catalog.timeline import DEVICE, timeline

SCHEMA = weather_schema(("temp", DataType.DOUBLE))


@pytest.fixture(autouse=True)
def _fresh_metadata_cache() -> None:
    clear_cache()


part = part_of_ranges


def test_timeline_bars_groups_and_overlaps(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_parts(url, [part("p1", ("bj", "d1", 0, 9), ("bj", "d2", 0, 9))], SCHEMA)
    append_parts(url, [part("p2", ("bj", "d1", 5, 14), ("sh", "d1", 20, 29))], SCHEMA)
    # Over MAX_DEVICES devices a part keeps no list: its bar shares one row.
    unlisted = PartFile("p3", "tsfile", 1, 7, 30, 39, None)
    empty = PartFile("p4", "tsfile", 1, 0, None, None, ())
    append_parts(url, [unlisted, empty], SCHEMA)
    table = open_table(url)

    data = timeline(table)
    assert [(b.group, b.part, b.start, b.end, b.rows) for b in data.bars] == [
        ("(devices not listed)", "p3", 30, 39, 7),
        ("bj.d1", "p1", 0, 9, 5),
        ("bj.d1", "p2", 5, 14, 5),
        ("bj.d2", "p1", 0, 9, 5),
        ("sh.d1", "p2", 20, 29, 5),
    ]
    assert data.parts == ("p1", "p2", "p3") and data.overlaps == 2

    by_city = timeline(table, group_by="city")
    assert [(b.group, b.part, b.start, b.end, b.rows) for b in by_city.bars] == [
        ("(devices not listed)", "p3", 30, 39, 7),
        ("bj", "p1", 0, 9, 10),
        ("bj", "p2", 5, 14, 5),
        ("sh", "p2", 20, 29, 5),
    ]

    # A scan's view: p1 pruned, p2 narrowed to its sh device and to the pushed time range.
    narrowed = timeline(table, plan=table.plan("city = 'sh' AND time >= 25"))
    assert [(b.group, b.part, b.start, b.end) for b in narrowed.bars] == [
        ("(devices not listed)", "p3", 30, 39),
        ("sh.d1", "p2", 25, 29),
    ]
    with pytest.raises(OptionError, match="'temp'.*city, device"):
        timeline(table, group_by="temp")


def test_inspect_still_serves_the_timeline() -> None:
    # The timeline moved out of inspect; docs and callers that use inspect.timeline keep working.
    assert inspect.timeline is timeline and inspect.DEVICE == DEVICE
