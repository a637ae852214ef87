"""``spark-sql -f`` and ``-e`` (PySpark's ``bin/spark-sql``) with the catalog's settings alone,
against a warehouse PySpark wrote: reads with pushdown, DDL and every write statement, time
travel and CALL, answered by the catalog process the JVM starts; the answers compared with
PySpark's over the same warehouse and over a Parquet copy."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.server.conftest import pyspark_home, rows_text, run, spark_sql_arguments

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.server, pytest.mark.spark]

# Read back by PySpark over the Parquet copy: the same query text, the table swapped.
_PUSHDOWN = (
    "SELECT city, device, count(*), CAST(round(sum(temp), 3) AS STRING) FROM {t} "
    "WHERE temp > 12 AND city = 'bj' AND time >= TIMESTAMP '2024-01-01 05:00:00' "
    "GROUP BY city, device ORDER BY city, device"
)
_COUNT = "SELECT count(*), max(time) FROM {t}"
_ROWS = "SELECT CAST(time AS STRING), city, temp FROM {t} ORDER BY time, city"

# The statements and, after each write, the rows (time, city, temp) the table should hold.
_START = [
    ("2024-01-01 00:00:00", "bj", 1.5),
    ("2024-01-01 01:00:00", "sh", 2.5),
    ("2024-01-01 02:00:00", "gz", 3.5),
]


def _expected() -> list[tuple[str, str, float]]:
    """What UPDATE, DELETE and MERGE below leave of ``_START``, computed here."""
    rows = {(t, c): temp for t, c, temp in _START}
    rows = {k: v + 10 if k[1] == "bj" else v for k, v in rows.items()}  # UPDATE
    rows = {k: v for k, v in rows.items() if k[1] != "gz"}  # DELETE
    rows[("2024-01-01 01:00:00", "sh")] = 9.0  # MERGE: matched
    rows[("2024-01-01 05:00:00", "wh")] = 7.0  # MERGE: not matched
    return sorted((t, c, v) for (t, c), v in rows.items())


_SCRIPT = f"""
{_PUSHDOWN.format(t="ts.db.weather")};
{_COUNT.format(t="ts.db.weather")};
CREATE NAMESPACE IF NOT EXISTS ts.cli;
CREATE TABLE ts.cli.t (time TIMESTAMP, city STRING, temp DOUBLE) USING tsfile
  TBLPROPERTIES ('tagColumns' = 'city');
INSERT INTO ts.cli.t VALUES
  {", ".join(f"(TIMESTAMP '{t}', '{c}', {v})" for t, c, v in _START)};
UPDATE ts.cli.t SET temp = temp + 10 WHERE city = 'bj';
DELETE FROM ts.cli.t WHERE city = 'gz';
MERGE INTO ts.cli.t AS t
  USING (SELECT TIMESTAMP '2024-01-01 01:00:00' AS time, 'sh' AS city, 9.0D AS temp
         UNION ALL SELECT TIMESTAMP '2024-01-01 05:00:00', 'wh', 7.0D) AS s
  ON t.time = s.time AND t.city = s.city
  WHEN MATCHED THEN UPDATE SET temp = s.temp
  WHEN NOT MATCHED THEN INSERT *;
{_ROWS.format(t="ts.cli.t")};
SELECT count(*) FROM ts.cli.t VERSION AS OF 1;
CALL ts.system.optimize(table => 'cli.t');
{_ROWS.format(t="ts.cli.t")};
ALTER TABLE ts.cli.t RENAME COLUMN city TO town;
SELECT 'not reached';
"""


def _spark_sql(warehouse: Path, *arguments: str) -> Any:
    command = [str(pyspark_home() / "bin" / "spark-sql"), "-S", *spark_sql_arguments(warehouse)]
    return run([*command, *arguments], cwd=warehouse.parent)


def test_spark_sql_file_serves_the_catalog(
    spark: SparkSession, pyspark_warehouse: dict[str, Any], tmp_path: Path
) -> None:
    warehouse, name, view = (pyspark_warehouse[k] for k in ("warehouse", "catalog", "view"))
    script = tmp_path / "statements.sql"
    script.write_text(_SCRIPT)
    done = _spark_sql(warehouse, "-f", str(script))
    out = done.stdout.splitlines()
    # The refused ALTER ends the script: one line naming the column, no Python traceback.
    assert done.returncode != 0
    refusals = [line for line in done.stderr.splitlines() if "cannot rename TAG" in line]
    assert len(refusals) == 1, done.stderr[-3000:]
    assert "TAG column 'city'" in refusals[0]
    assert "Traceback" not in done.stderr
    assert "not reached" not in done.stdout

    pushdown = rows_text(spark, _PUSHDOWN.format(t=view))
    count = rows_text(spark, _COUNT.format(t=view))
    assert pushdown and out[: len(pushdown)] == pushdown, done.stderr[-3000:]
    out = out[len(pushdown) :]
    assert out[:1] == count
    out = out[1:]
    # UPDATE, DELETE and MERGE answer their row counts, as Catalog.sql's do: one row set,
    # the DELETE (in metadata: one part rewritten) committing version 3.
    assert out[:3] == ["1", "1\t3\t1\t1\t0\t1", "2\t1\t0\t1"], done.stderr[-3000:]
    out = out[3:]
    # The rows spark-sql wrote, as spark-sql and PySpark (the same warehouse) read them.
    expected = [f"{t}\t{c}\t{v}" for t, c, v in _expected()]
    assert out[: len(expected)] == expected
    assert rows_text(spark, _ROWS.format(t=f"{name}.cli.t")) == expected
    out = out[len(expected) :]
    assert out[0] == str(len(_START))  # VERSION AS OF 1: the INSERT's three rows
    assert rows_text(spark, f"SELECT count(*) FROM {name}.cli.t VERSION AS OF 1") == [out[0]]
    # CALL answers one row, and optimizing changes no row.
    assert out[2 : 2 + len(expected)] == expected
    assert len(out) == 2 + len(expected)


def test_spark_sql_e_reads_pyspark_writes_and_names_a_missing_table(
    spark: SparkSession, pyspark_warehouse: dict[str, Any], tmp_path: Path
) -> None:
    warehouse, view = pyspark_warehouse["warehouse"], pyspark_warehouse["view"]
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    done = _spark_sql(
        warehouse,
        "--driver-java-options",
        f"-Djava.io.tmpdir={temporary}",
        "-e",
        f"SHOW TABLES IN ts.db; {_PUSHDOWN.format(t='ts.db.weather')}; SELECT * FROM ts.db.nowhere",
    )
    out = done.stdout.splitlines()
    assert out[0] == "weather", done.stderr[-3000:]
    assert out[1:] == rows_text(spark, _PUSHDOWN.format(t=view))
    assert done.returncode != 0
    missing = [line for line in done.stderr.splitlines() if "TABLE_OR_VIEW_NOT_FOUND" in line]
    assert len(missing) == 1 and "`ts`.`db`.`nowhere`" in missing[0], done.stderr[-3000:]
    # The catalog process served every statement, and its log went with the JVM: no error
    # named it (one that does keeps it, in the same folder: see the next test).
    assert not list(temporary.glob("tsfile-catalog-process-*.log"))


def test_a_catalog_process_that_cannot_start_fails_in_one_line(
    pyspark_warehouse: dict[str, Any], tmp_path: Path
) -> None:
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\necho 'ModuleNotFoundError: no tsfile_catalog here' >&2\nexit 3\n")
    broken.chmod(0o755)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    done = _spark_sql(
        pyspark_warehouse["warehouse"],
        "--driver-java-options",
        f"-Djava.io.tmpdir={temporary}",
        "--conf",
        f"spark.pyspark.driver.python={broken}",
        "-e",
        "SHOW TABLES IN ts.db",
    )
    assert done.returncode != 0
    # spark-sql prints an error that is not Spark's own with its Java stack trace: the
    # message is its first line, and the same line in the driver's log.
    lines = [line for line in done.stderr.splitlines() if "exited with code 3" in line]
    assert lines, done.stderr[-3000:]
    assert "before it was ready: ModuleNotFoundError: no tsfile_catalog here" in lines[0]
    assert "Traceback" not in done.stderr
    log = Path(lines[0].rsplit("(log: ", 1)[1].rstrip(")"))
    # Named by the error, the log outlives the JVM.
    assert log.parent == temporary
    assert "no tsfile_catalog here" in log.read_text()


def test_spark_sql_with_the_plugin_as_the_session_catalog(tmp_path: Path) -> None:
    """``spark-conf --name spark_catalog`` alone: spark-sql's built-in catalog (its Hive
    metastore) keeps the Parquet table, the warehouse the tsfile table, both in ``default``;
    the catalog process answers, and a Parquet table over the tsfile table's name is refused
    in one line."""

    from tsfile_catalog import catalog_config
    from tsfile_catalog.spark_catalog.settings import as_arguments

    settings = catalog_config(str(tmp_path / "wh"), name="spark_catalog")
    script = """
CREATE TABLE cities (city STRING, country STRING) USING parquet;
CREATE TABLE weather (time BIGINT, city STRING, temp DOUBLE) USING tsfile
  TBLPROPERTIES ('tagColumns' = 'city');
INSERT INTO cities VALUES ('bj', 'cn'), ('ny', 'us');
INSERT INTO weather VALUES (1, 'bj', 1.5), (2, 'ny', 2.5), (3, 'bj', 3.5);
SELECT c.country, sum(w.temp) FROM weather w JOIN cities c ON w.city = c.city
  GROUP BY c.country ORDER BY c.country;
SHOW TABLES;
DROP TABLE cities;
SHOW TABLES;
CREATE TABLE weather (x INT) USING parquet;
"""
    command = [
        str(pyspark_home() / "bin" / "spark-sql"),
        "-S",
        *as_arguments(settings).split(),
        "--master",
        "local[1]",
        "--conf",
        "spark.ui.enabled=false",
        "-e",
        script,
    ]
    done = run(command, cwd=tmp_path)
    out = done.stdout.splitlines()
    assert out[:2] == ["cn\t5.0", "us\t2.5"], done.stderr[-3000:]
    assert sorted(out[2:4]) == ["cities", "weather"]
    assert out[4:] == ["weather"]
    assert done.returncode != 0
    # the catalog's one line (spark-sql may print it twice: its message and its summary)
    refusals = [line for line in done.stderr.splitlines() if "is a tsfile table" in line]
    assert refusals, done.stderr[-3000:]
    assert all("CREATE TABLE default.weather USING parquet: " in line for line in refusals)


_REFUSED = """
CREATE NAMESPACE IF NOT EXISTS ts.refused;
CREATE TABLE ts.refused.t (time TIMESTAMP, city STRING, temp DOUBLE) USING tsfile
  TBLPROPERTIES ('tagColumns' = 'city');
ALTER TABLE ts.refused.t RENAME COLUMN city TO town;
CREATE TABLE ts.refused.bad (time TIMESTAMP, city STRING) USING tsfile
  TBLPROPERTIES ('tagColumns' = 'nope');
SELECT * FROM ts.refused.t VERSION AS OF 99;
UPDATE ts.refused.t SET city = 'x' WHERE temp > 1;
SELECT 'reached';
"""


def test_refused_statements_are_one_line_each_without_a_stack_trace(
    pyspark_warehouse: dict[str, Any],
) -> None:
    # Not silent (-S hides stack traces): spark-sql prints a Java stack trace after an error
    # unless it is one of Spark's with a SQLSTATE that is not internal. hive.cli.errors.ignore
    # goes on after each error. PYSPARK_PYTHON as docs/spark-catalog.md advises (else Spark's
    # own lookup of Python data sources logs a warning with its stack trace).
    warehouse = pyspark_warehouse["warehouse"]
    command = [
        str(pyspark_home() / "bin" / "spark-sql"),
        *spark_sql_arguments(warehouse),
        "--hiveconf",
        "hive.cli.errors.ignore=true",
        "-e",
        _REFUSED,
    ]
    done = run(command, cwd=warehouse.parent, PYSPARK_PYTHON=sys.executable)
    assert "reached" in done.stdout.splitlines(), done.stderr[-3000:]
    stderr = done.stderr.splitlines()
    assert not [line for line in stderr if line.startswith("\tat ")], done.stderr[-3000:]
    for names in (
        "cannot rename TAG column 'city'",
        "option 'tagColumns' names 'nope'",
        "has no version 99",
        "cannot set 'city'",
    ):
        assert len([line for line in stderr if names in line]) == 1, (names, done.stderr[-3000:])
    assert "Traceback" not in done.stderr


# URL references (the extensions' UrlReferences), compared with PySpark's spark.sql.
_URL_QUERIES = (
    "SELECT count(*), CAST(max(time) AS STRING) FROM tsfile('{loc}', version => 1)",
    "SELECT city, device, count(*), CAST(round(sum(temp), 3) AS STRING) FROM tsfile.`{loc}` "
    "WHERE city = 'bj' AND time >= TIMESTAMP '2024-01-01 05:00:00' GROUP BY city, device "
    "ORDER BY city, device",
    "SELECT CAST(time AS STRING), device FROM tsfile.`{loc}` VERSION AS OF 1 ORDER BY time LIMIT 3",
)
_URL_REFUSED = "SELECT * FROM tsfile('{loc}', versio => 1)"


def test_spark_sql_e_reads_url_references_and_describes_as_pyspark_does(
    spark: SparkSession, pyspark_warehouse: dict[str, Any]
) -> None:
    warehouse, name = pyspark_warehouse["warehouse"], pyspark_warehouse["catalog"]
    location = str(warehouse / "db.db" / "weather")
    queries = [q.format(loc=location) for q in _URL_QUERIES]
    done = _spark_sql(
        warehouse,
        "-e",
        "; ".join(["DESCRIBE ts.db.weather", *queries, _URL_REFUSED.format(loc=location)]),
    )
    out = done.stdout.splitlines()
    # DESCRIBE marks the TAG columns, as in PySpark (spark-sql pads the columns, NULL as '').
    described = [
        (r.col_name, r.data_type, r.comment or "")
        for r in spark.sql(f"DESCRIBE {name}.db.weather").collect()
    ]
    assert [r[2] for r in described] == ["", "TAG", "TAG", "", ""]
    assert [tuple(c.strip() for c in line.split("\t")) for line in out[:5]] == described, (
        done.stderr[-3000:]
    )
    expected = [line for query in queries for line in rows_text(spark, query)]
    assert out[5:] == expected, done.stderr[-3000:]
    # The refusal ends the statements: its one line, as PySpark's spark.sql words it.
    assert done.returncode != 0
    with pytest.raises(Exception) as theirs:
        spark.sql(_URL_REFUSED.format(loc=location)).collect()
    message = str(theirs.value).strip().splitlines()[0]
    assert "unknown setting 'versio'" in message
    refusals = [line for line in done.stderr.splitlines() if "unknown setting 'versio'" in line]
    assert refusals, done.stderr[-3000:]
    assert all(message.split("SqlError: ", 1)[-1] in line for line in refusals)
    assert "Traceback" not in done.stderr
