"""Which catalog of a session is the plugin serving a given warehouse: the plugin's class
name, its settings, and the sessions whose JVM has been handed the Python delegate.

A leaf module: :mod:`tsfile_catalog.sql.catalog` asks it whether ``Catalog.sql`` can hand a
query to ``spark.sql`` through the plugin, and :mod:`.session` (which imports the delegate,
and so the SQL layer) records here each gateway it registered.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from tsfile_catalog.io import FileIO

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "CATALOG_CLASS",
    "CATALOG_PREFIX",
    "PLUGIN_CLASSES",
    "SESSION_CATALOG_CLASS",
    "WAREHOUSE_OPTION",
    "catalog_class",
    "mark_registered",
    "serving",
]

CATALOG_CLASS = "io.tsfilecatalog.spark.TsFileCatalog"
# As spark_catalog: tsfile tables in the warehouse, every other object in Spark's own catalog.
SESSION_CATALOG_CLASS = "io.tsfilecatalog.spark.TsFileSessionCatalog"
PLUGIN_CLASSES = frozenset({CATALOG_CLASS, SESSION_CATALOG_CLASS})
SESSION_CATALOG_NAME = "spark_catalog"
CATALOG_PREFIX = "spark.sql.catalog."
WAREHOUSE_OPTION = "warehouse"

# The delegate handed to each JVM gateway (by id), referenced here for as long as the
# process runs: Py4J holds only a weak proxy.
_delegates: dict[int, object] = {}


def catalog_class(name: str) -> str:
    """The plugin's class for catalog ``name``: the session catalog's for ``spark_catalog``
    (Spark hands it its built-in catalog for every table that is not tsfile's)."""
    return SESSION_CATALOG_CLASS if name == SESSION_CATALOG_NAME else CATALOG_CLASS


def mark_registered(gateway: object, delegate: object) -> None:
    """Record that ``gateway``'s JVM now calls ``delegate`` (``register`` did it)."""
    _delegates[id(gateway)] = delegate


def serving(spark: SparkSession, warehouse: str) -> str | None:
    """The name of a catalog of ``spark`` that is the plugin over ``warehouse`` (its class
    and its ``.warehouse`` setting, compared as the registry compares locations), with the
    delegate registered in this session's JVM; None if there is none (Spark Connect, no
    plugin, another warehouse, ``register`` not called). The first such name in sorted
    order when several are, and then that one for as long as it still serves the warehouse.

    Read at every call: catalogs can be configured while the session runs. Reading every
    setting of the session over Py4J takes tens of milliseconds, so the catalog found last
    for ``warehouse`` is checked first with two lookups of its own settings, and the whole
    scan runs only when it no longer serves ``warehouse``.
    """
    try:
        gateway = spark.sparkContext._gateway
    except (AttributeError, NotImplementedError):  # Spark Connect: no JVM in this process
        return None
    if gateway is None or id(gateway) not in _delegates:
        return None
    memo = (id(gateway), warehouse)
    known = _found.get(memo)
    if known is not None:
        name, warehouse_key = known
        location = spark.conf.get(warehouse_key, None)
        if (
            spark.conf.get(f"{CATALOG_PREFIX}{name}", None) in PLUGIN_CLASSES
            and location is not None
            and FileIO(location).normalize(location) == warehouse
        ):
            return name
        del _found[memo]
    found = _catalog_for(dict(spark.conf.getAll), warehouse)
    if found is not None:
        _found[memo] = found
        return found[0]
    return None


# The catalog name and warehouse setting key serving() found last, by (gateway, warehouse).
_found: dict[tuple[int, str], tuple[str, str]] = {}


def _catalog_for(conf: Mapping[str, str], warehouse: str) -> tuple[str, str] | None:
    """The plugin catalog in ``conf`` (a session's settings) whose warehouse is
    ``warehouse`` (already normalized), and the key of that setting; or None."""
    for key in sorted(conf):
        name = key[len(CATALOG_PREFIX) :]
        if not key.startswith(CATALOG_PREFIX) or "." in name or conf[key] not in PLUGIN_CLASSES:
            continue
        # Catalog options are case-insensitive in Spark (CaseInsensitiveStringMap).
        prefix = f"{key}.".lower()
        location_key = next((k for k in conf if k.lower() == prefix + WAREHOUSE_OPTION), None)
        if location_key is None:
            continue
        location = conf[location_key]
        if FileIO(location).normalize(location) == warehouse:
            return name, location_key
    return None
