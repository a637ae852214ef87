"""Run by tests/spark_catalog/test_session.py in a fresh process: the README's setup of the
plugin (configure, getOrCreate, register) and one line per observed fact."""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession

import tsfile_catalog


def main(warehouse: str) -> None:
    builder = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
    spark = tsfile_catalog.configure(builder, warehouse=warehouse, name="ts").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        # Before register(), the catalog process the JVM starts answers.
        print("BEFORE_REGISTER", len(spark.sql("SHOW TABLES IN ts.default").collect()))
        tsfile_catalog.register(spark)
        spark.sql(
            "CREATE TABLE ts.db.weather (time BIGINT, city STRING, temp DOUBLE) USING tsfile "
            "TBLPROPERTIES ('tagColumns' = 'city')"
        )
        spark.sql("INSERT INTO ts.db.weather VALUES (1, 'bj', 1.5), (2, 'sh', 2.5)")
        print("ROWS", spark.sql("SELECT count(*) FROM ts.db.weather WHERE temp > 2").first()[0])
        spark.sql("SET spark.sql.defaultCatalog = ts")
        print("DEFAULT", spark.table("db.weather").count())
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
