"""The pure ownership rules: which paths only the writer makes, and how locations nest."""

from __future__ import annotations

import dataclasses

import pytest

from tests.table.helpers import part as part_file
from tsfile_catalog.metadata.ownership import (
    PRESTAGED_NAME,
    ancestors,
    holds_writers_bytes,
    is_part_name,
    is_root,
    is_staging_dir,
    is_vacuum_candidate,
    is_within,
    kept_paths,
    new_job_id,
    new_part_name,
    task_dir_name,
)


def test_the_writers_names_are_the_only_vacuum_candidates() -> None:
    part = new_part_name(3)
    staged = f"_staging/{new_job_id()}/{task_dir_name(3, 1)}/{new_part_name(3)}"
    assert is_part_name(part) and is_vacuum_candidate(part) and is_vacuum_candidate(staged)
    # A replaceWhere's record of its pre-staged rewrites, left by a driver that died.
    assert is_vacuum_candidate(f"_staging/{new_job_id()}/00000-0/{PRESTAGED_NAME}")
    for user_file in (
        PRESTAGED_NAME,  # only inside a job's task folder
        f"_staging/{new_job_id()}/{PRESTAGED_NAME}",
        "notes.txt",
        "data.tsfile",  # a user's TsFile at the root
        "part-0001.tsfile",  # looks like a part to a person, not to the writer
        f"sub/{part}",  # a writer-named file in a subfolder: another table's, or adopted
        f"inner/_staging/{new_job_id()}/00000-0/{part}",  # a nested table's staging
        f"_staging/{part}",  # not in a job's task folder
        f"_staging/notajob/00000-0/{part}",
        f"_staging/{new_job_id()}/00000-0/notes.txt",
        f".archive/{part}",
    ):
        assert not is_vacuum_candidate(user_file), user_file


def test_staging_folders() -> None:
    job = new_job_id()
    assert is_staging_dir("_staging")
    assert is_staging_dir(f"_staging/{job}")
    assert is_staging_dir(f"_staging/{job}/{task_dir_name(0, 0)}")
    assert not is_staging_dir("_staging/photos")
    assert not is_staging_dir(f"_staging/{job}/photos")
    assert not is_staging_dir(f"_staging/{job}/00000-0/deeper")
    assert not is_staging_dir("data")


@pytest.mark.parametrize(
    ("location", "other", "within"),
    [
        ("/w/t", "/w", True),
        ("/w", "/w", True),
        ("/wt", "/w", False),  # a sibling with a common prefix is not inside
        ("/w", "/w/t", False),
        ("s3://b/w/_catalog/x", "s3://b/w/_catalog", True),
        ("s3://b/w/t", "/b/w", False),  # another file system
        ("memory://b/w", "s3://b/w", False),
    ],
)
def test_is_within(location: str, other: str, within: bool) -> None:
    assert is_within(location, other) is within


def test_ancestors_and_roots() -> None:
    assert ancestors("/a/b/c") == ["/a/b", "/a", "/"]
    assert ancestors("s3://bucket/a/b") == ["s3://bucket/a", "s3://bucket"]
    assert ancestors("memory://t") == []
    assert ancestors("/") == []
    for root in ("/", "s3://bucket", "s3://bucket/", "gs://b", "memory://"):
        assert is_root(root), root
    for folder in ("/data", "s3://bucket/t", "memory://t"):
        assert not is_root(folder), folder


def test_what_the_manifest_says_a_part_is_decides_what_is_kept() -> None:
    name = new_part_name(0)
    ours = part_file(name)
    theirs = dataclasses.replace(part_file(f"/t/{name}"), format="parquet", external=True)
    unmarked = dataclasses.replace(part_file("data.parquet"), format="parquet")
    assert kept_paths([ours, theirs, unmarked]) == {f"/t/{name}", "data.parquet"}


def test_only_tsfile_bytes_can_be_a_writers_leftover() -> None:
    name = new_part_name(0)
    assert holds_writers_bytes(name, b"TsFile")
    assert holds_writers_bytes(name, b"Ts")  # killed while writing the header
    assert holds_writers_bytes(name, b"")
    for head in (b"PAR1", b"ORC", b"time,c", b"TsFilX"):
        assert not holds_writers_bytes(name, head), head
    staged = f"_staging/{new_job_id()}/{task_dir_name(0, 0)}/{PRESTAGED_NAME}"
    assert holds_writers_bytes(staged, b"{")
