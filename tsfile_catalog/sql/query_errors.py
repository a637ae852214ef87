"""Spark's analysis errors about a catalog query, told in the user's table names.

``Catalog.sql`` runs a query over temporary views of fresh scans (``__tsfc_<n>_<hex>``), each
projected to the columns the query reads. Spark's error about the rewritten query (an
unresolved column, say) would name such a view and suggest only the columns the view holds;
the catalog analyses the query once more over unprojected views (Spark's suggestions then
cover every column) and reports the error through :func:`in_user_terms`. Nothing here
imports pyspark.
"""

from __future__ import annotations

from collections.abc import Mapping

from tsfile_catalog.exceptions import SqlError
from tsfile_catalog.sql.analysis import TableRef

__all__ = ["in_user_terms", "view_names"]


def view_names(refs: Mapping[int, TableRef], views: Mapping[int, str]) -> dict[str, str]:
    """Each view's name → the reference it stands for, as the query wrote it (`` `db`.`t` ``,
    ``tsfile('<url>')``), from the references and views keyed by reference index."""
    return {views[i]: refs[i].table.to_sql() for i in views if i in refs}


def in_user_terms(error: Exception, names: Mapping[str, str]) -> SqlError:
    """``error`` (Spark's, about the rewritten query) as a :class:`SqlError` whose message
    names the user's tables instead of the views (``names``: view → the user's reference)."""
    message = str(error)
    # Longest first: one view's name is never a prefix of another's in practice, but a
    # replacement must not cut into a longer name if it were.
    for view in sorted(names, key=len, reverse=True):
        message = message.replace(f"`{view}`", names[view]).replace(view, names[view])
    return SqlError(message)
