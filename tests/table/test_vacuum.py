"""VACUUM on real TsFiles the project writes, without Spark: the retention, orphans, and the
errors of time travel afterwards (what a table owns is tests/table/test_ownership.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.table.aging import DAY_MS, write_days_ago
from tests.table.test_ownership import SCHEMA, tsfile
from tsfile_catalog.exceptions import OptionError, TableNotFoundError, VersionNotFoundError
from tsfile_catalog.metadata.ownership import new_job_id, new_part_name, task_dir_name
from tsfile_catalog.table import append_parts, open_table, vacuum, vacuum_table


def test_vacuum_reclaims_exactly_the_parts_removed_before_the_retention(
    tmp_path: Path, clock: list[int]
) -> None:
    url = str(tmp_path)
    a = write_days_ago(tmp_path, clock, 10)  # version 0
    b = write_days_ago(tmp_path, clock, 9, overwrite=True)  # version 1 removes a, 9 days ago
    c = write_days_ago(tmp_path, clock, 1, overwrite=True)  # version 2 removes b, 1 day ago
    d = write_days_ago(tmp_path, clock, 0.5)  # version 3 appends
    clock[0] = 0
    assert vacuum(url) == [str(tmp_path / a)], "dry run by default: the default 7 days"
    assert (tmp_path / a).exists()
    progress: list[tuple[int, int]] = []
    done = vacuum_table(url, dry_run=False, progress=lambda n, total: progress.append((n, total)))
    assert done.removed == (str(tmp_path / a),) and done.orphans == ()
    assert done.bytes == os.path.getsize(tmp_path / b), "the parts are the same size"
    assert progress == [(1, 1)]
    assert not (tmp_path / a).exists()
    assert all((tmp_path / p).exists() for p in (b, c, d))
    # Versions current within the retention still read; version 0 says why it cannot.
    assert [p.path for p in open_table(url, version=1).parts()] == [b]
    assert {p.path for p in open_table(url, version=2).parts()} == {c}
    with pytest.raises(VersionNotFoundError, match=f"version 0 .*part {a} was deleted by VACUUM"):
        open_table(url, version=0, use_cache=False)
    assert vacuum(url) == [], "nothing left to reclaim"


def test_retention_below_the_table_property_is_refused(tmp_path: Path, clock: list[int]) -> None:
    url = str(tmp_path)
    a = write_days_ago(tmp_path, clock, 3)
    write_days_ago(tmp_path, clock, 2, overwrite=True)  # removes a, 2 days ago
    write_days_ago(tmp_path, clock, 0.001, overwrite=True)  # removes b, 86 seconds ago
    clock[0] = 0
    assert vacuum(url) == [], "the default retention is 7 days"
    with pytest.raises(OptionError, match="1 day is below .*deletedFileRetention of 7 days"):
        vacuum(url, retention_ms=DAY_MS)
    assert vacuum(url, retention_ms=DAY_MS, retention_check=False) == [str(tmp_path / a)]
    # The table's own property is the default retention, and the floor.
    append_parts(url, [], SCHEMA, properties={"deletedFileRetention": "36 hours"})
    assert vacuum(url) == [str(tmp_path / a)]
    with pytest.raises(OptionError, match="below the table's deletedFileRetention of 36 hours"):
        vacuum(url, retention_ms=DAY_MS)
    append_parts(url, [], SCHEMA, properties={"deletedFileRetention": "soon"})
    with pytest.raises(OptionError, match="'deletedFileRetention' 'soon' is not a duration"):
        vacuum(url)


def test_orphans_still_go_and_only_after_the_retention(tmp_path: Path, clock: list[int]) -> None:
    url = str(tmp_path)
    a = write_days_ago(tmp_path, clock, 10)
    write_days_ago(tmp_path, clock, 9, overwrite=True)
    clock[0] = 0
    task = f"_staging/{new_job_id()}/{task_dir_name(0, 0)}"
    died, staged = tsfile(tmp_path / new_part_name(3)), tsfile(tmp_path / task / new_part_name(0))
    (tmp_path / "notes.txt").write_text("mine")
    assert vacuum(url) == [str(tmp_path / a)], "fresh orphans may be a running write's"
    everything = vacuum(url, dry_run=False, retention_ms=0, retention_check=False)
    folders = [f"{tmp_path / task}/", f"{(tmp_path / task).parent}/", f"{tmp_path}/_staging/"]
    assert everything == sorted(str(p) for p in (tmp_path / a, died, staged)) + folders
    assert (tmp_path / "notes.txt").exists()


def test_vacuum_needs_a_table(tmp_path: Path) -> None:
    with pytest.raises(TableNotFoundError):
        vacuum(str(tmp_path))
