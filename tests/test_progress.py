"""The progress protocol: what adopt and vacuum report while they work through files."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.cli.helpers import write_file
from tests.datasource.helpers import age
from tsfile_catalog.adopt import adopt_table
from tsfile_catalog.progress import tracked
from tsfile_catalog.table import clear_cache, vacuum


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def __call__(self, done: int, total: int) -> None:
        self.calls.append((done, total))


@pytest.fixture(autouse=True)
def _fresh_metadata_cache() -> None:
    clear_cache()


def test_tracked_reports_after_each_item() -> None:
    seen = Recorder()
    handled = []
    for item in tracked(["a", "b", "c"], seen):
        handled.append((item, list(seen.calls)))
    assert handled == [("a", []), ("b", [(1, 3)]), ("c", [(1, 3), (2, 3)])]
    assert seen.calls == [(1, 3), (2, 3), (3, 3)]
    empty = Recorder()
    assert list(tracked([], empty)) == [] and empty.calls == [(0, 0)]
    assert list(tracked([1, 2], None)) == [1, 2]


def test_adopt_counts_the_files_it_reads(tmp_path: Path) -> None:
    for i in range(3):
        write_file(tmp_path, f"f{i}.tsfile", [("bj", f"d{i}", 0)])
    seen = Recorder()
    table = adopt_table(str(tmp_path), progress=seen)
    assert len(table.parts()) == 3
    assert seen.calls == [(1, 3), (2, 3), (3, 3)]


def test_vacuum_counts_deleted_files_and_a_dry_run_reports_nothing(tmp_path: Path) -> None:
    write_file(tmp_path, "kept.tsfile", [("bj", "d1", 0)])
    adopt_table(str(tmp_path))
    for _ in range(2):
        (tmp_path / f"part-{uuid.uuid4().hex}-00000.tsfile").write_bytes(b"TsFile\x04 orphan")
    age(tmp_path)
    dry = Recorder()
    assert len(vacuum(str(tmp_path), dry_run=True, progress=dry)) == 2
    assert dry.calls == []
    seen = Recorder()
    assert len(vacuum(str(tmp_path), dry_run=False, progress=seen)) == 2
    assert seen.calls == [(1, 2), (2, 2)]
    nothing = Recorder()
    assert vacuum(str(tmp_path), dry_run=False, progress=nothing) == []
    assert nothing.calls == [(0, 0)]
