"""Stamping commits and replaying them into snapshots."""

from __future__ import annotations

import json
import uuid

import pytest

from tests.metadata.manifest.helpers import SCHEMA, WIDER, created, declared, make, part, streamed
from tsfile_catalog.exceptions import CorruptManifestError
from tsfile_catalog.metadata.manifest import (
    Action,
    AddPart,
    Commit,
    CommitInfo,
    Operation,
    RemovePart,
    RemoveProperties,
    SetProperties,
    SetSchema,
    Snapshot,
    StreamTxn,
    already_committed,
    apply,
    decode_commit,
    decode_snapshot,
    encode_commit,
    encode_snapshot,
    prepare_commit,
    replay,
)


def test_apply_builds_the_snapshot() -> None:
    v0 = created(part("a"), part("b"))
    assert (v0.version, v0.schema, v0.schema_id) == (0, SCHEMA, 0)
    assert [p.path for p in v0.parts] == ["a", "b"]
    assert all(p.added_version == 0 and p.schema_id == 0 for p in v0.parts)
    assert v0.properties == {"owner": "ops"}
    v1 = apply(v0, make(v0, [RemovePart("a"), AddPart(part("c")), SetProperties({"k": "v"})]))
    assert [p.path for p in v1.parts] == ["b", "c"]
    assert v1.properties == {"owner": "ops", "k": "v"}
    assert v1.parts[1].added_version == 1


def test_removing_properties_keeps_the_others_and_ignores_absent_keys() -> None:
    v0 = created()
    c1 = make(v0, [SetProperties({"k": "v", "j": "w"})])
    v1 = apply(v0, c1)
    c2 = make(v1, [RemoveProperties(("k", "absent"))])
    v2 = apply(v1, c2)
    assert v2.properties == {"owner": "ops", "j": "w"}
    assert v1.properties["k"] == "v", "the version before keeps it (time travel)"
    assert replay(v0, [c1, c2]).properties == v2.properties


def test_replay_equals_repeated_apply() -> None:
    v0 = created(part("a"))
    c1 = make(v0, [AddPart(part("b"))])
    v1 = apply(v0, c1)
    c2 = make(v1, [RemovePart("a"), SetSchema(WIDER, 1)])
    assert replay(v0, [c1, c2]) == apply(v1, c2)


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        ([AddPart(part("a"))], "adds part 'a'"),
        ([RemovePart("zzz")], "removes part 'zzz'"),
    ],
)
def test_apply_rejects_inconsistent_commits(actions: list[Action], message: str) -> None:
    v0 = created(part("a"))
    with pytest.raises(CorruptManifestError, match=message):
        apply(v0, make(v0, actions))


def test_apply_rejects_a_version_gap_and_a_schemaless_create() -> None:
    v0 = created()
    gap = Commit(CommitInfo(5, 1, "WRITE"), ())
    with pytest.raises(CorruptManifestError, match="expected version 1"):
        apply(v0, gap)
    with pytest.raises(CorruptManifestError, match="without a schema"):
        apply(None, make(None, [AddPart(part("a"))]))


def test_prepare_commit_stamps_versions_ids_and_counts() -> None:
    v0 = created(part("a"))
    late = Snapshot(0, 5_000, SCHEMA, 0, v0.parts, {}, v0.table_uuid)
    commit = prepare_commit(
        [SetSchema(WIDER, 99), AddPart(part("b", rows=7)), RemovePart("a", 10)],
        base=late,
        timestamp_ms=1_000,
        operation="OVERWRITE",
        read_version=0,
    )
    info = commit.info
    assert (info.version, info.read_version) == (1, 0)
    assert info.timestamp_ms == 5_001, "commit timestamps must strictly increase"
    assert (info.parts_added, info.rows_added, info.parts_removed, info.rows_removed) == (
        1,
        7,
        1,
        10,
    )
    assert commit.actions[0] == SetSchema(WIDER, 1)
    added = commit.actions[1]
    assert isinstance(added, AddPart)
    assert (added.part.added_version, added.part.schema_id) == (1, 1)


def test_version_zero_assigns_a_table_uuid_that_every_commit_and_checkpoint_carry() -> None:
    v0 = created(part("a"))
    assert str(uuid.UUID(v0.table_uuid)) == v0.table_uuid
    assert created(part("a")).table_uuid != v0.table_uuid, "each created table is another"
    c1 = make(v0, [AddPart(part("b"))])
    assert json.loads(encode_commit(c1, SCHEMA))["table_uuid"] == v0.table_uuid
    v1 = apply(v0, c1)
    assert v1.table_uuid == v0.table_uuid
    checkpoint = encode_snapshot(v1)
    assert json.loads(checkpoint)["table_uuid"] == v0.table_uuid
    assert decode_snapshot(checkpoint, source="cp").table_uuid == v0.table_uuid
    given = make(None, [SetSchema(SCHEMA, 0)]).table_uuid
    chosen = prepare_commit(
        [SetSchema(SCHEMA, 0)],
        base=None,
        timestamp_ms=1,
        operation="CREATE",
        new_table_uuid=given,
    )
    assert chosen.table_uuid == given


def test_replay_never_mixes_two_tables() -> None:
    old, new = created(part("a")), created(part("b"))
    with pytest.raises(CorruptManifestError, match=f"version 1 belongs to table {new.table_uuid}"):
        apply(old, make(new, [RemovePart("b")]))


def test_snapshot_carries_the_largest_declaration_so_checkpoints_keep_it() -> None:
    v0 = created()
    assert v0.complete_until is None
    assert "complete_until" not in v0.to_json()  # checkpoints without declarations unchanged
    v1 = apply(v0, declared(v0, "a", 500))
    v2 = apply(v1, declared(v1, "b", 300))  # a smaller declaration never lowers it
    v3 = apply(v2, declared(v2, "c", None))
    assert (v1.complete_until, v2.complete_until, v3.complete_until) == (500, 500, 500)
    assert v3.to_json()["complete_until"] == 500
    assert decode_snapshot(encode_snapshot(v3), source="cp") == v3
    # A checkpoint replay continues from: later commits extend what it carries.
    assert apply(v3, declared(v3, "d", 900)).complete_until == 900


def test_snapshot_keeps_the_latest_batch_per_query_through_checkpoints() -> None:
    v0 = created()
    assert "transactions" not in v0.to_json()  # checkpoints without streams unchanged
    v1 = apply(v0, streamed(v0, "a", "q-1", 0, max_time=5))
    v2 = apply(v1, streamed(v1, "b", "q-2", 4))
    v3 = apply(v2, streamed(v2, "c", "q-1", 1, max_time=8))
    v4 = apply(v3, make(v3, [AddPart(part("d"))]))  # a batch write keeps the record
    assert dict(v4.transactions) == {"q-1": StreamTxn("q-1", 1, 8), "q-2": StreamTxn("q-2", 4, 9)}
    assert decode_snapshot(encode_snapshot(v4), source="cp") == v4
    decoded = decode_commit(encode_commit(streamed(v4, "e", "q-2", 5), SCHEMA), SCHEMA, source="c")
    assert decoded.info.operation == Operation.STREAMING_UPDATE
    assert decoded.info.txn == StreamTxn("q-2", 5, 9)
    assert already_committed(v4.transactions, StreamTxn("q-1", 1))
    assert already_committed(v4.transactions, StreamTxn("q-1", 0))
    assert not already_committed(v4.transactions, StreamTxn("q-1", 2))
    assert not already_committed(v4.transactions, StreamTxn("q-3", 0))
