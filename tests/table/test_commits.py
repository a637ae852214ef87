"""Committing to a table: create, append, overwrite, schema merge, and optimistic
concurrency between writers (a stale snapshot, processes racing, and on S3)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.table.helpers import CHILD_ENV, SCHEMA, WIDER, append_n, part
from tsfile_catalog.exceptions import (
    AlreadyCommittedError,
    CommitConflictError,
    InvalidCommitError,
    SchemaMismatchError,
    TableExistsError,
    TableNotFoundError,
)
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.manifest import AddPart, SetSchema, StreamTxn
from tsfile_catalog.table import append_parts, commit, create_table, open_table

# -- create, open, append ---------------------------------------------------------------------


def test_open_without_a_manifest(tmp_path: Path) -> None:
    with pytest.raises(TableNotFoundError, match=str(tmp_path)):
        open_table(str(tmp_path))


def test_create_table(tmp_path: Path) -> None:
    table = create_table(str(tmp_path), SCHEMA, properties={"owner": "ops"})
    assert (table.version, table.schema, table.parts()) == (0, SCHEMA, [])
    # The table records its time: ms read as raw BIGINTs unless created otherwise.
    assert open_table(str(tmp_path)).properties == {
        "owner": "ops",
        "key.duplicates": "last",
        "time.unit": "ms",
        "time.type": "BIGINT",
    }
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
    assert table.properties == {"k": "v", "key.duplicates": "last"}
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


def run_writers(
    url: str, writers: int, commits: int, options: dict[str, Any], *, timeout: float = 180
) -> None:
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
    failures = [p.stderr.read() if p.stderr else "" for p in procs if p.wait(timeout=timeout) != 0]
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


def test_append_parts_refuses_a_streaming_batch_the_table_already_holds(tmp_path: Path) -> None:
    root = str(tmp_path / "t")
    append_parts(root, [part("a.tsfile")], SCHEMA, txn=StreamTxn("q", 0))
    append_parts(root, [part("b.tsfile")], SCHEMA, txn=StreamTxn("q", 1))
    for batch in (0, 1):
        with pytest.raises(AlreadyCommittedError, match=f"batch {batch} of streaming query q"):
            append_parts(root, [part("c.tsfile")], SCHEMA, txn=StreamTxn("q", batch))
    assert open_table(root).version == 1
    # Another query's batch 0 is its own.
    assert append_parts(root, [part("c.tsfile")], SCHEMA, txn=StreamTxn("r", 0)) == 2
