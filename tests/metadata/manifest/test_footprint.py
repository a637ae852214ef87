"""Row changes are Serializable: a commit that changed a row an UPDATE, MERGE or DELETE read
or wrote after its read version makes it conflict; appends and OPTIMIZE never do."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.factories import part_file
from tests.metadata.manifest.helpers import created, make
from tsfile_catalog.exceptions import CommitConflictError
from tsfile_catalog.metadata.manifest import (
    AddPart,
    Commit,
    Operation,
    RemovePart,
    Snapshot,
    apply,
    footprint_of,
    rebase,
    row_change_footprint,
)
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.stats import DeviceStats


def rows(path: str, *devices: tuple[str, int, int]) -> PartFile:
    """A part holding each (city, first time, last time)."""
    stats = [DeviceStats((city,), hi - lo + 1, lo, hi) for city, lo, hi in devices]
    return part_file(
        path,
        row_count=sum(d.row_count for d in stats),
        min_time=min(d.min_time for d in stats),
        max_time=max(d.max_time for d in stats),
        devices=stats,
        tag_names=["city"],
    )


def landed(base: Snapshot, *commits: tuple[str, list[AddPart | RemovePart], bool]) -> list[Commit]:
    out = []
    for operation, actions, data_change in commits:
        commit = make(base, list(actions), operation)
        if not data_change:
            commit = replace(commit, info=replace(commit.info, data_change=False))
        base = apply(base, commit)
        out.append(commit)
    return out


def row_change(
    read: Snapshot, actions: list[AddPart | RemovePart], operation: Operation
) -> tuple[list[AddPart | RemovePart], dict[str, object]]:
    return actions, {"read": read, "footprint": row_change_footprint(actions, read, operation)}


def test_an_update_appending_a_key_conflicts_with_a_concurrent_update_of_it() -> None:
    # Catalog.sql's and Table.update's UPDATE of a last table: append the new row, remove none.
    read = created(rows("old", ("paris", 0, 9)))
    other = landed(read, ("UPDATE", [AddPart(rows("theirs", ("paris", 3, 3)))], True))
    pending, kwargs = row_change(read, [AddPart(rows("mine", ("paris", 3, 3)))], Operation.UPDATE)
    with pytest.raises(
        CommitConflictError,
        match=r"version 1 \(UPDATE\) added rows of device \(city='paris'\) at times 3\.\.3 "
        r"that this row change read or writes, after the version it read \(0\)",
    ):
        rebase(pending, other, **kwargs)  # type: ignore[arg-type]


def test_a_merge_insert_conflicts_with_a_concurrent_insert_of_the_same_key() -> None:
    read = created(rows("old", ("paris", 0, 9)))
    other = landed(read, ("WRITE", [AddPart(rows("theirs", ("oslo", 50, 50)))], True))
    pending, kwargs = row_change(read, [AddPart(rows("mine", ("oslo", 50, 50)))], Operation.MERGE)
    with pytest.raises(CommitConflictError, match=r"device \(city='oslo'\) at times 50\.\.50"):
        rebase(pending, other, **kwargs)  # type: ignore[arg-type]


def test_a_delete_conflicts_with_a_concurrent_change_of_a_row_it_removed() -> None:
    old = rows("old", ("paris", 0, 9))
    read = created(old)
    other = landed(read, ("UPDATE", [AddPart(rows("theirs", ("paris", 5, 5)))], True))
    pending, kwargs = row_change(
        read, [RemovePart("old"), AddPart(rows("kept", ("paris", 0, 4)))], Operation.DELETE
    )
    with pytest.raises(CommitConflictError, match=r"added rows of device \(city='paris'\)"):
        rebase(pending, other, **kwargs)  # type: ignore[arg-type]


def test_an_update_conflicts_with_a_concurrent_delete_of_its_rows() -> None:
    # The UPDATE appends key (paris, 3); a concurrent DELETE removed the part holding it: the
    # update must not bring the deleted row back.
    read = created(rows("old", ("paris", 0, 9)))
    other = landed(read, ("DELETE", [RemovePart("old")], True))
    pending, kwargs = row_change(read, [AddPart(rows("mine", ("paris", 3, 3)))], Operation.UPDATE)
    with pytest.raises(CommitConflictError, match=r"version 1 \(DELETE\) removed rows"):
        rebase(pending, other, **kwargs)  # type: ignore[arg-type]


def test_rows_elsewhere_do_not_conflict() -> None:
    read = created(rows("old", ("paris", 0, 9), ("oslo", 0, 9)))
    other = landed(
        read,
        # another device, same times; the same device, later times (a stream appending)
        ("WRITE", [AddPart(rows("a", ("oslo", 3, 3)))], True),
        ("STREAMING UPDATE", [AddPart(rows("b", ("paris", 10, 20)))], True),
    )
    pending, kwargs = row_change(read, [AddPart(rows("mine", ("paris", 3, 3)))], Operation.UPDATE)
    assert rebase(pending, other, **kwargs) == tuple(pending)  # type: ignore[arg-type]


def test_optimize_never_conflicts_with_a_row_change() -> None:
    # OPTIMIZE rewrites the rows the UPDATE read, unchanged (data_change = False).
    read = created(rows("old", ("paris", 0, 9)))
    other = landed(
        read, ("OPTIMIZE", [RemovePart("old"), AddPart(rows("compact", ("paris", 0, 9)))], False)
    )
    pending, kwargs = row_change(read, [AddPart(rows("mine", ("paris", 3, 3)))], Operation.UPDATE)
    assert rebase(pending, other, **kwargs) == tuple(pending)  # type: ignore[arg-type]


def test_appends_keep_commuting() -> None:
    """WriteSerializable: an append is no row change, whatever rows landed meanwhile."""
    read = created(rows("old", ("paris", 0, 9)))
    assert (
        row_change_footprint([AddPart(rows("x", ("paris", 3, 3)))], read, Operation.WRITE) is None
    )
    assert (
        row_change_footprint([AddPart(rows("x", ("paris", 3, 3)))], None, Operation.UPDATE) is None
    )


def test_a_part_without_device_lists_meets_every_device_in_its_time_range() -> None:
    read = created(rows("old", ("paris", 0, 9)))
    many = part_file("many", row_count=100, min_time=2, max_time=8, devices=None)
    other = landed(read, ("WRITE", [AddPart(many)], True))
    pending, kwargs = row_change(read, [AddPart(rows("mine", ("paris", 3, 3)))], Operation.UPDATE)
    with pytest.raises(CommitConflictError, match=r"added rows at times 3\.\.3"):
        rebase(pending, other, **kwargs)  # type: ignore[arg-type]
    outside = part_file("later", row_count=100, min_time=20, max_time=30, devices=None)
    assert footprint_of([rows("mine", ("paris", 3, 3))]).touched_by(outside) is None


def test_a_device_recorded_before_a_tag_was_added_is_the_same_device() -> None:
    footprint = footprint_of([rows("mine", ("paris", 3, 3))])
    widened = part_file(
        "w", row_count=1, min_time=3, max_time=3, devices=[DeviceStats(("paris", None), 1, 3, 3)]
    )
    assert footprint.touched_by(widened) is not None


@given(
    mine=st.lists(
        st.tuples(st.sampled_from("ab"), st.integers(0, 20), st.integers(0, 5)), min_size=1
    ),
    theirs=st.tuples(st.sampled_from("abc"), st.integers(0, 20), st.integers(0, 5)),
)
def test_touched_exactly_when_some_device_range_meets(
    mine: list[tuple[str, int, int]], theirs: tuple[str, int, int]
) -> None:
    """The footprint misses no (device, time) its parts share with another part's ranges."""
    parts = [rows(f"m{i}", (city, lo, lo + span)) for i, (city, lo, span) in enumerate(mine)]
    city, lo, span = theirs
    other = rows("o", (city, lo, lo + span))
    meets = any(c == city and a <= lo + span and lo <= a + s for c, a, s in mine)
    assert (footprint_of(parts).touched_by(other) is not None) == meets
