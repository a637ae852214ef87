"""A snapshot's parts kept unbuilt (PartList over stored columns) behave exactly like the tuple
of those parts: replaying commits, selecting, equality, pickling and errors."""

from __future__ import annotations

import pickle
from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.factories import STRATEGY_SCHEMA, STRATEGY_UUID, commit_histories, commit_of
from tsfile_catalog.exceptions import CorruptManifestError
from tsfile_catalog.metadata.manifest import (
    AddPart,
    Commit,
    RemovePart,
    Snapshot,
    decode_commit,
    encode_commit,
    replay,
    written_format_version,
)
from tsfile_catalog.metadata.part_list import (
    PartList,
    has_external,
    part_paths,
    parts_not_in_format,
)
from tsfile_catalog.metadata.parts import PartFile, PendingPart


class _Store:
    """Parts kept as a list, counting which rows were built (a stand-in for a checkpoint)."""

    def __init__(self, parts: Sequence[PartFile]) -> None:
        self._parts = list(parts)
        self.built: set[int] = set()

    def __len__(self) -> int:
        return len(self._parts)

    def part(self, row: int) -> PartFile:
        self.built.add(row)
        return self._parts[row]

    def rows_of(self, paths: Collection[str]) -> dict[str, int]:
        return {p.path: row for row, p in enumerate(self._parts) if p.path in paths}

    def values(self, name: str) -> list[Any]:
        return [getattr(p, name) for p in self._parts]

    def column(self, name: str) -> Any:
        raise NotImplementedError


def _snapshot(parts: Sequence[PartFile]) -> Snapshot:
    return Snapshot(0, 1, STRATEGY_SCHEMA, 0, parts, {}, STRATEGY_UUID)


def _stub(path: str) -> PartFile:
    return PartFile(path, "tsfile", 1, 1, 0, 0, None)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(commit_histories())
def test_replay_over_stored_parts_equals_replay_over_the_tuple(
    history: tuple[list[PartFile], list[Commit]],
) -> None:
    base, commits = history
    store = _Store(base)
    lazy = replay(_snapshot(PartList.of(store)), commits)
    eager = replay(_snapshot(tuple(base)), commits)
    assert isinstance(lazy.parts, PartList)
    # Replaying reads paths only: no stored part is built for it.
    assert store.built == set()
    assert part_paths(lazy.parts) == [p.path for p in eager.parts]
    assert has_external(lazy.parts) == has_external(eager.parts)
    assert written_format_version(lazy.parts) == written_format_version(eager.parts)
    assert parts_not_in_format(lazy.parts, "tsfile") == parts_not_in_format(eager.parts, "tsfile")
    assert lazy == eager and lazy.parts == tuple(eager.parts) and tuple(eager.parts) == lazy.parts
    assert pickle.loads(pickle.dumps(lazy.parts)) == tuple(eager.parts)
    assert type(pickle.loads(pickle.dumps(lazy.parts))) is tuple


@settings(max_examples=100, deadline=None)
@given(commit_histories(), st.data())
def test_selecting_and_indexing_build_only_the_parts_asked_for(
    history: tuple[list[PartFile], list[Commit]], data: st.DataObject
) -> None:
    base, commits = history
    store = _Store(base)
    lazy = replay(_snapshot(PartList.of(store)), commits).parts
    eager = tuple(replay(_snapshot(tuple(base)), commits).parts)
    assert isinstance(lazy, PartList) and len(lazy) == len(eager)
    positions = sorted(data.draw(st.sets(st.integers(0, max(len(eager) - 1, 0)))))
    positions = [i for i in positions if i < len(eager)]
    chosen = lazy.select(positions)
    assert store.built == set()
    assert tuple(chosen) == tuple(eager[i] for i in positions)
    assert store.built == {lazy.rows[i] for i in positions if i < len(lazy.rows)}
    assert lazy[-1:] == eager[-1:] and lazy[::2] == eager[::2]
    if eager:
        assert lazy[-1] == eager[-1]
    with pytest.raises(IndexError):
        lazy[len(eager)]


@settings(max_examples=100, deadline=None)
@given(commit_histories(), st.data())
def test_excluding_keeps_the_rest_unbuilt_and_in_order(
    history: tuple[list[PartFile], list[Commit]], data: st.DataObject
) -> None:
    base, commits = history
    store = _Store(base)
    lazy = replay(_snapshot(PartList.of(store)), commits).parts
    eager = tuple(replay(_snapshot(tuple(base)), commits).parts)
    assert isinstance(lazy, PartList)
    dropped = sorted(data.draw(st.sets(st.integers(0, max(len(eager) - 1, 0)))))
    dropped = [i for i in dropped if i < len(eager)]
    rest = lazy.excluding(dropped)
    expected = tuple(p for i, p in enumerate(eager) if i not in set(dropped))
    assert store.built == set()
    assert len(rest) == len(expected)
    # Indexing (each end, negative too), slicing and iterating all see the same parts.
    assert [rest[i].path for i in range(len(rest))] == [p.path for p in expected]
    assert tuple(rest) == expected and rest[::3] == expected[::3]
    if expected:
        assert rest[-1] == expected[-1]
    with pytest.raises(IndexError):
        rest[len(expected)]
    # What is left can be narrowed again (a plan's pruned parts, pruned once more).
    again = [i for i in range(len(rest)) if i % 2 == 0]
    assert tuple(rest.excluding(again)) == tuple(p for i, p in enumerate(expected) if i % 2)
    assert part_paths(rest) == [p.path for p in expected]


def test_replay_refuses_a_second_add_and_a_missing_remove_over_stored_parts() -> None:
    a, b = _stub("a.tsfile"), _stub("b.tsfile")
    start = _snapshot(PartList.of(_Store([a, b])))
    with pytest.raises(CorruptManifestError, match="adds part 'a.tsfile'"):
        replay(start, [commit_of(1, [AddPart(a)])])
    with pytest.raises(CorruptManifestError, match="removes part 'c.tsfile'"):
        replay(start, [commit_of(1, [RemovePart("c.tsfile")])])
    with pytest.raises(CorruptManifestError, match="removes part 'a.tsfile'"):
        replay(
            start, [commit_of(1, [RemovePart("a.tsfile")]), commit_of(2, [RemovePart("a.tsfile")])]
        )
    # Removed, then added again: it moves to the end, as with a tuple.
    again = replay(
        start,
        [commit_of(1, [RemovePart("a.tsfile")]), commit_of(2, [AddPart(replace(a, size_bytes=2))])],
    )
    assert [p.path for p in again.parts] == ["b.tsfile", "a.tsfile"]
    assert again.parts[1].size_bytes == 2


@settings(max_examples=100, deadline=None)
@given(commit_histories(), st.booleans())
def test_parts_of_commit_files_are_built_only_when_read(
    history: tuple[list[PartFile], list[Commit]], stored: bool
) -> None:
    """Replaying commits read from their files keeps the parts they add as their checked
    JSON (over stored parts or a tuple), and building them gives the parts written."""
    base, commits = history
    read = [
        decode_commit(encode_commit(c, STRATEGY_SCHEMA), STRATEGY_SCHEMA, source="v.json")
        for c in commits
    ]
    start = PartList.of(_Store(base)) if stored else tuple(base)
    lazy = replay(_snapshot(start), read)
    eager = replay(_snapshot(tuple(base)), commits)
    parts = lazy.parts
    added = {a.part.path for c in commits for a in c.actions if isinstance(a, AddPart)}
    kept = {p for p in part_paths(eager.parts) if p in added}
    if kept:
        assert isinstance(parts, PartList)
        # Paths, formats and the external flag are read from the JSON: nothing built.
        assert part_paths(parts) == [p.path for p in eager.parts]
        assert has_external(parts) == has_external(eager.parts)
        assert {p.path for p in parts.tail if isinstance(p, PendingPart)} == kept
    assert lazy == eager and tuple(parts) == tuple(eager.parts)
    # Built once: reading a part again gives the same object.
    assert all(a is b for a, b in zip(parts, parts, strict=True))
    assert pickle.loads(pickle.dumps(parts)) == tuple(eager.parts)
