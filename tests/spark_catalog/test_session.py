"""``configure`` + ``register`` in a process of their own, as the README sets a session up."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.spark
def test_configure_then_register(tmp_path: Path) -> None:
    import shutil

    if shutil.which("javac") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no JDK to build the plugin with")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        "PYSPARK_PYTHON": sys.executable,
    }
    done = subprocess.run(
        [sys.executable, str(REPO / "tests/spark_catalog/session_child.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    facts = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    assert done.returncode == 0, done.stderr[-3000:]
    # Without register(), the JVM's catalog process answers (an empty warehouse).
    assert facts["BEFORE_REGISTER"] == "0"
    assert facts["ROWS"] == "1"
    assert facts["DEFAULT"] == "2"
