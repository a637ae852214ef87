"""Pure retention plans: which removed parts VACUUM may delete, which versions EXPIRE drops."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from tests.factories import part_file, table_schema
from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.metadata.manifest import (
    Action,
    AddPart,
    Commit,
    Operation,
    RemovePart,
    SetSchema,
    Snapshot,
    apply,
    prepare_commit,
)
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.retention import (
    check_retention,
    duration_ms,
    format_duration,
    plan_expire,
    plan_vacuum,
)

SCHEMA = table_schema("weather")


def _log(
    first: tuple[int, Sequence[Action]], *later: tuple[int, Sequence[Action]]
) -> tuple[Snapshot, list[Commit]]:
    """Version 0 (``first``: timestamp, actions) as a snapshot, and ``later`` as commits."""
    timestamp, actions = first
    base = apply(
        None,
        prepare_commit(
            [SetSchema(SCHEMA, 0), *actions],
            base=None,
            timestamp_ms=timestamp,
            operation=Operation.WRITE,
        ),
    )
    snapshot, commits = base, []
    for timestamp, actions in later:
        commit = prepare_commit(
            actions, base=snapshot, timestamp_ms=timestamp, operation=Operation.WRITE
        )
        commits.append(commit)
        snapshot = apply(snapshot, commit)
    return base, commits


def _overwrite(old: PartFile, new: PartFile) -> list[Action]:
    return [RemovePart(old.path, old.row_count, old.size_bytes), AddPart(new)]


A, B, C = (part_file(f"{n}.tsfile", size_bytes=s) for n, s in (("a", 10), ("b", 20), ("c", 30)))


def test_a_part_goes_once_its_removal_is_older_than_the_cutoff() -> None:
    base, commits = _log((0, [AddPart(A)]), (1000, _overwrite(A, B)), (2000, _overwrite(B, C)))
    assert plan_vacuum(base, commits, cutoff_ms=1000).reclaimable == (), "strictly older"
    plan = plan_vacuum(base, commits, cutoff_ms=1500)
    assert [(r.path, r.removed_version, r.size_bytes) for r in plan.reclaimable] == [
        ("a.tsfile", 1, 10)
    ]
    assert plan.intact_from == 1, "version 0 read a; versions 1 and later are intact"
    assert plan.referenced == {"a.tsfile", "b.tsfile", "c.tsfile"}
    later = plan_vacuum(base, commits, cutoff_ms=2001)
    assert [r.path for r in later.reclaimable] == ["a.tsfile", "b.tsfile"]
    assert later.intact_from == 2 and later.bytes == 30


def test_a_part_added_back_is_kept() -> None:
    # A restore of version 0 adds a.tsfile again: the current version reads it.
    base, commits = _log((0, [AddPart(A)]), (1000, _overwrite(A, B)), (2000, _overwrite(B, A)))
    plan = plan_vacuum(base, commits, cutoff_ms=5000)
    assert [r.path for r in plan.reclaimable] == ["b.tsfile"]
    assert plan.intact_from == 2


def test_external_parts_are_never_reclaimed() -> None:
    external = part_file("user/data.parquet", format="parquet")
    base, commits = _log((0, [AddPart(A), AddPart(external)]), (1000, _overwrite(external, B)))
    assert plan_vacuum(base, commits, cutoff_ms=5000).reclaimable == ()
    assert plan_vacuum(base, commits, cutoff_ms=5000).intact_from is None


def test_expire_keeps_the_version_current_at_the_cutoff() -> None:
    log = [(0, 100), (1, 200), (2, 300), (3, 400)]
    plan = plan_expire(log, [], cutoff_ms=250)
    assert (plan.oldest_kept, plan.expired_versions, plan.checkpoint_needed) == (1, (0,), True)
    assert plan_expire(log, [], cutoff_ms=200).oldest_kept == 1
    assert plan_expire(log, [], cutoff_ms=50).expired_versions == ()
    assert not plan_expire(log, [], cutoff_ms=50).checkpoint_needed
    covered = plan_expire(log, [2], cutoff_ms=350)
    assert (covered.oldest_kept, covered.expired_versions) == (2, (0, 1))
    assert not covered.checkpoint_needed and covered.expired_checkpoints == ()


def test_expire_retain_last_and_expired_checkpoints() -> None:
    log = [(v, 100 * v) for v in range(5, 25)]
    plan = plan_expire(log, [10, 20], cutoff_ms=10**9, retain_last=3)
    assert plan.oldest_kept == 22 and plan.expired_versions == tuple(range(5, 22))
    assert plan.expired_checkpoints == (10, 20) and plan.checkpoint_needed
    assert plan_expire(log, [10], cutoff_ms=None, retain_last=30).expired_versions == ()
    with pytest.raises(OptionError, match="at least 1"):
        plan_expire(log, [], cutoff_ms=None, retain_last=0)
    with pytest.raises(OptionError, match="needs a retention"):
        plan_expire(log, [], cutoff_ms=None)


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("7 days", 7 * 86_400_000),
        ("interval 168 hours", 7 * 86_400_000),
        ("30d", 30 * 86_400_000),
        ("1 hour", 3_600_000),
        ("90 seconds", 90_000),
        ("0 ms", 0),
    ],
)
def test_durations(text: str, ms: int) -> None:
    assert duration_ms(text, what="x") == ms


def test_bad_duration_names_the_property() -> None:
    with pytest.raises(OptionError, match="deletedFileRetention.*'seven days'"):
        duration_ms("seven days", what="table property 'deletedFileRetention'")
    assert format_duration(7 * 86_400_000) == "7 days" and format_duration(1500) == "1500 ms"


def test_retention_check() -> None:
    week = 7 * 86_400_000
    check_retention(week, {}, enabled=True)
    with pytest.raises(OptionError, match="below the table's deletedFileRetention of 7 days"):
        check_retention(week - 1, {}, enabled=True)
    check_retention(0, {}, enabled=False)
    check_retention(3_600_000, {"deletedFileRetention": "1 hour"}, enabled=True)
    with pytest.raises(OptionError, match=">= 0"):
        check_retention(-1, {}, enabled=False)
