"""Optional dependencies, imported on first use: PySpark (the ``spark`` extra), DuckDB and
polars (the engines a scan hands its rows to), s3fs.

The Spark-free API (``open_table``, ``write_table``, ``Table`` verbs, the CLI) needs none of
them, so ``pip install tsfile-catalog`` installs none; what needs one imports it through
:func:`require`, whose error names the extra to install instead of a bare
``No module named ...``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from tsfile_catalog.exceptions import MissingExtraError

__all__ = ["EXTRAS", "require"]

EXTRAS = {"pyspark": "spark", "py4j": "spark", "duckdb": "duckdb", "polars": "polars", "s3fs": "s3"}
"""The top-level module of each optional dependency, and the extra of pyproject.toml that
installs it."""


def require(module: str, *, what: str) -> ModuleType:
    """``module`` imported, for ``what`` (the feature that needs it, named in the error).

    Raises:
        MissingExtraError: the module (or its package) is not installed; the message names
            the extra that installs it.
    """
    try:
        return importlib.import_module(module)
    except ImportError as e:
        top = module.split(".")[0]
        # Only the optional package itself missing is ours to explain; a broken install
        # (the package there, one of its own imports failing) keeps its own error.
        if e.name is None or e.name.split(".")[0] != top:
            raise
        extra = EXTRAS[top]
        raise MissingExtraError(
            f'{what} needs {top}, which is not installed: pip install "tsfile-catalog[{extra}]"'
        ) from e
