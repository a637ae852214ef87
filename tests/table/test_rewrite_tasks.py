"""Rewrite tasks without Spark (real TsFiles): what a task answers survives the JSON trip to
the driver, a failed attempt leaves nothing staged, and only the adopted attempt's parts are
committed, the others' staged files going with the job."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.table.helpers import SCHEMA, fill_small_parts, key_view
from tsfile_catalog.exceptions import TsFileCatalogError
from tsfile_catalog.metadata.manifest import Operation
from tsfile_catalog.table import STAGING_DIR, create_table, open_table
from tsfile_catalog.table.rewrite import PartStager, RewriteJob, StagedFile, TableParts
from tsfile_catalog.table.rewrite_tasks import (
    CompactionTask,
    outcome_from_json,
    outcome_to_json,
)


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
