"""drop_parts never empties a table by accident: an empty pattern, or a glob or folder that
matches every part, is refused unless ``all_parts=True`` asks for it (SQL refuses ``DROP PART
''`` too)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.table.helpers import append_n, paths
from tsfile_catalog.exceptions import InvalidCommitError
from tsfile_catalog.table import drop_parts, open_table


@pytest.fixture
def url(tmp_path: Path) -> str:
    """Three parts (versions 0-2) in folders ``a/`` (two) and ``b/`` (one)."""
    root = str(tmp_path / "t")
    append_n(root, 2, prefix="a/p")
    append_n(root, 1, prefix="b/p")
    return root


@pytest.mark.parametrize("pattern", ["", "   "])
def test_an_empty_pattern_is_refused(url: str, pattern: str) -> None:
    with pytest.raises(InvalidCommitError, match=r"DROP PART: the path or glob is empty") as e:
        drop_parts(url, pattern)
    assert "all_parts=True" in str(e.value) and url in str(e.value)
    assert open_table(url).version == 2


@pytest.mark.parametrize("pattern", ["*", "*/*.tsfile", "**", "{url}", "{url}/*/*"])
def test_a_pattern_matching_every_part_is_refused(url: str, pattern: str) -> None:
    pattern = pattern.format(url=url)
    with pytest.raises(InvalidCommitError, match="matches every part") as e:
        drop_parts(url, pattern)
    assert repr(pattern) in str(e.value) and "all_parts=True" in str(e.value)
    assert len(open_table(url).parts()) == 3


def test_all_parts_drops_every_part_on_request(url: str) -> None:
    version = drop_parts(url, "", all_parts=True)
    table = open_table(url)
    assert (version, table.version, table.parts()) == (3, 3, [])
    assert table.history(limit=1)[0].parts_removed == 3
    # Time travel still reads them.
    assert paths(open_table(url, version=2)) == ["a/p0.tsfile", "a/p1.tsfile", "b/p0.tsfile"]


def test_all_parts_with_a_pattern_drops_what_it_matches(url: str) -> None:
    drop_parts(url, "a/", all_parts=True)
    assert paths(open_table(url)) == ["b/p0.tsfile"]
    # A glob over the rest is refused; the last part named by its path is explicit enough
    # (re-adding a changed external file drops it first).
    with pytest.raises(InvalidCommitError, match="matches every part"):
        drop_parts(url, "b/*")
    drop_parts(url, "b/p0.tsfile")
    assert open_table(url).parts() == []


def test_a_pattern_matching_some_parts_needs_no_flag(url: str) -> None:
    drop_parts(url, "a/*")
    assert paths(open_table(url)) == ["b/p0.tsfile"]
