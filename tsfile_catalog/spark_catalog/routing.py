"""The session catalog's routing: which of the two catalogs behind ``spark_catalog`` serves
a name (``TsFileSessionCatalog`` asks; docs/spark-catalog.md, "As the session catalog").

Configured as ``spark.sql.catalog.spark_catalog``, the plugin keeps tsfile tables in its
warehouse and hands everything else to Spark's built-in catalog, as Iceberg's
``SparkSessionCatalog`` does. The rules, each decided here:

- a new table is the warehouse's when its provider (``USING``, else the asking session's
  ``spark.sql.sources.default``, as Spark's own catalog reads a missing one) is ``tsfile``,
  the built-in catalog's otherwise; a name the other catalog holds is refused;
- an existing name is the warehouse's when it registers it (or it is one of a tsfile
  table's metadata tables), the built-in catalog's otherwise;
- a name both hold (registered in the warehouse by another client, or created by a session
  without the plugin's extensions, whose check refuses Spark's own v1 creates) is an error
  for every statement but ``DROP TABLE``, which drops the tsfile table first, as Iceberg's
  session catalog drops its own table first; the name is then the built-in one's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tsfile_catalog.exceptions import SqlError, TableExistsError
from tsfile_catalog.spark_catalog.metadata_tables import METADATA_TABLES
from tsfile_catalog.spark_catalog.tables import PROVIDER
from tsfile_catalog.sql.registry import TableName

if TYPE_CHECKING:
    from tsfile_catalog.spark_catalog.tables import Warehouse

__all__ = ["SESSION_CATALOG", "as_select_refusal", "route"]

SESSION_CATALOG = "spark_catalog"
TSFILE = "tsfile"
BUILT_IN = "builtin"
_DEFAULT_SOURCE = "spark.sql.sources.default"


def route(warehouse: Warehouse, request: Mapping[str, Any]) -> str:
    """``tsfile`` or ``builtin``: the catalog that serves the request's name for its
    ``action`` (``create``, ``table``, ``drop``, ``rename``).

    Raises:
        TableExistsError: a new name (created or renamed to) is the other catalog's.
        SqlError: the name is both catalogs' (any action but ``drop``).
    """
    action = request["action"]
    namespace, name = list(request["namespace"]), str(request["name"])
    in_built_in = bool(request.get("builtin_exists"))
    shown = ".".join([*namespace, name])
    if action == "create":
        # Spark's v1 creates (SessionCatalogCheck) come with their statement: never tsfile's,
        # whatever the default source, and a view or a rename has no provider.
        statement = request.get("statement")
        provider = request.get("provider") or (
            "" if statement else str(request.get("default_source") or _default_source(warehouse))
        )
        if statement is None and provider.lower() == PROVIDER:
            if in_built_in:
                raise TableExistsError(
                    f"CREATE TABLE {shown}: Spark's built-in catalog already holds a table or "
                    f"view {shown} (the session catalog keeps one object per name)"
                )
            return TSFILE
        if _registered(warehouse, namespace, name):
            statement = statement or "CREATE TABLE"
            using = f" USING {provider}" if statement == "CREATE TABLE" and provider else ""
            raise TableExistsError(
                f"{statement} {shown}{using}: {shown} is a tsfile table in the "
                f"warehouse {warehouse.registry.warehouse} (the session catalog keeps one "
                "object per name"
                # saveAsTable without a format asks for the default source's table.
                + ("; a DataFrame write into it names .format('tsfile'))" if using else ")")
            )
        return BUILT_IN
    ours = _held(warehouse, namespace, name)
    if ours and in_built_in and action != "drop":
        raise SqlError(
            f"table {shown} is both a tsfile table (warehouse {warehouse.registry.warehouse}) "
            "and a table or view of Spark's built-in catalog: neither is read; DROP TABLE "
            f"{shown} drops the tsfile table first, DROP VIEW {shown} the view"
        )
    if action == "rename":
        _check_rename(warehouse, request, ours=ours, shown=shown)
    return TSFILE if ours else BUILT_IN


def as_select_refusal(request: Mapping[str, Any]) -> str:
    """The one-line error of ``CREATE/REPLACE TABLE … AS SELECT`` for a table of Spark's
    built-in catalog: through a session catalog that is a plugin, Spark stages such a
    table in the plugin, which can stage only tsfile tables."""
    shown = ".".join([*request["namespace"], request["name"]])
    provider = request.get("provider") or "the default source"
    return (
        f"CREATE/REPLACE TABLE {shown} USING {provider} AS SELECT: the tsfile session catalog "
        "creates only tsfile tables from a query; create the table first (CREATE TABLE "
        f"{shown} (...) USING {provider}), then INSERT INTO {shown} SELECT ..."
    )


def _check_rename(
    warehouse: Warehouse, request: Mapping[str, Any], *, ours: bool, shown: str
) -> None:
    """Refuse a rename onto a name the other catalog holds."""
    namespace = list(request["new_namespace"])
    if len(namespace) == 2 and namespace[0] == request["catalog"]["name"]:
        namespace = namespace[1:]  # RENAME TO's name as written: spark_catalog.db.t
    new = ".".join([*namespace, request["new_name"]])
    if ours and request.get("new_builtin_exists"):
        raise TableExistsError(
            f"cannot rename table {shown} to {new}: Spark's built-in catalog holds a table or "
            f"view {new}"
        )
    if not ours and _registered(warehouse, namespace, str(request["new_name"])):
        raise TableExistsError(
            f"cannot rename table {shown} to {new}: {new} is a tsfile table in the warehouse "
            f"{warehouse.registry.warehouse}"
        )


def _default_source(warehouse: Warehouse) -> str:
    """The default source of the session the delegate serves (the JVM sends the asking
    session's own, which another session of the JVM may have set differently)."""
    return str(warehouse.spark.conf.get(_DEFAULT_SOURCE, "parquet"))


def _held(warehouse: Warehouse, namespace: Sequence[str], name: str) -> bool:
    """Whether the warehouse serves ``namespace.name``: a registered table, or a metadata
    table of one (``db.t.history``)."""
    if len(namespace) == 2 and name.lower() in METADATA_TABLES:
        return _registered(warehouse, namespace[:1], namespace[1])
    return _registered(warehouse, namespace, name)


def _registered(warehouse: Warehouse, namespace: Sequence[str], name: str) -> bool:
    if len(namespace) != 1:
        return False
    try:
        table = TableName(name, namespace[0])
    except SqlError:
        return False  # not a name a tsfile table can have
    return warehouse.table_exists(table)
