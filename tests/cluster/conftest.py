"""The multi-executor session: Spark's ``local-cluster[2,1,1024]`` (a standalone master and two
workers inside the driver JVM, each launching a separate executor JVM with its own Python
workers), and the table locations the cluster tests run against: local disk and S3 (moto).

A process holds one SparkContext and the default suite shares a local[2] one, so these tests
run in a pytest process of their own (``./run.sh test -m cluster``, a step of ``.ci/run``);
tests/conftest.py leaves them out of every other run.

Nothing an executor needs may come from the driver's memory. The executors are started with
no storage credentials in their environment (they inherit the driver JVM's, which is scrubbed
below), so every S3 access on them works only through what the project sends: the ``fs.*``
options inside the pickled source, reader, partitions and writer.

Streaming (issues 11a/11b, branches ssrc/ssink) plugs in here after they merge: a module
``tests/cluster/test_cluster_streaming.py`` with ``pytestmark = CLUSTER_TESTS`` (from
tests/cluster/helpers.py) whose tests take ``cluster_spark`` and ``cluster_table``
(checkpoints under ``cluster_table.url(...)``), e.g. a ``readStream`` of an appended-to table
and a ``writeStream`` with ``trigger(availableNow=True)`` into another, on both storages.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.cluster.helpers import CLUSTER_MASTER, EXECUTORS, ClusterTable
from tests.conftest import plugin_jar_config

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# What must not reach the executors through the environment: credentials, and fsspec's own
# configuration variables (FSSPEC_S3_KEY, ...), which would hand them over just as silently.
_CREDENTIAL_ENV_PREFIXES = ("AWS_", "FSSPEC_")


def _without_credentials() -> dict[str, str]:
    """Remove credential variables from this process's environment; return what was removed."""
    removed = {k: v for k, v in os.environ.items() if k.startswith(_CREDENTIAL_ENV_PREFIXES)}
    for key in removed:
        del os.environ[key]
    return removed


def _wait_for_executors(spark: SparkSession, timeout_s: float) -> None:
    """Block until both executors' block managers registered (the driver's counts too), so
    the first job already spreads over two processes."""
    status = spark.sparkContext._jsc.sc().getExecutorMemoryStatus()
    deadline = time.monotonic() + timeout_s
    while status.size() < EXECUTORS + 1:
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"{CLUSTER_MASTER}: only {status.size() - 1} of {EXECUTORS} executors came up "
                f"in {timeout_s:.0f} s; see their logs under $SPARK_HOME/work/"
            )
        time.sleep(0.5)
        status = spark.sparkContext._jsc.sc().getExecutorMemoryStatus()


@pytest.fixture(scope="session")
def cluster_spark() -> Iterator[SparkSession]:
    """A SparkSession on ``local-cluster[2,1,1024]``.

    Works with pip-installed pyspark: the workers launch executors with the package's own
    ``jars/`` (its directory is ``SPARK_HOME``), and write their logs to
    ``$SPARK_HOME/work/<app id>/``, which is removed again when the session stops.
    """
    from pyspark import SparkContext
    from pyspark.find_spark_home import _find_spark_home

    from tsfile_catalog.session import local_session

    if SparkContext._active_spark_context is not None:
        pytest.fail(
            "a SparkContext already runs in this process; the cluster tests need their own: "
            "run them alone with -m cluster"
        )
    os.environ["PYSPARK_PYTHON"] = sys.executable
    removed = _without_credentials()  # the JVM, and so every executor, starts without them
    try:
        session = local_session(
            "tsfile-catalog-cluster-tests",
            master=CLUSTER_MASTER,
            config={
                "spark.sql.shuffle.partitions": "2",
                "spark.default.parallelism": str(EXECUTORS),
                # Start tasks only once every executor registered (not Spark's default 80%
                # or 30 s): on a busy 2-core machine one JVM can take that long.
                "spark.scheduler.minRegisteredResourcesRatio": "1.0",
                "spark.scheduler.maxRegisteredResourcesWaitingTime": "180s",
                # The catalog plugin's jar (tests/cluster/test_cluster_catalog.py), on the
                # classpath from the start, as on the shared session.
                **plugin_jar_config(),
            },
        )
    finally:
        os.environ.update(removed)
    session.sparkContext.setLogLevel("ERROR")
    app_id = session.sparkContext.applicationId
    try:
        _wait_for_executors(session, timeout_s=180)
        yield session
    finally:
        session.stop()
        work = Path(_find_spark_home()) / "work"
        shutil.rmtree(work / app_id, ignore_errors=True)
        if work.is_dir() and not any(work.iterdir()):
            work.rmdir()


@pytest.fixture(params=["local", pytest.param("s3", marks=pytest.mark.s3)])
def cluster_table(request: pytest.FixtureRequest, tmp_path: Path) -> ClusterTable:
    """Each cluster test runs twice: tables on local disk (which the executors share with
    the driver, as a cluster shares a network file system) and on S3."""
    if request.param == "local":
        return ClusterTable(str(tmp_path), {})
    import s3fs

    endpoint: str = request.getfixturevalue("s3_endpoint")
    options: dict[str, Any] = {"endpoint_url": endpoint, "key": "x", "secret": "x"}
    bucket = f"cluster-{uuid.uuid4().hex[:12]}"
    s3fs.S3FileSystem(**options).mkdir(bucket)
    return ClusterTable(f"s3://{bucket}", options)
