from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.factories import part_file, table_schema
from tsfile_catalog.exceptions import (
    CommitConflictError,
    CorruptManifestError,
    InvalidCommitError,
    OptionError,
    SchemaMismatchError,
    TableExistsError,
    TableNotFoundError,
    VersionNotFoundError,
)
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.manifest import AddPart, RemovePart, SetSchema, derived_table_uuid
from tsfile_catalog.metadata.ownership import new_job_id, new_part_name, task_dir_name
from tsfile_catalog.metadata.parts import DeviceStats, FieldStats, PartFile
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.table import (
    MANIFEST_DIR,
    append_parts,
    clear_cache,
    commit,
    create_table,
    open_table,
    vacuum,
)

# The writer child processes import tests.factories: they need the repository on their path.
REPO = Path(__file__).resolve().parents[2]
CHILD_ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
}

SCHEMA = table_schema("weather", fields=[("temp", DataType.FLOAT)])
WIDER = table_schema("weather", fields=[("temp", DataType.DOUBLE), ("rain", DataType.INT64)])


def part(path: str, *, city: str = "paris", start: int = 0, rows: int = 10) -> PartFile:
    return part_file(
        path,
        size_bytes=rows * 8,
        row_count=rows,
        min_time=start,
        max_time=start + rows - 1,
        devices=[DeviceStats((city,), rows, start, start + rows - 1)],
        tag_names=["city"],
        fields={"temp": FieldStats(1.0, 2.0, 0)},
    )


def write(root: Path, *names: str) -> None:
    for name in names:
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"tsfile")


def log_file(root: Path, version: int, suffix: str = ".json") -> Path:
    return root / MANIFEST_DIR / f"{version:020d}{suffix}"


def append_n(url: str, n: int, prefix: str = "p") -> None:
    for i in range(n):
        append_parts(url, [part(f"{prefix}{i}.tsfile", start=i * 10)], SCHEMA)


# -- create, open, append ---------------------------------------------------------------------


def test_open_without_a_manifest(tmp_path: Path) -> None:
    with pytest.raises(TableNotFoundError, match=str(tmp_path)):
        open_table(str(tmp_path))


def test_create_table(tmp_path: Path) -> None:
    table = create_table(str(tmp_path), SCHEMA, properties={"owner": "ops"})
    assert (table.version, table.schema, table.parts()) == (0, SCHEMA, [])
    assert open_table(str(tmp_path)).properties == {"owner": "ops"}
    with pytest.raises(TableExistsError, match=str(tmp_path)):
        create_table(str(tmp_path), SCHEMA)
    assert create_table(str(tmp_path), WIDER, exist_ok=True).schema == SCHEMA
    assert open_table(str(tmp_path)).history()[0].operation == "CREATE"


def test_first_append_creates_the_table(tmp_path: Path) -> None:
    url = str(tmp_path / "t")
    assert append_parts(url, [part("a.tsfile")], SCHEMA, properties={"k": "v"}) == 0
    assert append_parts(url, [part("b.tsfile"), part("c.tsfile")], SCHEMA) == 1
    table = open_table(url)
    assert table.location == str(tmp_path / "t")
    assert (table.version, table.schema, table.schema_id) == (1, SCHEMA, 0)
    assert table.properties == {"k": "v"}
    assert [(p.path, p.added_version) for p in table.parts()] == [
        ("a.tsfile", 0),
        ("b.tsfile", 1),
        ("c.tsfile", 1),
    ]
    assert table.part_url(table.parts()[0]) == str(tmp_path / "t" / "a.tsfile")


def test_schema_is_enforced_and_merged(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_parts(url, [part("a.tsfile")], SCHEMA)
    with pytest.raises(SchemaMismatchError, match="'temp'.*FLOAT.*DOUBLE"):
        append_parts(url, [part("b.tsfile")], WIDER)
    assert open_table(url).version == 0, "a refused write commits nothing"
    append_parts(url, [part("b.tsfile")], WIDER, merge_schema=True)
    table = open_table(url)
    assert (table.schema, table.schema_id) == (WIDER, 1)
    assert [(p.path, p.schema_id) for p in table.parts()] == [("a.tsfile", 0), ("b.tsfile", 1)]
    assert open_table(url, version=0).schema == SCHEMA


def test_overwrite_replaces_parts_and_keeps_history(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 2)
    version = append_parts(url, [part("new.tsfile")], SCHEMA, overwrite=True)
    assert [p.path for p in open_table(url).parts()] == ["new.tsfile"]
    assert [p.path for p in open_table(url, version=version - 1).parts()] == [
        "p0.tsfile",
        "p1.tsfile",
    ]
    latest = open_table(url).history()[0]
    assert (latest.operation, latest.parts_removed, latest.rows_removed) == ("OVERWRITE", 2, 20)
    assert latest.operation_parameters["mode"] == "overwrite"


def test_history_is_newest_first(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 3)
    append_parts(url, [], SCHEMA, operation="ADOPT", operation_parameters={"files": "0"})
    history = open_table(url).history()
    assert [h.version for h in history] == [3, 2, 1, 0]
    assert history[0].operation == "ADOPT" and history[0].operation_parameters["files"] == "0"
    assert [h.rows_added for h in history] == [0, 10, 10, 10]
    assert [h.version for h in open_table(url).history(limit=2)] == [3, 2]
    assert [h.version for h in open_table(url, version=1).history()] == [1, 0]
    stamps = [h.timestamp_ms for h in history]
    assert stamps == sorted(stamps, reverse=True) and len(set(stamps)) == len(stamps)


def test_invalid_parts_are_refused(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_parts(url, [part("a.tsfile")], SCHEMA)
    with pytest.raises(InvalidCommitError, match="escapes"):
        append_parts(url, [part("../outside.tsfile")], SCHEMA)
    with pytest.raises(InvalidCommitError, match="'a.tsfile'"):
        append_parts(url, [part("a.tsfile")], SCHEMA)


def test_plan_prunes_by_stats(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_parts(url, [part("a.tsfile", city="paris"), part("b.tsfile", city="rome")], SCHEMA)
    plan = open_table(url).plan("city = 'rome' AND time < 5")
    assert [p.path for p in plan.parts] == ["b.tsfile"]
    assert [p.path for p in plan.pruned] == ["a.tsfile"]
    assert plan.pushdown.time_max == 4


def test_memory_filesystem(tmp_path: Path) -> None:
    url = f"memory://tables/{uuid.uuid4().hex}"
    append_n(url, 3)
    assert [p.path for p in open_table(url, use_cache=False).parts()] == [
        "p0.tsfile",
        "p1.tsfile",
        "p2.tsfile",
    ]


# -- time travel ------------------------------------------------------------------------------


def test_time_travel_by_version(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 3)
    assert [len(open_table(url, version=v).parts()) for v in range(3)] == [1, 2, 3]
    with pytest.raises(VersionNotFoundError, match="no version 7.*versions 0..2"):
        open_table(url, version=7)


def test_time_travel_by_timestamp(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 3)
    stamps = [h.timestamp_ms for h in reversed(open_table(url).history())]
    assert open_table(url, timestamp=stamps[1]).version == 1
    assert open_table(url, timestamp=stamps[2] - 1).version == 1
    assert open_table(url, timestamp=str(stamps[0])).version == 0
    iso = dt.datetime.fromtimestamp(stamps[1] / 1000, tz=dt.timezone.utc).isoformat()
    assert open_table(url, timestamp=iso).version == 1
    naive = iso.replace("+00:00", "")
    assert open_table(url, timestamp=naive).version == 1, "naive timestamps are UTC"
    assert open_table(url, timestamp=stamps[2] + 10**9).version == 2
    with pytest.raises(VersionNotFoundError, match="no version of table .* at or before"):
        open_table(url, timestamp=stamps[0] - 1)
    with pytest.raises(VersionNotFoundError, match="at or before 2001-01-01"):
        open_table(url, timestamp="2001-01-01")


def test_time_travel_options_are_validated(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 1)
    with pytest.raises(OptionError, match="not both"):
        open_table(url, version=0, timestamp=0)
    with pytest.raises(OptionError, match="ISO-8601"):
        open_table(url, timestamp="yesterday")


# -- corruption -------------------------------------------------------------------------------


def test_truncated_commit_names_the_file_and_older_versions_stay_readable(
    tmp_path: Path,
) -> None:
    url = str(tmp_path)
    append_n(url, 3)
    broken = log_file(tmp_path, 2)
    broken.write_bytes(broken.read_bytes()[:40])
    clear_cache()
    with pytest.raises(CorruptManifestError, match=broken.name):
        open_table(url)
    assert len(open_table(url, version=1).parts()) == 2
    assert len(open_table(url, version=1, use_cache=False).parts()) == 2


def test_garbage_commit_file(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 2)
    log_file(tmp_path, 1).write_bytes(b"\x00\xffnot json")
    with pytest.raises(CorruptManifestError, match=log_file(tmp_path, 1).name):
        open_table(url, use_cache=False)


def test_part_path_escaping_the_root_is_corrupt(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 2)
    commit_file = log_file(tmp_path, 1)
    obj = json.loads(commit_file.read_bytes())
    obj["actions"][0]["add"]["path"] = "../../etc/passwd"
    commit_file.write_text(json.dumps(obj))
    with pytest.raises(CorruptManifestError, match=f"{commit_file.name}.*etc/passwd"):
        open_table(url, use_cache=False)
    assert len(open_table(url, version=0, use_cache=False).parts()) == 1


def test_missing_commit_file(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 3)
    log_file(tmp_path, 1).unlink()
    with pytest.raises(CorruptManifestError, match="version 1 is missing"):
        open_table(url, use_cache=False)


# -- checkpoints and the cache ----------------------------------------------------------------


def test_checkpoint_every_ten_commits(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 23)
    names = os.listdir(tmp_path / MANIFEST_DIR)
    assert sorted(n for n in names if "checkpoint." in n) == [
        log_file(tmp_path, 10, ".checkpoint.json").name,
        log_file(tmp_path, 20, ".checkpoint.json").name,
    ]
    hint = json.loads((tmp_path / MANIFEST_DIR / "_last_checkpoint").read_text())
    assert hint["version"] == 20
    expected = open_table(url).snapshot
    for version in range(20):
        log_file(tmp_path, version).unlink()
    loaded = open_table(url, use_cache=False)
    assert loaded.snapshot == expected, "checkpoint 20 + commits 21, 22"
    assert open_table(url, version=20, use_cache=False).version == 20
    with pytest.raises(VersionNotFoundError, match="no version 15.*versions 20..22"):
        open_table(url, version=15, use_cache=False)


@pytest.mark.parametrize("hint", [None, b'{"version": 0}', b'{"version": 990}', b"garbage"])
def test_last_checkpoint_is_only_a_hint(tmp_path: Path, hint: bytes | None) -> None:
    url = str(tmp_path)
    append_n(url, 13)
    expected = open_table(url).snapshot
    path = tmp_path / MANIFEST_DIR / "_last_checkpoint"
    if hint is None:
        path.unlink()
    else:
        path.write_bytes(hint)
    assert open_table(url, use_cache=False).snapshot == expected


def test_corrupt_checkpoint_falls_back_to_the_commits(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 12)
    expected = open_table(url).snapshot
    log_file(tmp_path, 10, ".checkpoint.json").write_bytes(b'{"format_version": 1, "vers')
    assert open_table(url, use_cache=False).snapshot == expected


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
    assert reads == [log_file(tmp_path, 10, ".checkpoint.json").name, log_file(tmp_path, 11).name]
    reads.clear()
    assert open_table(url).version == 14
    assert reads == [log_file(tmp_path, v).name for v in (12, 13, 14)]
    reads.clear()
    open_table(url)
    open_table(url, version=11)
    assert reads == []
    open_table(url, use_cache=False)
    assert reads, "use_cache=False reads storage"


# -- optimistic concurrency -------------------------------------------------------------------


def test_concurrent_blind_append_is_rebased(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 1)
    stale = open_table(url).snapshot
    append_parts(url, [part("other.tsfile")], SCHEMA)
    snapshot = commit(
        FileIO(url), url, [AddPart(part("mine.tsfile"))], read=stale, operation="WRITE"
    )
    assert snapshot.version == 2
    assert [p.path for p in open_table(url).parts()] == ["p0.tsfile", "other.tsfile", "mine.tsfile"]
    assert open_table(url).history()[0].read_version == 0


def test_append_after_a_concurrent_schema_change_conflicts(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 1)
    stale = open_table(url).snapshot
    append_parts(url, [part("wide.tsfile")], WIDER, merge_schema=True)
    with pytest.raises(CommitConflictError, match=r"version 1 \(WRITE\) changed the table schema"):
        commit(FileIO(url), url, [AddPart(part("mine.tsfile"))], read=stale, operation="WRITE")
    assert open_table(url).version == 1


def test_overwrite_after_a_concurrent_append_conflicts(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 1)
    stale = open_table(url).snapshot
    append_parts(url, [part("late.tsfile")], SCHEMA)
    with pytest.raises(CommitConflictError, match="overwrite"):
        commit(
            FileIO(url),
            url,
            [AddPart(part("mine.tsfile"))],
            read=stale,
            operation="OVERWRITE",
            overwrite=True,
        )


def test_concurrent_create_table(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 1)
    with pytest.raises(CommitConflictError, match="created concurrently"):
        commit(FileIO(url), url, [SetSchema(SCHEMA, 0)], read=None, operation="CREATE")


def test_lost_response_to_our_own_put_counts_as_success(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = str(tmp_path)
    append_n(url, 1)
    original = FileIO.create_exclusive

    def put_then_fail(self: FileIO, target: str, data: bytes) -> None:
        original(self, target, data)
        raise FileExistsError(target)

    monkeypatch.setattr(FileIO, "create_exclusive", put_then_fail)
    assert append_parts(url, [part("mine.tsfile")], SCHEMA) == 1
    monkeypatch.undo()
    assert [p.path for p in open_table(url, use_cache=False).parts()] == [
        "p0.tsfile",
        "mine.tsfile",
    ]


WRITER = """
import json, sys, time
from tests.factories import part_file
from tsfile_catalog.metadata.schema import TableSchema
from tsfile_catalog.table import append_parts

url, name, count, schema, options, start = sys.argv[1:7]
schema = TableSchema.from_json(json.loads(schema))
time.sleep(max(0.0, float(start) - time.time()))
for i in range(int(count)):
    part = part_file(f"{name}-{i}.tsfile", min_time=i, max_time=i)
    append_parts(url, [part], schema, storage_options=json.loads(options))
"""


def run_writers(url: str, writers: int, commits: int, options: dict[str, Any]) -> None:
    # A common start instant (after the interpreters import) so the writers really race,
    # including for creating the table.
    start = time.time() + 2.0
    args = [json.dumps(SCHEMA.to_json()), json.dumps(options), str(start)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, url, f"w{w}", str(commits), *args],
            stderr=subprocess.PIPE,
            text=True,
            env=CHILD_ENV,
        )
        for w in range(writers)
    ]
    failures = [p.stderr.read() if p.stderr else "" for p in procs if p.wait(timeout=180) != 0]
    assert not failures, failures


def check_contiguous(url: str, writers: int, commits: int, options: dict[str, Any]) -> None:
    table = open_table(url, storage_options=options, use_cache=False)
    total = writers * commits
    assert table.version == total - 1
    assert [h.version for h in table.history()] == list(range(total - 1, -1, -1))
    paths = sorted(p.path for p in table.parts())
    assert paths == sorted(f"w{w}-{i}.tsfile" for w in range(writers) for i in range(commits))
    assert sorted(p.added_version for p in table.parts()) == list(range(total))


def test_concurrent_appends_from_processes(tmp_path: Path) -> None:
    url = str(tmp_path / "table")
    run_writers(url, writers=4, commits=10, options={})
    check_contiguous(url, 4, 10, {})


@pytest.mark.s3
def test_put_if_absent_on_s3(s3_table: tuple[str, dict[str, Any]]) -> None:
    url, options = s3_table
    io = FileIO(url, options)
    io.create_exclusive(f"{url}/x.json", b"first")
    with pytest.raises(FileExistsError):
        io.create_exclusive(f"{url}/x.json", b"second")
    assert io.read_bytes(f"{url}/x.json") == b"first"


@pytest.mark.s3
def test_concurrent_appends_on_s3(s3_table: tuple[str, dict[str, Any]]) -> None:
    url, options = s3_table
    run_writers(url, writers=2, commits=6, options=options)
    check_contiguous(url, 2, 6, options)
    assert open_table(url, version=10, storage_options=options).version == 10
    assert len(open_table(url, version=3, storage_options=options).parts()) == 4


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
        capture_output=True, text=True, timeout=120, env=CHILD_ENV, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def paths(table: Any) -> list[str]:
    return sorted(p.path for p in table.parts())


def strip_table_uuids(root: Path) -> None:
    """Make a table look written by a release before table UUIDs."""
    for path in (root / MANIFEST_DIR).iterdir():
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
        versions, ["mine.tsfile"], new.table_uuid
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
    assert {json.loads(p.read_bytes()).get("table_uuid") for p in (tmp_path / MANIFEST_DIR)
            .glob("*.json")} == {table.table_uuid}
    assert open_table(url, version=0, use_cache=False).table_uuid == table.table_uuid


# -- hostile manifest files -------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["Infinity", "nested", "directory", "next-directory"])
def test_hostile_commit_files_are_corrupt_and_named(tmp_path: Path, damage: str) -> None:
    url = str(tmp_path)
    append_n(url, 3)
    target = log_file(tmp_path, 3 if damage == "next-directory" else 1)
    if damage == "Infinity":
        obj = json.loads(target.read_bytes())
        obj["actions"][0]["add"]["size_bytes"] = float("inf")
        obj["commit_info"]["rows_added"] = float("inf")
        target.write_text(json.dumps(obj))
    elif damage == "nested":
        target.write_bytes(b'{"format_version": 1, "commit_info": ' + b"[" * 10**5 + b"]" * 10**5)
    else:
        target.unlink(missing_ok=True)
        target.mkdir()
    clear_cache()
    attempts = [
        lambda: open_table(url),
        lambda: open_table(url, use_cache=False),
        lambda: append_parts(url, [part("x.tsfile")], SCHEMA),
        lambda: vacuum(url),
    ]
    if damage != "next-directory":
        attempts.append(lambda: open_table(url, timestamp=10**14))  # after every commit
    for attempt in attempts:
        with pytest.raises(CorruptManifestError, match=target.name):
            attempt()
    assert [h.version for h in open_table(url, version=0).history()] == [0]


def test_an_empty_manifest_folder_does_not_block_the_first_write(tmp_path: Path) -> None:
    # what a first commit killed after creating the folder leaves
    (tmp_path / MANIFEST_DIR).mkdir()
    with pytest.raises(TableNotFoundError, match="holds no commit"):
        open_table(str(tmp_path))
    assert append_parts(str(tmp_path), [part("a.tsfile")], SCHEMA) == 0
    assert paths(open_table(str(tmp_path))) == ["a.tsfile"]


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
