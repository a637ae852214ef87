"""Rewrite tasks without Spark (real TsFiles): what a task answers survives the JSON trip to
the driver, a failed attempt leaves nothing staged, and only the adopted attempt's parts are
committed, the others' staged files going with the job; a DELETE, an UPDATE, a key change
(UPDATE and MERGE through Catalog.sql, a ``last`` table's DELETE) and a replaceWhere's
straddling parts, of many parts, pack them into fewer tasks and leave the rows and parts the
in-process statement leaves."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tests.table.helpers import SCHEMA, fill_small_parts, key_view
from tsfile_catalog.exceptions import TsFileCatalogError
from tsfile_catalog.metadata.expressions import Expr
from tsfile_catalog.metadata.manifest import Operation
from tsfile_catalog.table import STAGING_DIR, Table, create_table, open_table
from tsfile_catalog.table.key_ranges import keys_within
from tsfile_catalog.table.keyed import commit_key_change, keys_of
from tsfile_catalog.table.optimize import bind_exact
from tsfile_catalog.table.rewrite import (
    PartStager,
    RewriteJob,
    StagedFile,
    TableParts,
    Without,
    read_part_rows,
)
from tsfile_catalog.table.rewrite_tasks import (
    CompactionTask,
    CopyOnWriteTask,
    RewriteTask,
    TaskOutcome,
    for_reading,
    outcome_from_json,
    outcome_to_json,
)

# Matches rows of parts from time 300 on (rewritten) and every row of the last append
# (dropped by its statistics).
_WHERE = "(temp >= 300 AND city <> 'c1') OR time >= 1100"


def _table(tmp_path: Path, key: str = "keep") -> str:
    url = str(tmp_path / "t")
    create_table(url, SCHEMA, properties={"key.duplicates": key})
    fill_small_parts(url)
    return url


def _task(job: RewriteJob, index: int = 0) -> CompactionTask:
    parts = tuple(job.table.parts()[:3])
    return CompactionTask(
        TableParts.of(job.table), parts, False, 1 << 20, job.settings, job.job, index
    )


def test_an_outcome_survives_the_trip_to_the_driver(tmp_path: Path) -> None:
    table = open_table(_table(tmp_path))
    with RewriteJob(table) as job:
        outcome = _task(job).run()
        back = outcome_from_json(outcome_to_json(outcome, table.schema), table.schema)
    assert outcome.rewritten and len(outcome.staged) == 1
    assert [s.part.to_json({}) for s in back.staged] == [s.part.to_json({}) for s in outcome.staged]
    assert [s.staged_url for s in back.staged] == [s.staged_url for s in outcome.staged]
    assert (back.index, back.rewritten, back.worker) == (0, True, outcome.worker)


def test_only_the_adopted_attempt_is_committed(tmp_path: Path) -> None:
    url = _table(tmp_path)
    table = open_table(url)
    before = key_view(url)
    with RewriteJob(table) as job:
        task = _task(job, index=7)
        lost = task.run(attempt=0)  # an attempt whose answer never reached the driver
        kept = task.run(attempt=1)
        assert {Path(s.staged_url).parent.name for s in (*lost.staged, *kept.staged)} == {
            "00007-0",
            "00007-1",
        }
        job.adopt(kept.staged)
        job.commit(task.parts, operation=Operation.OPTIMIZE, parameters={}, data_change=False)
    after = open_table(url)
    added = {p.path for p in after.parts()} - {p.path for p in table.parts()}
    assert added == {s.part.path for s in kept.staged}
    assert not any((Path(url) / s.part.path).exists() for s in lost.staged)
    assert not (Path(url) / STAGING_DIR).exists()
    assert key_view(url) == before


def test_a_failed_attempt_removes_what_it_staged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = _table(tmp_path, "last")
    table = open_table(url)
    staged: list[str] = []
    with RewriteJob(table) as job:
        parts = tuple(table.parts()[:3])  # times 0-99, 100-199, 200-299
        # A last table's group is written window of time by window (here one part's bytes
        # each): the first windows are staged before the third finds its part gone.
        task = CompactionTask(
            TableParts.of(table), parts, True, parts[0].size_bytes, job.settings, job.job, 0
        )
        (Path(url) / parts[-1].path).unlink()
        original = PartStager.write

        def spy(self: PartStager, *args: Any, **kwargs: Any) -> StagedFile:
            out = original(self, *args, **kwargs)
            staged.append(out.staged_url)
            return out

        monkeypatch.setattr(PartStager, "write", spy)
        with pytest.raises(TsFileCatalogError, match="cannot open"):
            task.run(attempt=2)
        assert staged and all(Path(url).as_posix() in u for u in staged)
        assert not any(Path(u).exists() for u in staged)
        assert not (Path(url) / STAGING_DIR).exists()
    assert open_table(url).version == table.version


@dataclass
class _Recorder:
    """A runner with ``slots`` slots that runs the tasks here, each answer through the JSON
    an executor sends, and records the parts of each task."""

    slots: int
    tasks: list[int] = field(default_factory=list)
    changes: list[Any] = field(default_factory=list)

    def __call__(self, tasks: Sequence[RewriteTask]) -> list[TaskOutcome]:
        out = []
        for task in tasks:
            assert isinstance(task, CopyOnWriteTask)
            self.tasks.append(len(task.parts))
            self.changes.append(task.change)
            schema = task.table.schema
            out.append(outcome_from_json(outcome_to_json(task.run(), schema), schema))
        return out[::-1]  # in any order


def _layout(url: str) -> list[tuple[Any, ...]]:
    return sorted(
        (p.row_count, p.min_time, p.max_time, p.key_sequence) for p in open_table(url).parts()
    )


def test_a_delete_packs_parts_into_fewer_tasks_as_in_process(tmp_path: Path) -> None:
    spread, local = _table(tmp_path / "spread"), _table(tmp_path / "local")
    runner = _Recorder(slots=2)

    done = open_table(spread).delete(_WHERE, runner=runner)
    same = open_table(local).delete(_WHERE)

    assert done.files_rewritten >= 6 and done.files_dropped == 1
    assert (done.num_deleted_rows, done.files_dropped, done.files_rewritten) == (
        same.num_deleted_rows,
        same.files_dropped,
        same.files_rewritten,
    )
    # Every part the statistics cannot rule out is read, in batches of about
    # targetFileSize (four parts' bytes here), at least one per slot.
    assert sum(runner.tasks) >= done.files_rewritten
    assert 2 <= len(runner.tasks) < sum(runner.tasks) and max(runner.tasks) <= 4
    assert key_view(spread) == key_view(local)
    assert _layout(spread) == _layout(local)
    assert not (Path(spread) / STAGING_DIR).exists()


def test_a_removal_task_rewrites_each_part_into_its_own(tmp_path: Path) -> None:
    table = open_table(_table(tmp_path))
    parts = table.parts()
    emptied = parts[11]  # times 1100-1119: every row matches
    batch = (parts[3], parts[4], emptied, parts[0])  # part 0 holds no temp from 300 on
    with RewriteJob(table) as job:
        task = CopyOnWriteTask(
            TableParts.of(table),
            tuple(for_reading(p) for p in batch),
            Without(_bound(table, _WHERE)),
            job.settings,
            job.job,
            3,
        )
        outcome = outcome_from_json(outcome_to_json(task.run(), table.schema), table.schema)
    assert outcome.removals == ((40, 1), (40, 1), (60, 0), (0, 0))
    assert [s.part.row_count for s in outcome.staged] == [20, 20]
    assert [s.part.min_time for s in outcome.staged] == [300, 400]
    assert [s.part.key_sequence for s in outcome.staged] == [
        parts[3].key_sequence,
        parts[4].key_sequence,
    ]


def test_a_failed_batch_removes_what_its_earlier_parts_staged(tmp_path: Path) -> None:
    url = _table(tmp_path)
    table = open_table(url)
    parts = table.parts()
    with RewriteJob(table) as job:
        task = CopyOnWriteTask(
            TableParts.of(table),
            tuple(for_reading(p) for p in (parts[3], parts[4], parts[5])),
            Without(_bound(table, _WHERE)),
            job.settings,
            job.job,
            0,
        )
        (Path(url) / parts[5].path).unlink()
        with pytest.raises(TsFileCatalogError, match="cannot open"):
            task.run(attempt=1)
        assert not (Path(url) / STAGING_DIR).exists(), "parts 3 and 4's rewrites went too"
    assert open_table(url).version == table.version


def _history(url: str) -> tuple[Any, ...]:
    info = open_table(url).history(limit=1)[0]
    parameters = {k: v for k, v in info.operation_parameters.items() if k != "job"}
    return str(info.operation), parameters


@pytest.mark.parametrize(
    ("set", "where"),
    [
        ({"temp": pc.field("temp") * -1}, _WHERE),
        ({"temp": 7.5}, None),
    ],
    ids=["expression", "every-row"],
)
def test_an_update_in_tasks_equals_the_in_process_update(
    tmp_path: Path, set: dict[str, Any], where: str | None
) -> None:
    spread, local = _table(tmp_path / "spread"), _table(tmp_path / "local")
    runner = _Recorder(slots=2)

    done = open_table(spread).update(set, where, runner=runner)
    same = open_table(local).update(set, where)

    assert done == same and done.version is not None and done.files_added >= 6
    assert 2 <= len(runner.tasks) < done.files_added
    assert key_view(spread) == key_view(local) != key_view(_table(tmp_path / "before"))
    assert _layout(spread) == _layout(local)
    assert _history(spread) == _history(local)
    assert not (Path(spread) / STAGING_DIR).exists()


@pytest.mark.parametrize("key", ["keep", "last"])
def test_a_key_change_in_tasks_equals_the_in_process_one(tmp_path: Path, key: str) -> None:
    """What Catalog.sql's UPDATE and MERGE commit: keys removed from every part holding
    them (in a keep table, the replayed keys from two parts each), the new rows added."""
    spread, local = _table(tmp_path / "spread", key), _table(tmp_path / "local", key)
    table = open_table(spread)
    rows = pa.concat_tables([read_part_rows(table, p) for p in table.parts()])
    changed = rows.filter(pc.or_(pc.less(rows["time"], 30), pc.equal(rows["city"], "c2")))
    keys = keys_of(changed, table.schema)
    new_rows = keys.append_column("temp", pa.array([-1.0] * keys.num_rows, pa.float32()))
    runner = _Recorder(slots=2)

    done = commit_key_change(
        open_table(spread),
        new_rows=new_rows,
        remove=keys,
        operation=Operation.MERGE,
        parameters={},
        runner=runner,
    )
    same = commit_key_change(
        open_table(local), new_rows=new_rows, remove=keys, operation=Operation.MERGE, parameters={}
    )

    assert (done.rows_removed, done.rows_added, done.files_removed, done.files_added) == (
        same.rows_removed,
        same.rows_added,
        same.files_removed,
        same.files_added,
    )
    assert done.files_removed == 14 and 2 <= len(runner.tasks) < done.files_removed
    assert key_view(spread) == key_view(local)
    assert _layout(spread) == _layout(local)
    assert not (Path(spread) / STAGING_DIR).exists()
    # Each task was sent only the keys its parts may hold, not every key.
    sent = [change.keys for change in runner.changes]
    assert all(0 < k.num_rows < keys.num_rows for k in sent)
    # A replayed key's two parts may sit in two tasks: it is sent to both, and no further.
    assert sum(k.num_rows for k in sent) < keys.num_rows * len(sent)


def test_a_last_delete_over_overlapping_parts_in_tasks_equals_in_process(tmp_path: Path) -> None:
    spread, local = _table(tmp_path / "spread", "last"), _table(tmp_path / "local", "last")
    where = "temp = 0.5 OR temp = 510.5"  # only the replays' newest rows match
    runner = _Recorder(slots=2)

    done = open_table(spread).delete(where, runner=runner)
    same = open_table(local).delete(where)

    assert done == same and done.num_deleted_rows == 6 and runner.tasks
    assert key_view(spread) == key_view(local)
    assert _layout(spread) == _layout(local)


def test_a_replace_where_in_tasks_equals_the_in_process_one(tmp_path: Path) -> None:
    spread, local = _table(tmp_path / "spread"), _table(tmp_path / "local")
    # Parts 3-6 and the replay of part 5 straddle it.
    where = "city = 'c1' AND time >= 300 AND time < 700"
    data = pa.table(
        {
            "time": pa.array([300, 650], pa.int64()),
            "city": ["c1", "c1"],
            "temp": pa.array([-1.0, -2.0], pa.float32()),
        }
    )
    runner = _Recorder(slots=2)

    open_table(spread).overwrite(data, where=where, runner=runner)
    open_table(local).overwrite(data, where=where)

    assert sum(runner.tasks) == 5 and len(runner.tasks) == 2
    assert key_view(spread) == key_view(local)
    assert _layout(spread) == _layout(local)
    assert _history(spread) == _history(local)
    assert not (Path(spread) / STAGING_DIR).exists()


def _bound(table: Table, where: str) -> Expr:
    bound = bind_exact(table, where, unit="ms", timestamp_as="long", time_zone=None)
    assert bound is not None
    return bound


def test_the_keys_a_part_may_hold(tmp_path: Path) -> None:
    """By each device's TAG values and time range; a part without per-device statistics,
    by its time range alone."""
    url = _table(tmp_path / "t", "keep")
    table = open_table(url)
    parts = sorted(table.parts(), key=lambda p: (p.min_time, p.key_sequence))[:2]
    rows = pa.concat_tables([read_part_rows(table, p) for p in table.parts()])
    keys = keys_of(rows, table.schema)
    held = keys_of(pa.concat_tables([read_part_rows(table, p) for p in parts]), table.schema)

    within = keys_within(keys, parts)
    assert sorted(within.to_pylist(), key=repr) == sorted(held.to_pylist(), key=repr)
    # The key columns in any order (Catalog.sql's keys come time first).
    assert keys_within(keys.select(["time", "city"]), parts).num_rows == within.num_rows
    one = parts[0]
    only_c1 = replace(one, devices=tuple(d for d in one.devices or () if d.tags == ("c1",)))
    assert set(keys_within(keys, [only_c1]).column("city").to_pylist()) == {"c1"}
    by_time = keys_within(keys, [replace(one, devices=None)])
    assert set(by_time.column("city").to_pylist()) == {"c0", "c1", "c2"}
    assert by_time.num_rows == keys_within(keys, [one]).num_rows
