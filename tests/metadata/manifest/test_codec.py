"""Commit and checkpoint files as bytes: round trips, old files, damaged and hostile files."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from tests.metadata.manifest.helpers import SCHEMA, WIDER, created, declared, external, make, part
from tsfile_catalog.exceptions import CorruptManifestError
from tsfile_catalog.metadata.manifest import (
    BASE_FORMAT_VERSION,
    FORMAT_VERSION,
    AddPart,
    RemovePart,
    RemoveProperties,
    SetProperties,
    SetSchema,
    apply,
    commit_table_uuid,
    decode_commit,
    decode_commit_info,
    decode_snapshot,
    derived_table_uuid,
    encode_commit,
    encode_snapshot,
)


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


def test_a_commit_removing_properties_round_trips_as_format_2() -> None:
    # A format 1 reader would call the new action a damaged file: the bump makes it say
    # "upgrade tsfile-catalog" instead.
    commit = make(created(), [RemoveProperties(("k", "j"))], "UNSET TBLPROPERTIES")
    data = encode_commit(commit, SCHEMA)
    obj = json.loads(data)
    assert obj["format_version"] == 2
    assert obj["actions"] == [{"remove_properties": ["k", "j"]}]
    assert decode_commit(data, SCHEMA, source="v1") == commit


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


def test_external_part_round_trips_and_bumps_only_its_files_format_version() -> None:
    base = created(part("a.tsfile"))
    commit = make(base, [AddPart(external("s3://bucket/old/x.parquet"))], "ADD PART")
    data = encode_commit(commit, SCHEMA)
    # A version 1 reader would take the URL for a table path and the file for a TsFile:
    # the version makes it stop with "upgrade" instead.
    assert json.loads(data)["format_version"] == 2
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


def test_checkpoints_of_earlier_releases_without_completeness_still_decode() -> None:
    v0 = created()
    v1 = apply(v0, declared(v0, "a", 500))
    earlier = {k: v for k, v in v1.to_json().items() if k != "complete_until"}
    decoded = decode_snapshot(json.dumps(earlier).encode(), source="cp")
    assert decoded.complete_until is None
    assert decoded == replace(v1, complete_until=None)
    with pytest.raises(CorruptManifestError, match="complete_until"):
        decode_snapshot(json.dumps({**earlier, "complete_until": "soon"}).encode(), source="cp")
