"""The Thrift JDBC/ODBC server (``HiveThriftServer2``, in PySpark's jars) started with the
catalog's settings alone, queried with ``beeline`` (PySpark's ``bin/``) and with a Python
DB-API client (PyHive, from PyPI): SELECT with pushdown, INSERT, UPDATE, MERGE, CALL and
refused statements, against a warehouse PySpark wrote; answers compared with PySpark's over
the same warehouse and a Parquet copy. Each JDBC connection is a session of its own, which the
catalog process serves as well. On 127.0.0.1, a free port, stopped by its pid."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from tests.server.conftest import free_port, pyspark_home, rows_text, run, serving

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.server, pytest.mark.spark]

THRIFT_SERVER = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
_PROMPT = re.compile(r"^\d+: jdbc:hive2://\S+> ")

_PUSHDOWN = (
    "SELECT city, device, count(*), CAST(round(sum(temp), 3) AS STRING) FROM {t} "
    "WHERE temp > 12 AND city = 'bj' AND time >= TIMESTAMP '2024-01-01 05:00:00' "
    "GROUP BY city, device ORDER BY city, device"
)
_ROWS = "SELECT CAST(time AS STRING), city, temp FROM {t} ORDER BY time, city"


@pytest.fixture(scope="module")
def jdbc_url(
    pyspark_warehouse: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    from tsfile_catalog import catalog_config
    from tsfile_catalog.spark_catalog.settings import as_arguments

    port = free_port()
    settings = catalog_config(str(pyspark_warehouse["warehouse"]), name="ts")
    command = [
        str(pyspark_home() / "bin" / "spark-submit"),
        "--class",
        THRIFT_SERVER,
        "--master",
        "local[2]",
        *as_arguments(settings).split(),
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        "spark.sql.session.timeZone=UTC",
        "--hiveconf",
        f"hive.server2.thrift.port={port}",
        "--hiveconf",
        "hive.server2.thrift.bind.host=127.0.0.1",
    ]
    # The server's own metastore (Derby) goes into the folder it runs in.
    with serving(command, port, tmp_path_factory.mktemp("thrift")):
        yield f"jdbc:hive2://127.0.0.1:{port}"


def _beeline(url: str, statements: str, folder: Any) -> Any:
    command = [
        str(pyspark_home() / "bin" / "beeline"),
        "-u",
        url,
        "--silent=true",
        "--showHeader=false",
        "--outputformat=tsv2",
        "-e",
        statements,
    ]
    return run(command, cwd=folder)


def test_beeline_reads_writes_and_calls(
    spark: SparkSession, jdbc_url: str, pyspark_warehouse: dict[str, Any], tmp_path: Any
) -> None:
    name, view = pyspark_warehouse["catalog"], pyspark_warehouse["view"]
    done = _beeline(
        jdbc_url,
        f"{_PUSHDOWN.format(t='ts.db.weather')}; "
        "CREATE NAMESPACE IF NOT EXISTS ts.jdbc; "
        "CREATE TABLE ts.jdbc.t (time TIMESTAMP, city STRING, temp DOUBLE) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city'); "
        "INSERT INTO ts.jdbc.t VALUES (TIMESTAMP '2024-01-01 00:00:00', 'bj', 1.5), "
        "(TIMESTAMP '2024-01-01 01:00:00', 'sh', 2.5); "
        "UPDATE ts.jdbc.t SET temp = temp + 10 WHERE city = 'bj'; "
        "MERGE INTO ts.jdbc.t AS t USING (SELECT TIMESTAMP '2024-01-01 05:00:00' AS time, "
        "'wh' AS city, 7.0D AS temp) AS s ON t.time = s.time AND t.city = s.city "
        "WHEN MATCHED THEN UPDATE SET temp = s.temp WHEN NOT MATCHED THEN INSERT *; "
        "CALL ts.system.optimize(table => 'jdbc.t'); "
        f"{_ROWS.format(t='ts.jdbc.t')}",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # beeline echoes its prompt before a statement's first row.
    out = [_PROMPT.sub("", line) for line in done.stdout.splitlines() if line.strip()]
    pushdown = rows_text(spark, _PUSHDOWN.format(t=view))
    assert out[: len(pushdown)] == pushdown
    expected = [
        "2024-01-01 00:00:00\tbj\t11.5",
        "2024-01-01 01:00:00\tsh\t2.5",
        "2024-01-01 05:00:00\twh\t7.0",
    ]
    assert out[-len(expected) :] == expected
    # PySpark reads what the JDBC client wrote.
    assert rows_text(spark, _ROWS.format(t=f"{name}.jdbc.t")) == expected


def test_a_refused_statement_is_one_line_naming_the_column(jdbc_url: str, tmp_path: Any) -> None:
    done = _beeline(
        jdbc_url,
        "CREATE TABLE IF NOT EXISTS ts.jdbc.e (time TIMESTAMP, city STRING, temp DOUBLE) "
        "USING tsfile TBLPROPERTIES ('tagColumns' = 'city'); "
        "ALTER TABLE ts.jdbc.e RENAME COLUMN city TO town",
        tmp_path,
    )
    assert done.returncode != 0
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, done.stderr[-3000:]
    assert "cannot rename TAG column 'city'" in errors[0]
    assert "Traceback" not in done.stderr


# PyHive: the Hive DB-API client, with pure-sasl (no system SASL library) for the server's
# default PLAIN authentication.
_DBAPI_ROWS = "SELECT CAST(time AS STRING), city, temp FROM {t} ORDER BY time, city"


def _dbapi(jdbc_url: str) -> Any:
    hive = pytest.importorskip("pyhive.hive", reason="the test extra's PyHive is not installed")
    port = int(jdbc_url.rsplit(":", 1)[1])
    return contextlib.closing(hive.connect(host="127.0.0.1", port=port, username="tests"))


def _fetch(cursor: Any, statement: str) -> list[tuple[Any, ...]]:
    cursor.execute(statement)
    return [tuple(row) for row in cursor.fetchall()]


def _rows(spark: SparkSession, query: str) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in spark.sql(query).collect()]


def test_a_dbapi_client_reads_writes_and_calls(
    spark: SparkSession, jdbc_url: str, pyspark_warehouse: dict[str, Any]
) -> None:
    name, view = pyspark_warehouse["catalog"], pyspark_warehouse["view"]
    # A first connection reads what PySpark wrote, and closes: the server then closes the
    # class loader of spark.jars (Hive's session close), which once left the plugin's
    # UPDATE/MERGE/CALL classes unloadable for every later connection.
    with _dbapi(jdbc_url) as first:
        cursor = first.cursor()
        pushdown = _PUSHDOWN.format(t="ts.db.weather")
        assert _fetch(cursor, pushdown) == _rows(spark, _PUSHDOWN.format(t=view))
        assert _fetch(cursor, "SELECT count(*), max(temp) FROM ts.db.weather") == _rows(
            spark, f"SELECT count(*), max(temp) FROM {view}"
        )
    with _dbapi(jdbc_url) as second:
        cursor = second.cursor()
        cursor.execute("CREATE NAMESPACE IF NOT EXISTS ts.dbapi")
        cursor.execute(
            "CREATE TABLE ts.dbapi.t (time TIMESTAMP, city STRING, temp DOUBLE) USING tsfile "
            "TBLPROPERTIES ('tagColumns' = 'city')"
        )
        cursor.execute(
            "INSERT INTO ts.dbapi.t SELECT time, city, temp FROM ts.db.weather "
            "WHERE temp IS NOT NULL"
        )
        cursor.execute("UPDATE ts.dbapi.t SET temp = temp + 10 WHERE city = 'bj'")
        cursor.execute(
            "MERGE INTO ts.dbapi.t AS t USING (SELECT TIMESTAMP '2024-01-01 01:00:00' AS time, "
            "'bj' AS city, 99.0D AS temp UNION ALL SELECT TIMESTAMP '2030-01-01 00:00:00', "
            "'wh', 7.0D) AS s ON t.time = s.time AND t.city = s.city "
            "WHEN MATCHED THEN UPDATE SET temp = s.temp WHEN NOT MATCHED THEN INSERT *"
        )
        assert len(_fetch(cursor, "CALL ts.system.optimize(table => 'dbapi.t')")) == 1
        written = _fetch(cursor, _DBAPI_ROWS.format(t="ts.dbapi.t"))
    # The same statements' effect, computed by PySpark over the Parquet copy.
    expected = _rows(
        spark,
        "SELECT CAST(time AS STRING), city, CASE WHEN time = TIMESTAMP '2024-01-01 01:00:00' "
        "AND city = 'bj' THEN 99.0D WHEN city = 'bj' THEN temp + 10 ELSE temp END "
        f"FROM {view} WHERE temp IS NOT NULL "
        "UNION ALL SELECT '2030-01-01 00:00:00', 'wh', 7.0D ORDER BY 1, 2",
    )
    assert written == expected
    assert ("2024-01-01 01:00:00", "bj", 99.0) in written
    # PySpark reads what the DB-API client wrote.
    assert _rows(spark, _DBAPI_ROWS.format(t=f"{name}.dbapi.t")) == expected


@pytest.mark.parametrize(
    ("statement", "names", "sql_state"),
    [
        (
            "ALTER TABLE ts.dbapi.e RENAME COLUMN city TO town",
            "cannot rename TAG column 'city'",
            "42000",
        ),
        (
            "CREATE TABLE ts.dbapi.bad (time TIMESTAMP, city STRING) USING tsfile "
            "TBLPROPERTIES ('tagColumns' = 'nope')",
            "option 'tagColumns' names 'nope'",
            "42616",
        ),
        ("SELECT * FROM ts.dbapi.e VERSION AS OF 99", "has no version 99", "22003"),
        ("UPDATE ts.dbapi.e SET city = 'x' WHERE temp > 1", "cannot set 'city'", "42000"),
    ],
)
def test_a_dbapi_client_gets_a_refusal_as_one_line_with_its_sqlstate(
    jdbc_url: str, statement: str, names: str, sql_state: str
) -> None:
    from pyhive import exc

    with _dbapi(jdbc_url) as connection:
        cursor = connection.cursor()
        cursor.execute("CREATE NAMESPACE IF NOT EXISTS ts.dbapi")
        cursor.execute(
            "CREATE TABLE IF NOT EXISTS ts.dbapi.e (time TIMESTAMP, city STRING, temp DOUBLE) "
            "USING tsfile TBLPROPERTIES ('tagColumns' = 'city')"
        )
        with pytest.raises(exc.OperationalError) as caught:
            cursor.execute(statement)
    # The DB-API error carries the server's status: its message and its SQLSTATE.
    status = caught.value.args[0].status
    assert names in status.errorMessage and "\n" not in status.errorMessage.strip()
    assert "Traceback" not in status.errorMessage
    assert status.sqlState == sql_state
