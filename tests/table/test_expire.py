"""EXPIRE SNAPSHOTS on real TsFiles, without Spark: old versions leave history and time
travel, and writes, vacuum and purge keep working on the shortened log."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.table.aging import history, write_days_ago
from tsfile_catalog.exceptions import VersionNotFoundError
from tsfile_catalog.table import (
    MANIFEST_DIR,
    clear_cache,
    expire_snapshots,
    open_table,
    purge,
    set_properties,
    vacuum,
)


def test_expire_snapshots_removes_old_versions_from_history_and_time_travel(
    tmp_path: Path, clock: list[int]
) -> None:
    url = str(tmp_path)
    names = [write_days_ago(tmp_path, clock, days) for days in (40, 35, 31, 2, 1)]
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
    assert [v for v, _ in history(tmp_path)] == [4, 3, 2, 1]
    assert {p.path for p in open_table(url, version=1).parts()} == set(names[:2])
    assert {p.path for p in open_table(url).parts()} == set(names)
    # Writes, vacuum and purge keep working on the shortened log.
    write_days_ago(tmp_path, clock, 0)
    assert vacuum(url) == []
    expire_snapshots(url, older_than="2999-01-01T00:00:00Z", retain_last=1)
    assert [v for v, _ in history(tmp_path)] == [5]
    deleted = purge(url)
    assert all(str(tmp_path / n) in deleted for n in names)


def test_retain_last_is_a_floor_under_the_default_age(tmp_path: Path, clock: list[int]) -> None:
    """Iceberg's semantics: RETAIN LAST never makes a version expire; only versions older
    than the cutoff (``older_than``, else the table's ``logRetention``) do, and RETAIN LAST
    keeps its newest ones even then."""
    url = str(tmp_path)
    for days in (0.01, 0.005, 0.004, 0.003, 0.002, 0.001, 0.0005, 0.0001, 0, 0):
        write_days_ago(tmp_path, clock, days)  # ten versions made minutes ago
    clock[0] = 0
    assert expire_snapshots(url, retain_last=3).versions == ()
    assert len(list(history(tmp_path))) == 10
    # The table property sets the default age; RETAIN LAST is the floor under it.
    set_properties(url, {"logRetention": "1 minute"})
    assert expire_snapshots(url, retain_last=3, dry_run=True).versions == (0, 1, 2, 3, 4)
    assert expire_snapshots(url, retain_last=8, dry_run=True).versions == (0, 1, 2)
    # An explicit cutoff still applies, and so does the floor under it.
    assert expire_snapshots(url, older_than="2999-01-01", retain_last=3).oldest_kept == 8
