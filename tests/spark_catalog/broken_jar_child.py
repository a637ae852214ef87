"""Run by tests/spark_catalog/test_session.py in a fresh process: a session started with the
plugin's jar cut short on its classpath (``spark.jars`` naming a broken cached jar), and what
``register`` says about it."""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession

import tsfile_catalog
from tsfile_catalog.spark_catalog.wiring import CATALOG_CLASS


def main(jar: str, warehouse: str) -> None:
    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.jars", jar)
        .config("spark.sql.catalog.ts", CATALOG_CLASS)
        .config("spark.sql.catalog.ts.warehouse", warehouse)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        tsfile_catalog.register(spark)
        print("REGISTER ok")
    except Exception as e:  # noqa: BLE001 - printed for the test to check
        print("REGISTER", type(e).__name__, str(e).replace("\n", "\\n"))
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
