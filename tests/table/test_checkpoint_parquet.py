"""Parquet checkpoints: lossless against the JSON model, robust to any bytes, and read in
place of (and next to) the JSON checkpoints earlier releases wrote."""

from __future__ import annotations

import dataclasses
import json
import pickle
from dataclasses import replace
from pathlib import Path
from unittest import mock

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.factories import (
    STRATEGY_FIELDS,
    STRATEGY_SCHEMA,
    STRATEGY_UUID,
    commit_histories,
    snapshots,
)
from tests.table.helpers import SCHEMA, append_n, log_file, part, wait_until_older_than_now
from tsfile_catalog.exceptions import CorruptManifestError
from tsfile_catalog.metadata.manifest import (
    Commit,
    Snapshot,
    decode_snapshot,
    encode_snapshot,
    replay,
)
from tsfile_catalog.metadata.part_list import PartList
from tsfile_catalog.metadata.parts import DeviceStats, FieldStats, PartFile, TagStats
from tsfile_catalog.metadata.scan import PartWindow, plan_scan
from tsfile_catalog.table import MANIFEST_DIR, append_parts, clear_cache, open_table
from tsfile_catalog.table.checkpoint_parquet import (
    ROW_GROUP_PARTS,
    decode_parquet_snapshot,
    encode_parquet_snapshot,
)
from tsfile_catalog.table.part_index import PartIndex

_FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _materialised(snapshot: Snapshot) -> Snapshot:
    """Every lazily decoded statistic decoded (and so checked)."""
    for p in snapshot.parts:
        tuple(p.devices or ())
        dict(p.fields)
    return snapshot


def test_the_strategies_draw_every_field_of_the_model() -> None:
    # A field added to the model (by any change) must be drawn by tests/factories.py, so the
    # round-trip properties below cover it.
    for cls in (PartFile, DeviceStats, TagStats, FieldStats, Snapshot):
        names = {f.name for f in dataclasses.fields(cls)}
        assert names == STRATEGY_FIELDS[cls.__name__], f"draw the new fields of {cls.__name__}"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snapshots())
def test_parquet_checkpoint_round_trips_every_snapshot_like_json(snapshot: Snapshot) -> None:
    decoded = decode_parquet_snapshot(encode_parquet_snapshot(snapshot), source="cp.parquet")
    assert decoded == snapshot
    # Byte-equal JSON: nothing the JSON form carries is lost or changed on the way.
    assert encode_snapshot(decoded) == encode_snapshot(snapshot)
    via_json = decode_snapshot(encode_snapshot(snapshot), source="cp.json")
    assert decode_parquet_snapshot(encode_parquet_snapshot(via_json), source="cp") == via_json
    # Re-encoding a snapshot read from Parquet (statistics still undecoded) is stable.
    again = decode_parquet_snapshot(encode_parquet_snapshot(decoded), source="cp2.parquet")
    assert encode_snapshot(again) == encode_snapshot(snapshot)


@_FUZZ
@given(st.binary(max_size=2_000))
def test_any_bytes_decode_to_a_snapshot_or_a_corrupt_error_naming_the_file(data: bytes) -> None:
    try:
        _materialised(decode_parquet_snapshot(data, source="00000000000000000010.cp.parquet"))
    except CorruptManifestError as e:
        assert "00000000000000000010.cp.parquet" in str(e)


_SAMPLE = encode_parquet_snapshot(
    Snapshot(
        version=10,
        timestamp_ms=5,
        schema=SCHEMA,
        schema_id=0,
        parts=(part("a.tsfile"), part("b.tsfile", city="oslo", start=7)),
        properties={"k": "v"},
        table_uuid="5f0c9a3e-8d1b-4c2e-9a57-2b6f1e0d4c3a",
    )
)


@_FUZZ
@given(
    st.lists(
        st.tuples(st.integers(min_value=0, max_value=len(_SAMPLE) - 1), st.integers(0, 255)),
        min_size=1,
        max_size=8,
    ),
    st.integers(min_value=0, max_value=len(_SAMPLE)),
)
def test_damaged_checkpoints_decode_or_fail_naming_the_file(
    flips: list[tuple[int, int]], keep: int
) -> None:
    data = bytearray(_SAMPLE[:keep] if keep < len(_SAMPLE) // 2 else _SAMPLE)
    for at, value in flips:
        if at < len(data):
            data[at] = value
    try:
        snapshot = decode_parquet_snapshot(bytes(data), source="damaged.parquet")
        # Planning first (the columnar pre-filter reads the stored columns as they are),
        # then every part built.
        for where in ("city = 'paris' AND time >= 3", "city IN ('oslo', 'x') OR time = 7"):
            index = PartIndex(snapshot.parts)
            plan_scan(
                snapshot.schema, snapshot.parts, where, candidates=index.candidates, key="keep"
            )
        _materialised(snapshot)
    except CorruptManifestError as e:
        assert "damaged.parquet" in str(e)


_ENTRY = st.fixed_dictionaries(
    {
        "name": st.one_of(st.none(), st.sampled_from(["city", "other"])),
        "min": st.one_of(st.none(), st.sampled_from(["a", "paris"])),
        "max": st.one_of(st.none(), st.sampled_from(["paris", "z"])),
        "has_null": st.one_of(st.none(), st.booleans()),
        "values": st.one_of(
            st.none(), st.lists(st.one_of(st.none(), st.sampled_from(["paris", "oslo", "x"])))
        ),
    }
)


@_FUZZ
@given(st.lists(st.one_of(st.none(), st.lists(_ENTRY, max_size=3)), min_size=2, max_size=2))
def test_odd_tag_columns_prefilter_like_the_parts_they_build(
    tags: list[list[dict[str, object]] | None],
) -> None:
    # Well-formed Parquet whose tags column holds nulls at every level: the columnar
    # pre-filter must agree with the parts built from the same rows (or both fail the same).
    table = pq.read_table(pa.BufferReader(_SAMPLE))
    column = pa.array(tags, table.schema.field("tags").type)
    odd = table.set_column(table.schema.get_field_index("tags"), "tags", column)
    out = pa.BufferOutputStream()
    pq.write_table(odd, out)
    snapshot = decode_parquet_snapshot(out.getvalue().to_pybytes(), source="odd.parquet")
    windows = (
        PartWindow(tags=(("city", frozenset({"paris"})),)),
        PartWindow(lo=0, tags=(("city", frozenset({"oslo", "x"})),)),
        PartWindow(tags=(("other", frozenset({"x"})), ("city", frozenset({"paris"})))),
    )
    try:
        built = tuple(snapshot.parts)
    except CorruptManifestError as e:
        assert "odd.parquet" in str(e)
        return
    for window in windows:
        assert PartIndex(snapshot.parts).candidates(window) == PartIndex(built).candidates(window)


def test_lazily_decoded_statistics_equal_pickle_and_plan_like_decoded_ones() -> None:
    parts = tuple(
        dataclasses.replace(
            part(f"p{i}.tsfile", city=f"c{i % 3}", start=i * 100, rows=100),
            fields={"temp": FieldStats(float(i), float(i + 10), 0)},
        )
        for i in range(6)
    )
    snapshot = Snapshot(3, 1, SCHEMA, 0, parts, {}, "5f0c9a3e-8d1b-4c2e-9a57-2b6f1e0d4c3a")
    lazy = decode_parquet_snapshot(encode_parquet_snapshot(snapshot), source="cp")
    # Unpickled (as Spark tasks receive them) they are plain tuples and dicts again.
    shipped = pickle.loads(pickle.dumps(lazy.parts))
    assert shipped == parts and type(shipped[0].devices) is tuple
    assert type(shipped[0].fields) is dict
    for where in ("city = 'c1' AND time >= 300", "city = 'c2' AND time < 250", "temp < 3"):
        fresh = decode_parquet_snapshot(encode_parquet_snapshot(snapshot), source="cp")
        expected = plan_scan(snapshot.schema, snapshot.parts, where, key="keep")
        got = plan_scan(fresh.schema, fresh.parts, where, key="keep")
        assert [p.path for p in got.parts] == [p.path for p in expected.parts], where
        assert 0 < len(got.parts) < len(parts), where


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    commit_histories(first_version=11),
    st.integers(min_value=0, max_value=2),
    st.sampled_from([1, 2, 3, ROW_GROUP_PARTS]),
)
@pytest.mark.slow
def test_commits_over_a_checkpoint_read_unbuilt_write_the_checkpoint_of_the_built_parts(
    history: tuple[list[PartFile], list[Commit]], chunk: int, group: int
) -> None:
    base, commits = history
    start = Snapshot(10, 1, STRATEGY_SCHEMA, 0, tuple(base), {"k": "v"}, STRATEGY_UUID)
    eager = replay(start, commits)
    # Written and copied in row groups of ``group`` parts: the copy of the kept rows reads
    # their groups' device lists only, across group boundaries.
    with mock.patch("tsfile_catalog.table.checkpoint_parquet.ROW_GROUP_PARTS", group):
        read = decode_parquet_snapshot(encode_parquet_snapshot(start), source="cp")
        # Some parts already built (by a plan), some not: copying rows must not care.
        for p in read.parts[: chunk * 3]:
            dict(p.fields)
        lazy = replay(read, commits)
        assert isinstance(lazy.parts, PartList) and lazy == eager
        data = encode_parquet_snapshot(lazy)
    again = decode_parquet_snapshot(data, source="cp2")
    assert again == eager
    assert encode_snapshot(again) == encode_snapshot(eager)
    # The same bytes as encoding every part anew.
    assert pq.read_table(pa.BufferReader(data)) == pq.read_table(
        pa.BufferReader(encode_parquet_snapshot(replace(eager, parts=tuple(eager.parts))))
    )


def test_a_cold_plan_builds_only_the_parts_its_time_range_keeps(tmp_path: Path) -> None:
    url = str(tmp_path)
    for i in range(25):
        append_parts(url, [part(f"p{i}.tsfile", start=i * 100, rows=100)], SCHEMA)
    clear_cache()
    table = open_table(url)
    parts = table.snapshot.parts
    assert isinstance(parts, PartList) and parts.stored is not None
    built: list[int] = []
    stored_part = parts.stored.part
    parts.stored.part = lambda row: built.append(row) or stored_part(row)  # type: ignore[method-assign]
    plan = table.plan(where="time >= 1200 AND time < 1400")
    assert [p.path for p in plan.parts] == ["p12.tsfile", "p13.tsfile"]
    assert sorted(set(built)) == [12, 13] and len(plan.pruned) == 23
    # What was pruned is still there, built when read.
    assert [p.path for p in plan.pruned][:2] == ["p0.tsfile", "p1.tsfile"]


def test_a_cold_plan_reads_the_tag_statistics_of_the_row_groups_its_time_range_keeps() -> None:
    # 40 parts in row groups of 4, each part one city: the TAG statistics (most of a big
    # checkpoint) are read for the groups holding the parts the time range keeps, no other
    # group is read; no list of every path is made to build the kept parts.
    parts = tuple(
        part(f"p{i:02d}.tsfile", city=("paris", "oslo")[i % 2], start=i * 100, rows=100)
        for i in range(40)
    )
    snapshot = Snapshot(3, 1, SCHEMA, 0, parts, {}, "5f0c9a3e-8d1b-4c2e-9a57-2b6f1e0d4c3a")
    with mock.patch("tsfile_catalog.table.checkpoint_parquet.ROW_GROUP_PARTS", 4):
        data = encode_parquet_snapshot(snapshot)
    decoded = decode_parquet_snapshot(data, source="cp")
    stored = decoded.parts.stored
    read: list[tuple[str, int]] = []
    real = pq.ParquetFile.read_row_group

    def counting(self: pq.ParquetFile, group: int, columns: list[str], **kw: object) -> pa.Table:
        read.extend((c, group) for c in columns)
        return real(self, group, columns=columns, **kw)

    where = "city = 'oslo' AND time >= 1300 AND time < 1900"  # parts 13..18: groups 3 and 4
    with mock.patch.object(pq.ParquetFile, "read_row_group", counting):
        plan = plan_scan(
            decoded.schema,
            decoded.parts,
            where,
            candidates=PartIndex(decoded.parts).candidates,
            key="keep",
        )
    assert [p.path for p in plan.parts] == ["p13.tsfile", "p15.tsfile", "p17.tsfile"]
    # (The kept candidates' device lists are read too, from the same groups.)
    assert {("tags", 3), ("tags", 4)} <= set(read) and {g for _, g in read} == {3, 4}
    assert stored._paths is None  # type: ignore[union-attr]
    # The pruned parts are all the others, in order, built only when read.
    assert len(plan.pruned) == 37
    assert [p.path for p in plan.pruned] == [
        p.path for p in parts if p.path not in {"p13.tsfile", "p15.tsfile", "p17.tsfile"}
    ]
    assert plan.parts == tuple(plan_scan(snapshot.schema, snapshot.parts, where, key="keep").parts)


def test_commits_write_parquet_checkpoints_and_a_hint_naming_the_form(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 11)
    checkpoint = log_file(tmp_path, 10, ".checkpoint.parquet")
    assert checkpoint.exists() and not log_file(tmp_path, 10, ".checkpoint.json").exists()
    hint = json.loads((tmp_path / MANIFEST_DIR / "_last_checkpoint").read_text())
    assert hint == {"version": 10, "format_version": 1, "format": "parquet"}
    # Parts are rows, the planning statistics real columns.
    table = pq.read_table(checkpoint)
    assert table.num_rows == 11
    assert {"path", "row_count", "min_time", "max_time", "tags"} <= set(table.column_names)


def test_json_checkpoints_of_earlier_releases_stay_readable(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 12)
    expected = open_table(url).snapshot
    # What an earlier release left: a JSON checkpoint, and the commits before it expired.
    parquet = log_file(tmp_path, 10, ".checkpoint.parquet")
    snapshot = decode_parquet_snapshot(parquet.read_bytes(), source=parquet.name)
    log_file(tmp_path, 10, ".checkpoint.json").write_bytes(encode_snapshot(snapshot))
    parquet.unlink()
    for version in range(10):
        log_file(tmp_path, version).unlink()
    clear_cache()
    assert open_table(url).snapshot == expected
    # The next checkpoint this release writes is Parquet, and loads the same table.
    append_n(url, 9, prefix="more")
    assert log_file(tmp_path, 20, ".checkpoint.parquet").exists()
    clear_cache()
    assert len(open_table(url).parts()) == 21


def test_a_damaged_parquet_checkpoint_falls_back_to_an_older_json_one(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 21)
    expected = open_table(url).snapshot
    ten = log_file(tmp_path, 10, ".checkpoint.parquet")
    snapshot = decode_parquet_snapshot(ten.read_bytes(), source=ten.name)
    log_file(tmp_path, 10, ".checkpoint.json").write_bytes(encode_snapshot(snapshot))
    ten.unlink()
    log_file(tmp_path, 20, ".checkpoint.parquet").write_bytes(b"PAR1 not really PAR1")
    for version in range(10):
        log_file(tmp_path, version).unlink()
    assert open_table(url, use_cache=False).snapshot == expected


def test_expiry_writes_and_removes_parquet_checkpoints(tmp_path: Path) -> None:
    from tsfile_catalog.table.expire import expire_snapshots

    url = str(tmp_path)
    append_n(url, 25)
    expected = open_table(url).snapshot
    wait_until_older_than_now(url)  # so that retain_last alone decides
    done = expire_snapshots(url, retention_ms=0, retain_last=3)
    assert done.oldest_kept == 22 and done.checkpoint_written
    names = sorted(p.name for p in (tmp_path / MANIFEST_DIR).glob("*.checkpoint.*"))
    assert names == [log_file(tmp_path, 22, ".checkpoint.parquet").name]
    clear_cache()
    assert open_table(url).snapshot == expected
    append_parts(url, [part("late.tsfile")], SCHEMA)
    assert len(open_table(url, use_cache=False).parts()) == 26


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab.-_/:\\\n 0", max_size=8))
def test_paths_taken_without_a_check_are_ones_the_check_accepts(path: str) -> None:
    # The decoder skips validate_relative_path for paths its vectorised pattern calls plain.
    import pyarrow as pa
    import pyarrow.compute as pc

    from tsfile_catalog.metadata.parts import PLAIN_PATH, check_relative_path

    if pc.match_substring_regex(pa.array([path]), PLAIN_PATH)[0].as_py():
        assert check_relative_path(path) == path
