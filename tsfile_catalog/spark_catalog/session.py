"""Wiring the catalog plugin into a session: the jar and catalog settings before the JVM
starts, and the Python delegate once it runs.

``configure(builder, warehouse=...)`` builds (or finds) the plugin's jar and sets every
setting of :mod:`.settings` (``spark.jars``, ``spark.sql.catalog.<name>`` and its
``warehouse``, the extensions, the workers' Python): the session then serves the catalog
through the catalog process the JVM starts (:mod:`.process`). ``register(spark)`` registers
the ``tsfile`` data source and hands the JVM a delegate in this driver instead;
``local_session(warehouse=...)`` does both with the catalog named ``tsfile``.

These wrap :mod:`tsfile_catalog.session` rather than living in it: the delegate runs the
Catalog's statements, and the Catalog registers the data source through that module.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from tsfile_catalog import session as _session
from tsfile_catalog.exceptions import TsFileCatalogError
from tsfile_catalog.extras import require
from tsfile_catalog.spark_catalog import settings as _settings
from tsfile_catalog.spark_catalog.build import JAR_NAME, jar_problem
from tsfile_catalog.spark_catalog.settings import DEFAULT_NAME
from tsfile_catalog.spark_catalog.wiring import (
    CATALOG_CLASS,
    CATALOG_PREFIX,
    PLUGIN_CLASSES,
    mark_registered,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "CATALOG_CLASS",
    "DEFAULT_NAME",
    "catalog_config",
    "configure",
    "local_session",
    "register",
]

_log = logging.getLogger(__name__)
_CATALOG_PREFIX = CATALOG_PREFIX
_CLIENT = "io.tsfilecatalog.spark.Client"


def catalog_config(
    warehouse: str, *, name: str = DEFAULT_NAME, **fs_options: str
) -> dict[str, str]:
    """Every Spark setting of the plugin (:func:`.settings.catalog_config`): its jar (built
    now if need be), its extensions, the catalog class under ``name``, its warehouse (a local
    path made absolute) and ``fs.<option>`` settings, and the workers' Python.

    Raises:
        OptionError: a catalog name Spark does not accept.
        TsFileCatalogError: the jar cannot be built (no JDK: the message says what to install).
    """
    return _settings.catalog_config(warehouse, name=name, **fs_options)


def configure(
    builder: SparkSession.Builder, *, warehouse: str, name: str = DEFAULT_NAME, **fs_options: str
) -> SparkSession.Builder:
    """Configure ``builder`` for the catalog plugin; returns it for chaining.

    Sets :func:`catalog_config`'s settings. The jar must be on the classpath when the JVM
    starts, so this builds it now (into a cache keyed by the PySpark version). Jars and
    extensions already given are kept; so is a Python the user chose (``spark.pyspark.python``
    or ``PYSPARK_PYTHON``), else Spark's workers run this interpreter. The session then
    serves the catalog with no further call: its first catalog statement starts the catalog's
    Python process; :func:`register` answers from this process instead.

    Example::

        spark = tsfile_catalog.configure(SparkSession.builder, warehouse="/data/wh",
                                         name="ts").getOrCreate()
        spark.sql("SELECT * FROM ts.db.weather")
    """
    # The builder's options are private; settings made earlier must survive this call.
    existing = dict(getattr(builder, "_options", {}))
    if os.environ.get("PYSPARK_PYTHON"):
        existing.setdefault(_settings.PYTHON_CONF, os.environ["PYSPARK_PYTHON"])
    settings = _settings.merged(catalog_config(warehouse, name=name, **fs_options), existing)
    for key, value in settings.items():
        builder = builder.config(key, value)
    return builder


def register(spark: SparkSession) -> None:
    """Register the ``tsfile`` data source in ``spark``, and, when the plugin's jar is on the
    session's classpath, hand the JVM the delegate that answers its catalogs from this
    driver (idempotent).

    Optional: without it, the session's first catalog statement starts the catalog's own
    Python process (:mod:`.process`). On a Spark Connect session it does nothing but log so:
    the server's catalog process answers the catalog and registers the data source in each
    session it serves, with the catalog's Python (a source registered from a Connect client
    would run with the server's default Python, and the process keeps a session's own).

    Raises:
        TsFileCatalogError: the PySpark is too old; or a catalog is configured with the
            plugin's class but its jar is not on the classpath (the session was started
            before :func:`configure`).
    """
    if type(spark).__module__.startswith("pyspark.sql.connect"):  # no JVM in this process
        _log.info(
            "Spark Connect session: the tsfile catalog needs no register() call (the server's "
            "catalog process answers it and registers the tsfile data source in each session "
            "it serves); nothing registered"
        )
        return
    _session.register(spark)
    jvm = spark.sparkContext._jvm
    if jvm is None:
        return
    from py4j.java_gateway import JavaClass  # PySpark's own dependency: here with it

    client = jvm
    for part in _CLIENT.split("."):
        client = getattr(client, part)
    if not isinstance(client, JavaClass):
        configured = _configured_catalogs(spark)
        if configured:
            broken = _broken_jar(spark)
            if broken is not None:
                raise TsFileCatalogError(
                    f"catalog {configured[0]!r} is configured as {CATALOG_CLASS}, but the "
                    f"plugin's jar on this session's classpath, {broken}: "
                    "tsfile_catalog.configure(builder, warehouse=...) rebuilds it; start a new "
                    "process with it"
                )
            raise TsFileCatalogError(
                f"catalog {configured[0]!r} is configured as {CATALOG_CLASS}, but the plugin's "
                "jar is not on this session's classpath: this process's JVM started without it "
                "(an earlier session, such as local_session() without warehouse=), and a jar "
                "is only read when the JVM starts; restart the Python process (the notebook's "
                "kernel) and call tsfile_catalog.local_session(warehouse=...) or "
                "tsfile_catalog.configure(builder, warehouse=...) first"
            )
        return
    # Imported here: the delegate runs the Catalog's statements (sqlglot, the SQL layer).
    from tsfile_catalog.spark_catalog.process import serve

    delegate = serve(spark)
    client.setDelegate(delegate)
    gateway = spark.sparkContext._gateway
    mark_registered(gateway, delegate)


def _broken_jar(spark: SparkSession) -> str | None:
    """The plugin's jar in ``spark.jars`` that the JVM could not load, with what is wrong with
    it (a cached jar cut short), or None when none is broken."""
    for jar in str(spark.sparkContext.getConf().get("spark.jars", "") or "").split(","):
        path = Path(jar.removeprefix("file:"))
        if path.name == JAR_NAME and path.is_file():
            problem = jar_problem(path)
            if problem is not None:
                return f"{path}, cannot be loaded: {problem}"
    return None


def _configured_catalogs(spark: SparkSession) -> list[str]:
    """The catalogs configured as the plugin: when the JVM started, or since (a second
    ``getOrCreate`` sets them on the running session only)."""
    settings = [*spark.sparkContext.getConf().getAll(), *spark.conf.getAll.items()]
    names = {
        key[len(_CATALOG_PREFIX) :]
        for key, value in settings
        if key.startswith(_CATALOG_PREFIX) and value in PLUGIN_CLASSES
    }
    return sorted(names)


def local_session(
    app_name: str = "tsfile-catalog",
    *,
    warehouse: str | None = None,
    master: str = "local[2]",
    config: dict[str, str] | None = None,
) -> SparkSession:
    """A local SparkSession whose Python workers run this interpreter, with ``tsfile``
    registered; with ``warehouse``, also the catalog plugin as catalog ``tsfile``
    (``spark.sql("SELECT * FROM tsfile.db.t")``).

    Raises:
        MissingExtraError: PySpark is not installed (the ``spark`` extra).
        TsFileCatalogError: no Java; with ``warehouse``, no JDK to build the plugin with.
    """
    require("pyspark", what="tsfile_catalog.local_session()")
    settings = {} if warehouse is None else catalog_config(warehouse)
    spark = _session.local_session(app_name, master=master, config={**settings, **(config or {})})
    register(spark)
    return spark
