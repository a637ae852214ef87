"""The Spark settings that serve the catalog plugin, whatever the client: ``configure`` sets
them on a builder, ``catalog_config`` returns them, and ``tsfile-catalog spark-conf`` prints
them for ``spark-sql``, ``spark-submit``, a Spark Connect or Thrift server, or
``spark-defaults.conf``.

With these settings alone (no Python call), an application serves the catalog: its first
catalog call starts the catalog's Python process (:mod:`.process`) with the interpreter in
``spark.pyspark.python``, and :data:`EXTENSIONS_CLASS` installs the plugin's optimizer rules in
every session, including the ones a server creates per client.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.io import FileIO
from tsfile_catalog.session import HIDE_TRACEBACK_CONF
from tsfile_catalog.spark_catalog.build import build_jar
from tsfile_catalog.spark_catalog.wiring import CATALOG_PREFIX, WAREHOUSE_OPTION, catalog_class
from tsfile_catalog.storage_options import spark_redaction_regex

__all__ = [
    "DEFAULT_NAME",
    "EXTENSIONS_CLASS",
    "HIDE_TRACEBACK_CONF",
    "PYTHON_CONF",
    "as_arguments",
    "as_defaults",
    "catalog_config",
    "merged",
]

DEFAULT_NAME = "tsfile"
EXTENSIONS_CLASS = "io.tsfilecatalog.spark.TsFileExtensions"
PYTHON_CONF = "spark.pyspark.python"
# HIDE_TRACEBACK_CONF (as local_session sets it): a Python worker's error reaches every
# client as its class and message, the tsfile source's one line, not the worker's traceback.

_JARS = "spark.jars"
# Spark's own pattern (its default for spark.redaction.regex), extended with the catalog's
# fs.* credentials: the UI's environment page, event logs and SET hide them too.
_REDACTION = "spark.redaction.regex"
_SPARK_REDACTION_DEFAULT = "(?i)secret|password|token|access[.]?key"
_EXTENSIONS = "spark.sql.extensions"
# Comma-separated lists: the plugin's entry is added to what is set already.
_LISTS = (_JARS, _EXTENSIONS)
# The user's own choice wins: set only where the user set nothing.
_DEFAULTS = (PYTHON_CONF, HIDE_TRACEBACK_CONF)


def catalog_config(
    warehouse: str, *, name: str = DEFAULT_NAME, **fs_options: str
) -> dict[str, str]:
    """Every Spark setting the catalog plugin needs, as ``name`` over ``warehouse``.

    The plugin's jar (``spark.jars``, built now if need be), its session extensions, the
    catalog class under ``spark.sql.catalog.<name>`` (for ``spark_catalog``, the session
    catalog's, which keeps every other provider's table in Spark's built-in catalog; see
    docs/spark-catalog.md, "As the session catalog"), its warehouse (a local path made
    absolute) and its ``fs.<option>`` storage settings, the Python that Spark's workers and
    the catalog's process run (this interpreter, which has this package), and one-line
    worker errors. Pass them to ``--conf`` (``tsfile-catalog spark-conf`` prints them so) or
    ``spark-defaults.conf``; :func:`~tsfile_catalog.configure` sets them on a builder.

    Example::

        settings = tsfile_catalog.catalog_config("/data/wh", name="ts")
        settings["spark.sql.catalog.ts"]  # 'io.tsfilecatalog.spark.TsFileCatalog'

    Raises:
        OptionError: ``name`` is not a catalog name Spark accepts.
        TsFileCatalogError: the jar cannot be built (no JDK: the message says what to install).
    """
    if not name or not name.replace("_", "a").isalnum() or name[0].isdigit():
        raise OptionError(
            f"catalog name {name!r}: use letters, digits and _ (Spark's catalog names), "
            "not starting with a digit"
        )
    location = FileIO(warehouse).normalize(warehouse)
    catalog = f"{CATALOG_PREFIX}{name}"
    settings = {
        _JARS: str(build_jar()),
        _EXTENSIONS: EXTENSIONS_CLASS,
        catalog: catalog_class(name),
        f"{catalog}.{WAREHOUSE_OPTION}": location,
    }
    settings.update({f"{catalog}.fs.{k}": str(v) for k, v in sorted(fs_options.items())})
    settings[PYTHON_CONF] = sys.executable
    settings[HIDE_TRACEBACK_CONF] = "true"
    settings[_REDACTION] = spark_redaction_regex(_SPARK_REDACTION_DEFAULT)
    return settings


def merged(settings: Mapping[str, str], existing: Mapping[str, str]) -> dict[str, str]:
    """``settings`` as they apply over the ``existing`` ones: the jar and the extensions
    added to the lists already set, the Python and the traceback switch only where unset, and
    a redaction pattern already set extended, not replaced."""
    out = {}
    for key, value in settings.items():
        current = str(existing.get(key) or "")
        if key == _REDACTION and current:
            out[key] = spark_redaction_regex(current)
        elif key in _LISTS:
            entries = [e for e in current.split(",") if e]
            out[key] = ",".join(entries if value in entries else [*entries, value])
        elif key in _DEFAULTS and current:
            continue
        else:
            out[key] = value
    return out


def as_arguments(settings: Mapping[str, str]) -> str:
    """``settings`` as ``spark-sql``/``spark-submit`` arguments: ``--jars`` and ``--conf``,
    for an unquoted ``$(tsfile-catalog spark-conf ...)``, as every client's command is written.

    The shell splits a substitution at whitespace and keeps its quotes as characters, so the
    words are printed bare (shell quotes would reach Spark: ``'spark.redaction.regex`` is a
    property Spark ignores), and a value holding whitespace is refused, naming it.

    Raises:
        OptionError: a setting's value holds whitespace.
    """
    words = []
    for key, value in settings.items():
        if any(c.isspace() for c in value):
            raise OptionError(
                f"{key} {value!r} holds whitespace, which $(...) would split: "
                "use --format defaults (a spark-defaults.conf or --properties-file)"
            )
        if key == _JARS:
            words += ["--jars", value]
        else:
            words += ["--conf", f"{key}={value}"]
    return " ".join(words)


def as_defaults(settings: Mapping[str, str]) -> str:
    """``settings`` as ``spark-defaults.conf`` lines (key, whitespace, value)."""
    return "\n".join(f"{key} {value}" for key, value in settings.items())
