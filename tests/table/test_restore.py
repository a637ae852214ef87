"""RESTORE on real TsFiles, without Spark: an older version's parts and schema come back as
a new version, unless VACUUM deleted its files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.table.aging import write_days_ago
from tsfile_catalog.exceptions import VersionNotFoundError
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.table import open_table, restore, vacuum


def test_restore_commits_an_older_versions_parts_and_schema(
    tmp_path: Path, clock: list[int]
) -> None:
    url = str(tmp_path)
    a = write_days_ago(tmp_path, clock, 10)
    b = write_days_ago(tmp_path, clock, 9)
    write_days_ago(tmp_path, clock, 8, overwrite=True)
    open_table(url).alter.add_columns([("rain", DataType.INT64)])
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
