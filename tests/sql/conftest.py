"""Fixtures the SQL tests share: a module's own warehouse and a catalog over it.

A module that needs tables set up in advance (test_catalog.py) defines its own ``catalog``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from tsfile_catalog import Catalog


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("warehouse")


@pytest.fixture(scope="module")
def catalog(spark: SparkSession, warehouse: Path) -> Iterator[Catalog]:
    from tsfile_catalog import Catalog

    # No per-table views: each refresh is a load() these tests do not need.
    yield Catalog(spark, str(warehouse), register_views=False)
