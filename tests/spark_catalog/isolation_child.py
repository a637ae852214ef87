"""Run by tests/spark_catalog/test_isolation.py in a second process: a Spark session with
the plugin over the test's warehouse that races the test's own process, one JSON command a
line on stdin (a list of statements to run one after another), one JSON line of outcomes on
stdout per command (see tests/spark_catalog/isolation.py)."""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession

import tsfile_catalog
from tests.spark_catalog.isolation import Racer


def main(warehouse: str, catalog: str) -> None:
    builder = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
    )
    spark = tsfile_catalog.configure(builder, warehouse=warehouse, name=catalog).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    tsfile_catalog.register(spark)
    racer = Racer(spark, catalog, warehouse)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        try:
            outcomes = [
                getattr(racer, op)(command["front"], command["table"], arg)
                for op, arg in command["statements"]
            ]
            print(json.dumps({"outcomes": outcomes}), flush=True)
        except Exception as e:  # noqa: BLE001 - reported to the test, which fails on it
            print(json.dumps({"error": f"{type(e).__name__}: {e}"[:2000]}), flush=True)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
