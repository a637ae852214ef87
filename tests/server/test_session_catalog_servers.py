"""The plugin as Spark's session catalog (``TsFileSessionCatalog``, what ``catalog_config(...,
name="spark_catalog")`` sets) behind a Spark Connect server and the Thrift JDBC server, each
started with those settings alone: a tsfile table and a Parquet table side by side in
``default``, an UPDATE of the tsfile one, their join (compared with PySpark's over the same
rows), and the session catalog's refusal of a Parquet table over the tsfile table's name, in
the error's first line. On 127.0.0.1, free ports, stopped by their pids."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.server.conftest import free_port, pyspark_home, serving
from tests.server.test_connect import CONNECT_SERVER
from tests.server.test_thrift import THRIFT_SERVER

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.server, pytest.mark.spark]

READINGS = "(1, 'bj', 1.5), (2, 'sh', 2.5), (3, 'bj', -4.0), (4, 'gz', NULL)"
CITIES = "('bj', 'cn', 21), ('sh', 'cn', 24), ('ny', 'us', 8)"
_JOIN = (
    "SELECT r.time, r.city, c.country, r.temp * c.pop FROM {r} r JOIN {c} c "
    "ON r.city = c.city ORDER BY r.time"
)


def _statements(r: str, c: str) -> list[str]:
    """CREATE, INSERT and UPDATE of the tsfile table ``r`` and the Parquet table ``c``."""
    return [
        f"CREATE TABLE {r} (time BIGINT, city STRING, temp DOUBLE) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city')",
        f"CREATE TABLE {c} (city STRING, country STRING, pop INT) USING parquet",
        f"INSERT INTO {r} VALUES {READINGS}",
        f"INSERT INTO {c} VALUES {CITIES}",
        f"UPDATE {r} SET temp = temp + 10 WHERE city = 'bj'",
    ]


@pytest.fixture(scope="module")
def expected_join(spark: SparkSession) -> list[tuple[Any, ...]]:
    """The join in PySpark over the same rows as temporary views, the UPDATE applied."""
    spark.sql(
        "SELECT time, city, CASE WHEN city = 'bj' THEN temp + 10 ELSE temp END AS temp "
        f"FROM VALUES {READINGS} AS t(time, city, temp)"
    ).createOrReplaceTempView("sc_readings")
    spark.sql(f"SELECT * FROM VALUES {CITIES} AS t(city, country, pop)").createOrReplaceTempView(
        "sc_cities"
    )
    rows = [tuple(r) for r in spark.sql(_JOIN.format(r="sc_readings", c="sc_cities")).collect()]
    assert len(rows) == 3
    return rows


def _names() -> tuple[str, str]:
    tag = uuid.uuid4().hex[:8]
    return f"readings_{tag}", f"cities_{tag}"


@contextlib.contextmanager
def _server(main_class: str, port: int, extra: Sequence[str], folder: Path) -> Iterator[None]:
    """``main_class`` with the session catalog's settings alone over a warehouse in
    ``folder``."""
    from tsfile_catalog import catalog_config
    from tsfile_catalog.spark_catalog.settings import as_arguments

    settings = catalog_config(str(folder / "warehouse"), name="spark_catalog")
    command = [
        str(pyspark_home() / "bin" / "spark-submit"),
        "--class",
        main_class,
        "--master",
        "local[2]",
        *as_arguments(settings).split(),
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        "spark.sql.session.timeZone=UTC",
        *extra,
    ]
    with serving(command, port, folder / "server"):
        yield


def _refusal_names_the_table(message: str, readings: str) -> None:
    """The refusal is the first line; Spark appends the analysed plan (and Connect the
    server's stack trace) after it, as to its own analysis errors."""
    first, *rest = message.strip().splitlines()
    assert f"default.{readings} is a tsfile table in the warehouse" in first, message
    assert not [line for line in rest if "is a tsfile table" in line], message
    assert "Traceback" not in message


def test_a_connect_client_joins_updates_and_is_refused(
    tmp_path_factory: pytest.TempPathFactory, expected_join: list[tuple[Any, ...]]
) -> None:
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    port = free_port()
    extra = [
        "--conf",
        "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf",
        f"spark.connect.grpc.binding.port={port}",
    ]
    readings, cities = _names()
    with _server(CONNECT_SERVER, port, extra, tmp_path_factory.mktemp("connect_session")):
        client = RemoteSparkSession.builder.remote(f"sc://127.0.0.1:{port}").getOrCreate()
        try:
            for statement in _statements(readings, cities):
                client.sql(statement)
            tables = {r.tableName for r in client.sql("SHOW TABLES IN default").collect()}
            assert {readings, cities} <= tables
            joined = client.sql(_JOIN.format(r=readings, c=cities)).collect()
            assert [tuple(r) for r in joined] == expected_join
            with pytest.raises(Exception) as caught:  # noqa: PT011 - Connect's own classes
                client.sql(f"CREATE TABLE {readings} (x INT) USING parquet").collect()
            _refusal_names_the_table(caught.value.getMessage(), readings)  # type: ignore[attr-defined]
        finally:
            client.stop()


def test_a_jdbc_client_joins_updates_and_is_refused(
    tmp_path_factory: pytest.TempPathFactory, expected_join: list[tuple[Any, ...]]
) -> None:
    hive = pytest.importorskip("pyhive.hive", reason="the test extra's PyHive is not installed")
    from pyhive import exc

    port = free_port()
    extra = [
        "--hiveconf",
        f"hive.server2.thrift.port={port}",
        "--hiveconf",
        "hive.server2.thrift.bind.host=127.0.0.1",
    ]
    readings, cities = _names()
    with (
        _server(THRIFT_SERVER, port, extra, tmp_path_factory.mktemp("thrift_session")),
        contextlib.closing(hive.connect(host="127.0.0.1", port=port, username="tests")) as db,
    ):
        cursor = db.cursor()
        for statement in _statements(readings, cities):
            cursor.execute(statement)
        cursor.execute("SHOW TABLES IN default")
        assert {readings, cities} <= {row[1] for row in cursor.fetchall()}
        cursor.execute(_JOIN.format(r=readings, c=cities))
        assert [tuple(r) for r in cursor.fetchall()] == expected_join
        with pytest.raises(exc.OperationalError) as caught:
            cursor.execute(f"CREATE TABLE {readings} (x INT) USING parquet")
        status = caught.value.args[0].status
        _refusal_names_the_table(status.errorMessage, readings)
