"""Shared fixtures: one local[2] SparkSession for the whole test session, built lazily so the
pure tests never start a JVM."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


# The moto server's fake credentials, as the environment of every process that touches S3.
FAKE_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "x",
    "AWS_SECRET_ACCESS_KEY": "x",
    "AWS_DEFAULT_REGION": "us-east-1",
}


CLUSTER_MARKER = "cluster"
LONG = "long"
SERVER = "server"
SLOW = "slow"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-long",
        action="store_true",
        help="also run the tests marked long (concurrency at size), left out by default",
    )


def pytest_configure(config: pytest.Config) -> None:
    # Registered here, not in pyproject.toml (whose checksum keys the shared venv's install).
    config.addinivalue_line(
        "markers",
        f"{LONG}: minutes-long tests (8 writers x 25 commits); run with --run-long or -m {LONG}",
    )
    config.addinivalue_line(
        "markers",
        f"{CLUSTER_MARKER}: runs on local-cluster[2,1,1024] (tests/cluster/); one SparkContext "
        f"per process, so these run only in their own pytest run: -m {CLUSTER_MARKER}",
    )
    config.addinivalue_line(
        "markers",
        f"{SERVER}: starts Spark's own clients and servers (spark-sql, Spark Connect) in "
        f"processes of their own (tests/server/); left out unless asked for: -m {SERVER}",
    )
    config.addinivalue_line(
        "markers",
        f"{SLOW}: ten seconds or more each (a sweep of statements or filters against Spark, "
        f"a process or JVM of its own, a benchmark's smoke run), so the default run stays "
        f"quick; left out unless asked for: -m {SLOW} (CI runs them as a step of their own)",
    )


def pytest_itemcollected(item: pytest.Item) -> None:
    """A test that uses the Spark session is a ``spark`` test whether or not it says so, so
    ``-m "not spark"`` runs without a JVM (runs before ``-m`` deselects)."""
    if "spark" in getattr(item, "fixturenames", ()) and item.get_closest_marker("spark") is None:
        item.add_marker(pytest.mark.spark)


@pytest.hookimpl(trylast=True)  # after ``-m`` deselected what it does not select
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _leave_out_cluster_tests(config, items)
    # Servers start JVMs of their own (tens of seconds each); long tests take minutes; slow
    # ones ten seconds or more: each is a CI step of its own (.ci/run).
    _leave_out_unless_named(config, items, LONG, asked=config.getoption("--run-long"))
    _leave_out_unless_named(config, items, SERVER)
    # A subset picked by ``-k`` or a test's id is what the user asked for, slow or not.
    picked = bool(config.option.keyword) or any("::" in str(a) for a in config.args)
    _leave_out_unless_named(config, items, SLOW, asked=picked)


def _leave_out_unless_named(
    config: pytest.Config, items: list[pytest.Item], marker: str, *, asked: bool = False
) -> None:
    """Leave the tests marked ``marker`` out of the default run (deselected, not skipped),
    unless a ``-m`` expression names the marker or ``asked`` (its command-line flag)."""
    if asked or marker in (config.option.markexpr or ""):
        return
    marked = [item for item in items if item.get_closest_marker(marker) is not None]
    if marked:
        config.hook.pytest_deselected(items=marked)
        items[:] = [item for item in items if item.get_closest_marker(marker) is None]


def _leave_out_cluster_tests(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave the cluster tests out unless ``-m`` names them, and refuse a run that would
    need both the local[2] and the local-cluster session: a process holds one SparkContext,
    and whichever started first would silently serve both."""
    if CLUSTER_MARKER not in (config.option.markexpr or ""):
        kept = [i for i in items if i.get_closest_marker(CLUSTER_MARKER) is None]
        if len(kept) != len(items):
            config.hook.pytest_deselected(
                items=[i for i in items if i.get_closest_marker(CLUSTER_MARKER) is not None]
            )
            items[:] = kept
        return
    on_cluster = any(i.get_closest_marker(CLUSTER_MARKER) is not None for i in items)
    local = [
        i.nodeid
        for i in items
        if i.get_closest_marker(CLUSTER_MARKER) is None
        and "spark" in getattr(i, "fixturenames", ())
    ]
    if on_cluster and local:
        raise pytest.UsageError(
            f"the {CLUSTER_MARKER} tests need a process of their own (one SparkContext per "
            f"process), but this run also selects local[2] Spark tests such as {local[0]}; "
            f"run them separately: -m {CLUSTER_MARKER}"
        )


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from tsfile_catalog.session import local_session

    # Spark's Python workers get the JVM's environment, fixed when the session starts (often
    # before s3_endpoint sets the driver's): spark.executorEnv is how a deployment hands them
    # credentials (docs/sql.md, "Credentials"), so the tests do the same.
    executor_env = {f"spark.executorEnv.{k}": v for k, v in FAKE_AWS_ENV.items()}
    session = local_session(
        "tsfile-catalog-tests",
        config={
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            **executor_env,
            **plugin_jar_config(),
        },
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def plugin_jar_config() -> dict[str, str]:
    """The catalog plugin's jar on the shared session's classpath, where it must be when the
    JVM starts (tests/spark_catalog configure catalogs at run time), and its session
    extensions (the statements Spark cannot parse, the optimizer rules in every session), as
    ``configure`` sets them; none without a JDK, and those tests skip saying so (a jar that
    does not compile where a JDK is fails the session: it must never pass as skips). Path reads
    keep the source's own scan here (``spark.tsfile.pathReads.enabled=false``, as in a
    session without the jar), so the source's tests test it; tests/spark_catalog/
    test_path_reads.py turns the plugin's scan of them on."""
    from tsfile_catalog.spark_catalog.build import build_jar, jdk_available
    from tsfile_catalog.spark_catalog.settings import EXTENSIONS_CLASS

    if not jdk_available():
        return {}
    return {
        "spark.jars": str(build_jar()),
        "spark.sql.extensions": EXTENSIONS_CLASS,
        "spark.tsfile.pathReads.enabled": "false",
    }


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """A moto S3 server on 127.0.0.1 (a free port), with fake credentials in the env."""
    import moto.server as moto_server

    saved = {k: os.environ.get(k) for k in FAKE_AWS_ENV}
    os.environ.update(FAKE_AWS_ENV)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture
def s3_table(s3_endpoint: str) -> tuple[str, dict[str, Any]]:
    """A table URL in a fresh bucket, and the storage options to reach it."""
    import s3fs

    options: dict[str, Any] = {"endpoint_url": s3_endpoint, "key": "x", "secret": "x"}
    bucket = f"tsfile-{uuid.uuid4().hex[:12]}"
    s3fs.S3FileSystem(**options).mkdir(bucket)
    return f"s3://{bucket}/table", options
