from __future__ import annotations

import datetime as dt
import json
import uuid
from dataclasses import replace
from typing import Any

import pytest

from tests.factories import part_file, table_schema
from tsfile_catalog.exceptions import (
    AlreadyCommittedError,
    CommitConflictError,
    CorruptManifestError,
)
from tsfile_catalog.metadata.manifest import (
    BASE_FORMAT_VERSION,
    FORMAT_VERSION,
    Action,
    AddPart,
    Commit,
    CommitInfo,
    Operation,
    RemovePart,
    SetProperties,
    SetSchema,
    Snapshot,
    StreamTxn,
    already_committed,
    apply,
    commit_table_uuid,
    decode_commit,
    decode_commit_info,
    decode_snapshot,
    derived_table_uuid,
    encode_commit,
    encode_snapshot,
    prepare_commit,
    rebase,
    replay,
)
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema
from tsfile_catalog.metadata.stats import DeviceStats, FieldStats

SCHEMA = table_schema("weather", fields=[("temp", DataType.DOUBLE), ("day", DataType.DATE)])
WIDER = TableSchema.of("weather", [*SCHEMA.columns, Column("rain", DataType.INT64, Category.FIELD)])


def part(path: str, rows: int = 10, city: str = "paris") -> PartFile:
    return part_file(
        path,
        size_bytes=100 * rows,
        row_count=rows,
        min_time=0,
        max_time=rows - 1,
        devices=[DeviceStats((city,), rows, 0, rows - 1)],
        tag_names=["city"],
        fields={
            "temp": FieldStats(-1.5, 30.25, 0),
            "day": FieldStats(dt.date(2024, 1, 1), dt.date(2024, 3, 1), 2),
        },
    )


def make(base: Snapshot | None, actions: list[Action], operation: str = "WRITE") -> Commit:
    return prepare_commit(actions, base=base, timestamp_ms=1_000, operation=operation)


def created(*parts: PartFile) -> Snapshot:
    actions: list[Action] = [SetSchema(SCHEMA, 0), SetProperties({"owner": "ops"})]
    return apply(None, make(None, [*actions, *(AddPart(p) for p in parts)], "CREATE"))


def test_commit_round_trips_through_json() -> None:
    commit = make(
        created(part("a.tsfile")),
        [
            SetSchema(WIDER, 1),
            SetProperties({"k": "v"}),
            AddPart(part("b.tsfile")),
            RemovePart("a.tsfile", 10, 1000),
        ],
    )
    data = encode_commit(commit, SCHEMA)
    obj = json.loads(data)
    # No external part: written as version 1, which every older reader still reads.
    assert obj["format_version"] == BASE_FORMAT_VERSION
    assert obj["commit_info"]["operation"] == "WRITE"
    assert decode_commit(data, SCHEMA, source="v1") == commit


def test_commit_info_round_trips() -> None:
    info = CommitInfo(3, 5, "ADOPT", {"files": "2"}, "e", 2, 1, 10, 1, 5)
    assert CommitInfo.from_json(json.loads(json.dumps(info.to_json()))) == info


def test_data_change_is_recorded_only_when_false_and_round_trips() -> None:
    changing = CommitInfo(3, 5, "WRITE")
    assert "data_change" not in changing.to_json()  # byte-identical to earlier releases
    optimize = CommitInfo(4, 6, "OPTIMIZE", data_change=False)
    assert optimize.to_json()["data_change"] is False
    assert CommitInfo.from_json(json.loads(json.dumps(optimize.to_json()))) == optimize
    with pytest.raises(ValueError, match="data_change"):
        CommitInfo.from_json({**optimize.to_json(), "data_change": "no"})


def test_newer_format_version_is_refused() -> None:
    obj = make(None, [SetSchema(SCHEMA, 0)]).to_json(None)
    obj["format_version"] = FORMAT_VERSION + 1
    with pytest.raises(CorruptManifestError, match=f"format_version {FORMAT_VERSION + 1}.*upgrade"):
        decode_commit(json.dumps(obj).encode(), None, source="x.json")


@pytest.mark.parametrize("cut", [0, 1, 20, -1])
def test_truncated_commit_names_its_source(cut: int) -> None:
    data = encode_commit(make(None, [SetSchema(SCHEMA, 0), AddPart(part("a"))]), None)
    with pytest.raises(CorruptManifestError, match="00007.json"):
        decode_commit(data[:cut], None, source="00007.json")


@pytest.mark.parametrize(
    "path", ["../escape.tsfile", "/abs.tsfile", "s3://b/x.tsfile", "a/../../b"]
)
def test_part_paths_escaping_the_root_are_corrupt(path: str) -> None:
    obj = make(None, [SetSchema(SCHEMA, 0), AddPart(part("ok.tsfile"))]).to_json(None)
    obj["actions"][1]["add"]["path"] = path
    with pytest.raises(CorruptManifestError, match="v0.json"):
        decode_commit(json.dumps(obj).encode(), None, source="v0.json")


def test_snapshot_round_trips_through_a_checkpoint() -> None:
    base = created(part("a"), part("b"))
    snap = apply(base, make(base, [SetSchema(WIDER, 1), AddPart(part("c"))]))
    assert decode_snapshot(encode_snapshot(snap), source="cp") == snap


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


# -- rebase: the conflict rules ---------------------------------------------------------------


def landed_after(base: Snapshot, *batches: list[Action]) -> list[Commit]:
    out = []
    for actions in batches:
        commit = make(base, actions)
        base = apply(base, commit)
        out.append(commit)
    return out


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


# -- table identity ---------------------------------------------------------------------------


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


def _without_uuid(data: bytes) -> bytes:
    obj = json.loads(data)
    del obj["table_uuid"]
    return json.dumps(obj).encode()


def test_tables_written_before_table_uuids_get_a_stable_derived_one() -> None:
    v0_bytes = _without_uuid(encode_commit(make(None, [SetSchema(SCHEMA, 0)], "CREATE"), None))
    v0 = decode_commit(v0_bytes, None, source="v0")
    assert v0.table_uuid == derived_table_uuid(v0_bytes) == commit_table_uuid(v0_bytes, source="v0")
    assert decode_commit(v0_bytes, None, source="again").table_uuid == v0.table_uuid
    assert decode_commit_info(v0_bytes, source="v0") == (v0.info, v0.table_uuid)
    recreated = _without_uuid(encode_commit(make(None, [SetSchema(WIDER, 0)], "CREATE"), None))
    assert derived_table_uuid(recreated) != v0.table_uuid
    # later commits of such a table record nothing and still replay
    snapshot = apply(None, v0)
    c1_bytes = _without_uuid(encode_commit(make(snapshot, [AddPart(part("a"))]), SCHEMA))
    c1 = decode_commit(c1_bytes, SCHEMA, source="v1")
    assert c1.table_uuid is None
    assert decode_commit_info(c1_bytes, source="v1")[1] is None
    assert apply(snapshot, c1).table_uuid == v0.table_uuid
    # so do their checkpoints, given the identity from the oldest commit
    legacy_checkpoint = _without_uuid(encode_snapshot(apply(snapshot, c1)))
    with pytest.raises(CorruptManifestError, match="cp.json records no table_uuid"):
        decode_snapshot(legacy_checkpoint, source="cp.json")
    loaded = decode_snapshot(
        legacy_checkpoint, source="cp.json", legacy_table_uuid=lambda: v0.table_uuid
    )
    assert loaded == apply(snapshot, c1)


def test_replay_never_mixes_two_tables() -> None:
    old, new = created(part("a")), created(part("b"))
    with pytest.raises(CorruptManifestError, match=f"version 1 belongs to table {new.table_uuid}"):
        apply(old, make(new, [RemovePart("b")]))


def test_rebase_refuses_commits_of_a_recreated_table() -> None:
    read = created(part("a"))
    recreated = created(part("b"))
    landed = landed_after(recreated, [AddPart(part("c"))])
    with pytest.raises(CommitConflictError, match="dropped and recreated concurrently"):
        rebase([RemovePart("a"), AddPart(part("x"))], landed, read=read, overwrite=True)


# -- hostile files ----------------------------------------------------------------------------


def _damaged(doc: dict[str, Any], case: str) -> bytes:
    """``doc`` (a commit or checkpoint document) with one hostile change."""
    obj: Any = json.loads(json.dumps(doc))
    if case == "Infinity":
        adds = [a["add"] for a in obj.get("actions", []) if "add" in a] + obj.get("parts", [])
        adds[0]["size_bytes"] = float("inf")
        if "commit_info" in obj:
            obj["commit_info"]["rows_added"] = float("inf")
    elif case == "nested":
        depth = 100_000
        return b'{"format_version": 1, "commit_info": ' + b"[" * depth + b"]" * depth + b"}"
    elif case == "table_uuid":
        obj["table_uuid"] = {"not": "a uuid"}
    elif case == "format_version":
        obj["format_version"] = float("inf")
    else:
        obj = [obj]
    return json.dumps(obj).encode()


HOSTILE = ["Infinity", "nested", "table_uuid", "format_version", "not an object"]


@pytest.mark.parametrize("case", HOSTILE)
def test_hostile_manifest_files_are_corrupt_and_named(case: str) -> None:
    v0 = make(None, [SetSchema(SCHEMA, 0), AddPart(part("a"))], "CREATE")
    data = _damaged(v0.to_json(None), case)
    with pytest.raises(CorruptManifestError, match="00003.json"):
        decode_commit(data, None, source="00003.json")
    with pytest.raises(CorruptManifestError, match="00003.json"):
        decode_commit_info(data, source="00003.json")
    checkpoint = _damaged(apply(None, v0).to_json(), case)
    with pytest.raises(CorruptManifestError, match="00003.checkpoint.json"):
        decode_snapshot(checkpoint, source="00003.checkpoint.json", legacy_table_uuid=str)


def external(url: str) -> PartFile:
    return replace(
        part(url),
        format="parquet",
        external=True,
        read_options={"timeColumn": "ts", "timestampPrecision": "us"},
        partition_values={"city": "paris"},
    )


def test_external_part_round_trips_and_bumps_only_its_files_format_version() -> None:
    base = created(part("a.tsfile"))
    commit = make(base, [AddPart(external("s3://bucket/old/x.parquet"))], "ADD PART")
    data = encode_commit(commit, SCHEMA)
    # A version 1 reader would take the URL for a table path and the file for a TsFile:
    # the version makes it stop with "upgrade" instead.
    assert json.loads(data)["format_version"] == FORMAT_VERSION == 2
    decoded = decode_commit(data, SCHEMA, source="v1")
    assert decoded == commit
    added = decoded.actions[0]
    assert isinstance(added, AddPart)
    assert added.part.read_options == {"timeColumn": "ts", "timestampPrecision": "us"}
    assert added.part.partition_values == {"city": "paris"}
    snapshot = apply(base, commit)
    assert json.loads(encode_snapshot(snapshot))["format_version"] == 2
    assert decode_snapshot(encode_snapshot(snapshot), source="cp") == snapshot
    later = make(snapshot, [AddPart(part("b.tsfile"))])
    assert json.loads(encode_commit(later, SCHEMA))["format_version"] == BASE_FORMAT_VERSION


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
    obj = part("a.tsfile").to_json({})
    obj["path"], obj["external"] = path, external_flag
    with pytest.raises(CorruptManifestError, match=message):
        PartFile.from_json(obj, {})


def test_complete_until_is_an_optional_key_that_round_trips() -> None:
    plain = CommitInfo(3, 5, "WRITE")
    assert "complete_until" not in plain.to_json()  # byte-identical to earlier releases
    declared = CommitInfo(4, 6, "WRITE", complete_until=3_600_000)
    assert declared.to_json()["complete_until"] == 3_600_000
    assert CommitInfo.from_json(declared.to_json()) == declared
    with pytest.raises(ValueError, match="complete_until"):
        CommitInfo.from_json({**declared.to_json(), "complete_until": "soon"})


def declared(base: Snapshot, path: str, complete_until: int | None) -> Commit:
    return prepare_commit(
        [AddPart(part(path))],
        base=base,
        timestamp_ms=1_000,
        operation=Operation.WRITE,
        complete_until=complete_until,
    )


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


def test_checkpoints_of_earlier_releases_without_completeness_still_decode() -> None:
    v0 = created()
    v1 = apply(v0, declared(v0, "a", 500))
    earlier = {k: v for k, v in v1.to_json().items() if k != "complete_until"}
    decoded = decode_snapshot(json.dumps(earlier).encode(), source="cp")
    assert decoded.complete_until is None
    assert decoded == replace(v1, complete_until=None)
    with pytest.raises(CorruptManifestError, match="complete_until"):
        decode_snapshot(json.dumps({**earlier, "complete_until": "soon"}).encode(), source="cp")


# -- issue 11: the streaming sink's exactly-once record (StreamTxn) ---------------------------


def streamed(base: Snapshot, path: str, query: str, batch: int, max_time: int = 9) -> Commit:
    return prepare_commit(
        [AddPart(part(path))],
        base=base,
        timestamp_ms=1_000,
        operation=Operation.STREAMING_UPDATE,
        txn=StreamTxn(query, batch, max_time),
    )


def test_txn_is_an_optional_commit_info_key_that_round_trips() -> None:
    plain = CommitInfo(3, 5, "WRITE")
    assert "txn" not in plain.to_json()  # byte-identical to earlier releases
    info = CommitInfo(4, 6, "STREAMING UPDATE", txn=StreamTxn("q-1", 7, 3_600_000))
    assert info.to_json()["txn"] == {"app_id": "q-1", "version": 7, "max_time": 3_600_000}
    assert CommitInfo.from_json(info.to_json()) == info
    assert CommitInfo.from_json({**info.to_json(), "txn": {"app_id": "q", "version": 0}}).txn == (
        StreamTxn("q", 0)
    )
    with pytest.raises(ValueError, match="version"):
        CommitInfo.from_json({**info.to_json(), "txn": {"app_id": "q", "version": "7"}})
    with pytest.raises(ValueError, match="app_id"):
        CommitInfo.from_json({**info.to_json(), "txn": {"app_id": "", "version": 7}})


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
