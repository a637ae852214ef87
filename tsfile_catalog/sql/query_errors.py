"""Spark's analysis errors about a catalog query, told in the user's table names.

``Catalog.sql`` runs a query over temporary views of fresh scans (``__tsfc_<n>_<hex>``), each
projected to the columns the query reads. Spark's error about the rewritten query (an
unresolved column, say) would name such a view and suggest only the columns the view holds;
the catalog analyses the query once more over unprojected views (Spark's suggestions then
cover every column) and reports the error through :func:`in_user_terms`. A query run as
written through the catalog plugin (:mod:`~tsfile_catalog.sql.verbatim`) is told the same
way, its tables named ``<plugin catalog>.db.t`` by Spark. The error stays Spark's own
exception, only its message respelled. Nothing here imports pyspark.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from tsfile_catalog.sql.analysis import TableRef

__all__ = ["in_user_terms", "view_names"]


def view_names(refs: Mapping[int, TableRef], views: Mapping[int, str]) -> dict[str, str]:
    """Each view's name → the reference it stands for, as the query wrote it (`` `db`.`t` ``,
    ``tsfile('<url>')``), from the references and views keyed by reference index."""
    return {views[i]: refs[i].table.to_sql() for i in views if i in refs}


def in_user_terms(error: Exception, names: Mapping[str, str]) -> None:
    """Respell ``error`` (Spark's, about the query it ran) in place so that its message names
    the user's tables (``names``: the name Spark used, a view or the catalog plugin's
    ``<catalog>.db.t`` → the user's reference). It stays Spark's exception: its class
    (``except AnalysisException``), error condition and parameters are what ``spark.sql``
    gives. Whole names only, case-insensitively (Spark prints an identifier as the query
    spelled it): ``ts.default.t`` is not part of ``ts.default.t2``."""
    # PySpark's captured exceptions print their description (``_desc``); one without it is
    # left as it is.
    message = getattr(error, "_desc", None)
    if not isinstance(message, str):
        return
    # Longest first: the quoted form of a name before the name inside it.
    for name in sorted(names, key=len, reverse=True):
        shown = names[name].replace("\\", "\\\\")  # a replacement template: no escapes
        for form in (f"`{name}`", name):
            pattern = rf"(?<![\w.`]){re.escape(form)}(?![\w`])"
            message = re.sub(pattern, shown, message, flags=re.IGNORECASE)
    setattr(error, "_desc", message)  # noqa: B010 - PySpark's own attribute, no public setter
