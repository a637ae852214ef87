"""OPTIMIZE and DELETE on real tables (real TsFiles, no Spark): rows kept exactly, commits,
history, time travel, conflicts with concurrent writers, nothing left behind on failure."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.factories import table_schema
from tests.table.helpers import append_rows, key_view
from tsfile_catalog.exceptions import (
    CommitConflictError,
    OptionError,
    PredicateError,
    VersionNotFoundError,
)
from tsfile_catalog.metadata.key import KEY_DUPLICATES, merged_slices
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.table import (
    STAGING_DIR,
    Table,
    add_files,
    append_parts,
    open_table,
    purge,
    set_properties,
    vacuum,
)
from tsfile_catalog.table.rewrite import read_part_rows

SCHEMA = table_schema("weather", fields=[("temp", DataType.DOUBLE)])


def _append(root: str, times: list[int], cities: list[str], temps: list[float | None]) -> None:
    """One append of real TsFile rows, staged and committed as the batch writer does."""
    rows = pa.table(
        {
            "time": pa.array(times, pa.int64()),
            "city": pa.array(cities, pa.string()),
            "temp": pa.array(temps, pa.float64()),
        }
    )
    append_rows(root, rows, SCHEMA)


def _append_slice(root: str, index: int, cities: tuple[str, ...] = ("a", "b")) -> None:
    """Ten times per city starting at ``index * 10``; temp encodes city, time."""
    times = [index * 10 + t for _ in cities for t in range(10)]
    names = [c for c in cities for _ in range(10)]
    temps: list[float | None] = [
        float(t) + (0.5 if c == "b" else 0.0) for c, t in zip(names, times, strict=True)
    ]
    _append(root, times, names, temps)


def _rows(table: Table) -> list[tuple[Any, ...]]:
    out = []
    for part in table.parts():
        data = read_part_rows(table, part)
        out.extend(zip(*(data.column(n).to_pylist() for n in data.column_names), strict=True))
    return sorted(out, key=lambda r: (r[1], r[0]))


@pytest.fixture
def root(tmp_path: Path) -> str:
    return str(tmp_path / "weather")


def test_optimize_compacts_small_parts_into_one_and_keeps_every_row(root: str) -> None:
    for i in range(6):
        _append_slice(root, i)
    before = open_table(root)
    rows = _rows(before)
    assert len(before.parts()) == 6 and len(rows) == 120

    progress: list[tuple[int, int]] = []
    result = before.maintenance.optimize(
        target_file_size=1 << 20, progress=lambda d, t: progress.append((d, t))
    )

    after = open_table(root)
    assert (result.files_removed, result.files_added, result.rows) == (6, 1, 120)
    assert result.version == after.version == before.version + 1
    assert result.bytes_removed == sum(p.size_bytes for p in before.parts())
    assert result.bytes_added == after.parts()[0].size_bytes
    assert len(after.parts()) == 1 and _rows(after) == rows
    assert progress == [(1, 1)]
    info = after.history(limit=1)[0]
    assert info.operation == "OPTIMIZE" and info.data_change is False
    assert (info.parts_removed, info.rows_removed, info.rows_added) == (6, 120, 120)
    # Sorted by device then time, with per-device statistics: pruning keeps working.
    part = after.parts()[0]
    assert part.devices is not None and [d.tags for d in part.devices] == [("a",), ("b",)]
    assert len(after.plan("city = 'a' AND time >= 50").parts) == 1
    # Time travel still reads the six old parts; VACUUM keeps them within the retention.
    assert _rows(open_table(root, version=before.version)) == rows
    assert vacuum(root, dry_run=True) == []  # within the 7-day retention
    assert not (Path(root) / STAGING_DIR).exists()
    # Nothing left to compact: no commit.
    assert after.maintenance.optimize(target_file_size=1 << 20).version is None
    assert open_table(root).version == after.version


def _micro_batch(root: str, batch: int, devices: int = 5) -> None:
    """What one micro-batch of a stream appends: a few rows of every device, at times that
    interleave with every other batch's (batch b holds times b, b + 19, b + 38, ...)."""
    times = [batch + 19 * k for k in range(7) for _ in range(devices)]
    cities = [f"c{d}" for _ in range(7) for d in range(devices)]
    temps: list[float | None] = [
        float(t * 10 + int(c[1:])) for t, c in zip(times, cities, strict=True)
    ]
    _append(root, times, cities, temps)


def _all_rows(table: Table) -> list[tuple[Any, ...]]:
    data = table.scan().to_arrow()
    return sorted(zip(*(data.column(n).to_pylist() for n in data.column_names), strict=True))


def test_optimize_compacts_a_streams_interleaved_micro_batches(root: str) -> None:
    # Issue 24/25: a streamed table stayed at 19 parts, each further OPTIMIZE saying
    # "nothing to compact": every part's time range overlapped the next one's.
    for batch in range(19):
        _micro_batch(root, batch)
    before = open_table(root)
    rows = _all_rows(before)
    assert len(before.parts()) == 19 and len(rows) == 19 * 35

    result = before.maintenance.optimize(target_file_size=1 << 20)

    after = open_table(root)
    assert (result.files_removed, result.files_added, result.rows) == (19, 1, 19 * 35)
    assert len(after.parts()) == 1 and _all_rows(after) == rows
    assert after.maintenance.optimize(target_file_size=1 << 20).version is None


def _create(root: str, mode: str) -> None:
    """An empty table with ``key.duplicates = mode``."""
    append_parts(root, [], SCHEMA, properties={KEY_DUPLICATES: mode})


def test_optimize_keeps_both_rows_of_a_repeated_device_and_time(root: str) -> None:
    # An append-only table keeps a re-sent reading next to the first one; one TsFile cannot
    # hold both, so the repeats go to a second new part, the earlier rows to the first.
    _create(root, "keep")
    for batch in range(6):
        _append(root, [batch, batch + 6], ["a", "b"], [float(batch), float(batch)])
    _append(root, [2, 3], ["a", "a"], [20.0, 30.0])  # re-sends a at 2 and 3
    _append(root, [3], ["a"], [300.0])  # and a at 3 once more
    before = open_table(root)
    rows = _all_rows(before)
    assert len(before.parts()) == 8 and len(rows) == 15

    result = before.maintenance.optimize(target_file_size=1 << 20)

    after = open_table(root)
    assert (result.files_removed, result.files_added, result.rows) == (8, 3, 15)
    assert _all_rows(after) == rows
    first, second, third = (read_part_rows(after, p) for p in after.parts())
    assert first.num_rows == 12 and first.column("temp").to_pylist()[2:4] == [2.0, 3.0]
    assert second.to_pylist() == [
        {"time": 2, "city": "a", "temp": 20.0},
        {"time": 3, "city": "a", "temp": 30.0},
    ]
    assert third.to_pylist() == [{"time": 3, "city": "a", "temp": 300.0}]
    # The three parts now overlap exactly: rewriting them again would gain nothing.
    assert after.maintenance.optimize(target_file_size=1 << 20).version is None
    assert open_table(root).version == after.version


Truth = dict[tuple[str, int], tuple[Any, ...]]


def _send(root: str, truth: Truth, times: list[int], cities: list[str], temps: list[float]) -> None:
    """One append, and what a ``last`` table then holds: each (city, time) its latest row."""
    _append(root, times, cities, list(temps))
    for t, c, v in zip(times, cities, temps, strict=True):
        truth[(c, t)] = (t, c, v)


def _last_per_key(table: Table) -> list[tuple[Any, ...]]:
    """The rows a ``last`` table's parts resolve to: of the rows sharing a (city, time), the
    one in the part with the largest key sequence."""
    latest: Truth = {}
    ordered = sorted(enumerate(table.parts()), key=lambda item: (item[1].key_sequence, item[0]))
    for _, part in ordered:
        data = read_part_rows(table, part)
        for row in zip(*(data.column(n).to_pylist() for n in data.column_names), strict=True):
            latest[(row[1], row[0])] = row
    return sorted(latest.values())


def test_optimize_keeps_the_last_row_of_each_key_in_a_last_table(root: str) -> None:
    # The re-sent readings of the test above, in a table whose key replaces: one new part,
    # the latest row of each (city, time), and nothing left for a read to merge.
    truth: Truth = {}
    for batch in range(6):
        _send(root, truth, [batch, batch + 6], ["a", "b"], [float(batch), float(batch)])
    _send(root, truth, [2, 3], ["a", "a"], [20.0, 30.0])
    _send(root, truth, [3], ["a"], [300.0])
    before = open_table(root)
    assert merged_slices(before.parts()) > 0
    assert _last_per_key(before) == sorted(truth.values())

    result = before.maintenance.optimize(target_file_size=1 << 20)

    after = open_table(root)
    assert (result.files_removed, result.files_added, result.rows) == (8, 1, 12)
    assert _all_rows(after) == sorted(truth.values())
    assert merged_slices(after.parts()) == 0
    assert after.parts()[0].key_sequence == max(p.key_sequence for p in before.parts())
    # Time travel reads the version before, whose parts still resolve to the same rows.
    assert _last_per_key(open_table(root, version=before.version)) == sorted(truth.values())
    assert after.maintenance.optimize(target_file_size=1 << 20).version is None


def _daily_stream(root: str, truth: Truth) -> None:
    """A streamed table as issue 25 found it, 19 micro-batches and 642 rows: each batch sends
    two devices' new readings and re-sends each device's running total for the day at the
    day's start (time 0), so those two keys are in every part."""
    for batch in range(19):
        steps = 16 if batch < 18 else 14
        times = [1 + batch * 16 + k for k in range(steps) for _ in range(2)]
        temps = [float(t) for t in times] + [float(batch), float(batch) + 0.5]
        _send(root, truth, [*times, 0, 0], ["a", "b"] * (steps + 1), temps)


def test_optimize_finishes_a_streamed_table_that_re_sends_a_key_in_every_batch(
    root: str,
) -> None:
    # Issue 25: 19 parts, 642 rows, and every OPTIMIZE answered "nothing to compact": keeping
    # each of the 19 copies of the two daily keys needed 19 TsFiles, so the rewrite gained
    # nothing and was skipped. The key replaces them: one part, the latest totals.
    truth: Truth = {}
    _daily_stream(root, truth)
    before = open_table(root)
    assert len(before.parts()) == 19 and sum(p.row_count for p in before.parts()) == 642

    result = before.maintenance.optimize()

    after = open_table(root)
    assert (result.files_removed, result.files_added, result.rows) == (19, 1, 642 - 36)
    assert _all_rows(after) == sorted(truth.values()) == _last_per_key(before)
    assert [r for r in _all_rows(after) if r[0] == 0] == [(0, "a", 18.0), (0, "b", 18.5)]
    assert merged_slices(after.parts()) == 0
    assert after.maintenance.optimize().version is None


def test_optimize_of_a_big_last_table_writes_parts_of_the_target_size_sharing_no_key(
    root: str,
) -> None:
    truth: Truth = {}
    _daily_stream(root, truth)
    before = open_table(root)
    target = sum(p.size_bytes for p in before.parts()) // 3

    result = before.maintenance.optimize(target_file_size=target)

    after = open_table(root)
    assert result.files_removed == 19 and result.files_added >= 2
    assert _all_rows(after) == sorted(truth.values())
    assert merged_slices(after.parts()) == 0
    # Written window by window of time (one held in memory at once): disjoint time ranges.
    ranges = sorted((p.min_time, p.max_time) for p in after.parts())
    assert all(a[1] < b[0] for a, b in zip(ranges, ranges[1:], strict=False))
    assert len({p.key_sequence for p in after.parts()}) == 1


def test_a_rewritten_part_keeps_its_key_sequence_so_newer_rows_still_win(root: str) -> None:
    truth: Truth = {}
    _send(root, truth, [1, 2, 3], ["a", "a", "a"], [1.0, 2.0, 3.0])
    _send(root, truth, [2], ["a"], [20.0])  # replaces a at 2
    old, new = open_table(root).parts()

    result = open_table(root).delete("time = 3")  # rewrites the first part alone

    del truth[("a", 3)]
    after = open_table(root)
    (rewritten,) = [p for p in after.parts() if p.path != new.path]
    assert rewritten.added_version == result.version
    assert rewritten.key_sequence == old.key_sequence < new.key_sequence
    assert _last_per_key(after) == sorted(truth.values())  # a at 2 is still 20.0


def test_a_row_appended_while_optimize_rewrites_its_key_still_wins(root: str) -> None:
    truth: Truth = {}
    _send(root, truth, [1, 2], ["a", "a"], [1.0, 2.0])
    _send(root, truth, [2, 3], ["a", "a"], [20.0, 30.0])
    table = open_table(root)
    # After the compacted part is written, before OPTIMIZE commits: a newer a at 2 lands.
    table.maintenance.optimize(
        target_file_size=1 << 20, progress=lambda d, t: _send(root, truth, [2], ["a"], [200.0])
    )
    after = open_table(root)
    assert [h.operation for h in after.history(limit=2)] == ["OPTIMIZE", "WRITE"]
    assert _last_per_key(after) == sorted(truth.values())
    assert truth[("a", 2)] == (2, "a", 200.0)


def test_optimize_leaves_parts_near_the_target_and_outside_where(root: str) -> None:
    for i in range(4):
        _append_slice(root, i, cities=("a",) if i % 2 == 0 else ("b",))
    table = open_table(root)
    result = table.maintenance.optimize(where="city = 'a'", target_file_size=1 << 20)
    after = open_table(root)
    assert (result.files_removed, result.files_added) == (2, 1)
    cities = sorted(p.tags["city"].values or frozenset() for p in after.parts())
    assert sorted(map(sorted, cities)) == [["a"], ["b"], ["b"]]
    assert _rows(after) == _rows(table)
    # A target below every part's size: each part is already "near" it.
    assert open_table(root).maintenance.optimize(target_file_size=1).version is None


def test_optimize_refuses_a_field_predicate_and_a_bad_target_property(root: str) -> None:
    _append_slice(root, 0)
    _append_slice(root, 1)
    with pytest.raises(PredicateError, match="FIELD column 'temp'"):
        open_table(root).maintenance.optimize(where="temp > 1")
    append_parts(root, [], SCHEMA, properties={"targetFileSize": "big"})
    with pytest.raises(OptionError, match="targetFileSize.*'big'"):
        open_table(root).maintenance.optimize()
    append_parts(root, [], SCHEMA, properties={"targetFileSize": str(1 << 20)})
    assert open_table(root).maintenance.optimize().files_added == 1


def test_optimize_rebases_on_an_append_that_lands_while_it_writes(root: str) -> None:
    for i in range(3):
        _append_slice(root, i)
    table = open_table(root)
    # The callback runs after the new part is written, before the commit: a real race.
    table.maintenance.optimize(
        target_file_size=1 << 20, progress=lambda d, t: _append_slice(root, 7)
    )
    after = open_table(root)
    history = [h.operation for h in after.history(limit=2)]
    assert history == ["OPTIMIZE", "WRITE"]
    assert len(_rows(after)) == 80 and len(after.parts()) == 2


def test_optimize_conflicts_only_when_a_rewritten_part_was_removed(root: str) -> None:
    for i in range(3):
        _append_slice(root, i)
    table = open_table(root)
    files_before = set(Path(root).glob("*.tsfile"))

    def delete_one_part(done: int, total: int) -> None:
        open_table(root).delete("time < 10")  # drops the first part whole

    deleted = table.version + 1
    with pytest.raises(
        CommitConflictError, match=rf"already removed by version {deleted} \(DELETE"
    ):
        table.maintenance.optimize(target_file_size=1 << 20, progress=delete_one_part)
    after = open_table(root)
    assert after.version == deleted and after.history(limit=1)[0].operation == "DELETE"
    # The compacted file was deleted again; only the table's earlier files remain.
    assert set(Path(root).glob("*.tsfile")) == files_before
    assert not (Path(root) / STAGING_DIR).exists()


def test_optimize_racing_appends_in_another_thread_loses_no_rows(root: str) -> None:
    for i in range(4):
        _append_slice(root, i)
    errors: list[BaseException] = []

    def appender() -> None:
        try:
            for i in range(10, 16):
                _append_slice(root, i)
        except BaseException as e:  # surfaced by the assertion below
            errors.append(e)

    thread = threading.Thread(target=appender)
    thread.start()
    result = open_table(root).maintenance.optimize(target_file_size=1 << 20)
    thread.join()
    assert errors == [] and result.version is not None
    after = open_table(root)
    assert len(_rows(after)) == 20 * 10
    operations = [h.operation for h in after.history()]
    assert operations.count("WRITE") == 10 and operations.count("OPTIMIZE") == 1


def test_delete_drops_whole_parts_in_metadata_and_rewrites_the_others(root: str) -> None:
    for i in range(3):
        _append_slice(root, i)
    before = open_table(root)
    rows = _rows(before)

    whole = before.delete("time < 10")
    assert (whole.files_dropped, whole.files_rewritten, whole.files_added) == (1, 0, 0)
    assert whole.num_deleted_rows == 20
    middle = open_table(root)
    assert _rows(middle) == [r for r in rows if not r[0] < 10]

    some = middle.delete("city = 'b' AND temp > 14")
    assert (some.files_dropped, some.files_rewritten, some.files_removed) == (0, 2, 2)
    after = open_table(root)
    expected = [r for r in rows if not r[0] < 10 and not (r[1] == "b" and r[2] > 14)]
    assert _rows(after) == expected
    assert some.num_deleted_rows == len(_rows(middle)) - len(expected)

    info = after.history(limit=1)[0]
    assert info.operation == "DELETE" and info.data_change is True
    assert info.operation_parameters["predicate"] == "city = 'b' AND temp > 14"
    assert info.operation_parameters["numDeletedRows"] == str(some.num_deleted_rows)
    assert info.rows_removed - info.rows_added == some.num_deleted_rows
    # Time travel still sees the deleted rows; deleting nothing makes no commit.
    assert _rows(open_table(root, version=before.version)) == rows
    assert after.delete("time > 1000").version is None
    assert not (Path(root) / STAGING_DIR).exists()


def test_delete_keeps_rows_where_the_predicate_is_null(root: str) -> None:
    _append(root, [1, 2, 3], ["a", "a", "a"], [5.0, None, 1.0])
    table = open_table(root)
    result = table.delete("temp > 2")
    assert result.num_deleted_rows == 1 and result.files_rewritten == 1
    assert [r[0] for r in _rows(open_table(root))] == [2, 3]  # NULL > 2 is not TRUE
    everything = open_table(root).delete(None)
    assert everything.files_dropped == 1 and open_table(root).parts() == []


def test_delete_needs_a_time_zone_to_compare_times_with_text(root: str) -> None:
    _append_slice(root, 0)
    with pytest.raises(PredicateError, match="time zone"):
        open_table(root).delete(
            "time < '1970-01-01 00:00:00.005'", timestamp_as="timestamp", time_zone=None
        )
    removed = open_table(root).delete(
        "time < '1970-01-01 00:00:00.005'", timestamp_as="timestamp", time_zone="UTC"
    )
    assert removed.num_deleted_rows == 10  # times 0..4 of both cities


def test_delete_on_a_last_table_removes_the_key_from_every_part(root: str) -> None:
    # (a, 1) was re-sent: 1.0 replaced 10.0. DELETE judges the row reads show (1.0), and
    # must take the key out of both parts: the stale 10.0 must not come back.
    _append(root, [1, 2], ["a", "a"], [10.0, 20.0])
    _append(root, [1], ["a"], [1.0])
    table = open_table(root)
    assert table.properties["key.duplicates"] == "last"
    result = table.delete("temp < 5")
    assert result.num_deleted_rows == 1  # the row reads showed, not the stale one
    assert key_view(root) == [(2, "a", 20.0)]
    assert _rows(open_table(root)) == [(2, "a", 20.0)]
    # A FIELD predicate the stale row matches but the newest does not deletes nothing seen.
    _append(root, [3], ["a"], [30.0])
    _append(root, [3], ["a"], [3.0])
    open_table(root).delete("temp > 25")
    assert key_view(root) == [(2, "a", 20.0), (3, "a", 3.0)]


def test_delete_on_a_keep_table_judges_every_row(root: str) -> None:
    _append(root, [1], ["a"], [10.0])
    _append(root, [1], ["a"], [1.0])
    set_properties(root, {"key.duplicates": "keep"})
    assert open_table(root).delete("temp < 5").num_deleted_rows == 1
    assert _rows(open_table(root)) == [(1, "a", 10.0)]


@pytest.mark.parametrize("duplicates", ["keep", "last"])
def test_delete_moves_an_external_parts_survivors_into_a_new_part(
    root: str, tmp_path: Path, duplicates: str
) -> None:
    """As Delta and Iceberg: DELETE by predicate is never refused and never modifies an
    existing file. An external part holding matching rows leaves the manifest (its file is
    left byte-identical, and stays the user's), and its other rows go into a new internal
    TsFile part."""
    _append(root, [1, 2], ["a", "a"], [1.0, 2.0])
    set_properties(root, {"key.duplicates": duplicates})
    external = tmp_path / "ext" / "x.parquet"
    external.parent.mkdir()
    pq.write_table(
        pa.table({"time": [5, 6, 7], "city": ["b", "b", "c"], "temp": [50.0, 60.0, 70.0]}),
        external,
    )
    whole = tmp_path / "ext" / "y.parquet"
    pq.write_table(pa.table({"time": [8], "city": ["d"], "temp": [90.0]}), whole)
    add_files(root, str(external), format="parquet")
    add_files(root, str(whole), format="parquet")
    digests = {f: f.read_bytes() for f in (external, whole)}
    # The part's statistics (50..70) cannot rule out temp = 55: it is read, holds no
    # match, and stays as it is.
    assert open_table(root).delete("temp = 55 OR temp < 1.5").num_deleted_rows == 1
    assert str(external) in {p.path for p in open_table(root).parts()}
    # A later write of key (b, 6): in a ``last`` table it is the row reads show, and the
    # DELETE removes the key from the external part too (the path of keys, not rows).
    _append(root, [6], ["b"], [61.0])

    before = open_table(root)
    result = before.delete("temp > 55 AND temp < 65 OR temp > 80")
    assert result.num_deleted_rows == (3 if duplicates == "keep" else 2)
    table = open_table(root)
    assert sorted(_rows(table)) == [(2, "a", 2.0), (5, "b", 50.0), (7, "c", 70.0)]
    assert all(not p.external and p.format == "tsfile" for p in table.parts())
    assert str(external) not in {p.path for p in table.parts()}
    # Never modified, never deleted: not by the DELETE, not by VACUUM, not by a purge.
    assert {f: f.read_bytes() for f in (external, whole)} == digests
    old = sorted(_rows(open_table(root, version=before.version)))
    assert (6, "b", 60.0) in old and (8, "d", 90.0) in old
    vacuum(root, dry_run=False, retention_ms=0, retention_check=False)
    assert {f: f.read_bytes() for f in (external, whole)} == digests
    purge(root)
    assert {f: f.read_bytes() for f in (external, whole)} == digests


def test_vacuum_reclaims_exactly_the_parts_optimize_replaced(root: str) -> None:
    for i in range(4):
        _append_slice(root, i)
    before = open_table(root)
    replaced = sorted(before.part_url(p) for p in before.parts())
    rows = _rows(before)
    before.maintenance.optimize(target_file_size=1 << 20)
    after = open_table(root)

    # Within the retention the replaced files stay, so time travel keeps reading them.
    assert vacuum(root, dry_run=False) == []
    assert _rows(open_table(root, version=before.version)) == rows
    # Past it (here: no retention, the check turned off) exactly those files go.
    assert vacuum(root, dry_run=False, retention_ms=0, retention_check=False) == replaced
    assert not any(Path(u).exists() for u in replaced)
    assert _rows(open_table(root)) == rows and open_table(root).version == after.version
    with pytest.raises(VersionNotFoundError, match="VACUUM"):
        open_table(root, version=before.version)


def test_replace_where_replaces_an_external_parts_rows_without_touching_it(
    root: str, tmp_path: Path
) -> None:
    """A ``replaceWhere`` overwrite removes the matching rows as a DELETE does: the external
    part's other rows go into a new part, its file stays as it was."""
    from tsfile_catalog import write_table

    _append(root, [1], ["a"], [1.0])
    external = tmp_path / "x.parquet"
    pq.write_table(pa.table({"time": [5, 6], "city": ["b", "b"], "temp": [50.0, 60.0]}), external)
    add_files(root, str(external), format="parquet")
    data = external.read_bytes()
    new = pa.table({"time": pa.array([6], pa.int64()), "city": ["b"], "temp": [66.0]})
    write_table(root, new, mode="overwrite", options={"replaceWhere": "time >= 6"})
    assert _rows(open_table(root)) == [(1, "a", 1.0), (5, "b", 50.0), (6, "b", 66.0)]
    assert all(not p.external for p in open_table(root).parts())
    assert external.read_bytes() == data
