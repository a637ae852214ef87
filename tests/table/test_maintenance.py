"""Vacuum of what the manifest log says the table owns."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.table.helpers import SCHEMA, part, write
from tsfile_catalog.exceptions import TableNotFoundError
from tsfile_catalog.metadata.ownership import new_job_id, new_part_name, task_dir_name
from tsfile_catalog.table import append_parts, open_table, vacuum

# -- vacuum -----------------------------------------------------------------------------------


def test_killed_writer_leaves_only_orphans(tmp_path: Path) -> None:
    url = str(tmp_path)
    a, b, c = (new_part_name(0) for _ in range(3))
    write(tmp_path, a, b)
    append_parts(url, [part(a)], SCHEMA)
    append_parts(url, [part(b)], SCHEMA, overwrite=True)
    # A writer that died after publishing one file and while staging another:
    task = f"_staging/{new_job_id()}/{task_dir_name(0, 0)}"
    d = f"{task}/{new_part_name(0)}"
    write(tmp_path, c, d)
    write(tmp_path, "notes.txt")
    table = open_table(url, use_cache=False)
    assert [p.path for p in table.parts()] == [b]
    orphans = sorted(str(tmp_path / name) for name in (c, d))
    folders = [f"{tmp_path / task}/", f"{(tmp_path / task).parent}/", f"{tmp_path}/_staging/"]
    assert vacuum(url, retention_ms=0) == orphans + folders
    assert vacuum(url) == [], "files within the retention period are kept"
    assert (tmp_path / c).exists(), "dry run deletes nothing"
    assert vacuum(url, dry_run=False, retention_ms=0) == orphans + folders
    assert not any(os.path.exists(o) for o in orphans + folders)
    assert (tmp_path / a).exists(), "version 0 still needs its part"
    assert (tmp_path / b).exists() and (tmp_path / "notes.txt").exists()
    assert vacuum(url, retention_ms=0) == []


def test_vacuum_needs_a_table(tmp_path: Path) -> None:
    with pytest.raises(TableNotFoundError):
        vacuum(str(tmp_path))
