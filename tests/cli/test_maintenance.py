"""The commands that change a table: vacuum (deletes only orphans the writers left) and adopt
(a manifest for a directory of TsFiles), locally and on S3 with --option storage settings."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from tests.cli.helpers import FILES, WRITTEN, write_appends, write_file
from tests.datasource.helpers import age
from tsfile_catalog.cli.main import app
from tsfile_catalog.table import open_table


def run(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(app, list(args))


def orphan(root: Path) -> Path:
    """A part file named as the writer names them, that no version references."""
    path = root / f"part-{uuid.uuid4().hex}-00000.tsfile"
    path.write_bytes(b"TsFile\x04 then a write that died before its commit")
    return path


def test_vacuum_deletes_only_old_orphans(runner: CliRunner, table_dir: Path) -> None:
    old = orphan(table_dir)
    (table_dir / "notes.txt").write_text("a user's file")
    age(table_dir)
    fresh = orphan(table_dir)

    dry = run(runner, "vacuum", str(table_dir), "--dry-run", "--json")
    assert dry.exit_code == 0, dry.output
    assert json.loads(dry.stdout) == [{"path": str(old), "deleted": False}]
    assert old.exists()

    kept = run(runner, "vacuum", str(table_dir), "--retain", "60d", "--json")
    assert json.loads(kept.stdout) == []

    # Below the table's deletedFileRetention (7 days) only with the check turned off, as
    # Delta's retentionDurationCheck.
    refused = run(runner, "vacuum", str(table_dir), "--retain", "0", "--json")
    assert refused.exit_code == 1 and "deletedFileRetention" in refused.stderr
    # The refusal names the way out as this program spells it, not as Python does.
    assert "pass --no-retention-check" in refused.stderr
    assert "retention_check" not in refused.stderr
    assert old.exists() and fresh.exists()

    done = run(runner, "vacuum", str(table_dir), "--retain", "0", "--no-retention-check", "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) == [
        {"path": str(p), "deleted": True} for p in sorted([old, fresh], key=str)
    ]
    assert not old.exists() and not fresh.exists()
    assert (table_dir / "notes.txt").exists()
    table = open_table(str(table_dir))
    assert all((table_dir / p.path).exists() for p in table.parts())


def test_vacuum_text_and_bad_retention(runner: CliRunner, table_dir: Path) -> None:
    result = run(runner, "vacuum", str(table_dir), "--dry-run")
    assert result.exit_code == 0 and "would delete 0 files and folders" in result.stdout
    bad = run(runner, "vacuum", str(table_dir), "--retain", "soon")
    assert bad.exit_code == 1
    assert bad.stderr.startswith("error: --retain 'soon' is not a duration")
    missing = run(runner, "vacuum", str(table_dir / "nothing"))
    assert missing.exit_code == 1 and "no tsfile-catalog table" in missing.stderr


def test_adopt_makes_a_table_of_a_directory(runner: CliRunner, tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    for name, devices in FILES.items():
        write_file(root, name, devices)
    result = run(runner, "adopt", str(root), "--json")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)
    assert row["location"] == str(root) and row["version"] == 0
    assert (row["parts"], row["rows"]) == (2, 30)
    table = open_table(str(root))
    assert sorted(p.path for p in table.parts()) == sorted(FILES)

    again = run(runner, "adopt", str(root))
    assert again.exit_code == 1
    assert again.stderr.strip() == f"error: {root} already has a table manifest"
    empty = tmp_path / "empty"
    empty.mkdir()
    none = run(runner, "adopt", str(empty))
    assert none.exit_code == 1 and "no *.tsfile files" in none.stderr


def test_adopt_refuses_a_warehouse_root_holding_tables(runner: CliRunner, tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    table = warehouse / "weather"
    write_appends(table, WRITTEN[:2])
    run(runner, "drop-part", str(table), open_table(str(table)).parts()[0].path)
    assert len(open_table(str(table)).parts()) == 1 and len(list(table.glob("*.tsfile"))) == 2

    result = run(runner, "adopt", str(warehouse))

    assert result.exit_code == 1
    assert f"holds the table at {table} (its _tsfile_manifest/)" in result.stderr
    assert not (warehouse / "_tsfile_manifest").exists()
    assert run(runner, "adopt", str(table)).stderr.strip().endswith("already has a table manifest")


@pytest.mark.s3
def test_adopt_and_history_on_s3_with_an_endpoint_option(
    runner: CliRunner, tmp_path: Path, s3_table: tuple[str, dict[str, Any]]
) -> None:
    import s3fs

    url, storage = s3_table
    for name, devices in FILES.items():
        write_file(tmp_path, name, devices)
        s3fs.S3FileSystem(**storage).put(str(tmp_path / name), f"{url}/{name}")
    # Only the endpoint on the command line: the credentials come from the environment.
    endpoint = f"fs.endpoint_url={storage['endpoint_url']}"
    adopted = run(runner, "adopt", url, "-o", endpoint, "--json")
    assert adopted.exit_code == 0, adopted.output
    assert json.loads(adopted.stdout)[0]["rows"] == 30
    history = run(runner, "history", url, "--option", endpoint, "--json")
    assert history.exit_code == 0, history.output
    assert [r["operation"] for r in json.loads(history.stdout)] == ["ADOPT"]
