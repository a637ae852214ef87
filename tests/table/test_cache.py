"""The metadata cache and table identity: a cached table never outlives its location."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.table.helpers import CHILD_ENV, SCHEMA, append_n, log_file, part, paths
from tsfile_catalog.exceptions import CommitConflictError, TableNotFoundError
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.manifest import RemovePart, derived_table_uuid, encode_snapshot
from tsfile_catalog.table import MANIFEST_DIR, append_parts, clear_cache, commit, open_table
from tsfile_catalog.table.checkpoint_parquet import decode_parquet_snapshot

# -- the cache --------------------------------------------------------------------------------


def test_cache_reads_only_newer_commits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = str(tmp_path)
    append_n(url, 15)
    clear_cache()
    reads: list[str] = []
    original = FileIO.read_bytes

    def counting(self: FileIO, target: str) -> bytes:
        reads.append(os.path.basename(target))
        return original(self, target)

    monkeypatch.setattr(FileIO, "read_bytes", counting)
    assert open_table(url, version=11).version == 11
    checkpoint = log_file(tmp_path, 10, ".checkpoint.parquet")
    assert reads == [checkpoint.name, log_file(tmp_path, 11).name]
    reads.clear()
    assert open_table(url).version == 14
    assert reads == [log_file(tmp_path, v).name for v in (12, 13, 14)]
    reads.clear()
    open_table(url)
    open_table(url, version=11)
    assert reads == []
    open_table(url, use_cache=False)
    assert reads, "use_cache=False reads storage"


# -- table identity: a cache never outlives its table -----------------------------------------

RECREATE = """
import json, os, sys
from tests.factories import part_file
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.schema import TableSchema
from tsfile_catalog.table import MANIFEST_DIR, append_parts

url, versions, schema, options, legacy = sys.argv[1:6]
options = json.loads(options)
io = FileIO(url, options)
io.delete(url, recursive=True)  # what DROP TABLE ... PURGE does
for i in range(int(versions)):
    part = part_file(f"new-{i}.tsfile", min_time=i, max_time=i)
    append_parts(url, [part], TableSchema.from_json(json.loads(schema)), storage_options=options)
if legacy == "legacy":  # as written by a release before table UUIDs
    log = os.path.join(url, MANIFEST_DIR)
    for name in os.listdir(log):
        obj = json.load(open(os.path.join(log, name)))
        if isinstance(obj, dict) and obj.pop("table_uuid", None):
            json.dump(obj, open(os.path.join(log, name), "w"))
"""


def recreate(
    url: str, versions: int, options: dict[str, Any] | None = None, *, legacy: bool = False
) -> None:
    """Another process drops the table at ``url`` and writes a new one there: ``versions``
    commits, one part ``new-<i>.tsfile`` each."""
    args = [url, str(versions), json.dumps(SCHEMA.to_json()), json.dumps(options or {})]
    done = subprocess.run(
        [sys.executable, "-c", RECREATE, *args, "legacy" if legacy else "current"],
        capture_output=True,
        text=True,
        timeout=120,
        env=CHILD_ENV,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def strip_table_uuids(root: Path) -> None:
    """Make a table look written by a release before table UUIDs (and Parquet checkpoints:
    each becomes the JSON checkpoint such a release wrote)."""
    for path in list((root / MANIFEST_DIR).iterdir()):
        if path.suffix == ".parquet":
            snapshot = decode_parquet_snapshot(path.read_bytes(), source=path.name)
            path.with_suffix(".json").write_bytes(encode_snapshot(snapshot))
            path.unlink()
            path = path.with_suffix(".json")
        obj = json.loads(path.read_bytes())
        if isinstance(obj, dict) and obj.pop("table_uuid", None):
            path.write_text(json.dumps(obj))


@pytest.mark.parametrize("versions", [2, 3, 5], ids=["fewer", "as-many", "more"])
def test_a_table_recreated_by_another_process_replaces_the_cached_one(
    tmp_path: Path, versions: int
) -> None:
    url = str(tmp_path / "t")
    append_n(url, 3, prefix="old")
    old = open_table(url)
    recreate(url, versions)

    new = open_table(url)
    assert (new.version, paths(new)) == (versions - 1, [f"new-{i}.tsfile" for i in range(versions)])
    assert new.table_uuid != old.table_uuid
    assert paths(open_table(url, version=0)) == ["new-0.tsfile"]
    assert [h.version for h in new.history()] == list(range(versions - 1, -1, -1))
    # nothing read from the old table may land in the new one, even at a free version
    with pytest.raises(CommitConflictError, match="dropped and recreated"):
        commit(FileIO(url), url, [RemovePart("old0.tsfile")], read=old.snapshot, operation="DEL")
    with pytest.raises(TableNotFoundError, match=f"table {old.table_uuid} is no longer at"):
        old.history()
    # an overwrite replaces exactly the new table's parts
    version = append_parts(url, [part("mine.tsfile")], SCHEMA, overwrite=True)
    fresh = open_table(url, use_cache=False)
    assert (fresh.version, paths(fresh), fresh.table_uuid) == (
        versions,
        ["mine.tsfile"],
        new.table_uuid,
    )
    assert version == versions and fresh.history()[0].parts_removed == versions


@pytest.mark.s3
def test_a_table_recreated_on_s3_replaces_the_cached_one(
    s3_table: tuple[str, dict[str, Any]],
) -> None:
    url, options = s3_table
    for i in range(3):
        append_parts(url, [part(f"old{i}.tsfile")], SCHEMA, storage_options=options)
    old = open_table(url, storage_options=options)
    recreate(url, 3, options)
    new = open_table(url, storage_options=options)
    assert paths(new) == ["new-0.tsfile", "new-1.tsfile", "new-2.tsfile"]
    assert new.table_uuid != old.table_uuid
    append_parts(url, [part("mine.tsfile")], SCHEMA, overwrite=True, storage_options=options)
    assert paths(open_table(url, storage_options=options, use_cache=False)) == ["mine.tsfile"]


def test_tables_written_before_table_uuids_stay_readable_and_identified(tmp_path: Path) -> None:
    root = tmp_path / "t"
    url = str(root)
    append_n(url, 12)
    strip_table_uuids(root)
    clear_cache()
    # cold: checkpoint 10 records no UUID; the identity comes from version 0's bytes
    table = open_table(url)
    assert table.table_uuid == derived_table_uuid(log_file(root, 0).read_bytes())
    assert open_table(url, use_cache=False).snapshot == table.snapshot
    assert len(table.parts()) == 12
    assert [h.version for h in table.history(limit=2)] == [11, 10]
    # new commits carry the derived identity
    append_parts(url, [part("late.tsfile")], SCHEMA)
    assert json.loads(log_file(root, 12).read_bytes())["table_uuid"] == table.table_uuid
    clear_cache()
    assert open_table(url).table_uuid == table.table_uuid
    # and such a table recreated by another process is told apart from the cached one
    recreate(url, 3, legacy=True)
    new = open_table(url)
    assert paths(new) == ["new-0.tsfile", "new-1.tsfile", "new-2.tsfile"]
    assert new.table_uuid == derived_table_uuid(log_file(root, 0).read_bytes())


def test_table_uuid_is_kept_by_every_version_and_checkpoint(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 11)
    table = open_table(url)
    assert {
        json.loads(p.read_bytes()).get("table_uuid")
        for p in (tmp_path / MANIFEST_DIR).glob("*.json")
    } == {table.table_uuid}
    assert open_table(url, version=0, use_cache=False).table_uuid == table.table_uuid
