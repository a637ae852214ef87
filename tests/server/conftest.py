"""Spark's own clients and servers against the catalog (``-m server``): each test starts
``spark-sql``, a Spark Connect server or a fresh PySpark driver in a process of its own, with
the settings ``tsfile_catalog.catalog_config`` returns and no Python call, against a
warehouse the shared PySpark session wrote, and compares their answers with PySpark's.

The processes run this checkout (``PYTHONPATH``) and this interpreter (``spark.pyspark.python``
from the settings); each is stopped by its pid, every wait is bounded.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from bench import servers
from tests.spark_catalog.conftest import weather_rows

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

REPO = Path(__file__).resolve().parents[2]


def pyspark_home() -> Path:
    """PySpark's installation: its ``bin/`` and ``sbin/`` scripts and ``jars/``."""
    import pyspark

    return Path(pyspark.__file__).parent


# Settings alone: no interpreter in the environment (the settings' spark.pyspark.python
# names it), and no gateway of this process's.
_NOT_INHERITED = ("PYSPARK_GATEWAY", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a client or server process: this checkout first on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_NOT_INHERITED)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    env["SPARK_HOME"] = str(pyspark_home())
    env.update(extra)
    return env


def run(
    command: Sequence[str], *, cwd: Path, timeout: float = 600, **env: str
) -> subprocess.CompletedProcess:
    """Run ``command`` to its end (bounded), its output captured as text; ``env`` adds
    variables to :func:`child_env`'s."""
    return subprocess.run(
        list(command),
        capture_output=True,
        text=True,
        env=child_env(**env),
        cwd=cwd,
        timeout=timeout,
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def serving(command: Sequence[str], port: int, folder: Path) -> Iterator[Path]:
    """Run the server ``command`` in ``folder`` (its log: ``server.log`` there) until it
    listens on 127.0.0.1:``port`` (bounded); stop it by its pid on leaving."""
    with servers.serving(command, port, folder, child_env()) as log:
        yield log


def rows_text(spark: SparkSession, query: str) -> list[str]:
    """``query``'s rows in PySpark as ``spark-sql`` prints them: tab-separated, NULL for
    None (the queries cast what they compare to strings or integers)."""
    return [
        "\t".join("NULL" if v is None else str(v) for v in row)
        for row in spark.sql(query).collect()
    ]


@pytest.fixture(scope="module")
def pyspark_warehouse(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """A warehouse PySpark wrote (``db.weather``: 40 rows of four devices), the name of the
    shared session's catalog over it, and a view ``pq_weather_<id>`` of the same rows in
    Parquet."""
    from py4j.java_gateway import JavaClass

    import tsfile_catalog
    from tsfile_catalog.spark_catalog.session import CATALOG_CLASS

    jvm = spark.sparkContext._jvm
    assert jvm is not None
    if not isinstance(jvm.io.tsfilecatalog.spark.Client, JavaClass):
        pytest.skip("the catalog plugin's jar could not be built here (no JDK's javac)")
    tsfile_catalog.register(spark)
    warehouse = tmp_path_factory.mktemp("warehouse")
    name = f"ts_{uuid.uuid4().hex[:8]}"
    spark.conf.set(f"spark.sql.catalog.{name}", CATALOG_CLASS)
    spark.conf.set(f"spark.sql.catalog.{name}.warehouse", str(warehouse))
    spark.sql(
        f"CREATE TABLE {name}.db.weather (time TIMESTAMP, city STRING, device STRING, "
        "temp DOUBLE, rain INT) USING tsfile TBLPROPERTIES ('tagColumns' = 'city,device')"
    )
    rows = weather_rows(spark)
    rows.writeTo(f"{name}.db.weather").append()
    parquet = str(tmp_path_factory.mktemp("parquet") / "weather")
    rows.write.parquet(parquet)
    view = f"pq_weather_{name[3:]}"
    spark.read.parquet(parquet).createOrReplaceTempView(view)
    yield {"warehouse": warehouse, "catalog": name, "parquet": parquet, "view": view}
    spark.conf.unset(f"spark.sql.catalog.{name}")
    spark.conf.unset(f"spark.sql.catalog.{name}.warehouse")


# spark-sql on one local core, no UI, in UTC: every test's CLI runs these.
LOCAL_SPARK_SQL = (
    "--master",
    "local[1]",
    "--conf",
    "spark.ui.enabled=false",
    "--conf",
    "spark.sql.session.timeZone=UTC",
)


def spark_sql_arguments(warehouse: Path) -> list[str]:
    """``spark-sql``'s arguments for catalog ``ts`` over ``warehouse``: settings alone."""

    from tsfile_catalog import catalog_config
    from tsfile_catalog.spark_catalog.settings import as_arguments

    settings = catalog_config(str(warehouse), name="ts")
    return [*as_arguments(settings).split(), *LOCAL_SPARK_SQL]
