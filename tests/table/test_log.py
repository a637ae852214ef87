"""Reading the manifest log: time travel, checkpoints, and corrupt or hostile log files."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from tests.table.helpers import SCHEMA, append_n, log_file, part, paths
from tsfile_catalog.datasource.source import resolve
from tsfile_catalog.exceptions import (
    CorruptManifestError,
    OptionError,
    TableNotFoundError,
    VersionNotFoundError,
)
from tsfile_catalog.metadata.part_list import PartList
from tsfile_catalog.metadata.parts import PendingPart
from tsfile_catalog.options import parse_read_options
from tsfile_catalog.table import MANIFEST_DIR, append_parts, clear_cache, open_table, vacuum

# -- time travel ------------------------------------------------------------------------------


def test_time_travel_by_version(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 3)
    assert [len(open_table(url, version=v).parts()) for v in range(3)] == [1, 2, 3]
    with pytest.raises(VersionNotFoundError, match="no version 7.*versions 0..2"):
        open_table(url, version=7)


def test_time_travel_by_timestamp(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 3)
    stamps = [h.timestamp_ms for h in reversed(open_table(url).history())]
    assert open_table(url, timestamp=stamps[1]).version == 1
    assert open_table(url, timestamp=stamps[2] - 1).version == 1
    assert open_table(url, timestamp=str(stamps[0])).version == 0
    iso = dt.datetime.fromtimestamp(stamps[1] / 1000, tz=dt.timezone.utc).isoformat()
    assert open_table(url, timestamp=iso).version == 1
    naive = iso.replace("+00:00", "")
    assert open_table(url, timestamp=naive).version == 1, "naive timestamps are UTC"
    assert open_table(url, timestamp=stamps[2] + 10**9).version == 2
    with pytest.raises(VersionNotFoundError, match="no version of table .* at or before"):
        open_table(url, timestamp=stamps[0] - 1)
    with pytest.raises(VersionNotFoundError, match="at or before 2001-01-01"):
        open_table(url, timestamp="2001-01-01")


def test_time_travel_naive_timestamp_in_a_time_zone(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 3)
    stamp = [h.timestamp_ms for h in reversed(open_table(url).history())][1]
    instant = dt.datetime.fromtimestamp(stamp / 1000, tz=dt.timezone.utc)
    # The wall-clock time of version 1 in Shanghai, as a session there would show it.
    wall = instant.astimezone(ZoneInfo("Asia/Shanghai")).replace(tzinfo=None).isoformat()
    assert open_table(url, timestamp=wall, time_zone="Asia/Shanghai").version == 1
    assert open_table(url, timestamp=wall, time_zone="+08:00").version == 1
    assert open_table(url, timestamp=wall).version == 2, "without a zone, naive is UTC"
    # An explicit offset names the instant whatever the zone.
    assert open_table(url, timestamp=instant.isoformat(), time_zone="Asia/Shanghai").version == 1
    options = parse_read_options({"path": url, "timestampAsOf": wall, "timeZone": "+08:00"})
    assert resolve(options).version == 1, "the timeZone read option applies to timestampAsOf"
    with pytest.raises(OptionError, match="'Mars/Base'"):
        open_table(url, timestamp=wall, time_zone="Mars/Base")


def test_time_travel_options_are_validated(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 1)
    with pytest.raises(OptionError, match="not both"):
        open_table(url, version=0, timestamp=0)
    with pytest.raises(OptionError, match="ISO-8601"):
        open_table(url, timestamp="yesterday")


# -- corruption -------------------------------------------------------------------------------


def test_truncated_commit_names_the_file_and_older_versions_stay_readable(
    tmp_path: Path,
) -> None:
    url = str(tmp_path)
    append_n(url, 3)
    broken = log_file(tmp_path, 2)
    broken.write_bytes(broken.read_bytes()[:40])
    clear_cache()
    with pytest.raises(CorruptManifestError, match=broken.name):
        open_table(url)
    assert len(open_table(url, version=1).parts()) == 2
    assert len(open_table(url, version=1, use_cache=False).parts()) == 2


def test_garbage_commit_file(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 2)
    log_file(tmp_path, 1).write_bytes(b"\x00\xffnot json")
    with pytest.raises(CorruptManifestError, match=log_file(tmp_path, 1).name):
        open_table(url, use_cache=False)


def test_part_path_escaping_the_root_is_corrupt(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 2)
    commit_file = log_file(tmp_path, 1)
    obj = json.loads(commit_file.read_bytes())
    obj["actions"][0]["add"]["path"] = "../../etc/passwd"
    commit_file.write_text(json.dumps(obj))
    with pytest.raises(CorruptManifestError, match=f"{commit_file.name}.*etc/passwd"):
        open_table(url, use_cache=False)
    assert len(open_table(url, version=0, use_cache=False).parts()) == 1


def test_missing_commit_file(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 3)
    log_file(tmp_path, 1).unlink()
    with pytest.raises(CorruptManifestError, match="version 1 is missing"):
        open_table(url, use_cache=False)


# -- checkpoints ------------------------------------------------------------------------------


def test_checkpoint_every_ten_commits(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 23)
    names = os.listdir(tmp_path / MANIFEST_DIR)
    assert sorted(n for n in names if "checkpoint." in n) == [
        log_file(tmp_path, 10, ".checkpoint.parquet").name,
        log_file(tmp_path, 20, ".checkpoint.parquet").name,
    ]
    hint = json.loads((tmp_path / MANIFEST_DIR / "_last_checkpoint").read_text())
    assert hint["version"] == 20
    expected = open_table(url).snapshot
    for version in range(20):
        log_file(tmp_path, version).unlink()
    loaded = open_table(url, use_cache=False)
    assert loaded.snapshot == expected, "checkpoint 20 + commits 21, 22"
    assert open_table(url, version=20, use_cache=False).version == 20
    with pytest.raises(VersionNotFoundError, match="no version 15.*versions 20..22"):
        open_table(url, version=15, use_cache=False)


def test_a_plan_builds_only_the_kept_parts_of_the_commits_after_a_checkpoint(
    tmp_path: Path,
) -> None:
    url = str(tmp_path)
    append_n(url, 14)  # checkpoint 10, then commits 11..13 adding p11..p13
    expected = open_table(url, use_cache=False).parts()
    table = open_table(url, use_cache=False)
    parts = table.snapshot.parts
    assert isinstance(parts, PartList)
    assert [p.path for p in parts.tail] == ["p11.tsfile", "p12.tsfile", "p13.tsfile"]
    assert all(isinstance(p, PendingPart) for p in parts.tail), "opening builds none"
    plan = table.plan("time >= 120 AND time < 130")  # p12 only
    assert [p.path for p in plan.parts] == ["p12.tsfile"]
    assert plan.parts[0] is parts[12], "the kept part is the one the snapshot built"
    assert list(parts) == list(expected)


@pytest.mark.parametrize("hint", [None, b'{"version": 0}', b'{"version": 990}', b"garbage"])
def test_last_checkpoint_is_only_a_hint(tmp_path: Path, hint: bytes | None) -> None:
    url = str(tmp_path)
    append_n(url, 13)
    expected = open_table(url).snapshot
    path = tmp_path / MANIFEST_DIR / "_last_checkpoint"
    if hint is None:
        path.unlink()
    else:
        path.write_bytes(hint)
    assert open_table(url, use_cache=False).snapshot == expected


def test_corrupt_checkpoint_falls_back_to_the_commits(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_n(url, 12)
    expected = open_table(url).snapshot
    log_file(tmp_path, 10, ".checkpoint.parquet").write_bytes(b'{"format_version": 1, "vers')
    assert open_table(url, use_cache=False).snapshot == expected


# -- hostile manifest files -------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["Infinity", "nested", "directory", "next-directory"])
def test_hostile_commit_files_are_corrupt_and_named(tmp_path: Path, damage: str) -> None:
    url = str(tmp_path)
    append_n(url, 3)
    target = log_file(tmp_path, 3 if damage == "next-directory" else 1)
    if damage == "Infinity":
        obj = json.loads(target.read_bytes())
        obj["actions"][0]["add"]["size_bytes"] = float("inf")
        obj["commit_info"]["rows_added"] = float("inf")
        target.write_text(json.dumps(obj))
    elif damage == "nested":
        target.write_bytes(b'{"format_version": 1, "commit_info": ' + b"[" * 10**5 + b"]" * 10**5)
    else:
        target.unlink(missing_ok=True)
        target.mkdir()
    clear_cache()
    attempts = [
        lambda: open_table(url),
        lambda: open_table(url, use_cache=False),
        lambda: append_parts(url, [part("x.tsfile")], SCHEMA),
        lambda: vacuum(url),
    ]
    if damage != "next-directory":
        attempts.append(lambda: open_table(url, timestamp=10**14))  # after every commit
    for attempt in attempts:
        with pytest.raises(CorruptManifestError, match=target.name):
            attempt()
    assert [h.version for h in open_table(url, version=0).history()] == [0]


def test_an_empty_manifest_folder_does_not_block_the_first_write(tmp_path: Path) -> None:
    # what a first commit killed after creating the folder leaves
    (tmp_path / MANIFEST_DIR).mkdir()
    with pytest.raises(TableNotFoundError, match="holds no commit"):
        open_table(str(tmp_path))
    assert append_parts(str(tmp_path), [part("a.tsfile")], SCHEMA) == 0
    assert paths(open_table(str(tmp_path))) == ["a.tsfile"]
