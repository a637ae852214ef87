"""Our exception back from Spark's wrapping: what :func:`unwrap` does for the DataFrame path.

An error the ``tsfile`` data source raises inside Spark (planning in a Python worker, reading
on an executor) reaches the caller as Spark's exception (``AnalysisException`` with
``PYTHON_DATA_SOURCE_ERROR``, ``PythonException``, a Py4J error), whose text ends with ours:
``tsfile_catalog.exceptions.OptionError: unknown read option 'colour'; ...``. Errors raised in
this process (``Catalog.sql``, ``open_table``) are ours already. Nothing here imports pyspark.
"""

from __future__ import annotations

import re

from tsfile_catalog import exceptions
from tsfile_catalog.exceptions import TsFileCatalogError

__all__ = ["unwrap"]

# The last line of the Python traceback (or of the bare message, with Spark's
# hideTraceback) that Spark quotes: the module-qualified class name, then the message.
_OURS = re.compile(rf"\b{re.escape(exceptions.__name__)}\.(?P<cls>\w+): (?P<message>[^\n]*)")


def unwrap(exc: BaseException) -> BaseException:
    """The tsfile-catalog exception ``exc`` stands for, or ``exc`` when it stands for none.

    ``exc`` itself when it is ours; else the first of ours in its ``__cause__`` /
    ``__context__`` chain; else one rebuilt from the text of a Spark or Py4J error that quotes
    ours (its class from :mod:`tsfile_catalog.exceptions`, its message, ``exc`` as its
    ``__cause__``)::

        try:
            spark.read.format("tsfile").option("where", "nope > 1").load(path).collect()
        except Exception as e:
            error = tsfile_catalog.errors.unwrap(e)
            if isinstance(error, tsfile_catalog.PredicateError): ...
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, TsFileCatalogError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    # The last one: a traceback shows the causes first and the raised error last.
    found = next(reversed(list(_OURS.finditer(_text(exc)))), None)
    if found is None:
        return exc
    cls = getattr(exceptions, found["cls"], None)
    if not (isinstance(cls, type) and issubclass(cls, TsFileCatalogError)):
        return exc
    error = cls(found["message"].strip())
    error.__cause__ = exc
    return error


def _text(exc: BaseException) -> str:
    # PySpark's exceptions keep the JVM message in getMessage(); str() of a Py4JJavaError is
    # the Java exception's text; anything else is its str(). getMessage() is empty for a
    # JVM exception that is not one of Spark's (an IllegalArgumentException): str() then.
    message = getattr(exc, "getMessage", None)
    if callable(message):
        try:
            text = str(message() or "")
        except Exception:  # a Py4J call on a stopped gateway: str() still has the text
            text = ""
        if text:
            return text
    return str(exc)
