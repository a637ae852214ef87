"""``run.sh``: the demo installs the package with its spark extra, the test command adds the
test and bench extras, and each installs once per ``pyproject.toml`` (a stamp in the venv).
Run in a copy of the script with stand-ins for python and java that record what they are
asked to do."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# A stand-in python: passes the version check, records any other call; `-m venv DIR` makes
# DIR/bin/python (itself).
_PYTHON = """#!/usr/bin/env bash
[ "${1:-}" = -c ] && exit 0
echo "$*" >> "$RUN_SH_LOG"
if [ "${1:-}" = -m ] && [ "${2:-}" = venv ]; then
  mkdir -p "$3/bin" && cp "$0" "$3/bin/python"
fi
exit 0
"""
_JAVA = """#!/usr/bin/env bash
echo 'openjdk version "17.0.2" 2022-01-18' >&2
"""


def _executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


class _Checkout:
    """A copy of run.sh and pyproject.toml, and the calls each run makes."""

    def __init__(self, root: Path) -> None:
        self.root = root / "repo"
        self.root.mkdir()
        for name in ("run.sh", "pyproject.toml"):
            shutil.copy2(ROOT / name, self.root / name)
        self.log = root / "calls.log"
        self.env = {
            "PATH": os.environ["PATH"],
            "PYTHON": str(_executable(root / "stub" / "python3", _PYTHON)),
            "JAVA_HOME": str(_executable(root / "jdk" / "bin" / "java", _JAVA).parent.parent),
            "RUN_SH_LOG": str(self.log),
        }

    def run(self, *args: str) -> tuple[int, list[str], str]:
        """Exit code, the calls made (one line each), stderr."""
        self.log.write_text("")
        done = subprocess.run(
            ["bash", str(self.root / "run.sh"), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        return done.returncode, self.log.read_text().splitlines(), done.stderr

    def installs(self, *args: str) -> list[str]:
        code, calls, stderr = self.run(*args)
        assert code == 0, stderr
        return [c for c in calls if c.startswith("-m pip install") and "--upgrade pip" not in c]


def test_demo_installs_the_package_with_spark_and_test_adds_the_extras(tmp_path: Path) -> None:
    repo = _Checkout(tmp_path)
    assert repo.installs("demo") == ["-m pip install --quiet -e .[spark]"]
    assert repo.run("demo")[1] == ["examples/quickstart.py"], "installed once"
    assert repo.installs("test", "-k", "x") == ["-m pip install --quiet -e .[spark,test,bench]"]
    code, calls, _ = repo.run("test", "-k", "x")
    assert code == 0 and calls == ["-m pytest -k x"]
    # The test install holds everything the demo needs.
    assert repo.installs("demo") == []


def test_a_changed_pyproject_installs_again(tmp_path: Path) -> None:
    repo = _Checkout(tmp_path)
    repo.installs("test")
    with (repo.root / "pyproject.toml").open("a") as f:
        f.write("\n# a new dependency, say\n")
    assert repo.installs("demo") == ["-m pip install --quiet -e .[spark]"]
    assert repo.installs("test") == ["-m pip install --quiet -e .[spark,test,bench]"]


def test_an_unknown_command_is_refused_before_any_setup(tmp_path: Path) -> None:
    repo = _Checkout(tmp_path)
    code, calls, stderr = repo.run("bogus")
    assert code == 1 and "usage: ./run.sh demo | ./run.sh test" in stderr
    assert calls == [] and not (repo.root / ".venv").exists()
