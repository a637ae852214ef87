"""The ways to start the CLI, in fresh processes: ``python -m tsfile_catalog`` and the
``tsfile-catalog`` console script; metadata commands never import pyspark (no JVM), nor the
SQL parser or the data libraries they do not need (their import is most of a command's time)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.table.helpers import CHILD_ENV

# Runs one command as `python -m tsfile_catalog` would, then reports which heavy modules it
# imported and how long it took (printed for the record, not asserted: machines differ).
_PROBE = """
import json, runpy, sys, time
sys.argv = ["tsfile-catalog", *json.loads(sys.argv[1])]
start = time.perf_counter()
try:
    runpy.run_module("tsfile_catalog", run_name="__main__")
    code = 0
except SystemExit as e:
    code = e.code or 0
seconds = time.perf_counter() - start
heavy = {"pyspark", "py4j", "sqlglot", "pyarrow", "pandas", "tsfile"}
loaded = sorted({m.split(".")[0] for m in sys.modules} & heavy)
print(json.dumps({"code": code, "loaded": loaded, "seconds": seconds}), file=sys.stderr)
"""


def probe(*args: str) -> tuple[dict[str, object], str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(list(args))],
        capture_output=True,
        text=True,
        env=CHILD_ENV,
        timeout=120,
        check=False,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report, done.stdout


@pytest.mark.parametrize(
    "command", [["history"], ["describe", "--extended"], ["detail"], ["parts"]]
)
def test_metadata_commands_import_no_pyspark_nor_sqlglot(
    table_dir: Path, command: list[str]
) -> None:
    report, stdout = probe(*command, str(table_dir), "--json")
    assert report["code"] == 0, stdout
    assert report["loaded"] == []
    assert json.loads(stdout)
    print(f"{' '.join(command)}: {report['seconds']:.3f} s in a fresh process")


def test_a_where_imports_the_parser_only_then(table_dir: Path) -> None:
    report, stdout = probe("parts", str(table_dir), "--where", "city = 'bj'", "--json")
    assert report["code"] == 0, stdout
    assert report["loaded"] == ["sqlglot"]
    assert [row["status"] for row in json.loads(stdout)].count("kept") == 2


def test_catalog_names_need_no_pyspark_either(table_dir: Path, tmp_path: Path) -> None:
    from tsfile_catalog.sql.registry import Registry, parse_table_name

    Registry(str(tmp_path / "wh")).create(parse_table_name("weather"), str(table_dir), {})
    report, stdout = probe("history", "weather", "--warehouse", str(tmp_path / "wh"), "--json")
    assert report["code"] == 0, stdout
    # The registry reads names as SQL identifiers: the parser, but no JVM and no data libraries.
    assert report["loaded"] == ["sqlglot"]


def test_console_script_runs_this_tree(table_dir: Path) -> None:
    script = Path(sys.executable).parent / "tsfile-catalog"
    done = subprocess.run(
        [str(script), "history", str(table_dir), "--json"],
        capture_output=True,
        text=True,
        env=CHILD_ENV,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert [row["version"] for row in json.loads(done.stdout)] == [1, 0]
    missing = subprocess.run(
        [str(script), "history", str(table_dir / "nothing")],
        capture_output=True,
        text=True,
        env=CHILD_ENV,
        timeout=120,
        check=False,
    )
    assert missing.returncode == 1 and missing.stderr.startswith("error: no tsfile-catalog")
    assert "Traceback" not in missing.stderr
