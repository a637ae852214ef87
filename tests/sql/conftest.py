"""Fixtures the SQL tests share: a module's own warehouse and a catalog over it.

A module that needs tables set up in advance (test_catalog.py) defines its own ``catalog``.

With ``TSFILE_CATALOG_TEST_PLUGIN=1`` in the environment, every module's warehouse is also
served by the catalog plugin, so ``catalog.sql`` runs its queries as written through
``spark.sql`` (docs/sql.md, SELECT): the same tests, on the other path.
"""

from __future__ import annotations

import os
import uuid
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


PLUGIN_ENV = "TSFILE_CATALOG_TEST_PLUGIN"


@pytest.fixture(scope="module")
def plugin(spark: SparkSession, warehouse: Path) -> Iterator[str]:
    """The name of a catalog of the plugin serving the module's warehouse (configured at run
    time, as Spark allows for any catalog), with the delegate registered."""
    from py4j.java_gateway import JavaClass

    import tsfile_catalog
    from tsfile_catalog.spark_catalog.wiring import CATALOG_CLASS

    jvm = spark.sparkContext._jvm
    assert jvm is not None
    if not isinstance(jvm.io.tsfilecatalog.spark.Client, JavaClass):
        pytest.skip("the catalog plugin's jar could not be built here (no JDK's javac)")
    tsfile_catalog.register(spark)
    name = f"ts_{uuid.uuid4().hex[:8]}"
    spark.conf.set(f"spark.sql.catalog.{name}", CATALOG_CLASS)
    spark.conf.set(f"spark.sql.catalog.{name}.warehouse", str(warehouse))
    yield name
    spark.conf.unset(f"spark.sql.catalog.{name}")
    spark.conf.unset(f"spark.sql.catalog.{name}.warehouse")


@pytest.fixture(scope="module", autouse=True)
def plugin_path(request: pytest.FixtureRequest) -> str | None:
    """:func:`plugin` for every module when ``TSFILE_CATALOG_TEST_PLUGIN=1`` asks for the
    plugin path, else None (and no Spark is started for it)."""
    if os.environ.get(PLUGIN_ENV) != "1":
        return None
    name: str = request.getfixturevalue("plugin")
    return name
