"""Spark session helpers: registration and a correctly wired local session."""

from __future__ import annotations

import os
import shutil
import sys
from typing import TYPE_CHECKING

from tsfile_catalog.datasource.compat import MIN_PYSPARK, check_pyspark_version
from tsfile_catalog.exceptions import TsFileCatalogError
from tsfile_catalog.extras import require

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["MIN_PYSPARK", "UNIX_SOCKET_CONF", "check_pyspark_version", "register", "local_session"]

HIDE_TRACEBACK_CONF = "spark.sql.execution.pyspark.udf.hideTraceback.enabled"
"""Spark's switch that reduces a Python worker's error to its class and message, which
:func:`local_session` turns on."""

UNIX_SOCKET_CONF = "spark.python.unix.domain.socket.enabled"
"""Spark's switch for Unix domain sockets to Python workers, which :func:`local_session` leaves
off (see there why)."""

# MIN_PYSPARK and check_pyspark_version live in datasource.compat (the source checks them
# too); re-exported here, where the support matrix and callers have always found them.


def register(spark: SparkSession) -> None:
    """Register the ``tsfile`` data source in ``spark`` (idempotent).

    Installed packages are discovered by Spark without this call (the ``pyspark_tsfile``
    module); registering explicitly helps when the package is only on ``sys.path``.

    Raises:
        TsFileCatalogError: the session's PySpark is older than :data:`MIN_PYSPARK`.
        MissingExtraError: PySpark is not installed (the ``spark`` extra).
    """
    pyspark = require("pyspark", what="tsfile_catalog.register()")

    from tsfile_catalog.datasource.source import TsFileDataSource
    from tsfile_catalog.options import DRIVER_CWD_ENV

    check_pyspark_version(pyspark.__version__)
    cwd = _driver_working_dir(spark)
    if cwd is not None:
        # Registration pickles the source with the context's environment, which Spark gives
        # every Python worker that plans or runs it (planner and tasks alike), so it must be
        # set first.
        spark.sparkContext.environment[DRIVER_CWD_ENV] = cwd
    spark.dataSource.register(TsFileDataSource)
    _check_name_clash(spark)
    _redact_credentials(spark)


# The provider Spark looks ``format("tsfile")`` up as when the Python source answers it.
_PYTHON_PROVIDER = "org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceV2"


def _check_name_clash(spark: SparkSession) -> None:
    """Fail when a JVM data source on the classpath also registers the short name ``tsfile``
    (apache/tsfile's Java connector does): Spark 4.3 then answers ``format("tsfile")`` with
    that class, silently and ahead of this package's source (two such classes: Spark's own
    ``foundMultipleDataSources`` error at every read). Spark Connect has no JVM here.

    Raises:
        TsFileCatalogError: naming the other class, its jar, and the way out.
    """
    from tsfile_catalog.datasource.source import SHORT_NAME, TsFileDataSource

    try:
        jvm = spark.sparkContext._jvm
    except (AttributeError, NotImplementedError):
        return
    if jvm is None:
        return
    from py4j.protocol import Py4JJavaError  # PySpark's own dependency: here with it

    conf = spark._jsparkSession.sessionState().conf()
    try:
        found = jvm.org.apache.spark.sql.execution.datasources.DataSource.lookupDataSource(
            SHORT_NAME, conf
        )
    except Py4JJavaError as e:
        other = str(e.java_exception.getMessage()).splitlines()[0]
    else:
        if found.getName() == _PYTHON_PROVIDER:
            return
        code = found.getProtectionDomain().getCodeSource()
        other = found.getName() + ("" if code is None else f" (in {code.getLocation()})")
    raise TsFileCatalogError(
        f"format('{SHORT_NAME}') is taken on this session's classpath by another data source, "
        f"{other}, which Spark picks before tsfile_catalog's Python source "
        f"({TsFileDataSource.__module__}.{TsFileDataSource.__name__}): a session has one "
        f"'{SHORT_NAME}' format, so remove that jar from spark.jars/--jars/--packages (or "
        "start another Spark application for it)"
    )


REDACTION_CONF = "spark.sql.redaction.options.regex"
"""The session's redaction of settings and options in ``SET`` and query plans, which
:func:`register` extends to the credentials ``fs.*`` settings carry."""


def _redact_credentials(spark: SparkSession) -> None:
    """Make ``SET`` (and every plan or listing Spark redacts) hide ``fs.*`` credentials:
    Spark's defaults hide ``fs.secret`` but show ``spark.sql.catalog.<name>.fs.key`` and an
    ``aws_access_key_id`` inside ``fs.client_kwargs``. A runtime SQL setting, so this works
    on a running session, Spark Connect included."""
    from tsfile_catalog.storage_options import spark_redaction_regex

    current = spark.conf.get(REDACTION_CONF)
    extended = spark_redaction_regex(current)
    if extended != current:
        spark.conf.set(REDACTION_CONF, extended)


def _driver_working_dir(spark: SparkSession) -> str | None:
    """The driver JVM's working directory (``user.dir``): what Spark's file sources resolve a
    relative local path against (Hadoop's local file system starts there). Not this Python
    process's, which ``os.chdir`` may have moved since the JVM started. None when the session
    has no JVM here (Spark Connect)."""
    try:
        jvm = spark.sparkContext._jvm
    except (AttributeError, NotImplementedError):  # Spark Connect: no SparkContext at all
        return None
    if jvm is None:
        return None
    return str(jvm.java.lang.System.getProperty("user.dir"))


def _check_java() -> None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.path.exists(os.path.join(java_home, "bin", "java")):
        return
    if shutil.which("java") is None:
        raise TsFileCatalogError(
            "Java was not found: PySpark needs a Java 17+ runtime. Install one (e.g. "
            "'apt-get install openjdk-17-jre-headless') or set JAVA_HOME."
        )


def local_session(
    app_name: str = "tsfile-catalog",
    *,
    master: str = "local[2]",
    config: dict[str, str] | None = None,
) -> SparkSession:
    """A local SparkSession whose Python workers run this interpreter, with tsfile registered.

    Spark's workers otherwise start whatever ``python3`` is on PATH, which usually cannot
    import this package or its dependencies.

    Raises:
        MissingExtraError: PySpark is not installed (the ``spark`` extra).
        TsFileCatalogError: no Java runtime.
    """
    # PySpark first: without it, a missing Java is not the problem to report.
    sql = require("pyspark.sql", what="tsfile_catalog.local_session()")
    _check_java()

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (
        sql.SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.pyspark.python", sys.executable)
        .config("spark.pyspark.driver.python", sys.executable)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        # An error from the tsfile source (in a Python worker) reaches the caller as its class
        # and message, not the worker's traceback around them (docs/options.md, "Errors on
        # the DataFrame path"; tsfile_catalog.errors.unwrap gives back the exception).
        .config(HIDE_TRACEBACK_CONF, "true")
    )
    # Spark's default TCP between the JVM and its Python workers, not Unix domain sockets
    # (UNIX_SOCKET_CONF): those saved about 10% of the fixed cost of a query on a Python
    # source (issue 12), but PySpark's daemon then prints BrokenPipeError tracebacks when the
    # JVM closes a worker's socket before the worker's last flush (a write to a closed Unix
    # socket fails at once; on TCP it succeeds). Its only switch
    # (spark.python.daemon.killWorkerOnFlushFailure) trades the traceback for another, so the
    # demo and every session stayed noisy (issue 24). ``config`` may still turn it on.
    for key, value in (config or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    register(spark)
    return spark
