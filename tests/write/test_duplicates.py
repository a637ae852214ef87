"""Duplicates across the parts of one write, found on real TsFiles written by the project."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.datasource.helpers import write_rows
from tests.factories import weather_schema
from tsfile_catalog.exceptions import DataError
from tsfile_catalog.formats.tsfile import opened, part_and_devices
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.parts import DeviceStats
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.write.duplicates import duplicates_to_drop

SCHEMA = weather_schema(("temp", DataType.DOUBLE))


def _part(tmp_path: Path, name: str, rows: list[tuple[int, str, float]]) -> str:
    path = str(tmp_path / name)
    write_rows(path, SCHEMA, [{"time": t, "city": c, "device": "d", "temp": v} for t, c, v in rows])
    return path


def _devices(path: str) -> tuple[DeviceStats, ...]:
    with opened(FileIO(path), path) as reader:
        return part_and_devices(reader, SCHEMA, os.path.basename(path), 0)[1]


def test_duplicate_in_two_parts_fails_naming_device_and_time(tmp_path: Path) -> None:
    first = _part(tmp_path, "a.tsfile", [(1, "bj", 1.0), (8, "bj", 1.0), (9, "sh", 1.0)])
    second = _part(tmp_path, "b.tsfile", [(5, "bj", 2.0), (8, "bj", 2.0), (9, "gz", 2.0)])
    with pytest.raises(
        DataError, match=r"device \(city='bj', device='d'\) at time 8 in two part files"
    ):
        duplicates_to_drop(
            FileIO(first), [first, second], [_devices(first), _devices(second)], SCHEMA, "error"
        )


def test_last_drops_the_earlier_parts_rows_only(tmp_path: Path) -> None:
    paths = [
        _part(tmp_path, "a.tsfile", [(1, "bj", 1.0), (8, "bj", 1.0)]),
        _part(tmp_path, "b.tsfile", [(8, "bj", 2.0), (9, "bj", 2.0)]),
        _part(tmp_path, "c.tsfile", [(9, "bj", 3.0), (8, "sh", 3.0)]),
    ]
    drop = duplicates_to_drop(FileIO(paths[0]), paths, [_devices(p) for p in paths], SCHEMA, "last")
    # (bj, 8): part 1 beats part 0; (bj, 9): part 2 beats part 1; part 2 loses nothing.
    assert {i: keys.to_pylist() for i, keys in drop.items()} == {
        0: [{"city": "bj", "device": "d", "time": 8}],
        1: [{"city": "bj", "device": "d", "time": 9}],
    }


def test_overlapping_ranges_without_equal_times_are_not_duplicates(tmp_path: Path) -> None:
    first = _part(tmp_path, "a.tsfile", [(0, "bj", 1.0), (10, "bj", 1.0)])
    second = _part(tmp_path, "b.tsfile", [(5, "bj", 2.0), (15, "bj", 2.0)])
    assert (
        duplicates_to_drop(
            FileIO(first), [first, second], [_devices(first), _devices(second)], SCHEMA, "error"
        )
        == {}
    )


def test_parts_that_cannot_overlap_are_never_opened(tmp_path: Path) -> None:
    # Device stats alone rule out a collision: the (missing) files must not be read.
    devices = [
        (DeviceStats(("bj", "d"), 10, 0, 9),),
        (DeviceStats(("bj", "d"), 10, 10, 19),),
        (DeviceStats(("sh", "d"), 10, 0, 9),),
    ]
    missing = [str(tmp_path / f"gone-{i}.tsfile") for i in range(3)]
    assert duplicates_to_drop(FileIO(missing[0]), missing, devices, SCHEMA, "error") == {}


def test_many_overlapping_devices_are_compared_by_join(tmp_path: Path) -> None:
    # Past the native TAG filter's size the devices' time ranges are read and joined in Arrow.
    cities = [f"c{i:03d}" for i in range(300)]
    first = _part(tmp_path, "a.tsfile", [(t, c, 1.0) for c in cities for t in (0, 10)])
    # Shares a time only for c007; every other device overlaps in range alone.
    second = _part(
        tmp_path, "b.tsfile", [(5, c, 2.0) for c in cities] + [(10, "c007", 2.0), (99, "zz", 2.0)]
    )
    drop = duplicates_to_drop(
        FileIO(first), [first, second], [_devices(first), _devices(second)], SCHEMA, "last"
    )
    assert {i: keys.to_pylist() for i, keys in drop.items()} == {
        0: [{"city": "c007", "device": "d", "time": 10}]
    }
