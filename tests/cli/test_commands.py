"""Every read command in-process (typer's CliRunner) against a real table: JSON parsed, text
shown, and the answers checked against the table and its files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from typer.testing import CliRunner, Result

from tests.cli.helpers import APPENDED, FILES, MINUTE, SCHEMA, T0
from tsfile_catalog.cli.main import app
from tsfile_catalog.formats.base import ScanSlice
from tsfile_catalog.formats.tsfile import TSFILE
from tsfile_catalog.io import FileIO
from tsfile_catalog.sql.registry import Registry, parse_table_name
from tsfile_catalog.table import append_parts, open_table


def run(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(app, list(args))


def run_json(runner: CliRunner, *args: str) -> list[dict[str, Any]]:
    result = run(runner, *args, "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert isinstance(rows, list)
    return rows


def file_rows(root: Path, name: str) -> pa.Table:
    """Every row of one part, read from the file itself."""
    url = str(root / name)
    query = ScanSlice(columns=("city", "device", "temp"), tag_names=("city", "device"))
    return pa.concat_tables(TSFILE.scan(FileIO(url), url, "weather", query))


def test_history_lists_every_commit_newest_first(runner: CliRunner, table_dir: Path) -> None:
    rows = run_json(runner, "history", str(table_dir))
    assert [r["version"] for r in rows] == [1, 0]
    assert [r["operation"] for r in rows] == ["WRITE", "ADOPT"]
    assert [r["rows_added"] for r in rows] == [10, 30]
    assert rows[1]["operation_parameters"]["files"] == "2"
    infos = open_table(str(table_dir)).history()
    assert [r["timestamp"] for r in rows] == [_iso_ms(info.timestamp_ms) for info in infos]
    assert [r["version"] for r in run_json(runner, "history", str(table_dir), "-n", "1")] == [1]


def _iso_ms(ms: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc).isoformat(
        timespec="milliseconds"
    )


def test_history_text_names_the_operations(runner: CliRunner, table_dir: Path) -> None:
    result = run(runner, "history", str(table_dir))
    assert result.exit_code == 0, result.output
    assert "ADOPT" in result.stdout and "WRITE" in result.stdout


def test_describe_shows_columns_and_details(runner: CliRunner, table_dir: Path) -> None:
    rows = run_json(runner, "describe", str(table_dir))
    assert [(r["col_name"], r["data_type"], r["category"]) for r in rows] == [
        ("time", "bigint", "TIME"),
        ("city", "string", "TAG"),
        ("device", "string", "TAG"),
        ("temp", "double", "FIELD"),
    ]
    extended = run_json(runner, "describe", str(table_dir), "--extended")
    details = {r["col_name"]: r["data_type"] for r in extended}
    assert details["Rows"] == "40" and details["Parts"] == "3"
    old = run_json(runner, "describe", str(table_dir), "--extended", "--version", "0")
    assert {r["col_name"]: r["data_type"] for r in old}["Rows"] == "30"


def test_detail_sums_the_parts(runner: CliRunner, table_dir: Path) -> None:
    (row,) = run_json(runner, "detail", str(table_dir))
    table = open_table(str(table_dir))
    assert row["version"] == 1
    assert row["num_parts"] == len(FILES) + len(APPENDED)
    assert row["num_rows"] == sum(p.row_count for p in table.parts()) == 40
    assert row["size_in_bytes"] == sum((table_dir / p.path).stat().st_size for p in table.parts())
    # Times as ISO-8601 in UTC (the table's unit is ms), the raw values beside them.
    assert (row["min_time"], row["max_time"]) == (_iso_ms(T0), _iso_ms(T0 + 14 * MINUTE))
    assert (row["min_time_raw"], row["max_time_raw"]) == (T0, T0 + 14 * MINUTE)
    assert row["min_time"] == "2023-11-14T22:13:20.000+00:00"
    assert row["num_devices"] == 3 and row["tag_columns"] == ["city", "device"]
    text = run(runner, "detail", str(table_dir))
    assert text.exit_code == 0 and "num_rows" in text.stdout


def test_parts_where_keeps_exactly_the_parts_holding_matches(
    runner: CliRunner, table_dir: Path
) -> None:
    where = f"time >= {T0 + 12 * MINUTE}"
    rows = run_json(runner, "parts", str(table_dir), "--where", where)
    status = {r["path"]: r["status"] for r in rows}
    assert status == {"a.tsfile": "pruned", "b.tsfile": "pruned", "c.tsfile": "kept"}
    for path, state in status.items():
        data = file_rows(table_dir, path)
        matches = pc.sum(pc.greater_equal(data["time"].cast(pa.int64()), T0 + 12 * MINUTE))
        assert (matches.as_py() or 0) > 0 if state == "kept" else not matches.as_py()
    everything = run_json(runner, "parts", str(table_dir))
    assert [r["status"] for r in everything] == ["kept"] * 3
    assert [r["rows"] for r in everything] == [20, 10, 10]
    parts = {p.path: p for p in open_table(str(table_dir)).parts()}
    for r in everything:
        part = parts[r["path"]]
        assert (r["min_time_raw"], r["max_time_raw"]) == (part.min_time, part.max_time)
        assert (r["min_time"], r["max_time"]) == (_iso_ms(part.min_time), _iso_ms(part.max_time))


def test_json_times_follow_the_tables_precision(runner: CliRunner, table_dir: Path) -> None:
    # Read as nanoseconds, the same raw numbers are instants 1e6 times closer to the epoch.
    rows = run_json(runner, "parts", str(table_dir), "-o", "timestampPrecision=ns")
    first = next(r for r in rows if r["path"] == "a.tsfile")
    assert first["min_time_raw"] == T0
    assert first["min_time"] == "1970-01-01T00:28:20.000000000+00:00"
    plan = run_json(runner, "plan", str(table_dir), "--where", "city = 'sh'")
    opened = next(r for r in plan if r["status"] == "opened")
    assert (opened["min_time"], opened["min_time_raw"]) == (_iso_ms(T0), T0)


def test_parts_text_has_a_summary(runner: CliRunner, table_dir: Path) -> None:
    result = run(runner, "parts", str(table_dir), "--where", "city = 'sh'")
    assert result.exit_code == 0, result.output
    assert "3 parts: 1 kept, 2 pruned" in result.stdout


def test_plan_opens_and_prunes_like_table_plan(runner: CliRunner, table_dir: Path) -> None:
    where = "city = 'bj' AND device = 'd2'"
    rows = run_json(runner, "plan", str(table_dir), "--where", where, "--columns", "temp")
    assert {r["part"]: r["status"] for r in rows} == {
        "a.tsfile": "opened",
        "b.tsfile": "pruned",
        "c.tsfile": "pruned",
    }
    assert {r["columns"] for r in rows} == {"temp"} and {r["pushed_where"] for r in rows} == {where}
    plan = open_table(str(table_dir)).plan(where)
    assert [p.path for p in plan.parts] == [r["part"] for r in rows if r["status"] == "opened"]
    text = run(runner, "plan", str(table_dir), "--where", where)
    assert "opens 1 of 3 parts (20 rows before filtering), prunes 2" in text.stdout


def test_plan_parts_and_detail_show_the_slices_a_read_merges(
    runner: CliRunner, table_dir: Path
) -> None:
    # c.tsfile (version 1) re-sends bj.d1 over minutes 5-9 of a.tsfile's: under the key
    # (key.duplicates = last, a new table's default) a read merges those two slices.
    rows = run_json(runner, "plan", str(table_dir), "--where", "city = 'bj'")
    assert {r["part"]: r["merge"] for r in rows if r["status"] == "opened"} == {
        "a.tsfile": "m1:1",
        "c.tsfile": "m1:1",
    }
    text = run(runner, "plan", str(table_dir), "--where", "city = 'bj'").stdout
    assert "merges 2 parts in 1 group " in text
    parts = run_json(runner, "parts", str(table_dir))
    assert {r["path"]: r["merged_slices"] for r in parts} == {
        "a.tsfile": 1,
        "b.tsfile": 0,
        "c.tsfile": 1,
    }
    assert run_json(runner, "detail", str(table_dir))[0]["merged_slices"] == 2
    # Without the device the overlap is in, nothing merges.
    rows = run_json(runner, "plan", str(table_dir), "--where", "city = 'sh'")
    assert {r["merge"] for r in rows} == {""}
    # An append-only table keeps both rows and merges nothing.
    append_parts(str(table_dir), [], SCHEMA, properties={"key.duplicates": "keep"})
    rows = run_json(runner, "plan", str(table_dir), "--where", "city = 'bj'")
    assert {r["merge"] for r in rows} == {""}
    assert "merges" not in run(runner, "plan", str(table_dir), "--where", "city = 'bj'").stdout
    assert run_json(runner, "detail", str(table_dir))[0]["merged_slices"] == 0


def test_catalog_names_resolve_through_the_registry(
    runner: CliRunner, table_dir: Path, tmp_path: Path
) -> None:
    warehouse = tmp_path / "warehouse"
    registry = Registry(str(warehouse))
    registry.create(parse_table_name("weather"), str(table_dir), {"timestampAs": "timestamp"})
    registry.create(parse_table_name("ops.weather2"), str(table_dir / "nowhere"), {})
    by_name = run_json(runner, "history", "weather", "--warehouse", str(warehouse))
    assert by_name == run_json(runner, "history", str(table_dir))
    # The stored timestampAs decides the type DESCRIBE shows for time, as in SQL.
    rows = run_json(runner, "describe", "-w", str(warehouse), "weather", "--extended")
    assert rows[0] == {"col_name": "time", "data_type": "timestamp", "category": "TIME"}
    assert {r["col_name"]: r["data_type"] for r in rows}["Name"] == "weather"

    missing = run(runner, "history", "nope", "--warehouse", str(warehouse))
    assert missing.exit_code == 1
    assert missing.stderr.strip() == (f"error: table 'nope' is not in the catalog at {warehouse}")
    gone = run(runner, "detail", "ops.weather2", "--warehouse", str(warehouse))
    assert gone.exit_code == 1
    assert "'ops.weather2' is registered at" in gone.stderr


def test_detail_shows_the_declared_completeness(runner: CliRunner, table_dir: Path) -> None:
    (before,) = run_json(runner, "detail", str(table_dir))
    assert before["complete_until"] is None  # nothing declared yet
    schema = open_table(str(table_dir)).schema
    append_parts(str(table_dir), [], schema, complete_until=T0 + 15 * MINUTE)
    (after,) = run_json(runner, "detail", str(table_dir))
    assert after["complete_until"] == _iso_ms(T0 + 15 * MINUTE)
    assert after["complete_until_raw"] == T0 + 15 * MINUTE
    assert "complete_until" in run(runner, "detail", str(table_dir)).stdout
