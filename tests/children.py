"""A test's child Python process: this interpreter, this checkout first on its path, and the
same Python for Spark's workers (a child starts a Spark session of its own)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_child(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` (relative to the checkout) with ``args``; its output captured, at most
    600 s."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        "PYSPARK_PYTHON": sys.executable,
    }
    return subprocess.run(
        [sys.executable, str(REPO / script), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
