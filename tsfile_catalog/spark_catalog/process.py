"""The catalog process: the catalog's Python side when the JVM has no Python driver.

``spark-sql``, a Spark Connect or Thrift server and a JVM job have no Python process that
called ``tsfile_catalog.register(spark)``. There, the plugin's first catalog call starts
``python -m tsfile_catalog.spark_catalog.process`` (``io.tsfilecatalog.spark.CatalogProcess``),
as Spark's ``PythonRunner`` starts ``spark-submit app.py``: PySpark's ``launch_gateway``
connects to the Py4J server named by ``PYSPARK_GATEWAY_PORT``/``PYSPARK_GATEWAY_SECRET``.
This module wraps that JVM's own SparkContext and session (it creates none), and hands the
JVM the same :class:`~tsfile_catalog.spark_catalog.delegate.CatalogDelegate` a PySpark
driver's ``register`` does (:func:`serve`). It exits when its stdin, a pipe from the JVM,
closes: when the JVM ends.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from tsfile_catalog.spark_catalog.delegate import CatalogDelegate

__all__ = ["TOKEN_ENV", "main", "serve"]

TOKEN_ENV = "TSFILE_CATALOG_PROCESS_TOKEN"
"""Which start of the process this is (the JVM ignores an ``attach`` from an older one)."""

_PROCESS_CLASS = "io.tsfilecatalog.spark.CatalogProcess"
_log = logging.getLogger(__name__)


def serve(spark: SparkSession, delegate: CatalogDelegate | None = None) -> CatalogDelegate:
    """A delegate (``delegate``, else a new one) answering the plugin's calls from
    ``spark``'s JVM, with this process's Py4J callback server started and the session's
    optimizer rules installed; the caller hands it to the JVM (``Client.setDelegate`` or
    ``CatalogProcess.attach``)."""
    from pyspark.java_gateway import ensure_callback_server_started

    from tsfile_catalog.spark_catalog.delegate import CatalogDelegate

    jvm = spark.sparkContext._jvm
    assert jvm is not None
    ensure_callback_server_started(spark.sparkContext._gateway)
    if delegate is None:
        delegate = CatalogDelegate(spark)
    # Statistics answers become local relations, so collecting them runs no Spark job.
    jvm.io.tsfilecatalog.spark.LocalAnswers.install(spark._jsparkSession)
    # UPDATE through spark.sql refuses SET of the table key, as Catalog.sql's does.
    jvm.io.tsfilecatalog.spark.KeyAssignments.install(spark._jsparkSession)
    return delegate


# The JVM's call on a session's first catalog call (CatalogProcess.serveSession), once a session.
SERVE_SESSION = "serve_session"


def _process_delegate(spark: SparkSession) -> CatalogDelegate:
    """The process's delegate: the driver's, plus the ``tsfile`` source in every session it
    serves. Spark's own discovery of ``pyspark_tsfile`` runs the interpreter of
    ``PYSPARK_PYTHON`` (the environment, not ``spark.pyspark.python``): a server started with
    settings alone may have found none, and a session per client (Connect, Thrift) holds only
    what it found. So a session's first catalog call registers the source there, pickled by
    this process for the workers' Python, unless the session has one: the JVM calls
    ``serve_session`` once per session, before that call (not on every call: each check is
    four calls back into the JVM, as many milliseconds as a ``load_table`` on a busy host)."""
    from py4j.protocol import Py4JError
    from pyspark.sql.udf import _wrap_function

    from tsfile_catalog.datasource.source import TsFileDataSource
    from tsfile_catalog.options import DRIVER_CWD_ENV
    from tsfile_catalog.session import _driver_working_dir
    from tsfile_catalog.spark_catalog.delegate import CatalogDelegate

    jvm = spark.sparkContext._jvm
    assert jvm is not None
    cwd = _driver_working_dir(spark)
    if cwd is not None:
        spark.sparkContext.environment[DRIVER_CWD_ENV] = cwd
    name = TsFileDataSource.name()
    source = jvm.org.apache.spark.sql.execution.datasources.v2.python.UserDefinedPythonDataSource(
        _wrap_function(spark.sparkContext, TsFileDataSource)
    )
    sessions = jvm.org.apache.spark.sql.SparkSession

    def ensure(session: Any) -> None:
        if not session.sessionState().dataSourceManager().dataSourceExists(name):
            session.dataSource().registerPython(name, source)

    # The wrapped session first: the Catalog (CALL) registers the source there again, which
    # Spark refuses while only the calling session has it.
    ensure(spark._jsparkSession)

    class ProcessDelegate(CatalogDelegate):
        def call(self, operation: str, request: str) -> str:
            if operation != SERVE_SESSION:
                return super().call(operation, request)
            try:
                # The calling thread's session: Py4J runs this on it (pinned threads).
                ensure(sessions.active())
            except Py4JError:
                _log.exception("registering the %s source in the calling session", name)
            return json.dumps({"result": None})

    return ProcessDelegate(spark)


def _wrap(gateway: Any, jspark: Any) -> SparkSession:
    """A PySpark session over the JVM's session ``jspark``: its SparkContext is the JVM's
    (as Zeppelin's and Livy's Python interpreters wrap theirs), not a new one."""
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    jsc = gateway.jvm.org.apache.spark.api.java.JavaSparkContext(jspark.sparkContext())
    # getConf() is a copy: PySpark's defaults (setIfMissing) leave the running conf alone.
    sc = SparkContext(conf=SparkConf(_jconf=jsc.getConf()), gateway=gateway, jsc=jsc)
    return SparkSession(sc, jsparkSession=jspark)


def _exit_with_parent() -> None:
    """Exit the process when the JVM's pipe on stdin closes (the JVM ended)."""

    def watch() -> None:
        try:
            while sys.stdin.buffer.read(4096):
                pass
        finally:
            os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def main() -> None:
    """Attach to the JVM that started this process and serve its catalog calls until it
    ends."""
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s: %(message)s"
    )
    # Py4J logs every command at INFO: the log keeps this module's lines and errors.
    logging.getLogger("py4j").setLevel(logging.WARNING)
    token = os.environ[TOKEN_ENV]
    _exit_with_parent()
    from pyspark.java_gateway import launch_gateway

    gateway = launch_gateway()
    process = gateway.jvm
    for part in _PROCESS_CLASS.split("."):
        process = getattr(process, part)
    # The session's tsfile source is Spark's own discovery of pyspark_tsfile: the user's
    # session is not re-registered from here.
    spark = _wrap(gateway, process.session(token))
    delegate = serve(spark, _process_delegate(spark))
    process.attach(token, delegate)
    _log.info("serving the tsfile catalog of JVM session %s", spark.sparkContext.applicationId)
    threading.Event().wait()


if __name__ == "__main__":
    main()
