"""The commands that commit a new version in this process (no Spark): optimize, expire,
restore, add-part and drop-part. Each one's effect is checked on the table itself (rows,
parts, history), its --json answer parsed, and a user error is one line with exit code 1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from typer.testing import CliRunner, Result

from tests.cli.helpers import T0
from tsfile_catalog.cli.main import app
from tsfile_catalog.table import open_table

# The fixture table's rows: 40 written, but c.tsfile (version 1) re-sends 5 of bj/d1's times
# in a.tsfile, and a new table (key.duplicates = last) keeps only the later row of each.
ROWS = 35


def run(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(app, list(args))


def answer(result: Result) -> list[dict[str, Any]]:
    assert result.exit_code == 0, result.output
    rows: list[dict[str, Any]] = json.loads(result.stdout)
    return rows


def one_error_line(result: Result) -> str:
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def rows_of(root: Path, **scan: Any) -> list[tuple[Any, ...]]:
    data = open_table(str(root)).scan(**scan).to_arrow()
    return sorted(tuple(r.values()) for r in data.to_pylist())


def operation(root: Path) -> str:
    return str(open_table(str(root)).history(limit=1)[0].operation)


# -- optimize ---------------------------------------------------------------------------------


def test_optimize_compacts_parts_and_keeps_every_row(runner: CliRunner, written_dir: Path) -> None:
    before = rows_of(written_dir)
    (row,) = answer(run(runner, "optimize", str(written_dir), "--target-size", "1MB", "--json"))
    table = open_table(str(written_dir))
    assert row["version"] == table.version == 3
    assert (row["num_files_removed"], row["num_files_added"]) == (3, 1)
    assert row["bytes_added"] == sum(p.size_bytes for p in table.parts())
    assert len(table.parts()) == 1 and operation(written_dir) == "OPTIMIZE"
    assert rows_of(written_dir) == before and len(before) == 30
    # The old files stay for time travel.
    assert rows_of(written_dir, version=2) == before

    again = run(runner, "optimize", str(written_dir))
    assert again.exit_code == 0 and "nothing to compact" in again.stdout
    assert open_table(str(written_dir)).version == 3


def test_optimize_where_rewrites_only_the_parts_it_may_match(
    runner: CliRunner, written_dir: Path
) -> None:
    sh = [p for p in open_table(str(written_dir)).parts() if p.tags["city"].values == {"sh"}]
    result = run(runner, "optimize", str(written_dir), "--where", "city = 'bj'")
    assert result.exit_code == 0, result.output
    assert "version 3: 2 parts (20 rows) rewritten as 1" in result.stdout
    parts = open_table(str(written_dir)).parts()
    assert len(parts) == 2 and sh[0] in parts


def test_optimize_a_catalog_table_writes_with_its_stored_options(
    runner: CliRunner, written_dir: Path, tmp_path: Path
) -> None:
    from tsfile_catalog.sql.registry import Registry, parse_table_name

    warehouse = str(tmp_path / "wh")
    stored = {"compression": "GZIP", "encoding": "bogus"}
    Registry(warehouse).create(parse_table_name("weather"), str(written_dir), stored)
    # The stored write options reach the rewrite: a bad one is refused before any write.
    refused = run(runner, "optimize", "weather", "-w", warehouse)
    assert "option 'encoding' = 'bogus' is not a TsFile encoding" in one_error_line(refused)
    assert open_table(str(written_dir)).version == 2
    other = str(tmp_path / "wh2")
    Registry(other).create(parse_table_name("weather"), str(written_dir), {"compression": "GZIP"})
    (row,) = answer(run(runner, "optimize", "weather", "-w", other, "--json"))
    assert row["version"] == 3 and len(rows_of(written_dir)) == 30


def test_optimize_user_errors(runner: CliRunner, written_dir: Path) -> None:
    line = one_error_line(run(runner, "optimize", str(written_dir), "--target-size", "big"))
    assert line.startswith("error: --target-size 'big' is not a size"), line
    line = one_error_line(run(runner, "optimize", str(written_dir), "--where", "temp > 1"))
    assert "FIELD column 'temp'" in line
    assert open_table(str(written_dir)).version == 2


# -- expire -----------------------------------------------------------------------------------


def test_expire_removes_old_versions_from_history(runner: CliRunner, table_dir: Path) -> None:
    last = run(runner, "expire", str(table_dir), "--retain", "0", "--retain-last", "2", "--json")
    assert answer(last)[0]["expired_versions"] == 0
    dry = answer(run(runner, "expire", str(table_dir), "--retain", "0", "--dry-run", "--json"))
    assert dry == [
        {
            "oldest_version": 1,
            "expired_versions": 1,
            "expired_checkpoints": 0,
            "checkpoint_written": False,
        }
    ]
    assert [i.version for i in open_table(str(table_dir)).history()] == [1, 0]

    done = answer(run(runner, "expire", str(table_dir), "--retain", "0", "--json"))
    assert done[0]["expired_versions"] == 1 and done[0]["checkpoint_written"] is True
    history = answer(run(runner, "history", str(table_dir), "--json"))
    assert [r["version"] for r in history] == [1]
    line = one_error_line(run(runner, "describe", str(table_dir), "--version", "0"))
    assert "oldest available version is 1" in line
    assert len(rows_of(table_dir)) == ROWS


def test_expire_keeps_what_the_default_retention_and_retain_last_keep(
    runner: CliRunner, table_dir: Path
) -> None:
    # Both versions are seconds old: the table's 30-day logRetention keeps them.
    default = answer(run(runner, "expire", str(table_dir), "--json"))
    assert default[0]["expired_versions"] == 0
    # RETAIN LAST is a floor under the age, never a reason to expire (Iceberg's semantics).
    floor = answer(run(runner, "expire", str(table_dir), "--retain-last", "1", "--json"))
    assert floor[0]["expired_versions"] == 0
    last = run(runner, "expire", str(table_dir), "--older-than", "2999-01-01", "--retain-last", "2")
    assert last.exit_code == 0 and "expired 0 versions" in last.stdout
    assert [i.version for i in open_table(str(table_dir)).history()] == [1, 0]


def test_expire_user_errors(runner: CliRunner, table_dir: Path) -> None:
    both = run(runner, "expire", str(table_dir), "--retain", "1d", "--older-than", "2020-01-01")
    assert one_error_line(both) == "error: give --retain or --older-than, not both"
    zero = run(runner, "expire", str(table_dir), "--retain-last", "0")
    assert one_error_line(zero) == "error: --retain-last must be at least 1, got 0"
    when = one_error_line(run(runner, "expire", str(table_dir), "--older-than", "yesterday"))
    assert "'yesterday' is neither epoch milliseconds nor ISO-8601" in when
    assert [i.version for i in open_table(str(table_dir)).history()] == [1, 0]


# -- restore ----------------------------------------------------------------------------------


def test_restore_commits_an_older_versions_parts(runner: CliRunner, table_dir: Path) -> None:
    v0 = open_table(str(table_dir), version=0)
    (row,) = answer(run(runner, "restore", str(table_dir), "--version", "0", "--json"))
    assert row == {
        "version": 2,
        "restored_version": 0,
        "num_removed_files": 1,
        "num_restored_files": 0,
    }
    table = open_table(str(table_dir))
    assert sorted(p.path for p in table.parts()) == sorted(p.path for p in v0.parts())
    assert operation(table_dir) == "RESTORE" and len(rows_of(table_dir)) == 30

    # By time: the version current when version 1 was committed, with the zone given.
    at = open_table(str(table_dir), version=1).timestamp_ms
    (back,) = answer(run(runner, "restore", str(table_dir), "--timestamp", str(at), "--json"))
    assert (back["version"], back["restored_version"], back["num_restored_files"]) == (3, 1, 1)
    assert len(rows_of(table_dir)) == ROWS


def test_restore_user_errors(runner: CliRunner, table_dir: Path) -> None:
    neither = one_error_line(run(runner, "restore", str(table_dir)))
    assert neither == "error: restore needs exactly one of --version and --timestamp"
    both = run(runner, "restore", str(table_dir), "--version", "0", "--timestamp", str(T0))
    assert one_error_line(both) == neither
    assert "version 9" in one_error_line(run(runner, "restore", str(table_dir), "--version", "9"))
    assert open_table(str(table_dir)).version == 1


# -- add-part / drop-part ---------------------------------------------------------------------


def parquet(path: Path, cities: list[str], temp: pa.Array | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    n = len(cities)
    columns = {
        "time": [T0 + k for k in range(n)],
        "city": cities,
        "device": ["d9"] * n,
        "temp": temp if temp is not None else [float(k) for k in range(n)],
    }
    pq.write_table(pa.table(columns), path)
    return path


def test_add_part_and_drop_part(runner: CliRunner, table_dir: Path, tmp_path: Path) -> None:
    file = parquet(tmp_path / "src" / "gz.parquet", ["gz", "gz", "gz"])
    (row,) = answer(
        run(runner, "add-part", str(table_dir), str(file), "--format", "parquet", "--json")
    )
    assert (row["version"], row["parts"], row["rows"]) == (2, 4, 43)
    assert operation(table_dir) == "ADD PART"
    assert rows_of(table_dir, where="city = 'gz'") == [
        (T0, "gz", "d9", 0.0),
        (T0 + 1, "gz", "d9", 1.0),
        (T0 + 2, "gz", "d9", 2.0),
    ]

    dropped = run(runner, "drop-part", str(table_dir), str(file))
    assert dropped.exit_code == 0, dropped.output
    assert "version 3: dropped 1 parts" in dropped.stdout
    assert operation(table_dir) == "DROP PART" and len(rows_of(table_dir)) == ROWS
    assert file.exists(), "a user's file is never deleted"


def test_add_part_options_reach_the_files(
    runner: CliRunner, table_dir: Path, tmp_path: Path
) -> None:
    hive = tmp_path / "hive"
    for city in ("gz", "sz"):
        (hive / f"city={city}").mkdir(parents=True)
        (hive / f"city={city}" / "p.csv").write_text(f"device;temp;time\nd9;1.5;{T0}\n")
    args = ["add-part", str(table_dir), str(hive), "-f", "csv", "--json"]
    options = ["-o", "partition=city:string", "-o", "header=true", "-o", "delimiter=;"]
    (row,) = answer(run(runner, *args, *options))
    assert (row["parts"], row["rows"]) == (5, 42)
    assert rows_of(table_dir, where="device = 'd9'") == [
        (T0, "gz", "d9", 1.5),
        (T0, "sz", "d9", 1.5),
    ]


def test_add_part_and_drop_part_user_errors(
    runner: CliRunner, table_dir: Path, tmp_path: Path
) -> None:
    file = parquet(tmp_path / "gz.parquet", ["gz"])
    fmt = one_error_line(run(runner, "add-part", str(table_dir), str(file), "--format", "avro"))
    assert "'avro' is not supported" in fmt
    bogus = run(runner, "add-part", str(table_dir), str(file), "-f", "parquet", "-o", "bogus=1")
    assert "unknown ADD PART option 'bogus'" in one_error_line(bogus)
    wrong = parquet(tmp_path / "wrong.parquet", ["gz"], temp=pa.array(["warm"]))
    misfit = one_error_line(run(runner, "add-part", str(table_dir), str(wrong), "-f", "parquet"))
    assert "wrong.parquet" in misfit and "temp" in misfit
    missing = run(runner, "drop-part", str(table_dir), "nothing*.tsfile")
    assert "DROP PART 'nothing*.tsfile': no part of table" in one_error_line(missing)
    assert open_table(str(table_dir)).version == 1


def test_drop_part_empties_a_table_only_with_all(runner: CliRunner, table_dir: Path) -> None:
    for pattern in ("", "*", str(table_dir)):
        line = one_error_line(run(runner, "drop-part", str(table_dir), pattern))
        assert line.startswith("error: DROP PART: "), line
        assert "pass --all" in line and "all_parts" not in line
    usage = run(runner, "drop-part", str(table_dir))
    assert usage.exit_code == 2 and "--all" in usage.stderr
    assert open_table(str(table_dir)).version == 1

    (row,) = answer(run(runner, "drop-part", str(table_dir), "*.tsfile", "--all", "--json"))
    assert (row["version"], row["parts"], row["rows"]) == (2, 0, 0)
    assert operation(table_dir) == "DROP PART"
    assert len(rows_of(table_dir, version=1)) == ROWS, "time travel still reads them"


def test_drop_part_all_without_a_pattern(runner: CliRunner, table_dir: Path) -> None:
    dropped = run(runner, "drop-part", str(table_dir), "--all")
    assert dropped.exit_code == 0, dropped.output
    assert "version 2: dropped 3 parts" in dropped.stdout
    assert open_table(str(table_dir)).parts() == []
