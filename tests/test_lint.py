"""The code stays ruff- and mypy-clean (configured in pyproject.toml): CI enforces it here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


_PATHS = [
    p
    for p in ("tsfile_catalog", "pyspark_tsfile", "tests", "examples", "bench")
    if (ROOT / p).exists()
]


def test_ruff_is_clean() -> None:
    result = _run("ruff", "check", *_PATHS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_applied() -> None:
    result = _run("ruff", "format", "--check", *_PATHS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_is_clean() -> None:
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr
