"""Fixtures for the read-path tests: the table layer's clean metadata cache, reused."""

from __future__ import annotations

from tests.table.conftest import _fresh_metadata_cache

__all__ = ["_fresh_metadata_cache"]
