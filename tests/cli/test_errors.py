"""Exit codes: 1 with one clear line on stderr for user errors (a traceback only with
--debug), 2 for usage errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tsfile_catalog.cli.main import app
from tsfile_catalog.exceptions import PredicateError, TableNotFoundError


def run(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(app, list(args))


def one_error_line(result: Result) -> str:
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert result.stdout == ""
    return lines[0]


@pytest.mark.parametrize("command", ["history", "describe", "detail", "parts"])
def test_a_missing_table_is_one_line_naming_it(
    runner: CliRunner, tmp_path: Path, command: str
) -> None:
    line = one_error_line(run(runner, command, str(tmp_path / "nothing")))
    where = tmp_path / "nothing"
    assert line == f"error: no tsfile-catalog table at {where} (no _tsfile_manifest/)"


def test_a_bad_where_is_one_line(runner: CliRunner, table_dir: Path) -> None:
    line = one_error_line(run(runner, "parts", str(table_dir), "--where", "time >>= 3"))
    assert line.startswith("error: cannot parse predicate 'time >>= 3'"), line


def test_an_unknown_column_is_named(runner: CliRunner, table_dir: Path) -> None:
    line = one_error_line(run(runner, "plan", str(table_dir), "--where", "humidity > 3"))
    assert "humidity" in line
    line = one_error_line(
        run(runner, "plan", str(table_dir), "--where", "temp > 3", "--columns", "temp,rain")
    )
    assert "'rain'" in line and "temp" in line


def test_a_missing_version_is_one_line(runner: CliRunner, table_dir: Path) -> None:
    line = one_error_line(run(runner, "describe", str(table_dir), "--version", "7"))
    assert "no version 7" in line


def test_debug_lets_the_error_through_with_its_traceback(
    runner: CliRunner, tmp_path: Path, table_dir: Path
) -> None:
    result = run(runner, "--debug", "history", str(tmp_path / "nothing"))
    assert result.exit_code == 1
    assert isinstance(result.exception, TableNotFoundError)
    result = run(runner, "--debug", "plan", str(table_dir), "--where", "humidity > 3")
    assert isinstance(result.exception, PredicateError)


def test_credentials_are_refused_on_the_command_line(runner: CliRunner, table_dir: Path) -> None:
    line = one_error_line(run(runner, "history", str(table_dir), "-o", "fs.secret=hunter2"))
    assert "credential" in line and "environment" in line and "hunter2" not in line
    line = one_error_line(run(runner, "history", str(table_dir), "-o", "colour=red"))
    assert "'colour'" in line
    line = one_error_line(run(runner, "history", str(table_dir), "-o", "fs.endpoint_url"))
    assert "KEY=VALUE" in line


def test_a_url_with_credentials_is_refused_redacted(runner: CliRunner) -> None:
    for url in ("s3://user:hunter2@bucket/t", "https://h/t?sv=1&sig=hunter2"):
        line = one_error_line(run(runner, "history", url))
        assert "carries credentials" in line and "***" in line and "hunter2" not in line


@pytest.mark.parametrize(
    "args",
    [
        ["frobnicate"],
        ["history"],
        ["plan", "somewhere"],  # --where is required
        ["history", "t", "--no-such-option"],
        ["timeline", "t", "picture.gif"],
    ],
)
def test_usage_errors_exit_2(runner: CliRunner, args: list[str]) -> None:
    result = run(runner, *args)
    assert result.exit_code == 2, result.output
    assert "Usage:" in result.stderr


def test_no_arguments_prints_help(runner: CliRunner) -> None:
    result = run(runner)
    assert "history" in result.output and "timeline" in result.output


@pytest.mark.parametrize(
    "command",
    [
        ["history", "{part}"],
        ["describe", "{part}"],
        ["parts", "{part}"],
        ["vacuum", "{part}"],
        ["expire", "{part}"],
        ["restore", "{part}", "--version", "0"],
        ["optimize", "{part}"],
        ["drop-part", "{part}", "x.tsfile"],
        ["add-part", "{part}", "x.parquet", "-f", "parquet"],
    ],
)
def test_a_part_file_for_a_table_is_one_line_naming_the_folder(
    runner: CliRunner, table_dir: Path, command: list[str]
) -> None:
    part = table_dir / "a.tsfile"
    line = one_error_line(run(runner, *(w.format(part=part) for w in command)))
    assert line == (
        f"error: {part} is a file, not a table: name the table's folder, the one holding "
        f"_tsfile_manifest/ (perhaps {table_dir})"
    )
