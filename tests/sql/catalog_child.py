"""Run by tests/sql/test_catalog.py in a fresh process: open a Catalog on an existing
warehouse and print what it sees, one ``KEY value`` line per fact."""

from __future__ import annotations

import sys

import tsfile_catalog


def main(warehouse: str) -> None:
    spark = tsfile_catalog.local_session(
        "tsfile-catalog-child", config={"spark.sql.shuffle.partitions": "2"}
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        catalog = tsfile_catalog.Catalog(spark, warehouse)
        tables = [row.tableName for row in catalog.sql("SHOW TABLES").collect()]
        print("TABLES", ",".join(tables))
        print("COUNT", catalog.sql("SELECT count(*) FROM weather").collect()[0][0])
        # a scan, through the convenience view this process registered
        scanned = spark.sql("SELECT count(*) FROM weather WHERE temp > 2").collect()[0][0]
        print("SCANNED", scanned)
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
