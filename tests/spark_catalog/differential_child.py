"""Spark's own statements, run in a fresh process by a session with no extensions: what
tests/spark_catalog/test_differential.py compares the extensions' session against.

The statements are Spark's (queries, DDL on temporary views, DESCRIBE, SHOW, SET, table
functions), among them texts that start like the catalog's own statements or name ``tsfile``
without being a URL reference, which the extensions must leave to Spark."""

from __future__ import annotations

import json
import sys
from typing import Any

STATEMENTS = [
    "SELECT 1 + 2 AS a, 7 / 2 AS b, 7 DIV 2 AS c, -7 % 3 AS d, 2 * 3.5 AS e",
    "SELECT upper('abc'), substr('spark sql', 2, 4), concat_ws('-', 'a', 'b', NULL), "
    "length('héllo'), lpad('7', 3, '0')",
    "SELECT CAST('2024-01-02 03:04:05' AS TIMESTAMP) AS t, DATE '2024-02-29' + 1 AS d, "
    "date_trunc('HOUR', TIMESTAMP '2024-01-01 10:42:00') AS h",
    "SELECT coalesce(NULL, 2), nullif(3, 3), if(1 < 2, 'y', 'n'), CASE WHEN 1 = 2 THEN 'a' "
    "ELSE 'b' END",
    "CREATE OR REPLACE TEMPORARY VIEW people AS SELECT * FROM VALUES (1, 'ann', 30), "
    "(2, 'bob', 25), (3, 'cy', NULL) AS t(id, name, age)",
    "CREATE OR REPLACE TEMPORARY VIEW pets AS SELECT * FROM VALUES (1, 'cat'), (1, 'dog'), "
    "(4, 'eel') AS t(owner, kind)",
    "SELECT name, kind FROM people p JOIN pets q ON p.id = q.owner ORDER BY name, kind",
    "SELECT name, kind FROM people p LEFT JOIN pets q ON p.id = q.owner ORDER BY name, kind",
    "SELECT * FROM people p FULL OUTER JOIN pets q ON p.id = q.owner ORDER BY id, owner",
    "SELECT * FROM people WHERE id IN (SELECT owner FROM pets) ORDER BY id",
    "SELECT * FROM people p WHERE EXISTS (SELECT 1 FROM pets q WHERE q.owner = p.id)",
    "SELECT count(*), count(age), sum(age), avg(age), max(name) FROM people",
    "SELECT owner, count(*) AS n, collect_list(kind) FROM pets GROUP BY owner ORDER BY owner",
    "SELECT name, age, rank() OVER (ORDER BY age DESC NULLS LAST) AS r, "
    "sum(age) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s "
    "FROM people ORDER BY id",
    "WITH o AS (SELECT owner, count(*) AS n FROM pets GROUP BY owner) "
    "SELECT p.name, o.n FROM people p JOIN o ON p.id = o.owner",
    "SELECT id FROM people UNION SELECT owner FROM pets ORDER BY 1",
    "SELECT id FROM people INTERSECT SELECT owner FROM pets",
    "SELECT id FROM people EXCEPT SELECT owner FROM pets ORDER BY 1",
    "SELECT * FROM range(5) WHERE id % 2 = 0",
    "SELECT explode(array(1, 2, 3)) AS x",
    "SELECT id, x FROM people LATERAL VIEW explode(array(id, id * 10)) t AS x ORDER BY id, x",
    "SELECT * FROM (SELECT owner, kind FROM pets) PIVOT (count(*) FOR kind IN ('cat', 'dog'))",
    "SELECT named_struct('a', 1, 'b', 'x') AS s, map('k', 1) AS m, array(3, 1, 2) AS a",
    "SELECT transform(array(1, 2, 3), x -> x * x) AS sq, "
    "aggregate(array(1, 2, 3), 0, (a, x) -> a + x) AS total",
    "SELECT to_json(named_struct('a', 1)), from_json('{\"a\": 2}', 'a INT').a",
    "DESCRIBE people",
    "DESC TABLE EXTENDED pets",
    "DESCRIBE FUNCTION upper",
    "SHOW FUNCTIONS LIKE 'upp*'",
    "SHOW COLUMNS IN people",
    "SET spark.sql.shuffle.partitions",
    # Texts that start like the catalog's statements, or name tsfile, and are Spark's.
    "CREATE OR REPLACE TEMPORARY VIEW optimize AS SELECT 1 AS vacuum",
    "SELECT vacuum FROM optimize",
    "CREATE OR REPLACE TEMPORARY VIEW tsfile AS SELECT 'not a url' AS restore",
    "SELECT restore FROM tsfile",
    "DESCRIBE tsfile",
    "WITH tsfile AS (SELECT 2 AS parts) SELECT parts FROM tsfile",
    "SELECT tsfile.id FROM range(2) AS tsfile ORDER BY 1",
    "SELECT id AS history FROM range(1)",
]


def run(spark: Any) -> list[dict[str, Any]]:
    """Each statement's columns and rows (as text), or its error class."""
    out: list[dict[str, Any]] = []
    for statement in STATEMENTS:
        try:
            frame = spark.sql(statement)
            out.append({"columns": frame.columns, "rows": [repr(r) for r in frame.collect()]})
        except Exception as e:  # noqa: BLE001 - the error class is the answer compared
            condition = getattr(e, "getCondition", lambda: None)()
            out.append({"error": type(e).__name__, "condition": condition})
    return out


def main() -> None:
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        print(json.dumps(run(spark)))
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
    sys.exit(0)
