"""Fixtures for the table-layer tests: a clean metadata cache, and a commit clock that runs
behind (S3 ones are in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tsfile_catalog.table import clear_cache, commits


@pytest.fixture(autouse=True)
def _fresh_metadata_cache() -> Iterator[None]:
    """Tables in different tests may reuse a location (memory://); never share snapshots."""
    clear_cache()
    yield
    clear_cache()


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Commits are stamped ``clock[0]`` ms ago (the commit loop's clock, not vacuum's)."""
    ago = [0]
    real = commits.now_ms
    monkeypatch.setattr(commits, "now_ms", lambda: real() - ago[0])
    yield ago
