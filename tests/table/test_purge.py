"""DROP TABLE … PURGE racing writers: the purge wins as a whole. A commit that landed before
the purge broke the log is purged with the rest; one that lands after is undone by its own
writer, which reports the table gone. Either way the location ends without a table (never an
unreadable log that blocks the name) and without the writers' files. Real TsFiles, real
processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tsfile_catalog import write_table
from tsfile_catalog.exceptions import CommitConflictError, TableNotFoundError
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.manifest import AddPart, Operation
from tsfile_catalog.table import MANIFEST_DIR, expire_snapshots, open_table, purge
from tsfile_catalog.table import commits as commits_module
from tsfile_catalog.table.log import list_log

ROOT = Path(__file__).resolve().parents[2]


def rows(seed: int) -> pa.Table:
    return pa.table(
        {
            "time": pa.array([seed, seed + 1], pa.int64()),
            "city": pa.array(["bj", "sh"]),
            "temp": pa.array([float(seed), 1.5]),
        }
    )


def new_table(root: Path, writes: int = 3) -> str:
    url = str(root)
    write_table(url, rows(0), table="t", tag_columns=["city"])
    for seed in range(1, writes):
        write_table(url, rows(seed))
    return url


def tsfiles(root: Path) -> list[Path]:
    return sorted(root.rglob("*.tsfile")) if root.exists() else []


def assert_no_table_left(root: Path) -> None:
    """Nothing of a table at ``root``: no commit or checkpoint, no part, and the name is free
    (a new table can be made there and read back)."""
    listing = list_log(FileIO(str(root)), str(root))
    assert listing.commits == () and listing.checkpoints == (), listing
    assert tsfiles(root) == []
    with pytest.raises(TableNotFoundError):
        open_table(str(root))
    write_table(str(root), rows(7), table="t", tag_columns=["city"])
    assert open_table(str(root)).scan().to_arrow().num_rows == 2


def test_purge_finishes_a_commit_that_landed_while_it_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "t"
    url = new_table(root)
    real_delete = FileIO.delete_files
    landed: list[int] = []

    def delete_files(self: FileIO, urls: Any) -> None:
        # The first deletion of the purge: another application appends right then.
        if not landed:
            write_table(url, rows(100))
            landed.append(list_log(FileIO(url), url).latest)
        real_delete(self, urls)

    monkeypatch.setattr(FileIO, "delete_files", delete_files)
    deleted = purge(url)
    monkeypatch.undo()

    assert landed == [3], "the append landed after the purge read the log"
    assert str(root / MANIFEST_DIR / f"{3:020d}.json") in deleted
    assert_no_table_left(root)


def test_a_commit_landing_after_the_purge_began_is_undone_by_its_writer(tmp_path: Path) -> None:
    root = tmp_path / "t"
    url = new_table(root)
    io = FileIO(url)
    location = io.normalize(url)
    # A writer read version 2 and wrote its part, then stalled while the table was purged.
    stale = open_table(url).snapshot
    other = tmp_path / "other"
    write_table(str(other), rows(5), table="t", tag_columns=["city"])
    part = open_table(str(other)).snapshot.parts[0]
    purge(url)
    root.mkdir(exist_ok=True)
    os.replace(other / part.path, root / part.path)
    with pytest.raises(CommitConflictError, match="dropped|purged"):
        # The commit loop after its identity check: the version after ``stale`` is free now.
        commits_module._commit(
            io,
            location,
            [AddPart(part)],
            read=stale,
            operation=Operation.WRITE,
            operation_parameters=None,
            overwrite=False,
        )
    # The write paths delete the files they published when their commit fails.
    (root / part.path).unlink()
    assert_no_table_left(root)


def test_purge_racing_an_appending_process_leaves_no_table(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    for round_ in range(2):
        root = tmp_path / f"t{round_}"
        url = new_table(root, writes=1)
        child = subprocess.Popen(
            [sys.executable, "-m", "tests.table.purge_writer_child", url],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # Purge once the writer is committing steadily.
        deadline = time.monotonic() + 60
        while list_log(FileIO(url), url).latest < 4 + round_:
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.01)
        purge(url)
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        # The writer stopped at its first write after the purge: the table was gone.
        assert "still writing" not in out, out
        assert_no_table_left(root)


def test_commits_to_an_expired_table_still_land(tmp_path: Path) -> None:
    """What a commit checks after landing holds for a table whose log starts at a
    checkpoint (version 0 expired), not only at version 0."""
    root = tmp_path / "t"
    url = new_table(root, writes=12)
    expired = expire_snapshots(url, retention_ms=0, retain_last=2)
    assert 0 in expired.versions
    write_table(url, rows(50))
    assert open_table(url).scan().to_arrow().num_rows == 26


def test_commits_to_a_table_an_expiry_left_half_done_still_land(tmp_path: Path) -> None:
    """An EXPIRE SNAPSHOTS interrupted after its checkpoint and some deletions leaves a log
    that starts at neither version 0 nor a checkpoint, but loads from the checkpoint: it is
    a table, and its commits must land."""
    from tsfile_catalog.table.log import commit_url, write_checkpoint

    root = tmp_path / "t"
    url = new_table(root, writes=8)
    io = FileIO(url)
    write_checkpoint(io, url, open_table(url, version=5).snapshot, hint=False)
    io.delete_files([commit_url(url, v) for v in (0, 1, 2)])  # then the expiry was killed
    write_table(url, rows(50))
    assert open_table(url).version == 8
    assert open_table(url).scan().to_arrow().num_rows == 18
    # And a purge of it deletes it whole.
    purge(url)
    assert_no_table_left(root)
