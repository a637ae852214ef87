"""The schema evolution commands (add-column, rename-column, drop-column, move-column,
alter-column-type) on a real table: one commit each, the data read back under the new schema
by the Spark-free scan, older versions keeping theirs, refusals in one line committing
nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner, Result

from tsfile_catalog.cli.main import app
from tsfile_catalog.table import open_table


def run(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(app, list(args))


def columns(result: Result) -> list[tuple[str, str, str]]:
    assert result.exit_code == 0, result.output
    return [(r["col_name"], r["data_type"], r["category"]) for r in json.loads(result.stdout)]


def test_each_verb_is_one_commit_and_reads_back(runner: CliRunner, table_dir: Path) -> None:
    table = str(table_dir)
    before = open_table(table)
    rows = before.scan().to_arrow().sort_by([("city", "ascending"), ("time", "ascending")])

    added = run(runner, "add-column", table, "wind", "double", "--after", "device", "--json")
    assert columns(added) == [
        ("time", "bigint", "TIME"),
        ("city", "string", "TAG"),
        ("device", "string", "TAG"),
        ("wind", "double", "FIELD"),
        ("temp", "double", "FIELD"),
    ]
    text = run(runner, "add-column", table, "gust", "INT")
    assert text.exit_code == 0, text.output
    assert f"version {before.version + 2}: added column 'gust'" in text.stdout
    run_ok = [
        ("rename-column", "temp", "temperature"),
        ("alter-column-type", "gust", "bigint"),
        ("move-column", "gust", "--after", "device"),
        ("drop-column", "wind"),
    ]
    for args in run_ok:
        done = run(runner, args[0], table, *args[1:], "--json")
        assert done.exit_code == 0, (args, done.output)
    assert columns(done) == [
        ("time", "bigint", "TIME"),
        ("city", "string", "TAG"),
        ("device", "string", "TAG"),
        ("gust", "bigint", "FIELD"),
        ("temperature", "double", "FIELD"),
    ]
    after = open_table(table)
    assert after.version == before.version + 6
    assert [h.operation for h in after.history(limit=6)] == [
        "DROP COLUMNS",
        "CHANGE COLUMN",
        "CHANGE COLUMN",
        "RENAME COLUMN",
        "ADD COLUMNS",
        "ADD COLUMNS",
    ]
    # The Spark-free scan reads every part under the new names; nothing was rewritten.
    read = after.scan().to_arrow().sort_by([("city", "ascending"), ("time", "ascending")])
    assert read.column_names == ["time", "city", "device", "gust", "temperature"]
    assert read.column("temperature").to_pylist() == rows.column("temp").to_pylist()
    assert read.column("gust").null_count == read.num_rows
    assert sorted(p.path for p in after.parts()) == sorted(p.path for p in before.parts())
    # Time travel reads the older version with its own schema.
    old = run(runner, "describe", table, "--version", str(before.version), "--json")
    assert [c[0] for c in columns(old)] == ["time", "city", "device", "temp"]


def test_refusals_are_one_line_and_commit_nothing(runner: CliRunner, table_dir: Path) -> None:
    table = str(table_dir)
    version = open_table(table).version
    refusals = {
        ("add-column", "wind", "varchar"): "type 'varchar' is not one tsfile tables support",
        ("add-column", "wind", "double", "--after", "snow"): (
            "cannot add column 'wind' to table .* AFTER snow: the table has no column 'snow'"
        ),
        ("add-column", "temp", "double"): "cannot add column 'temp' .*exists already",
        ("rename-column", "city", "town"): "cannot rename TAG column 'city'",
        ("drop-column", "temp", "snow"): "no column 'snow'",
        ("add-column", "wind", "double", "--first", "--after", "city"): "at most one of --first",
        ("move-column", "temp"): "exactly one of --first and --after COLUMN",
        ("move-column", "temp", "--first", "--after", "city"): "exactly one of --first and",
        ("move-column", "snow", "--first"): "no column 'snow'",
        ("alter-column-type", "temp", "int"): "cannot change column 'temp' .* DOUBLE to INT32",
    }
    for args, message in refusals.items():
        refused = run(runner, args[0], table, *args[1:])
        assert refused.exit_code == 1, (args, refused.output)
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1 and re.search(message, lines[0]), (args, refused.stderr)
    assert open_table(table).version == version
    # --if-exists skips what is missing, and says only what it dropped.
    assert run(runner, "add-column", table, "wind", "double").exit_code == 0
    partly = run(runner, "drop-column", table, "wind", "snow", "--if-exists")
    assert partly.exit_code == 0, partly.output
    assert f"version {version + 2}: dropped 'wind'\n" in partly.stdout
    version += 2
    # No column left to drop is no commit.
    skipped = run(runner, "drop-column", table, "snow", "--if-exists")
    assert skipped.exit_code == 0, skipped.output
    assert "no change, no commit" in skipped.stdout
    assert open_table(table).version == version


def test_move_column_puts_any_column_first_or_after_any_other(
    runner: CliRunner, table_dir: Path
) -> None:
    table = str(table_dir)
    before = open_table(table)
    rows = before.scan().to_arrow()
    first = run(runner, "move-column", table, "temp", "--first")
    assert first.exit_code == 0, first.output
    assert f"version {before.version + 1}: moved 'temp' first" in first.stdout
    moved = run(runner, "move-column", table, "time", "--after", "city", "--json")
    assert columns(moved) == [
        ("temp", "double", "FIELD"),
        ("city", "string", "TAG"),
        ("time", "bigint", "TIME"),
        ("device", "string", "TAG"),
    ]
    # The Spark-free scan reads in that order; the older version keeps its own.
    read = open_table(table).scan().to_arrow()
    assert read.column_names == ["temp", "city", "time", "device"]
    keys = [("time", "ascending"), ("city", "ascending"), ("device", "ascending")]
    assert read.select(rows.column_names).sort_by(keys).equals(rows.sort_by(keys))
    old = run(runner, "describe", table, "--version", str(before.version), "--json")
    assert [c[0] for c in columns(old)] == ["time", "city", "device", "temp"]
    added = run(runner, "add-column", table, "wind", "double", "--first", "--json")
    assert [c[0] for c in columns(added)] == ["wind", "temp", "city", "time", "device"]
