"""tsfile-catalog quickstart: write a small weather table, read it back with a time + TAG
filter through the DataFrame API, SQL over a temporary view and the SQL catalog, then inspect
the table's versions and parts."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import tsfile_catalog
from tsfile_catalog import local_session


def main() -> None:
    spark = local_session("tsfile-catalog-quickstart")
    spark.sparkContext.setLogLevel("ERROR")
    workdir = Path(tempfile.mkdtemp(prefix="tsfile-quickstart-"))
    path = str(workdir / "weather")
    try:
        rows = [
            (1_704_067_200_000 + i * 60_000, city, device, 20.0 + i + n, 40 + i, i % 2 == 0)
            for n, (city, device) in enumerate(
                [("beijing", "d1"), ("beijing", "d2"), ("shanghai", "d3")]
            )
            for i in range(5)
        ]
        df = spark.createDataFrame(
            rows,
            "time bigint, city string, device string, temperature double, "
            "humidity int, status boolean",
        )
        print("== writing 15 rows (3 devices) to", path)
        (
            df.write.format("tsfile")
            .option("table", "weather")
            .option("tagColumns", "city,device")
            .option("compression", "LZ4")
            .mode("append")
            .save(path)
        )

        print("== DataFrame API: time >= 1704067320000 AND city = 'beijing'")
        (
            spark.read.format("tsfile")
            .option("where", "time >= 1704067320000 AND city = 'beijing'")
            .load(path)
            .select("time", "city", "device", "temperature")
            .orderBy("device", "time")
            .show()
        )

        print("== SQL over CREATE TEMPORARY VIEW ... USING tsfile")
        spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW weather USING tsfile OPTIONS (path '{path}')")
        spark.sql(
            "SELECT time, city, device, temperature FROM weather "
            "WHERE time >= 1704067320000 AND city = 'beijing' ORDER BY device, time"
        ).show()
        spark.sql(
            "SELECT city, count(*) AS readings, avg(temperature) AS avg_temp "
            "FROM weather GROUP BY city ORDER BY city"
        ).show()

        print("== SQL catalog: named tables, time travel, maintenance commands")
        catalog = tsfile_catalog.Catalog(spark, warehouse=str(workdir / "warehouse"))
        catalog.sql(f"CREATE TABLE weather USING tsfile LOCATION '{path}'")
        catalog.sql("INSERT INTO weather VALUES (1704067500000, 'shanghai', 'd3', 30.0, 45, true)")
        catalog.sql(
            "SELECT device, count(*) AS n, max(temperature) AS max_temp FROM weather "
            "WHERE city = 'shanghai' GROUP BY device"
        ).show()
        catalog.sql("SELECT count(*) AS rows_at_v0 FROM weather VERSION AS OF 0").show()
        catalog.sql("DESCRIBE HISTORY weather").select("version", "operation").show()
        catalog.sql("SHOW PARTS weather").select("path", "rows", "min_time", "max_time").show(
            truncate=False
        )

        table = tsfile_catalog.open_table(path)
        print(f"== table version {table.version}, {len(table.parts())} part(s)")
        plan = table.plan(where="city = 'shanghai'")
        print(
            f"   a scan for city = 'shanghai' opens {len(plan.parts)} part(s), "
            f"prunes {len(plan.pruned)}"
        )
    finally:
        spark.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
