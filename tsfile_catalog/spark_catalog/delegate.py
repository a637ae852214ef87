"""The catalog plugin's Python half: the Py4J callback object the Java adapter calls.

The JVM's ``TsFileCatalog`` calls ``call(operation, request)`` on a Py4J callback thread of
this driver (as PySpark's ``foreachBatch`` and streaming listeners are called), with JSON in
and out. Every answer comes from the package's own code: :mod:`.tables` for tables and
namespaces, :mod:`.paths` for path reads, :mod:`.scans` for pushdown and scan options,
:mod:`.deletes` for DELETE FROM, :mod:`.rewrites` for the scans of copy-on-write UPDATE,
MERGE and DELETE, :mod:`.replace` for an overwrite by condition's pre-staged rewrites,
:mod:`.changelog` for change feeds, :mod:`.describe` for Spark's DESCRIBE.
Errors go back as data (a kind and a message) so the adapter raises Spark's own exceptions:
``NoSuchTableException`` for a missing table, an ``IllegalArgumentException`` carrying this
package's message otherwise.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from tsfile_catalog.exceptions import TableExistsError, TableNotFoundError, TsFileCatalogError
from tsfile_catalog.metadata.time_top import TimeTop
from tsfile_catalog.spark_catalog import (
    aggregates,
    changelog,
    deletes,
    describe,
    history_parameters,
    merge_writes,
    paths,
    procedures,
    replace,
    rewrites,
    routing,
    row_counts,
    scans,
    statements,
    url_tables,
)
from tsfile_catalog.spark_catalog.metadata_tables import load_metadata_table
from tsfile_catalog.spark_catalog.scan_request import ScanRequest
from tsfile_catalog.spark_catalog.tables import NamespaceError, Warehouse, table_name

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["DELEGATE_INTERFACE", "CatalogDelegate"]

DELEGATE_INTERFACE = "io.tsfilecatalog.spark.Delegate"

_log = logging.getLogger(__name__)


class CatalogDelegate:
    """Answers the Java adapter for every catalog of this session's JVM (one warehouse per
    configured catalog name)."""

    def __init__(self, spark: SparkSession) -> None:
        self._spark = spark
        self._warehouses: dict[tuple[str, tuple[tuple[str, str], ...]], Warehouse] = {}
        self._lock = threading.Lock()

    def call(self, operation: str, request: str) -> str:
        """Py4J entry point: one JSON request, one JSON reply (never an exception)."""
        try:
            handler = _OPERATIONS.get(operation)
            if handler is None:
                raise TsFileCatalogError(f"unknown catalog operation {operation!r}")
            return json.dumps({"result": handler(self, json.loads(request))})
        except NamespaceError as e:
            return _error(e.kind, str(e), namespace=e.namespace, sql_state=e.sql_state)
        except TableNotFoundError as e:
            return _error("no_such_table", str(e), sql_state=e.sql_state)
        except TableExistsError as e:
            return _error("table_exists", str(e), sql_state=e.sql_state)
        except TsFileCatalogError as e:
            # Module-qualified, as a Python traceback ends: tsfile_catalog.errors.unwrap finds
            # the class in the message Spark raises to the user.
            return _error(
                "invalid",
                f"{type(e).__module__}.{type(e).__name__}: {e}",
                sql_state=e.sql_state,
            )
        except Exception as e:  # noqa: BLE001 - the JVM must get an answer, not a hang
            _log.exception("tsfile catalog operation %s failed", operation)
            return _error("internal", f"{type(e).__name__}: {e}")

    @property
    def spark(self) -> SparkSession:
        return self._spark

    def warehouse(self, request: Mapping[str, Any]) -> Warehouse:
        catalog = request["catalog"]
        options = {str(k): str(v) for k, v in catalog["options"].items()}
        key = (str(catalog["name"]), tuple(sorted(options.items())))
        with self._lock:
            found = self._warehouses.get(key)
            if found is None:
                found = Warehouse(self._spark, key[0], options)
                self._warehouses[key] = found
        return found

    class Java:
        implements = [DELEGATE_INTERFACE]


def _error(kind: str, message: str, **extra: Any) -> str:
    return json.dumps({"error": kind, "message": message, **extra})


def _name(request: Mapping[str, Any]) -> Any:
    return table_name(request["namespace"], request["name"])


def _load(delegate: CatalogDelegate, request: Mapping[str, Any]) -> Any:
    warehouse = delegate.warehouse(request)
    version, timestamp_us = request.get("version"), request.get("timestamp_us")
    if not request["namespace"]:
        # No registered table has no namespace: a URL reference's relation (url_tables.py).
        return url_tables.load_url(
            warehouse,
            request["name"],
            version=version,
            timestamp_us=timestamp_us,
            time_zone=request.get("time_zone"),
        )
    metadata = load_metadata_table(
        warehouse, request["namespace"], request["name"], version=version, timestamp_us=timestamp_us
    )
    if metadata is not None:
        return metadata
    return warehouse.load(_name(request), version=version, timestamp_us=timestamp_us)


def _create(delegate: CatalogDelegate, request: Mapping[str, Any]) -> Any:
    from pyspark.sql.types import StructType  # the driver's PySpark: always there here

    schema = StructType.fromJson(json.loads(request["schema"]))
    return delegate.warehouse(request).create(_name(request), schema, request["properties"])


def _stage(delegate: CatalogDelegate, request: Mapping[str, Any]) -> Any:
    from pyspark.sql.types import StructType  # the driver's PySpark: always there here

    schema = StructType.fromJson(json.loads(request["schema"]))
    return delegate.warehouse(request).stage(
        _name(request), request["mode"], schema, request["properties"]
    )


def _commit_staged(delegate: CatalogDelegate, request: Mapping[str, Any]) -> Any:
    from pyspark.sql.types import StructType  # the driver's PySpark: always there here

    schema = StructType.fromJson(json.loads(request["schema"]))
    delegate.warehouse(request).commit_staged(
        _name(request), request["staged"], schema, request["write_options"]
    )
    return None


def _rename(delegate: CatalogDelegate, request: Mapping[str, Any]) -> Any:
    namespace = list(request["new_namespace"])
    if len(namespace) == 2 and namespace[0] == request["catalog"]["name"]:
        # Spark passes RENAME TO's name as written: ``ts.db.t2`` names this catalog's table.
        namespace = namespace[1:]
    new = table_name(namespace, request["new_name"])
    delegate.warehouse(request).rename(_name(request), new)
    return None


# Spark's keys of a time-travel read option (its defaults: versionAsOf, timestampAsOf).
_TRAVEL_KEYS = (
    ("spark.sql.timeTravelVersionKey", "versionAsOf"),
    ("spark.sql.timeTravelTimestampKey", "timestampAsOf"),
)


def _user_options(delegate: CatalogDelegate, request: Mapping[str, Any]) -> dict[str, str]:
    """The read options of the user's, less Spark's time-travel options: Spark resolved
    those (``spark.read.option("versionAsOf", 1).table(t)``, as Delta documents it) into
    the version it loaded the table at, which the scan reads."""
    options: Mapping[str, str] = request.get("options") or {}
    if not options:
        return {}
    conf = delegate.spark.conf
    travel = {str(conf.get(key, default)).lower() for key, default in _TRAVEL_KEYS}
    return {k: v for k, v in options.items() if k.lower() not in travel}


def _plan(delegate: CatalogDelegate, request: Mapping[str, Any]) -> Any:
    return scans.plan_scan(
        ScanRequest.parse(request["scan"]),
        columns=request["columns"],
        where=request.get("where"),
        time_zone=request["time_zone"],
        parallelism=request.get("parallelism"),
        user_options=_user_options(delegate, request),
        limit=request.get("limit"),
        time_top=_time_top(request.get("time_top")),
    )


def _time_top(given: Mapping[str, Any] | None) -> TimeTop | None:
    return None if given is None else TimeTop(int(given["n"]), bool(given["descending"]))


def _push_aggregation(delegate: CatalogDelegate, request: Mapping[str, Any]) -> Any:
    return aggregates.push_aggregation(
        ScanRequest.parse(request["scan"]),
        aggregates=request["aggregates"],
        group_by=request["group_by"],
        where=request.get("where"),
        time_zone=request["time_zone"],
        mode=request.get("mode", "complete"),
        offered=request.get("offered") or [],
        parallelism=request.get("parallelism"),
        user_options=_user_options(delegate, request),
    )


_Handler = Callable[[CatalogDelegate, Mapping[str, Any]], Any]

_OPERATIONS: dict[str, _Handler] = {
    "list_namespaces": lambda d, r: d.warehouse(r).list_namespaces(r["namespace"]),
    "namespace_exists": lambda d, r: d.warehouse(r).namespace_exists(r["namespace"]),
    "namespace_metadata": lambda d, r: (d.warehouse(r).require_namespace(r["namespace"]), {})[1],
    "create_namespace": lambda d, r: d.warehouse(r).create_namespace(r["namespace"]),
    "drop_namespace": lambda d, r: d.warehouse(r).drop_namespace(
        r["namespace"], cascade=bool(r.get("cascade"))
    ),
    "list_tables": lambda d, r: d.warehouse(r).list_tables(r["namespace"]),
    "table_exists": lambda d, r: d.warehouse(r).table_exists(_name(r)),
    "load_table": _load,
    "create_table": _create,
    "drop_table": lambda d, r: d.warehouse(r).drop(_name(r), purge=bool(r.get("purge"))),
    "rename_table": _rename,
    "stage": _stage,
    "commit_staged": _commit_staged,
    "abort_staged": lambda d, r: d.warehouse(r).abort_staged(_name(r), r["staged"]),
    "alter_table": lambda d, r: d.warehouse(r).alter(_name(r), r["changes"]),
    "can_delete_where": lambda d, r: deletes.can_delete_where(r),
    "delete_where": lambda d, r: deletes.delete_where(d.warehouse(r), r),
    "push_predicates": lambda d, r: scans.push_predicates(
        ScanRequest.parse(r["scan"]), r["predicates"], r["time_zone"]
    ),
    "plan_scan": _plan,
    "plan_changes": lambda d, r: changelog.plan_changes(d.warehouse(r), r),
    # The session extensions' PathReads: load(path) as the plugin's table, or None.
    "resolve_path": lambda d, r: paths.describe_path(r["options"], r.get("schema")),
    "list_procedures": lambda d, r: (
        list(procedures.PROCEDURES) if r["namespace"] == [procedures.NAMESPACE] else []
    ),
    "describe_procedure": lambda d, r: procedures.describe(r["namespace"], r["name"]),
    # The session extensions' parser: is this text one of the catalog's own statements?
    "claim_statement": lambda d, r: statements.claim(r["sql"], r["catalogs"], r["current"]),
    # The extensions' rule: is this table reference a URL reference, read through which catalog?
    "url_reference": lambda d, r: url_tables.url_reference(
        r["text"],
        r["catalogs"],
        r["current"],
        write=bool(r.get("write")),
        sessions_function=bool(r.get("sessions_function")),
    ),
    "call_procedure": lambda d, r: procedures.call_procedure(
        d.warehouse(r), r["namespace"], r["name"], r["args"]
    ),
    "push_aggregation": _push_aggregation,
    "set_refusal": lambda d, r: rewrites.key_set_refusal(
        ScanRequest.parse(r["scan"]), r["columns"]
    ),
    "replace_job": lambda d, r: replace.new_job(),
    # The extensions' DescribeTables: the schema Spark's DESCRIBE shows (TAG columns marked).
    "describe_columns": lambda d, r: describe.described_schema(r["scan"], r["schema"]),
    # The extensions' MergeSchemaWrites: the table a mergeSchema append leaves, or None.
    "merged_schema": lambda d, r: merge_writes.merged_schema(r),
    # ... and the table a MERGE WITH SCHEMA EVOLUTION leaves, or None.
    "merge_evolution": lambda d, r: merge_writes.merge_evolution(r),
    "prestage_replace": lambda d, r: replace.prestage(d.spark, r["options"], r["schema"]),
    "release_replace": lambda d, r: replace.release(r["options"]),
    # The session catalog (TsFileSessionCatalog): which catalog serves a name.
    "session_route": lambda d, r: routing.route(d.warehouse(r), r),
    "session_as_select_refusal": lambda d, r: routing.as_select_refusal(r),
    # UPDATE, MERGE, DELETE through spark.sql: Spark's counts into the commit.
    "row_counts_message": lambda d, r: row_counts.counts_message(r),
    # ... and their predicate and SET in the history (HistoryParameters).
    "history_parameters": lambda d, r: history_parameters.history_parameters(r),
    "row_counts_schema": lambda d, r: row_counts.result_schema(r["operation"]),
    "row_counts": lambda d, r: row_counts.result_row(r),
    "plan_inserts": lambda d, r: row_counts.plan_inserts(ScanRequest.parse(r["scan"])),
    "plan_delta": lambda d, r: rewrites.plan_delta(ScanRequest.parse(r["scan"]), r["command"]),
    "plan_rewrite_scan": lambda d, r: rewrites.plan_rewrite_scan(
        ScanRequest.parse(r["scan"]),
        command=r["command"],
        predicates=r["predicates"],
        time_zone=r["time_zone"],
        parallelism=r.get("parallelism"),
        user_options=_user_options(d, r),
        runtime=r.get("runtime"),
    ),
}
