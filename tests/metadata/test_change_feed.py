"""The change data feed's pure decisions: which parts each commit is compared by, and which
ranges the log can answer."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.factories import part_file
from tsfile_catalog.exceptions import OptionError, VersionNotFoundError
from tsfile_catalog.metadata.change_feed import check_range, oldest_readable, plan_commit
from tsfile_catalog.metadata.parts import DeviceStats, PartFile


def _part(path: str, city: str, lo: int, hi: int, sequence: int) -> PartFile:
    part = part_file(
        path,
        row_count=hi - lo + 1,
        min_time=lo,
        max_time=hi,
        devices=[DeviceStats((city,), hi - lo + 1, lo, hi)],
        tag_names=["city"],
    )
    return replace(part, sequence=sequence)


A = _part("a.tsfile", "bj", 0, 9, 1)
B = _part("b.tsfile", "sh", 0, 9, 2)  # another device: shares no key with bj parts
C = _part("c.tsfile", "bj", 20, 29, 3)  # bj, later times
NEW = _part("n.tsfile", "bj", 5, 6, 4)  # replaces bj keys of A


def _plan(before: list[PartFile], after: list[PartFile], key: str = "last", **kwargs: object):
    options = {"data_change": True, "before_key": key, "after_key": key, **kwargs}
    return plan_commit(7, 1000, before=before, after=after, **options)  # type: ignore[arg-type]


def test_a_last_table_compares_the_parts_sharing_a_key_with_the_commits() -> None:
    planned = _plan([A, B, C], [A, B, C, NEW])
    # An append outranking what it may replace: its own rows are the keys' rows after it.
    assert planned.before == (A,) and planned.after == (NEW,)
    assert planned.touched == {"n.tsfile"}
    restored = replace(NEW, sequence=0)  # RESTORE bringing back an older write's part
    planned = _plan([A, B, C], [A, B, C, restored])
    assert planned.before == (A,) and planned.after == (A, restored)
    rewritten = _part("a2.tsfile", "bj", 0, 9, 1)  # a DELETE's rewrite of A
    planned = _plan([A, B, C, NEW], [rewritten, B, C, NEW])
    assert planned.before == (A, NEW) and planned.after == (rewritten, NEW)


def test_a_keep_table_compares_the_removed_parts_with_the_added() -> None:
    rewritten = _part("a2.tsfile", "bj", 0, 9, 1)
    planned = _plan([A, B, C], [rewritten, B, C], key="keep")
    assert planned.before == (A,) and planned.after == (rewritten,)


def test_a_commit_that_changes_no_data_or_no_part_is_empty() -> None:
    assert _plan([A], [A]).empty
    assert _plan([A], [_part("o.tsfile", "bj", 0, 9, 1)], data_change=False).empty


def test_a_key_mode_change_compares_the_whole_table() -> None:
    planned = _plan([A, NEW], [A, NEW], before_key="keep", after_key="last")
    assert planned.before == (A, NEW) and planned.after == (A, NEW)


def test_the_oldest_readable_version_follows_expiry_and_vacuum() -> None:
    assert oldest_readable(0, None) == 0
    assert oldest_readable(4, None) == 5  # version 4's changes need version 3
    assert oldest_readable(0, 6) == 7
    assert oldest_readable(9, 3) == 10


def test_ranges_the_log_cannot_answer_are_refused() -> None:
    with pytest.raises(VersionNotFoundError, match="oldest version whose changes can be read is 5"):
        check_range(3, 8, oldest=5, latest=9, location="t")
    with pytest.raises(OptionError, match="startingVersion 12 is after the latest version, 9"):
        check_range(12, 12, oldest=0, latest=9, location="t")
    with pytest.raises(OptionError, match="ends at version 2, before it starts"):
        check_range(3, 2, oldest=0, latest=9, location="t")
    check_range(5, 9, oldest=5, latest=9, location="t")
