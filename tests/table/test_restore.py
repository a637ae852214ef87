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


@pytest.mark.parametrize("between", ["delete", "optimize"])
def test_restore_keeps_which_row_of_a_key_wins_in_a_last_table(
    tmp_path: Path, between: str
) -> None:
    """A `last` table's restored version reads as it did: of two parts holding one key, the
    later write still wins (RESTORE re-adds both at one version; before, both rows read)."""
    import pyarrow as pa

    from tsfile_catalog import write_table

    url = str(tmp_path / "t")

    def rows(value: float) -> pa.Table:
        return pa.table({"time": [0, 1], "city": ["a", "a"], "temp": [value, value]})

    write_table(url, rows(1.0), table="w", tag_columns=["city"])  # key.duplicates = last
    write_table(url, rows(2.0), mode="append")  # replaces both keys
    wanted = open_table(url).version
    if between == "delete":
        open_table(url).delete("time = 0")
    else:
        open_table(url).maintenance.optimize()
    restore(url, version=wanted)
    for read in (open_table(url), open_table(url, version=wanted)):
        assert sorted(read.scan().to_arrow().to_pylist(), key=lambda r: r["time"]) == [
            {"time": 0, "city": "a", "temp": 2.0},
            {"time": 1, "city": "a", "temp": 2.0},
        ]
    # The change feed of the RESTORE: the deleted row comes back as it was, once.
    changes = open_table(url).changes(wanted + 2).select(["time", "temp", "_change_type"])
    expected = [{"time": 0, "temp": 2.0, "_change_type": "insert"}] if between == "delete" else []
    assert changes.to_pylist() == expected
