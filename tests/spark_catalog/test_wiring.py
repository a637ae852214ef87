"""Which configured catalog is the plugin over a warehouse, read from a session's settings
(pure: no Spark), and as a session's settings change."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tsfile_catalog.spark_catalog.wiring import CATALOG_CLASS, _catalog_for, serving

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def test_the_catalog_of_the_plugin_class_over_the_same_warehouse_serves_it(
    tmp_path: Path,
) -> None:
    warehouse = str(tmp_path / "wh")
    conf = {
        "spark.sql.catalog.other": CATALOG_CLASS,
        "spark.sql.catalog.other.warehouse": str(tmp_path / "elsewhere"),
        "spark.sql.catalog.iceberg": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.iceberg.warehouse": warehouse,
        "spark.sql.catalog.ts": CATALOG_CLASS,
        # Spark reads catalog options case-insensitively; a relative or trailing-slash
        # spelling of the same directory is the same warehouse.
        "spark.sql.catalog.ts.Warehouse": f"file://{warehouse}/",
    }
    assert _catalog_for(conf, warehouse) == ("ts", "spark.sql.catalog.ts.Warehouse")
    assert _catalog_for(conf, str(tmp_path / "nowhere")) is None


def test_a_catalog_without_a_warehouse_serves_none(tmp_path: Path) -> None:
    conf = {"spark.sql.catalog.ts": CATALOG_CLASS}
    assert _catalog_for(conf, str(tmp_path)) is None


@pytest.mark.spark
def test_serving_follows_settings_changed_while_the_session_runs(
    spark: SparkSession, tmp_path: Path
) -> None:
    import tsfile_catalog

    tsfile_catalog.register(spark)
    warehouse, elsewhere = str(tmp_path / "wh"), str(tmp_path / "elsewhere")
    key = "spark.sql.catalog.ts_wiring"
    assert serving(spark, warehouse) is None
    spark.conf.set(key, CATALOG_CLASS)
    spark.conf.set(f"{key}.warehouse", warehouse)
    try:
        assert serving(spark, warehouse) == "ts_wiring"
        assert serving(spark, warehouse) == "ts_wiring"  # the remembered catalog, checked
        # Pointed at another warehouse, it no longer serves this one; back, it does again.
        spark.conf.set(f"{key}.warehouse", elsewhere)
        assert serving(spark, warehouse) is None
        assert serving(spark, elsewhere) == "ts_wiring"
        spark.conf.set(f"{key}.warehouse", warehouse)
        assert serving(spark, warehouse) == "ts_wiring"
        spark.conf.unset(key)
        assert serving(spark, warehouse) is None
    finally:
        spark.conf.unset(key)
        spark.conf.unset(f"{key}.warehouse")
