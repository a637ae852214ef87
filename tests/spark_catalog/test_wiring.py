"""Which configured catalog is the plugin over a warehouse, read from a session's settings
(pure: no Spark)."""

from __future__ import annotations

from pathlib import Path

from tsfile_catalog.spark_catalog.wiring import CATALOG_CLASS, _catalog_for


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
    assert _catalog_for(conf, warehouse) == "ts"
    assert _catalog_for(conf, str(tmp_path / "nowhere")) is None


def test_a_catalog_without_a_warehouse_serves_none(tmp_path: Path) -> None:
    conf = {"spark.sql.catalog.ts": CATALOG_CLASS}
    assert _catalog_for(conf, str(tmp_path)) is None
