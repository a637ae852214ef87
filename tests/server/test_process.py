"""The catalog process in a PySpark driver that never calls ``register``: the JVM starts it on
the first catalog statement, a new one after it is killed between two queries, and
``register`` then hands over the in-process delegate (tests/server/process_child.py, in a
process of its own). Prints the planning time of ``SELECT count(*)`` both ways."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.conftest import REPO, child_env

pytestmark = pytest.mark.server


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds processes in /proc")
def test_the_jvm_starts_the_catalog_process_and_restarts_it(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "tests/server/process_child.py"), str(tmp_path / "wh")],
        capture_output=True,
        text=True,
        env=child_env(PYSPARK_PYTHON=sys.executable),
        timeout=900,
    )
    facts = dict(
        line.split(" ", 1) for line in done.stdout.replace("\r", "\n").splitlines() if " " in line
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert facts["BEFORE_FIRST_CALL"] == "0"  # started lazily
    assert facts["PROCESSES"] == "1"
    assert facts["ROWS"] == "1"
    assert facts["AFTER_KILL"] == "2"
    assert facts["RESTARTED"] == "True"
    assert facts["REGISTERED"] == "2"
    print(
        f"planning SELECT count(*): {facts['PLAN_MS_PROCESS']} ms through the catalog "
        f"process, {facts['PLAN_MS_IN_PROCESS']} ms through register()'s in-process delegate"
    )
