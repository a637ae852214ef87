"""Fixtures for the table-layer tests: a clean metadata cache (S3 ones are in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tsfile_catalog.table import clear_cache


@pytest.fixture(autouse=True)
def _fresh_metadata_cache() -> Iterator[None]:
    """Tables in different tests may reuse a location (memory://); never share snapshots."""
    clear_cache()
    yield
    clear_cache()
