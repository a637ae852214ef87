"""Stored procedures for what Spark SQL has no syntax for: ``CALL ts.system.optimize(...)``.

In Iceberg's style: procedures live in the catalog's ``system`` namespace, take named
arguments (``table => 'db.t'``) and return the rows the matching ``Catalog.sql`` statement
returns, because they run exactly that statement. A ``CALL`` takes effect once, when Spark
executes it, never while a query is planned.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tsfile_catalog.exceptions import SqlError
from tsfile_catalog.spark_catalog.metadata_tables import spark_value
from tsfile_catalog.spark_catalog.statements import claimed_statement
from tsfile_catalog.spark_catalog.tables import Warehouse
from tsfile_catalog.sql.registry import parse_table_name
from tsfile_catalog.sql.statements import (
    AlterTableAddPart,
    AlterTableDropPart,
    Delete,
    ExpireSnapshots,
    Optimize,
    RestoreTable,
    Statement,
    TableName,
    TimestampAsOf,
    Vacuum,
    VersionAsOf,
)

__all__ = ["NAMESPACE", "Parameter", "Procedure", "PROCEDURES", "call_procedure", "describe"]

NAMESPACE = "system"


@dataclass(frozen=True, slots=True)
class Parameter:
    """One argument: its name, Spark type (``simpleString``) and default as SQL (None:
    required)."""

    name: str
    type: str
    default: str | None = None


@dataclass(frozen=True, slots=True)
class Procedure:
    description: str
    parameters: tuple[Parameter, ...]
    statement: Callable[[TableName, Mapping[str, Any]], Statement]


_TABLE = Parameter("table", "string")


def _restore(table: TableName, args: Mapping[str, Any]) -> Statement:
    version, timestamp = args.get("version"), args.get("timestamp")
    if (version is None) == (timestamp is None):
        raise SqlError(f"restore of {table}: give exactly one of version => n, timestamp => '…'")
    travel = VersionAsOf(int(version)) if version is not None else TimestampAsOf(str(timestamp))
    return RestoreTable(table=table, time_travel=travel)


def _required(table: TableName, procedure: str, args: Mapping[str, Any], name: str) -> str:
    value = args.get(name)
    if value is None:
        raise SqlError(f"{procedure} of {table}: argument {name} => '…' must not be NULL")
    return str(value)


def _add_part(table: TableName, args: Mapping[str, Any]) -> Statement:
    options = {str(k): str(v) for k, v in (args.get("options") or {}).items()}
    for key in options:
        if key.lower() in ("path", "format"):
            raise SqlError(
                f"add_part of {table}: give {key.lower()} => '…' as an argument, not in options"
            )
    options["path"] = _required(table, "add_part", args, "path")
    if args.get("format") is not None:
        options["format"] = str(args["format"])
    return AlterTableAddPart(table=table, options=options)


PROCEDURES: dict[str, Procedure] = {
    "optimize": Procedure(
        "Compact a table's small parts (OPTIMIZE [WHERE ...])",
        (_TABLE, Parameter("where", "string", "NULL")),
        lambda t, a: Optimize(table=t, where=a.get("where")),
    ),
    "vacuum": Procedure(
        "Delete files no version within the retention references (VACUUM)",
        (
            _TABLE,
            Parameter("retain_hours", "double", "NULL"),
            Parameter("dry_run", "boolean", "false"),
        ),
        lambda t, a: Vacuum(
            table=t, retain_hours=a.get("retain_hours"), dry_run=bool(a.get("dry_run"))
        ),
    ),
    "expire_snapshots": Procedure(
        "Expire old versions of a table's log (EXPIRE SNAPSHOTS)",
        (
            _TABLE,
            Parameter("older_than", "string", "NULL"),
            Parameter("retain_hours", "double", "NULL"),
            Parameter("retain_last", "bigint", "NULL"),
        ),
        lambda t, a: ExpireSnapshots(
            table=t,
            older_than=a.get("older_than"),
            retain_hours=a.get("retain_hours"),
            retain_last=a.get("retain_last"),
        ),
    ),
    "delete": Procedure(
        "Delete the rows a predicate matches (DELETE FROM ... WHERE)",
        (_TABLE, Parameter("where", "string")),
        lambda t, a: Delete(table=t, where=_required(t, "delete", a, "where")),
    ),
    "add_part": Procedure(
        "Add Parquet, ORC or CSV files in place as parts (ALTER TABLE ... ADD PART)",
        (
            _TABLE,
            Parameter("path", "string"),
            Parameter("format", "string", "NULL"),
            Parameter("options", "map<string,string>", "NULL"),
        ),
        _add_part,
    ),
    "drop_part": Procedure(
        "Remove parts by path or glob from the table (ALTER TABLE ... DROP PART)",
        (_TABLE, Parameter("path", "string")),
        lambda t, a: AlterTableDropPart(table=t, pattern=_required(t, "drop_part", a, "path")),
    ),
    "restore": Procedure(
        "Make an older version the latest (RESTORE ... TO VERSION AS OF / TIMESTAMP AS OF)",
        (_TABLE, Parameter("version", "bigint", "NULL"), Parameter("timestamp", "string", "NULL")),
        _restore,
    ),
}


# The statements Spark's parser lacks, as the session extensions hand them over
# (:mod:`.statements`): ``CALL <catalog>.system.sql(statement => 'OPTIMIZE db.t')``.
STATEMENT_PROCEDURE = "sql"
_STATEMENT = Procedure(
    "Run one of the catalog's own statements (DESCRIBE HISTORY, SHOW PARTS, OPTIMIZE, ...), "
    "as the session extensions' parser hands them over",
    # refusal: the extensions' parser refused the statement (``statements.claim``), and the
    # call raises it when it runs, as Spark's AnalysisException in every client.
    (Parameter("statement", "string"), Parameter("refusal", "string", "NULL")),
    lambda _table, a: claimed_statement(str(a.get("statement") or "")),  # names no table
)


def _procedure(namespace: list[str], name: str) -> Procedure:
    if namespace == [NAMESPACE] and name.lower() == STATEMENT_PROCEDURE:
        return _STATEMENT
    found = PROCEDURES.get(name.lower()) if namespace == [NAMESPACE] else None
    if found is None:
        raise SqlError(
            f"no procedure {'.'.join([*namespace, name])!r}; the catalog's procedures are "
            + ", ".join(f"{NAMESPACE}.{p}" for p in PROCEDURES)
        )
    return found


def describe(namespace: list[str], name: str) -> dict[str, Any]:
    """The procedure's description and parameters, for Spark to bind the call's arguments."""
    procedure = _procedure(namespace, name)
    return {
        "description": procedure.description,
        "parameters": [
            {"name": p.name, "type": p.type, "default": p.default} for p in procedure.parameters
        ],
    }


def call_procedure(
    warehouse: Warehouse, namespace: list[str], name: str, args: Mapping[str, Any]
) -> dict[str, Any]:
    """Run the procedure's statement through the Catalog; its rows and schema (timestamps
    as microseconds since the epoch, as Spark holds them)."""
    procedure = _procedure(namespace, name)
    if procedure is _STATEMENT:
        if args.get("refusal"):
            raise SqlError(str(args["refusal"]))
        statement = claimed_statement(str(args.get("statement") or ""))
    else:
        table = args.get("table")
        if not isinstance(table, str):
            raise SqlError(f"{NAMESPACE}.{name}: argument table => 'db.t' is required")
        statement = procedure.statement(parse_table_name(table), args)
    result = warehouse.catalog.execute(statement)
    rows = [[spark_value(v) for v in row] for row in result.collect()]
    return {"schema": result.schema.json(), "rows": rows}
