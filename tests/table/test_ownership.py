"""A table deletes only what it owns: vacuum, purge and the location checks on real TsFiles,
locally and on S3 (moto). No Spark: tables are built from files the project writes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.datasource.helpers import age, write_rows
from tests.factories import weather_schema
from tsfile_catalog import adopt_table
from tsfile_catalog.exceptions import LocationError
from tsfile_catalog.formats.tsfile import opened, part_from_reader
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.ownership import new_job_id, new_part_name, task_dir_name
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.table import (
    MANIFEST_DIR,
    STAGING_DIR,
    append_parts,
    create_table,
    open_table,
    purge,
    vacuum,
)

SCHEMA = weather_schema(("temp", DataType.DOUBLE))


def tsfile(path: Path, start: int = 0) -> Path:
    """A real TsFile of three rows at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [{"time": start + i, "city": "bj", "device": "d", "temp": 1.0} for i in range(3)]
    write_rows(str(path), SCHEMA, rows)
    return path


def part_of(root: Path, relative: str) -> PartFile:
    url = str(root / relative)
    with opened(FileIO(url), url) as reader:
        return part_from_reader(reader, SCHEMA, relative, os.path.getsize(url))


def commit_parts(root: Path, *relatives: str, overwrite: bool = False) -> None:
    append_parts(str(root), [part_of(root, r) for r in relatives], SCHEMA, overwrite=overwrite)


def nested_table(root: Path) -> tuple[Path, list[Path]]:
    """A table inside ``root`` (made the way a DataFrame write to that folder makes one), with
    a committed part and one its own dead writer left."""
    inner = root / "inner"
    committed = new_part_name(0)
    tsfile(inner / committed)
    commit_parts(inner, committed)
    return inner, [inner / committed, tsfile(inner / new_part_name(1))]


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file() or p.is_symlink()}


def test_vacuum_deletes_only_what_the_tables_writers_left(tmp_path: Path) -> None:
    root = tmp_path / "t"
    old, current = new_part_name(0), new_part_name(1)
    tsfile(root / old)
    tsfile(root / current)
    commit_parts(root, old)
    commit_parts(root, current, overwrite=True)  # old is removed, but version 0 reads it
    # Writes of this table that died: after publishing a part, and while staging.
    died = tsfile(root / new_part_name(2))
    job = root / STAGING_DIR / new_job_id()
    staged = tsfile(job / task_dir_name(0, 0) / new_part_name(0))
    empty_task = root / STAGING_DIR / new_job_id() / task_dir_name(1, 0)
    empty_task.mkdir(parents=True)
    # Not the table's: a user's files (kept before and after the table was made) and a table
    # nested in its folder, with a dead writer's part of its own.
    (root / "notes.txt").write_text("mine")
    users = [root / "notes.txt", tsfile(root / "mine.tsfile"), tsfile(root / ".archive/x.tsfile")]
    inner, inner_files = nested_table(root)
    keep = files_under(root) - {died, staged}

    url = str(root)
    assert vacuum(url) == [], "everything is younger than the retention"
    age(root)
    expected = [
        str(died),
        str(staged),
        f"{job / task_dir_name(0, 0)}/",
        f"{job}/",
        f"{empty_task}/",
        f"{empty_task.parent}/",
        f"{root / STAGING_DIR}/",
    ]
    assert sorted(vacuum(url)) == sorted(expected)
    assert files_under(root) == keep | {died, staged}, "a dry run deletes nothing"
    assert sorted(vacuum(url, dry_run=False)) == sorted(expected)

    assert files_under(root) == keep
    assert all(p.exists() for p in users + inner_files)
    assert not (root / STAGING_DIR).exists()
    assert open_table(url, version=0).parts()[0].path == old
    assert len(open_table(str(inner)).parts()) == 1
    # Without the retention, the part only version 0 reads is reclaimed at last.
    assert vacuum(url, retention_ms=0, retention_check=False) == [str(root / old)]


def test_purge_deletes_exactly_the_tables_files(tmp_path: Path) -> None:
    root = tmp_path / "t"
    first, adopted, current = new_part_name(0), "2024/01/a.tsfile", new_part_name(1)
    for relative in (first, adopted, current):
        tsfile(root / relative)
    commit_parts(root, first, adopted)
    commit_parts(root, current, overwrite=True)  # the first two stay the table's (time travel)
    staged = tsfile(root / STAGING_DIR / new_job_id() / task_dir_name(0, 0) / new_part_name(0))
    # A part the manifest reaches through a link: the link is followed by reads, never by purge.
    shared = tsfile(tmp_path / "elsewhere" / "shared.tsfile")
    (root / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    commit_parts(root, "linked/shared.tsfile")
    (root / "notes.txt").write_text("mine")
    (root / "photos").mkdir()
    (root / "photos" / "cat.jpg").write_bytes(b"\xff\xd8")
    inner, inner_files = nested_table(root)

    deleted = purge(str(root))

    for gone in (root / first, root / adopted, root / current, staged):
        assert str(gone) in deleted and not gone.exists()
    assert not (root / MANIFEST_DIR).exists() and not (root / STAGING_DIR).exists()
    assert not (root / "2024").exists(), "folders the table's files left empty go"
    assert (root / "notes.txt").read_text() == "mine"
    assert (root / "photos" / "cat.jpg").exists()
    assert shared.exists() and (root / "linked").is_symlink()
    assert all(p.exists() for p in inner_files)
    assert len(open_table(str(inner)).parts()) == 1
    assert purge(str(root)) == [], "a second purge finds nothing of the table"


def test_purge_of_a_table_alone_removes_its_folder(tmp_path: Path) -> None:
    root = tmp_path / "t"
    name = new_part_name(0)
    tsfile(root / name)
    commit_parts(root, name)
    purge(str(root))
    assert not root.exists()


def test_new_tables_refuse_folders_they_would_share(tmp_path: Path) -> None:
    user = tmp_path / "user"
    tsfile(user / "old.tsfile")
    (user / "notes.txt").write_text("mine")
    with pytest.raises(LocationError, match=r"not empty \(it holds notes.txt, old.tsfile\)"):
        create_table(str(user), SCHEMA)
    assert sorted(p.name for p in user.iterdir()) == ["notes.txt", "old.tsfile"]

    outer = tmp_path / "outer"
    create_table(str(outer), SCHEMA)
    with pytest.raises(LocationError, match=f"inside the table at {outer}"):
        create_table(str(outer / "a" / "b"), SCHEMA)
    tsfile(outer / "sub" / "x.tsfile")
    with pytest.raises(LocationError, match=f"inside the table at {outer}"):
        adopt_table(str(outer / "sub"))
    assert not (outer / "sub" / MANIFEST_DIR).exists()
    with pytest.raises(LocationError, match="file-system root"):
        create_table("/", SCHEMA)

    # What its own killed first write or commit left does not make a folder someone else's.
    again = tmp_path / "again"
    (again / MANIFEST_DIR).mkdir(parents=True)
    (again / STAGING_DIR / new_job_id()).mkdir(parents=True)
    assert create_table(str(again), SCHEMA).version == 0


@pytest.mark.s3
def test_vacuum_and_purge_on_s3(s3_table: tuple[str, dict[str, Any]], tmp_path: Path) -> None:
    url, options = s3_table
    io = FileIO(url, options)
    local = tsfile(tmp_path / "a.tsfile")
    part = f"{url}/{new_part_name(0)}"
    io.put_file(str(local), part)
    io.write_bytes(f"{url}/notes.txt", b"mine")
    io.put_file(str(tsfile(tmp_path / "b.tsfile")), f"{url}/archive/b.tsfile")
    adopt_table(url, storage_options=options)
    # a dead write's leftovers, and a user's TsFile placed after the table was made
    died = f"{url}/{new_part_name(1)}"
    staged = f"{url}/{STAGING_DIR}/{new_job_id()}/{task_dir_name(0, 0)}/{new_part_name(0)}"
    for i, target in enumerate((died, staged, f"{url}/later.tsfile")):
        io.put_file(str(tsfile(tmp_path / f"c{i}.tsfile")), target)

    assert vacuum(
        url, dry_run=False, retention_ms=0, retention_check=False, storage_options=options
    ) == sorted([died, staged])
    assert io.exists(f"{url}/later.tsfile") and io.exists(part)

    deleted = purge(url, storage_options=options)
    assert set(deleted) >= {part, f"{url}/archive/b.tsfile"}
    assert io.read_bytes(f"{url}/notes.txt") == b"mine"
    assert io.exists(f"{url}/later.tsfile")
    assert not io.exists(part) and not io.exists(f"{url}/archive/b.tsfile")
    assert io.list_names(f"{url}/{MANIFEST_DIR}") == []


@pytest.mark.parametrize("parent", [".", "a/b"])
def test_adopting_a_folder_that_holds_a_table_is_refused(tmp_path: Path, parent: str) -> None:
    root = tmp_path / "root"
    tsfile(root / "own.tsfile")
    inner, files = nested_table(root / parent)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    with pytest.raises(LocationError, match=f"{root} holds the table at {inner} "):
        adopt_table(str(root))
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    assert all(f.exists() for f in files)
    assert open_table(str(inner)).version == 0
