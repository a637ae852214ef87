"""Fuzzing the manifest decoders: whatever bytes stand in a commit file, a checkpoint, the
``_last_checkpoint`` hint or a catalog entry, reading them yields a valid object or the
project's :class:`CorruptManifestError` naming the file, never another exception. A decoded
commit or snapshot is checked as a whole: it encodes back to itself, and the decoders agree on
what they share (a part's device list and FIELD statistics are decoded when first read, so
damage there surfaces then, as the same error).

Random bytes alone rarely get past ``json.loads``, so most examples are structured mutations
of real documents (a table written by the project): a subtree replaced by another JSON value,
a key dropped, a list emptied, the bytes truncated.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.table.helpers import SCHEMA, WIDER, append_parts, log_file, part
from tsfile_catalog.exceptions import CorruptManifestError
from tsfile_catalog.metadata.manifest import (
    Commit,
    CommitInfo,
    Snapshot,
    commit_table_uuid,
    decode_commit,
    decode_commit_info,
    decode_snapshot,
    encode_commit,
    encode_snapshot,
)
from tsfile_catalog.metadata.schema import TableSchema
from tsfile_catalog.sql.registry import Registry, TableEntry
from tsfile_catalog.sql.statements import TableName
from tsfile_catalog.table import MANIFEST_DIR, clear_cache, open_table
from tsfile_catalog.table.log import LAST_CHECKPOINT

T = TypeVar("T")

LEGACY_UUID = "00000000-0000-4000-8000-000000000000"
SOURCE = "mem://t/_tsfile_manifest/00000000000000000003.json"

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=6)
)
json_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(obj: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every position in a JSON document, as the keys/indexes leading to it."""
    out = [at]
    if isinstance(obj, dict):
        for key, value in obj.items():
            out.extend(_paths(value, (*at, key)))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            out.extend(_paths(value, (*at, i)))
    return out


def _edit(obj: Any, at: tuple[Any, ...], change: Callable[[Any, Any], None]) -> Any:
    """``obj`` with ``change(parent, key)`` applied at position ``at`` (a copy)."""
    doc = json.loads(json.dumps(obj))
    if not at:
        return doc
    parent = doc
    for key in at[:-1]:
        parent = parent[key]
    change(parent, at[-1])
    return doc


@st.composite
def mutated(draw: st.DrawFn, valid: bytes) -> bytes:
    """``valid`` after one or a few structural mutations, or cut short, or replaced."""
    kind = draw(st.sampled_from(["mutate", "mutate", "mutate", "truncate", "bytes"]))
    if kind == "truncate":
        return valid[: draw(st.integers(min_value=0, max_value=len(valid) - 1))]
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    doc = json.loads(valid)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        at = draw(st.sampled_from(_paths(doc)))
        how = draw(st.sampled_from(["replace", "drop", "empty", "deep"]))
        if not at or how == "replace":
            value = draw(json_values)
            if not at:
                doc = value
                continue

            def put(parent: Any, key: Any, value: Any = value) -> None:
                parent[key] = value

            doc = _edit(doc, at, put)
        elif how == "drop":
            doc = _edit(doc, at, lambda parent, key: parent.pop(key))
        elif how == "empty":

            def empty(parent: Any, key: Any) -> None:
                parent[key] = type(parent[key])() if isinstance(parent[key], dict | list) else ""

            doc = _edit(doc, at, empty)
        else:  # nesting deeper than the JSON parser's stack
            doc = _edit(doc, at, lambda parent, key: parent.__setitem__(key, "DEEP"))
    text = json.dumps(doc)
    return text.replace('"DEEP"', "[" * 5_000 + "]" * 5_000).encode()


def damaged_bytes(valid: bytes) -> st.SearchStrategy[bytes]:
    """A binary file (a Parquet checkpoint) truncated or with a byte overwritten."""
    cut = st.integers(0, len(valid)).map(lambda n: valid[:n])
    flip = st.tuples(st.integers(0, len(valid) - 1), st.integers(0, 255)).map(
        lambda at: valid[: at[0]] + bytes([at[1]]) + valid[at[0] + 1 :]
    )
    return cut | flip


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Real commit files (create, append, schema change, overwrite) and a JSON checkpoint (the
    form earlier releases wrote and this one still reads; Parquet checkpoints are fuzzed in
    test_checkpoint_parquet.py)."""
    root = tmp_path_factory.mktemp("fuzzed")
    url = str(root)
    for i in range(9):
        append_parts(url, [part(f"p{i}.tsfile", start=i * 10)], SCHEMA)
    append_parts(url, [part("wide.tsfile", start=90)], WIDER, merge_schema=True)
    append_parts(url, [part("over.tsfile", start=100)], WIDER, overwrite=True, merge_schema=True)
    table = open_table(url)
    commits = {v: log_file(root, v).read_bytes() for v in (0, 1, 9, 10)}
    checkpoint = encode_snapshot(table.snapshot)
    return {"root": root, "commits": commits, "checkpoint": checkpoint, "schema": table.schema}


def _decoded(decode: Callable[[], T]) -> T | None:
    """What ``decode`` yields, or None when it raised the :class:`CorruptManifestError` naming
    the file (any other exception fails the test)."""
    try:
        return decode()
    except CorruptManifestError as e:
        assert SOURCE in str(e)
        return None


def _assert_lazy_stats_error(error: CorruptManifestError) -> None:
    """A part's device list, TAG and FIELD statistics decode lazily, when first read
    (metadata/lazy_stats.py): damage there is this error then, naming what is damaged and
    the file it came from."""
    assert re.match(
        r"a part's (device list|TAG statistics|FIELD statistics) in .* is corrupt", str(error)
    )
    assert SOURCE in str(error)


def _check_commit_decoders(blob: bytes, schema: TableSchema | None) -> Commit | None:
    """The three commit decoders on ``blob``: each yields a valid object or the error; a
    decoded commit survives its own round trip, and the decoders agree on what they share."""
    commit = _decoded(lambda: decode_commit(blob, schema, source=SOURCE))
    if commit is not None:
        assert isinstance(commit, Commit)
        try:
            again = decode_commit(encode_commit(commit, schema), schema, source=SOURCE)
        except CorruptManifestError as e:
            _assert_lazy_stats_error(e)
        else:
            assert again == commit, "a decoded commit encodes back to itself"
    decoded_info = _decoded(lambda: decode_commit_info(blob, source=SOURCE))
    if decoded_info is not None:
        info, recorded = decoded_info
        assert isinstance(info, CommitInfo)
        assert recorded is None or isinstance(recorded, str)
        if commit is not None:
            assert (info, recorded) == (commit.info, commit.table_uuid)
    elif commit is not None:
        raise AssertionError("decode_commit read a commit decode_commit_info refuses")
    table_uuid = _decoded(lambda: commit_table_uuid(blob, source=SOURCE))
    if table_uuid is not None:
        assert isinstance(table_uuid, str) and table_uuid
    return commit


def _check_snapshot_decoder(blob: bytes, **legacy: Callable[[], str]) -> Snapshot | None:
    snapshot = _decoded(lambda: decode_snapshot(blob, source=SOURCE, **legacy))
    if snapshot is not None:
        assert isinstance(snapshot, Snapshot)
        assert isinstance(snapshot.table_uuid, str) and snapshot.table_uuid
        try:
            again = decode_snapshot(encode_snapshot(snapshot), source=SOURCE)
        except CorruptManifestError as e:
            _assert_lazy_stats_error(e)
        else:
            assert again == snapshot, "a decoded snapshot encodes back to itself"
    return snapshot


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _schema_before(documents: dict[str, Any], version: int) -> TableSchema | None:
    if version == 0:
        return None
    return documents["schema"] if version == 10 else SCHEMA


@pytest.mark.parametrize("version", [0, 1, 9, 10])
def test_commit_decoders_yield_a_commit_for_the_real_files(
    documents: dict[str, Any], version: int
) -> None:
    """What the fuzzing below starts from decodes: it is not a test that only sees errors."""
    commit = _check_commit_decoders(
        documents["commits"][version], _schema_before(documents, version)
    )
    assert commit is not None and commit.version == version
    assert _check_snapshot_decoder(documents["checkpoint"]) is not None


def test_a_damaged_device_list_found_by_fuzzing_names_the_commit_file(
    documents: dict[str, Any],
) -> None:
    doc = json.loads(documents["commits"][0])
    doc["actions"][-1]["add"]["devices"] = [[]]
    commit = decode_commit(json.dumps(doc).encode(), None, source=SOURCE)
    with pytest.raises(CorruptManifestError, match=SOURCE):
        encode_commit(commit, None)


@FUZZ
@given(data=st.data(), version=st.sampled_from([0, 1, 9, 10]))
def test_commit_decoders_yield_a_commit_or_a_corrupt_manifest_error(
    documents: dict[str, Any], data: st.DataObject, version: int
) -> None:
    blob = data.draw(mutated(documents["commits"][version]))
    _check_commit_decoders(blob, _schema_before(documents, version))


@FUZZ
@given(data=st.data())
def test_checkpoint_decoder_yields_a_snapshot_or_a_corrupt_manifest_error(
    documents: dict[str, Any], data: st.DataObject
) -> None:
    blob = data.draw(mutated(documents["checkpoint"]))
    _check_snapshot_decoder(blob)
    _check_snapshot_decoder(blob, legacy_table_uuid=lambda: LEGACY_UUID)


@settings(max_examples=40, deadline=None)
@given(blob=st.binary(max_size=64) | json_values.map(lambda v: json.dumps(v).encode()))
def test_last_checkpoint_hint_is_never_trusted(documents: dict[str, Any], blob: bytes) -> None:
    """The hint is derived data for other tools: garbage there changes nothing we read."""
    root: Path = documents["root"]
    hint = root / MANIFEST_DIR / LAST_CHECKPOINT
    saved = hint.read_bytes()
    try:
        hint.write_bytes(blob)
        clear_cache()
        table = open_table(str(root))
        assert (table.version, [p.path for p in table.parts()]) == (10, ["over.tsfile"])
    finally:
        hint.write_bytes(saved)


@pytest.fixture(scope="module")
def registry_entry(tmp_path_factory: pytest.TempPathFactory) -> tuple[Registry, bytes, str]:
    registry = Registry(str(tmp_path_factory.mktemp("warehouse")))
    registry.create(TableName("t"), registry.default_location(TableName("t")), {"a": "b"})
    url = registry._url("default", "t")
    return registry, Path(url).read_bytes(), url


@FUZZ
@given(data=st.data())
def test_registry_entry_decodes_or_is_a_corrupt_manifest_error(
    registry_entry: tuple[Registry, bytes, str], data: st.DataObject
) -> None:
    registry, valid, url = registry_entry
    blob = data.draw(mutated(valid))
    Path(url).write_bytes(blob)
    try:
        entry = registry.get(TableName("t"))
    except CorruptManifestError as e:
        assert url in str(e)
    else:
        assert isinstance(entry, TableEntry)
    finally:
        Path(url).write_bytes(valid)


@pytest.mark.parametrize(
    "blob",
    [b"[" * 5_000 + b"]" * 5_000, b'{"format_version": 1, "created_ms": Infinity}'],
    ids=["nested-too-deeply", "infinite-integer"],
)
def test_registry_entry_found_by_fuzzing_is_a_corrupt_manifest_error(
    registry_entry: tuple[Registry, bytes, str], blob: bytes
) -> None:
    """Regressions: a RecursionError and an OverflowError escaped ``Registry.get``."""
    registry, valid, url = registry_entry
    entry = json.loads(valid)
    Path(url).write_bytes(blob.replace(b'"format_version": 1', json.dumps(entry)[1:-1].encode()))
    try:
        with pytest.raises(CorruptManifestError, match=url):
            registry.get(TableName("t"))
    finally:
        Path(url).write_bytes(valid)


@FUZZ
@given(data=st.data(), version=st.sampled_from([1, 9, 10]))
def test_a_damaged_log_file_opens_or_is_a_corrupt_manifest_error_naming_it(
    documents: dict[str, Any], data: st.DataObject, version: int
) -> None:
    """Through the whole read path (listing, checkpoint choice, replay): a damaged commit file
    loads or fails as corrupt naming it; a damaged checkpoint never fails a load."""
    root: Path = documents["root"]
    suffix = data.draw(st.sampled_from([".json", ".checkpoint.parquet"]))
    damaged = log_file(root, version, suffix)
    if not damaged.exists():
        damaged = log_file(root, version)
    saved = damaged.read_bytes()
    try:
        damaged.write_bytes(
            data.draw(mutated(saved) if suffix == ".json" else damaged_bytes(saved))
        )
        try:
            open_table(str(root), use_cache=False)
        except CorruptManifestError as e:
            assert damaged.name in str(e) and suffix == ".json"
    finally:
        damaged.write_bytes(saved)
