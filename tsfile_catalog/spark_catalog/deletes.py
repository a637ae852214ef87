"""``DELETE FROM ts.db.t WHERE …`` through plain ``spark.sql``: the table's ``SupportsDeleteV2``.

Spark splits the WHERE clause into conjuncts and hands them over as V2 predicates twice: when
it plans the statement (``canDeleteWhere``) and when it executes it (``deleteWhere``). A
delete is taken only when every conjunct is one the scan evaluates exactly (the same rule as
filter pushdown, :func:`~tsfile_catalog.spark_catalog.scans.push_predicates`, and the same
binding as ``Table.delete``); it then runs ``Catalog.sql``'s ``DELETE`` once, at execution.
Anything else (a conjunct the scan cannot evaluate exactly, a subquery, a function with no V2
form) is Spark's copy-on-write of the parts that may hold matching rows instead
(:mod:`.rewrites`, the table's ``SupportsRowLevelOperations``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tsfile_catalog import inspect
from tsfile_catalog.exceptions import SqlError
from tsfile_catalog.spark_catalog.scan_request import ScanRequest
from tsfile_catalog.spark_catalog.scans import predicate_sql, push_predicates
from tsfile_catalog.spark_catalog.tables import Warehouse, table_name
from tsfile_catalog.sql.statements import Delete
from tsfile_catalog.table.optimize import DeleteResult

__all__ = ["can_delete_where", "delete_where"]

_CONSTANTS = {"ALWAYS_TRUE": True, "ALWAYS_FALSE": False}


@dataclass(frozen=True, slots=True)
class _Condition:
    """What a DELETE removes: the rows ``where`` matches (None: every row), or none."""

    where: str | None
    matches_nothing: bool = False


def _constant(node: Mapping[str, Any]) -> bool | None:
    """The value of a constant conjunct (``WHERE false``, no WHERE at all), else None.
    Spark's AlwaysTrue/AlwaysFalse are literals too, so they arrive as boolean literals."""
    if node.get("op") in _CONSTANTS:
        return _CONSTANTS[node["op"]]
    if node.get("type", "").strip('"') == "boolean" and node.get("lit") in ("true", "false"):
        return node["lit"] == "true"
    return None


def _condition(request: Mapping[str, Any]) -> _Condition:
    """The delete's condition as the ``where`` text ``Catalog.sql``'s DELETE takes.

    Raises:
        SqlError: a conjunct the scan cannot evaluate exactly, named as Spark shows it.
    """
    predicates = request["predicates"]
    if any(_constant(node) is False for node in predicates):
        return _Condition(None, matches_nothing=True)
    pairs = zip(predicates, request["texts"], strict=True)
    kept = [(node, text) for node, text in pairs if _constant(node) is None]
    if not kept:
        return _Condition(None)
    time_zone = request["time_zone"]
    scan = ScanRequest.parse(request["scan"])
    taken = set(push_predicates(scan, [node for node, _ in kept], time_zone)["pushed"])
    refused = [text for index, (_, text) in enumerate(kept) if index not in taken]
    if refused:
        raise SqlError(
            f"DELETE FROM {scan.table}: the condition {' AND '.join(refused)} cannot be "
            "evaluated exactly by the table's scan, so the rows it matches cannot be deleted "
            "in metadata (that takes comparisons of a column with a literal, IN, IS [NOT] "
            "NULL, combined with AND, OR, NOT; the same rules as CALL <catalog>.system.delete)"
        )
    parts = [predicate_sql(node) for node, _ in kept]
    return _Condition(" AND ".join(f"({part})" for part in parts if part is not None))


def can_delete_where(request: Mapping[str, Any]) -> bool:
    """Whether Spark may delete by ``request``'s predicates (planning; nothing changes).
    When not, Spark rewrites the parts holding matching rows instead (copy-on-write,
    :mod:`.rewrites`)."""
    try:
        _condition(request)
    except SqlError:
        return False
    return True


def delete_where(warehouse: Warehouse, request: Mapping[str, Any]) -> list[Any]:
    """Delete the rows ``request``'s predicates match: ``Catalog.sql``'s DELETE, once. Its
    result row (:data:`~tsfile_catalog.inspect.DELETE_SCHEMA`), which ``spark.sql``'s DELETE
    returns too. Its history records ``request["parameters"]``'s ``predicate`` where the
    session's extensions gave one (:mod:`.history_parameters`), else ``where``'s text."""
    condition = _condition(request)
    if condition.matches_nothing:
        return list(inspect.delete_result(DeleteResult(None, 0, 0, 0, 0, 0)).rows[0])
    name = table_name(request["namespace"], request["name"])
    # The history's predicate: the user's condition (the extensions' HistoryParameters),
    # not the predicates it deletes by.
    recorded = json.loads(request.get("parameters") or "{}").get("predicate")
    statement = Delete(table=name, where=condition.where, history_predicate=recorded)
    row = warehouse.catalog.execute(statement).first()
    assert row is not None  # a DELETE answers one row
    return list(row)
