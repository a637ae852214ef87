"""A replaceWhere's straddling parts rewritten before the write (write/replace_staging.py),
without Spark: the pre-staging runs its tasks in this process and write_table commits, the
commit path Spark's writer takes too. What a commit takes from a record, what it leaves, and
what it refuses. The Spark tasks themselves: tests/datasource/test_rewrite_tasks.py."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.table.helpers import SCHEMA, append_rows, fill_small_parts, key_view
from tsfile_catalog import OptionError, write_table
from tsfile_catalog.metadata.ownership import PRESTAGED_NAME, new_job_id
from tsfile_catalog.options import parse_write_options
from tsfile_catalog.table import STAGING_DIR, create_table, open_table
from tsfile_catalog.table.rewrite import RewriteJob
from tsfile_catalog.table.rewrite_tasks import run_in_process
from tsfile_catalog.write.arrow import arrow_columns
from tsfile_catalog.write.plan import plan_write
from tsfile_catalog.write.replace_staging import PrestagedReplace, prestage_replace

# Straddles two parts: those of times 100-119 and 400-419.
_REPLACED = "time >= 105 AND time < 410"
_REPLACEMENT = pa.table(
    {
        "time": pa.array([150, 405], pa.int64()),
        "city": ["c1", "c2"],
        "temp": pa.array([1.5, 2.5], pa.float32()),
    }
)


def _table(tmp_path: Path, name: str) -> str:
    url = str(tmp_path / name)
    create_table(url, SCHEMA, properties={"key.duplicates": "keep"})
    fill_small_parts(url)
    return url


def _options(**extra: str) -> dict[str, str]:
    return {"replaceWhere": _REPLACED, "timeZone": "UTC", **extra}


def _replace(url: str, **extra: str) -> None:
    write_table(url, _REPLACEMENT, mode="overwrite", options=_options(**extra))


def _prestage(url: str) -> tuple[RewriteJob, PrestagedReplace]:
    """The straddling parts' rewrites of :data:`_REPLACED`, staged and recorded in the
    returned job's folder, which the caller's ``with job`` removes."""
    options = parse_write_options({"path": url, **_options()})
    table = open_table(url)
    job = RewriteJob(table, options.settings())
    plan = plan_write(arrow_columns(_REPLACEMENT.schema), options, table)
    prestaged = prestage_replace(job, plan, options, run_in_process())
    assert prestaged is not None and len(prestaged.rewrites) == 2
    return job, prestaged


def _keys(url: str) -> set[tuple[Any, ...]]:
    return {(r[0], r[1]) for r in key_view(url)}


def test_the_commit_takes_the_prestaged_rewrites_and_names_their_job(tmp_path: Path) -> None:
    spread, local = _table(tmp_path, "spread"), _table(tmp_path, "local")
    job, prestaged = _prestage(spread)
    staged = {s.part.path for _, rewrite in prestaged.rewrites.values() for s in rewrite}
    with job:
        _replace(spread, replaceStaged=job.job)
    _replace(local)

    assert key_view(spread) == key_view(local)
    assert staged <= {p.path for p in open_table(spread).parts()}
    assert open_table(spread).history(limit=1)[0].operation_parameters["rewriteJob"] == job.job
    assert not (Path(spread) / STAGING_DIR).exists()


def test_a_part_appended_after_the_prestaging_is_rewritten_by_the_commit(tmp_path: Path) -> None:
    """A concurrent append lands between the pre-staging and the write: the commit takes
    the pre-staged rewrites and rewrites the new straddling part itself; the result is the
    replaceWhere's over the table as the commit finds it."""
    spread, local = _table(tmp_path, "spread"), _table(tmp_path, "local")
    late = pa.table(
        {
            "time": pa.array([400, 430], pa.int64()),
            "city": ["c9", "c9"],
            "temp": pa.array([9.0, 9.5], pa.float32()),
        }
    )
    job, prestaged = _prestage(spread)
    with job:
        append_rows(spread, late, open_table(spread).schema)
        _replace(spread, replaceStaged=job.job)
    append_rows(local, late, open_table(local).schema)
    _replace(local)

    assert key_view(spread) == key_view(local)
    assert (430, "c9") in _keys(spread) and (400, "c9") not in _keys(spread)
    assert open_table(spread).history(limit=1)[0].operation_parameters["rewriteJob"] == job.job
    assert not (Path(spread) / STAGING_DIR).exists()


def test_prestaged_rewrites_of_another_predicate_are_not_taken(tmp_path: Path) -> None:
    """Rewrites staged for another predicate binding (here another time zone) are left: the
    commit rewrites the parts itself, and the pre-staged files go with their job."""
    spread, local = _table(tmp_path, "spread"), _table(tmp_path, "local")
    job, _ = _prestage(spread)
    with job:
        _replace(spread, timeZone="Asia/Shanghai", replaceStaged=job.job)
    _replace(local, timeZone="Asia/Shanghai")

    assert key_view(spread) == key_view(local)
    assert "rewriteJob" not in open_table(spread).history(limit=1)[0].operation_parameters
    assert not (Path(spread) / STAGING_DIR).exists()


def test_a_bad_replace_staged_option_is_refused(tmp_path: Path) -> None:
    """The internal option names a staging job: anything else, the option without
    replaceWhere, or a record that is not one fails the write, naming the option; nothing
    is committed."""
    url = _table(tmp_path, "t")
    version = open_table(url).version
    with pytest.raises(OptionError, match="option 'replaceStaged' = '../x' is internal"):
        _replace(url, replaceStaged="../x")
    job = new_job_id()
    with pytest.raises(OptionError, match="option 'replaceStaged'.*needs option 'replaceWhere'"):
        _replace(url, replaceStaged=job, replaceWhere="")
    record = Path(url) / STAGING_DIR / job / "00000-0" / PRESTAGED_NAME
    record.parent.mkdir(parents=True)
    record.write_text("{not json")
    with pytest.raises(OptionError, match=f"option 'replaceStaged'.*{PRESTAGED_NAME} is not"):
        _replace(url, replaceStaged=job)
    assert open_table(url).version == version


def test_a_record_naming_another_file_is_refused(tmp_path: Path) -> None:
    """The commit moves what a pre-staging record names into the table: a record naming a
    file outside its job's staging folder (a user's) fails the write, naming the option,
    and the file stays where it is."""
    url = _table(tmp_path, "t")
    version = open_table(url).version
    job, prestaged = _prestage(url)
    with job:
        users = Path(url) / "notes" / "part-0.tsfile"
        users.parent.mkdir()
        users.write_bytes(b"the user's")
        path, (count, staged) = next(iter(prestaged.rewrites.items()))
        moved = replace(staged[0], staged_url=str(users))
        forged = replace(prestaged, rewrites={**prestaged.rewrites, path: (count, (moved,))})
        table = open_table(url)
        forged.save(table.io, table.location)
        with pytest.raises(OptionError, match="option 'replaceStaged'.*not a part this job"):
            _replace(url, replaceStaged=job.job)
    assert users.read_bytes() == b"the user's"
    assert open_table(url).version == version
