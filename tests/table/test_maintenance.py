"""Maintenance on real TsFiles the project writes, without Spark: vacuum with retention,
snapshot expiry, restore and schema evolution, and the errors of time travel afterwards."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.table.test_ownership import SCHEMA, part_of, tsfile
from tsfile_catalog.exceptions import (
    OptionError,
    SchemaError,
    SchemaMismatchError,
    TableNotFoundError,
    VersionNotFoundError,
)
from tsfile_catalog.metadata.ownership import new_job_id, new_part_name, task_dir_name
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.table import (
    MANIFEST_DIR,
    append_parts,
    clear_cache,
    commits,
    expire_snapshots,
    open_table,
    ownership,
    purge,
    restore,
    vacuum,
    vacuum_table,
)

DAY_MS = 86_400_000


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Commits are stamped ``clock[0]`` ms ago (the commit loop's clock, not vacuum's)."""
    ago = [0]
    real = commits.now_ms
    monkeypatch.setattr(commits, "now_ms", lambda: real() - ago[0])
    yield ago


def _write(root: Path, clock: list[int], days_ago: float, *, overwrite: bool = False) -> str:
    """Commit one new real part, ``days_ago``; returns its path."""
    name = new_part_name(0)
    tsfile(root / name, start=int(days_ago * 100))
    clock[0] = int(days_ago * DAY_MS)
    append_parts(str(root), [part_of(root, name)], SCHEMA, overwrite=overwrite)
    return name


def _history(root: Path) -> Iterator[tuple[int, str]]:
    return ((h.version, str(h.operation)) for h in open_table(str(root)).history())


def test_vacuum_reclaims_exactly_the_parts_removed_before_the_retention(
    tmp_path: Path, clock: list[int]
) -> None:
    url = str(tmp_path)
    a = _write(tmp_path, clock, 10)  # version 0
    b = _write(tmp_path, clock, 9, overwrite=True)  # version 1 removes a, 9 days ago
    c = _write(tmp_path, clock, 1, overwrite=True)  # version 2 removes b, 1 day ago
    d = _write(tmp_path, clock, 0.5)  # version 3 appends
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
    a = _write(tmp_path, clock, 3)
    _write(tmp_path, clock, 2, overwrite=True)  # removes a, 2 days ago
    _write(tmp_path, clock, 0.001, overwrite=True)  # removes b, 86 seconds ago
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
    a = _write(tmp_path, clock, 10)
    _write(tmp_path, clock, 9, overwrite=True)
    clock[0] = 0
    task = f"_staging/{new_job_id()}/{task_dir_name(0, 0)}"
    died, staged = tsfile(tmp_path / new_part_name(3)), tsfile(tmp_path / task / new_part_name(0))
    (tmp_path / "notes.txt").write_text("mine")
    assert vacuum(url) == [str(tmp_path / a)], "fresh orphans may be a running write's"
    everything = vacuum(url, dry_run=False, retention_ms=0, retention_check=False)
    folders = [f"{tmp_path / task}/", f"{(tmp_path / task).parent}/", f"{tmp_path}/_staging/"]
    assert everything == sorted(str(p) for p in (tmp_path / a, died, staged)) + folders
    assert (tmp_path / "notes.txt").exists()


def test_vacuum_never_deletes_a_part_a_restore_brought_back_while_it_planned(
    tmp_path: Path, clock: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    url = str(tmp_path)
    a = _write(tmp_path, clock, 10)  # version 0
    _write(tmp_path, clock, 9, overwrite=True)  # version 1 removes a, 9 days ago
    clock[0] = 0
    planned = ownership.replaced

    def restore_after_planning(*args: Any, **kwargs: Any) -> ownership.Deletion:
        found = planned(*args, **kwargs)
        assert found.files == (str(tmp_path / a),), "vacuum planned to delete a"
        restore(url, version=0)  # version 2 adds a back, before anything is deleted
        return found

    monkeypatch.setattr(ownership, "replaced", restore_after_planning)
    done = vacuum_table(url, dry_run=False)

    assert done.removed == () and done.bytes == 0
    assert (tmp_path / a).exists()
    latest = open_table(url, use_cache=False)
    assert latest.version == 2 and [p.path for p in latest.parts()] == [a]
    assert latest.scan().count() == 3, "the latest version reads"


def test_vacuum_needs_a_table(tmp_path: Path) -> None:
    with pytest.raises(TableNotFoundError):
        vacuum(str(tmp_path))


def test_expire_snapshots_removes_old_versions_from_history_and_time_travel(
    tmp_path: Path, clock: list[int]
) -> None:
    url = str(tmp_path)
    names = [_write(tmp_path, clock, days) for days in (40, 35, 31, 2, 1)]
    clock[0] = 0
    expired = expire_snapshots(url, dry_run=True)
    assert expired.versions == (0, 1) and expired.oldest_kept == 2, "default: 30 days"
    assert (tmp_path / MANIFEST_DIR / f"{0:020d}.json").exists(), "a dry run removes nothing"
    done = expire_snapshots(url, retain_last=4)
    assert (done.oldest_kept, done.versions, done.checkpoint_written) == (1, (0,), True)
    clear_cache()
    with pytest.raises(VersionNotFoundError, match="no version 0 .*oldest available version is 1"):
        open_table(url, version=0)
    with pytest.raises(VersionNotFoundError, match="were expired.*oldest available version is 1"):
        open_table(url, timestamp="2000-01-01T00:00:00Z")
    assert [v for v, _ in _history(tmp_path)] == [4, 3, 2, 1]
    assert {p.path for p in open_table(url, version=1).parts()} == set(names[:2])
    assert {p.path for p in open_table(url).parts()} == set(names)
    # Writes, vacuum and purge keep working on the shortened log.
    _write(tmp_path, clock, 0)
    assert vacuum(url) == []
    expire_snapshots(url, older_than="2999-01-01T00:00:00Z", retain_last=1)
    assert [v for v, _ in _history(tmp_path)] == [5]
    deleted = purge(url)
    assert all(str(tmp_path / n) in deleted for n in names)


def test_restore_commits_an_older_versions_parts_and_schema(
    tmp_path: Path, clock: list[int]
) -> None:
    url = str(tmp_path)
    a = _write(tmp_path, clock, 10)
    b = _write(tmp_path, clock, 9)
    _write(tmp_path, clock, 8, overwrite=True)
    open_table(url).maintenance.add_columns([("rain", DataType.INT64)])
    clock[0] = 1000  # a second ago: vacuum's cutoff below is strictly after the restore
    version = restore(url, version=1)
    table = open_table(url)
    assert version == table.version == 4
    assert {p.path for p in table.parts()} == {a, b}
    assert table.schema == open_table(url, version=1).schema
    info = table.history(limit=1)[0]
    assert (str(info.operation), info.operation_parameters) == ("RESTORE", {"version": "1"})
    assert (info.parts_added, info.parts_removed) == (2, 1)
    # A version whose files VACUUM deleted cannot be restored; nothing is committed.
    vacuum(url, dry_run=False, retention_ms=0, retention_check=False)
    with pytest.raises(VersionNotFoundError, match="part .* was deleted by VACUUM"):
        restore(url, version=2)
    assert open_table(url).version == 4


def test_add_columns_and_widen_types_each_make_a_schema_version(tmp_path: Path) -> None:
    url = str(tmp_path)
    name = new_part_name(0)
    tsfile(tmp_path / name)
    append_parts(url, [part_of(tmp_path, name)], SCHEMA)
    maintenance = open_table(url).maintenance
    assert maintenance.add_columns([("Rain", DataType.INT32), ("note", DataType.STRING)]) == 1
    assert maintenance.alter_column_type("rain", DataType.INT64) == 2
    assert maintenance.alter_column_type("rain", DataType.INT64) == 2, "no change, no commit"
    assert [(c.name, c.type) for c in open_table(url).schema.fields[-2:]] == [
        ("rain", DataType.INT64),
        ("note", DataType.STRING),
    ]
    assert open_table(url, version=0).schema == SCHEMA
    rain = open_table(url, version=1).schema.column("rain")
    assert rain is not None and rain.type is DataType.INT32
    assert [op for _, op in _history(tmp_path)][:2] == ["CHANGE COLUMN", "ADD COLUMNS"]
    with pytest.raises(SchemaError, match="'temp' .*exists already"):
        maintenance.add_columns([("temp", DataType.DOUBLE)])
    with pytest.raises(SchemaMismatchError, match="'rain' .*INT64 to INT32.*no column ids"):
        maintenance.alter_column_type("rain", DataType.INT32)
    with pytest.raises(SchemaError, match="TAG column 'city'"):
        maintenance.alter_column_type("city", DataType.TEXT)
    with pytest.raises(SchemaError, match="no column 'wind'"):
        maintenance.alter_column_type("wind", DataType.DOUBLE)
    assert open_table(url).version == 2
