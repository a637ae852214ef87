"""Part paths: relative for the table's own parts, absolute URLs for external ones."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.factories import part_file
from tsfile_catalog.exceptions import CorruptManifestError
from tsfile_catalog.metadata.parts import (
    PLAIN_PATH,
    PartFile,
    PendingPart,
    check_relative_path,
    validate_relative_path,
)


@pytest.mark.parametrize(
    ("path", "external_flag", "message"),
    [
        ("old/x.parquet", True, "must be an absolute URL"),
        ("/data/x.tsfile", False, "must be relative"),
        ("s3://b/x.tsfile", False, "must be relative"),
    ],
)
def test_part_paths_are_absolute_exactly_for_external_parts(
    path: str, external_flag: bool, message: str
) -> None:
    obj = part_file("a.tsfile").to_json({})
    obj["path"], obj["external"] = path, external_flag
    with pytest.raises(CorruptManifestError, match=message):
        PartFile.from_json(obj, {})


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab.-_/:\\\n 0", max_size=8))
def test_plain_path_shortcut_accepts_only_paths_the_full_check_accepts(path: str) -> None:
    # validate_relative_path skips the full check for paths its pattern calls plain.
    if re.fullmatch(PLAIN_PATH, path):
        assert check_relative_path(path) == path
    try:
        shortcut = validate_relative_path(path)
    except CorruptManifestError:
        shortcut = None
    try:
        full = check_relative_path(path)
    except CorruptManifestError:
        full = None
    assert shortcut == full


@pytest.mark.parametrize("path", ["a/../b.tsfile", "a//b.tsfile", "./a.tsfile", "../a.tsfile"])
def test_paths_near_plain_ones_still_get_the_full_check(path: str) -> None:
    with pytest.raises(CorruptManifestError, match="part path"):
        validate_relative_path(path)


def test_tag_statistics_decode_when_first_read_and_name_the_file() -> None:
    obj = part_file("a.tsfile").to_json({})
    obj["tags"] = {"device": {"min": 1, "max": "d9"}}
    part = PartFile.from_json(obj, {}, source="v1.json")
    with pytest.raises(CorruptManifestError, match=r"TAG statistics in file v1\.json"):
        part.tags["device"]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("path", "../escape.tsfile"),
        ("size_bytes", "big"),
        ("row_count", None),
        ("tags", [1]),
        ("devices", 3),
        ("sequence", "x"),
        ("read_options", 1),
    ],
)
def test_a_pending_part_is_checked_when_read_not_when_built(key: str, value: object) -> None:
    """A commit file's part is checked as it is read (what decoding it would raise), so a
    damaged file still fails when it is opened; building it later cannot fail."""
    obj = part_file("a.tsfile").to_json({})
    obj[key] = value
    with pytest.raises((CorruptManifestError, ValueError, TypeError, AttributeError)) as eager:
        PartFile.from_json(obj, {})
    with pytest.raises(eager.type):
        PendingPart.of_json(obj, {})


def test_a_pending_part_builds_the_part_its_json_records() -> None:
    written = part_file("a.tsfile")
    for part in (written, replace(written, sequence=3)):
        pending = PendingPart.of_json(part.to_json({}), {}, source="v1.json")
        assert (pending.path, pending.format, pending.external) == ("a.tsfile", "tsfile", False)
        assert (pending.row_count, pending.min_time, pending.max_time) == (
            part.row_count,
            part.min_time,
            part.max_time,
        )
        assert pending.part() == part and pending.part() is pending.part()
        assert pending.part().sequence == part.sequence
