"""rebase: which concurrent commits conflict, and which commute."""

from __future__ import annotations

import pytest

from tests.metadata.manifest.helpers import (
    SCHEMA,
    WIDER,
    created,
    landed_after,
    make,
    part,
    streamed,
)
from tsfile_catalog.exceptions import AlreadyCommittedError, CommitConflictError
from tsfile_catalog.metadata.manifest import (
    Action,
    AddPart,
    RemovePart,
    RemoveProperties,
    SetProperties,
    SetSchema,
    StreamTxn,
    rebase,
)
from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema


def test_appends_commute() -> None:
    read = created(part("a"))
    landed = landed_after(read, [AddPart(part("b"))], [RemovePart("a")])
    pending = [AddPart(part("c"))]
    assert rebase(pending, landed, read=read) == tuple(pending)


def test_nothing_landed_keeps_the_commit() -> None:
    read = created()
    assert rebase([AddPart(part("c"))], [], read=read) == (AddPart(part("c")),)


def test_same_path_added_concurrently_conflicts() -> None:
    read = created()
    landed = landed_after(read, [AddPart(part("x"))])
    with pytest.raises(CommitConflictError, match="'x' was already added by version 1"):
        rebase([AddPart(part("x"))], landed, read=read)


def test_append_conflicts_with_a_landed_schema_change() -> None:
    read = created(part("a"))
    landed = landed_after(read, [SetSchema(WIDER, 1), AddPart(part("b"))])
    with pytest.raises(CommitConflictError, match=r"version 1 \(WRITE\).*added column 'rain'"):
        rebase([AddPart(part("c"))], landed, read=read)


def test_same_schema_change_on_both_sides_is_dropped() -> None:
    read = created(part("a"))
    landed = landed_after(read, [SetSchema(WIDER, 1), AddPart(part("b"))])
    rebased = rebase([SetSchema(WIDER, 1), AddPart(part("c"))], landed, read=read)
    assert rebased == (AddPart(part("c")),)


def test_different_schema_change_conflicts() -> None:
    read = created(part("a"))
    other = TableSchema.of(
        "weather", [*SCHEMA.columns, Column("wind", DataType.FLOAT, Category.FIELD)]
    )
    landed = landed_after(read, [SetSchema(other, 1)])
    with pytest.raises(CommitConflictError, match="changed the table schema"):
        rebase([SetSchema(WIDER, 1), AddPart(part("c"))], landed, read=read)


def test_removing_an_already_removed_part_conflicts() -> None:
    read = created(part("a"), part("b"))
    landed = landed_after(read, [RemovePart("a")])
    with pytest.raises(CommitConflictError, match="'a' was already removed by version 1"):
        rebase([RemovePart("a")], landed, read=read)


def test_targeted_remove_commutes_with_appends() -> None:
    read = created(part("a"), part("b"))
    landed = landed_after(read, [AddPart(part("c"))])
    assert rebase([RemovePart("a")], landed, read=read) == (RemovePart("a"),)


@pytest.mark.parametrize(
    "concurrent",
    [[AddPart(part("c"))], [RemovePart("b")]],
    ids=["append", "remove"],
)
def test_overwrite_conflicts_with_any_part_change(concurrent: list[Action]) -> None:
    read = created(part("a"), part("b"))
    landed = landed_after(read, concurrent)
    pending = [RemovePart("a"), RemovePart("b"), AddPart(part("new"))]
    with pytest.raises(CommitConflictError, match="overwrite|already removed"):
        rebase(pending, landed, read=read, overwrite=True)


def test_overwrite_commutes_with_property_changes() -> None:
    read = created(part("a"))
    landed = landed_after(read, [SetProperties({"k": "v"})])
    pending = (RemovePart("a"), AddPart(part("new")))
    assert rebase(pending, landed, read=read, overwrite=True) == pending


def test_conflicting_property_values_conflict() -> None:
    read = created()
    landed = landed_after(read, [SetProperties({"k": "1", "j": "x"})])
    assert rebase([SetProperties({"j": "x"})], landed, read=read) == (SetProperties({"j": "x"}),)
    with pytest.raises(CommitConflictError, match="'k' to '1'"):
        rebase([SetProperties({"k": "2"})], landed, read=read)


def test_unsetting_a_property_set_concurrently_conflicts_both_ways() -> None:
    read = created()
    landed = landed_after(read, [SetProperties({"k": "1"})])
    with pytest.raises(CommitConflictError, match="'k' to '1' concurrently.*unsets it"):
        rebase([RemoveProperties(("k",))], landed, read=read)
    removed = landed_after(read, [RemoveProperties(("k",))])
    with pytest.raises(CommitConflictError, match="unset table property 'k'.*sets it to '2'"):
        rebase([SetProperties({"k": "2"})], removed, read=read)
    pending = (RemoveProperties(("k",)),)
    assert rebase(pending, removed, read=read) == pending, "two removals agree"
    assert rebase([SetProperties({"j": "x"})], removed, read=read) == (SetProperties({"j": "x"}),)


def test_concurrent_creators_with_one_schema_become_appends() -> None:
    landed = [make(None, [SetSchema(SCHEMA, 0), AddPart(part("a"))], "CREATE")]
    pending = [SetSchema(SCHEMA, 0), SetProperties({}), AddPart(part("b"))]
    assert rebase(pending, landed, read=None) == (SetProperties({}), AddPart(part("b")))


def test_concurrent_creators_with_different_schemas_conflict() -> None:
    landed = [make(None, [SetSchema(SCHEMA, 0)], "CREATE")]
    with pytest.raises(CommitConflictError, match="created concurrently.*schema"):
        rebase([SetSchema(WIDER, 0), AddPart(part("b"))], landed, read=None)


def test_a_pure_create_conflicts_with_a_concurrent_create() -> None:
    landed = [make(None, [SetSchema(SCHEMA, 0)], "CREATE")]
    with pytest.raises(CommitConflictError, match="created concurrently"):
        rebase([SetSchema(SCHEMA, 0), SetProperties({})], landed, read=None)


def test_rebase_refuses_commits_of_a_recreated_table() -> None:
    read = created(part("a"))
    recreated = created(part("b"))
    landed = landed_after(recreated, [AddPart(part("c"))])
    with pytest.raises(CommitConflictError, match="dropped and recreated concurrently"):
        rebase([RemovePart("a"), AddPart(part("x"))], landed, read=read, overwrite=True)


def test_rebase_commits_a_racing_batch_at_most_once() -> None:
    read = created(part("a"))
    # Two runs of batch 3 of q-1 prepared against the same snapshot: the first lands ...
    first = streamed(read, "run1", "q-1", 3)
    # ... so the second, rebased over it, is refused as already committed (no duplicate).
    with pytest.raises(AlreadyCommittedError, match="batch 3 of streaming query q-1"):
        rebase([AddPart(part("run2"))], [first], read=read, txn=StreamTxn("q-1", 3))
    # A later batch of the same query, or any batch of another query, still rebases (appends
    # commute), and so does a batch over a concurrent plain append.
    pending = [AddPart(part("next"))]
    assert rebase(pending, [first], read=read, txn=StreamTxn("q-1", 4)) == tuple(pending)
    assert rebase(pending, [first], read=read, txn=StreamTxn("q-2", 3)) == tuple(pending)
    plain = make(read, [AddPart(part("other"))])
    assert rebase(pending, [plain], read=read, txn=StreamTxn("q-1", 3)) == tuple(pending)
    # The refusal is a CommitConflictError, so callers that only know that still stop.
    assert issubclass(AlreadyCommittedError, CommitConflictError)
