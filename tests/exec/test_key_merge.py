"""Resolving rows by key in Arrow, and Spark-free reads of a ``key.duplicates = last``
table written in overlapping commits (real TsFile parts)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tsfile_catalog import write_table
from tsfile_catalog.exec.key_merge import latest_rows
from tsfile_catalog.metadata.key import KEY_DUPLICATES
from tsfile_catalog.metadata.slices import FileSlice, MergeSlice
from tsfile_catalog.table import add_files, open_table

KEYS = ["tag", "time"]


def _rows(table: pa.Table) -> list[tuple[object, ...]]:
    return sorted((tuple(r.values()) for r in table.to_pylist()), key=repr)


def test_the_latest_write_of_each_key_wins_nulls_equal_nulls() -> None:
    old = pa.table({"tag": ["a", None, "a"], "time": [1, 2, 3], "v": [1.0, 2.0, 3.0]})
    new = pa.table({"tag": [None, "b", "a"], "time": [2, 3, 5], "v": [20.0, 30.0, 50.0]})
    newest = pa.table({"tag": ["a"], "time": [1], "v": [100.0]})
    merged = latest_rows([(old, 1), (newest, 3), (new, 2)], KEYS)
    assert _rows(merged) == _rows(
        pa.table(
            {
                "tag": ["a", None, "a", "b", "a"],
                "time": [1, 2, 3, 3, 5],
                "v": [100.0, 20.0, 3.0, 30.0, 50.0],
            }
        )
    )


def test_rows_of_one_write_sharing_a_key_stay_or_go_together() -> None:
    # A write that kept duplicates (its onDuplicate rule) is not thinned by the merge.
    twice = pa.table({"tag": ["a", "a", "b"], "time": [1, 1, 7], "v": [1.0, 1.5, 7.0]})
    later = pa.table({"tag": ["b"], "time": [7], "v": [70.0]})
    assert _rows(latest_rows([(twice, 1), (later, 2)], KEYS)) == [
        ("a", 1, 1.0),
        ("a", 1, 1.5),
        ("b", 7, 70.0),
    ]
    assert _rows(latest_rows([(later, 1), (twice, 2)], KEYS)) == _rows(twice)


def _write(url: str, times: list[int], cities: list[str], values: list[float | None]) -> None:
    data = pa.table(
        {
            "time": pa.array(times, pa.int64()),
            "city": cities,
            "v": pa.array(values, pa.float64()),
        }
    )
    write_table(url, data, table="t", tag_columns=["city"])


@pytest.fixture
def overlapping(tmp_path: Path) -> str:
    url = str(tmp_path / "t")
    _write(url, [1, 2, 3, 10], ["a", "a", "b", "c"], [1.0, 2.0, 3.0, 10.0])
    _write(url, [2, 3, 4], ["a", "a", "a"], [-20.0, None, 40.0])
    return url


def test_a_later_write_replaces_whole_rows_on_every_scan(overlapping: str) -> None:
    table = open_table(overlapping)
    assert table.snapshot.properties[KEY_DUPLICATES] == "last"
    expected = [
        (1, "a", 1.0),
        (2, "a", -20.0),
        (3, "a", None),  # the whole row is replaced: a null replaces the old value
        (3, "b", 3.0),
        (4, "a", 40.0),
        (10, "c", 10.0),
    ]
    assert _rows(table.scan().to_arrow()) == sorted(expected, key=repr)
    assert table.scan().count() == 6
    # The old value 2.0 matches, but the row holding it was replaced by one that does not.
    assert _rows(table.scan(where="v > 1.5").to_arrow()) == sorted(
        [(3, "b", 3.0), (4, "a", 40.0), (10, "c", 10.0)], key=repr
    )
    assert _rows(table.scan(where="v IS NULL", columns=["time"]).to_arrow()) == [(3,)]
    # The first version reads as it was.
    assert table.scan(version=0).count() == 4


def test_only_the_overlapping_device_is_merged(overlapping: str) -> None:
    scan = open_table(overlapping).scan()
    (task,) = scan.tasks
    merged = [s for s in task if isinstance(s, MergeSlice)]
    plain = [s for s in task if isinstance(s, FileSlice)]
    assert [m.sequences for m in merged] == [(0, 1)]
    assert all(q.devices == (("a",),) for m in merged for q in m.slices)
    # The first part's other devices are read plainly, without the merged one.
    assert [sorted(s.devices or ()) for s in plain] == [[("b",), ("c",)]]
    assert "merged by key (1 devices)" in scan.explain()


def test_field_statistics_never_prune_a_part_whose_rows_replace_others(tmp_path: Path) -> None:
    url = str(tmp_path / "t")
    _write(url, [1, 2], ["a", "a"], [5.0, 6.0])
    _write(url, [1, 2], ["a", "a"], [-5.0, -6.0])  # no row of this part has v > 0
    table = open_table(url)
    plan = table.plan("v > 0")
    assert len(plan.parts) == 2 and len(plan.merges) == 1
    assert table.scan(where="v > 0").count() == 0


def test_a_keep_table_returns_both_rows(tmp_path: Path) -> None:
    url = str(tmp_path / "t")
    _write(url, [1], ["a"], [1.0])
    open_table(url).alter.set_properties({KEY_DUPLICATES: "keep"})
    _write(url, [1], ["a"], [2.0])
    table = open_table(url)
    assert table.plan().merges == ()
    assert _rows(table.scan().to_arrow()) == [(1, "a", 1.0), (1, "a", 2.0)]


def test_an_external_part_replaces_and_is_replaced_by_its_commit_order(tmp_path: Path) -> None:
    url = str(tmp_path / "t")
    _write(url, [1, 2], ["a", "a"], [1.0, 2.0])
    source = tmp_path / "src" / "late.parquet"
    source.parent.mkdir()
    pq.write_table(
        pa.table({"time": pa.array([2], pa.int64()), "city": ["a"], "v": [-2.0]}), source
    )
    add_files(url, str(source), format="parquet")  # version 1: replaces a at 2
    _write(url, [1], ["a"], [10.0])  # version 2: replaces a at 1
    table = open_table(url)
    assert _rows(table.scan().to_arrow()) == [(1, "a", 10.0), (2, "a", -2.0)]
    assert _rows(table.scan(version=1).to_arrow()) == [(1, "a", 1.0), (2, "a", -2.0)]
