"""The shared options, parsed once into the context: before the command name (as pyiceberg's
``--output`` / ``--catalog``) or after it (as the docs' examples give them), with the same
answers; a root option a command has no use for is a usage error."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from typer.testing import CliRunner, Result

from tsfile_catalog.cli.main import app
from tsfile_catalog.sql.registry import Registry, parse_table_name
from tsfile_catalog.table import open_table


def run(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(app, list(args))


def answer(result: Result) -> list[dict[str, Any]]:
    assert result.exit_code == 0, result.output
    rows: list[dict[str, Any]] = json.loads(result.stdout)
    return rows


def test_json_before_or_after_the_command_is_the_same_answer(
    runner: CliRunner, table_dir: Path
) -> None:
    before = answer(run(runner, "--json", "history", str(table_dir)))
    after = answer(run(runner, "history", str(table_dir), "--json"))
    assert before == after and [r["version"] for r in before] == [1, 0]


def test_warehouse_and_options_before_the_command(
    runner: CliRunner, table_dir: Path, tmp_path: Path
) -> None:
    warehouse = str(tmp_path / "wh")
    Registry(warehouse).create(parse_table_name("weather"), str(table_dir), {})
    rows = answer(run(runner, "-w", warehouse, "--json", "describe", "weather"))
    assert rows[0] == {"col_name": "time", "data_type": "bigint", "category": "TIME"}
    # Root --option pairs and the command's add up: the root's timestampAs applies here.
    pairs = ["-o", "timestampAs=timestamp", "describe", str(table_dir), "-o", "fs.anon=false"]
    rows = answer(run(runner, *pairs, "--extended", "--json"))
    assert rows[0]["data_type"] == "timestamp"
    options = {r["col_name"]: r["data_type"] for r in rows}["Options"]
    assert "timestampAs=timestamp" in options and "fs.anon=false" in options
    # After the command name wins over before it.
    rows = answer(
        run(
            runner, "-w", str(tmp_path / "nowhere"), "history", "weather", "-w", warehouse, "--json"
        )
    )
    assert [r["version"] for r in rows] == [1, 0]


def test_root_options_are_checked_as_the_commands_are(runner: CliRunner, table_dir: Path) -> None:
    refused = run(runner, "-o", "fs.secret=hunter2", "history", str(table_dir))
    assert refused.exit_code == 1 and "credential" in refused.stderr
    assert "hunter2" not in refused.stderr


def test_time_zone_before_or_after_the_command(runner: CliRunner, table_dir: Path) -> None:
    # Version 1's commit time as New York wall time: read in UTC it is five hours earlier,
    # before the table existed.
    committed = dt.datetime.fromtimestamp(
        open_table(str(table_dir), version=1).timestamp_ms / 1000, tz=ZoneInfo("America/New_York")
    )
    local = committed.replace(tzinfo=None).isoformat(timespec="milliseconds")
    zone = "America/New_York"
    for args in (
        ["--time-zone", zone, "detail", str(table_dir), "--timestamp", local],
        ["detail", str(table_dir), "--timestamp", local, "--time-zone", zone],
    ):
        (row,) = answer(run(runner, *args, "--json"))
        assert row["version"] == 1
    in_utc = run(runner, "detail", str(table_dir), "--timestamp", local)
    assert in_utc.exit_code == 1 and "version" in in_utc.stderr


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["-w", "wh", "adopt", "somewhere"], "--warehouse"),
        (["--time-zone", "UTC", "history", "somewhere"], "--time-zone"),
        (["--time-zone", "UTC", "vacuum", "somewhere"], "--time-zone"),
    ],
)
def test_a_root_option_the_command_does_not_take_is_a_usage_error(
    runner: CliRunner, args: list[str], flag: str
) -> None:
    result = run(runner, *args)
    assert result.exit_code == 2, result.output
    assert f"{flag}: {args[-2]} does not take it" in result.stderr
