"""Run by tests/spark_catalog/test_alter_one_commit.py in a fresh process: a session with the
plugin's jar and a tsfile catalog but no session extensions, where Spark's own
``ResolveSchemaEvolution`` alters the table through ``alterTable`` before it writes. Prints
one JSON line: per statement, its error's first line (or None) and the table's version and
history after it."""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession

import tsfile_catalog
from tsfile_catalog import open_table
from tsfile_catalog.spark_catalog.build import build_jar
from tsfile_catalog.spark_catalog.session import CATALOG_CLASS

ROW = "TIMESTAMP '2024-01-02 00:00:00' AS time, 'bj' AS city, 2.0D AS temp"
STATEMENTS = (
    # rain INT -> BIGINT is a widening, gust INT -> DOUBLE is not: Spark asks for both at once.
    f"INSERT WITH SCHEMA EVOLUTION INTO ts.db.t BY NAME SELECT {ROW}, 2L AS rain, "
    "2.5D AS gust, 3.0D AS wind",
    # A TAG's type (city given as INT), with a widening and a new column.
    "MERGE WITH SCHEMA EVOLUTION INTO ts.db.t t USING (SELECT TIMESTAMP '2024-01-03 00:00:00' "
    "AS time, 7 AS city, 3L AS rain, 4.0D AS wind) s ON t.time = s.time AND t.city = s.city "
    "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
    # Accepted: Spark's one alterTable call (widen rain, add wind), then the append.
    f"INSERT WITH SCHEMA EVOLUTION INTO ts.db.t BY NAME SELECT {ROW}, 2L AS rain, 3.0D AS wind",
)


def main(warehouse: str) -> None:
    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.jars", str(build_jar()))
        .config("spark.sql.catalog.ts", CATALOG_CLASS)
        .config("spark.sql.catalog.ts.warehouse", warehouse)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("OFF")
    try:
        tsfile_catalog.register(spark)
        spark.sql(
            "CREATE TABLE ts.db.t (time TIMESTAMP, city STRING, temp DOUBLE, rain INT, gust INT) "
            "USING tsfile TBLPROPERTIES ('tagColumns' = 'city')"
        )
        spark.sql("INSERT INTO ts.db.t VALUES (TIMESTAMP '2024-01-01 00:00:00', 'bj', 1.0, 1, 1)")
        location = f"{warehouse}/db.db/t"
        answers = []
        for statement in STATEMENTS:
            error = None
            try:
                spark.sql(statement).collect()
            except Exception as e:  # reported to the test, which judges it
                error = str(e).strip().splitlines()[0]
            table = open_table(location)
            answers.append(
                {
                    "extensions": spark.conf.get("spark.sql.extensions", None),
                    "error": error,
                    "version": table.version,
                    "history": [[h.version, h.operation] for h in table.history()],
                    "columns": spark.table("ts.db.t").columns,
                }
            )
        print(json.dumps(answers))
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
