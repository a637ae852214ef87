"""Planning a catalog table's scan: which of Spark's predicates the scan takes, and the
``tsfile`` source options it runs with.

Spark hands the plugin its V2 predicates as JSON trees (``io.tsfilecatalog.spark.Scans``).
Each is written back as Spark SQL text and must then parse and bind with the ``where``
option's own model (:func:`~tsfile_catalog.metadata.expressions.parser.parse_predicate`,
:func:`~tsfile_catalog.metadata.expressions.bind`), which evaluates exactly what Spark would:
a predicate that does is the scan's (pruning parts, filtering rows), anything else stays with
Spark. The scan's options pin the version Spark loaded, so a query never mixes two versions.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from tsfile_catalog.datasource.partial_aggregates import partial_schema
from tsfile_catalog.datasource.types import spark_schema
from tsfile_catalog.exceptions import OptionError, PredicateError
from tsfile_catalog.exec.table_scan import resolve_columns
from tsfile_catalog.metadata import expressions as ex
from tsfile_catalog.metadata.expressions.parser import parse_predicate
from tsfile_catalog.metadata.partial_aggregates import PartialSpec
from tsfile_catalog.metadata.schema import TIME_COLUMN, TableSchema
from tsfile_catalog.metadata.spark.quoting import quote_identifier, quote_string
from tsfile_catalog.metadata.time_top import TimeTop
from tsfile_catalog.storage_options import storage_options_from
from tsfile_catalog.table.handle import open_table

__all__ = ["predicate_sql", "push_predicates", "plan_scan"]

_COMPARISONS = {"=": "=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_EPOCH_DAY = dt.date(1970, 1, 1)
# Options the plan sets for every scan: a user's read option cannot override them.
_PLANNED = (
    "path",
    "columns",
    "where",
    "versionAsOf",
    "timestampAsOf",
    "timeZone",
    "table",
    "limit",
    "latest",
    "earliest",
    "partialAggregate",
)
# Options of a batch read only: a stream starts where its own options say and follows new
# commits (no pinned version), and Spark pushes neither a limit nor an aggregation into it.
_BATCH_ONLY = ("versionAsOf", "partitions", "limit", "latest", "earliest", "partialAggregate")


def _literal(node: Mapping[str, Any]) -> str | None:
    """A V2 literal as Spark SQL text of the same type and value; None if there is none."""
    text, type_json = node.get("lit"), node.get("type", "")
    if text is None:
        return None  # a NULL: comparisons with it are never true, and Spark folds them
    kind = type_json.strip('"')
    if kind == "string":
        return quote_string(text)
    if kind in ("byte", "short", "integer", "long"):
        return str(int(text))
    if kind in ("float", "double"):
        # A FLOAT arrives widened to its exact double: comparing as doubles orders and
        # equates float values exactly as comparing them as floats does.
        value = float(text)
        shown = repr(value) if math.isfinite(value) else text  # NaN, Infinity, -Infinity
        return f"CAST({quote_string(shown)} AS DOUBLE)"
    if kind.startswith("decimal"):
        try:
            return f"{Decimal(text)}BD"
        except InvalidOperation:
            return None
    if kind == "boolean":
        return "TRUE" if text.lower() == "true" else "FALSE"
    if kind == "date":
        day = _EPOCH_DAY + dt.timedelta(days=int(text))
        return f"DATE '{day.isoformat()}'"
    if kind == "timestamp":
        # Microseconds since the epoch: an instant, written with its offset so binding needs
        # no time zone.
        instant = _EPOCH + dt.timedelta(microseconds=int(text))
        return f"TIMESTAMP '{instant.isoformat(sep=' ')}'"
    return None


def _column(node: Mapping[str, Any]) -> str | None:
    names = node.get("ref")
    if not isinstance(names, list) or len(names) != 1:
        return None
    return quote_identifier(str(names[0]))


def predicate_sql(node: Mapping[str, Any]) -> str | None:
    """Spark SQL text of a V2 predicate tree, or None when it is not a column-vs-literal
    predicate (with AND/OR/NOT) that the ``where`` model could take."""
    op = node.get("op")
    args: list[Mapping[str, Any]] = node.get("args") or []
    if op in _COMPARISONS and len(args) == 2:
        left, right = args
        column, value = _column(left), _literal(right)
        if column is None or value is None:
            column, value = _column(right), _literal(left)
            if column is None or value is None:
                return None
            return f"{value} {_COMPARISONS[op]} {column}"
        return f"{column} {_COMPARISONS[op]} {value}"
    if op == "IN" and args:
        column = _column(args[0])
        values = [_literal(a) for a in args[1:]]
        if column is None or not values or any(v is None for v in values):
            return None
        return f"{column} IN ({', '.join(v for v in values if v is not None)})"
    if op in ("IS_NULL", "IS_NOT_NULL") and len(args) == 1:
        column = _column(args[0])
        if column is None:
            return None
        return f"{column} IS {'NOT ' if op == 'IS_NOT_NULL' else ''}NULL"
    if op in ("AND", "OR") and len(args) == 2:
        parts = [predicate_sql(a) for a in args]
        if parts[0] is None or parts[1] is None:
            return None
        return f"({parts[0]}) {op} ({parts[1]})"
    if op == "NOT" and len(args) == 1:
        inner = predicate_sql(args[0])
        return None if inner is None else f"NOT ({inner})"
    return None


def _table_schema(scan: Mapping[str, Any]) -> TableSchema:
    """The schema of the version Spark loaded (from the in-process metadata cache)."""
    table = open_table(
        scan["location"],
        version=int(scan["version"]),
        storage_options=storage_options_from(scan["options"]),
    )
    return table.schema


def push_predicates(
    scan: Mapping[str, Any], predicates: Sequence[Mapping[str, Any]], time_zone: str
) -> dict[str, Any]:
    """The indexes of the predicates the scan evaluates exactly, and their conjunction as the
    ``where`` option's text (None when none is taken)."""
    schema = _table_schema(scan)
    context = ex.BindContext(
        unit=scan["unit"], timestamp_as=scan["timestamp_as"], time_zone=time_zone
    )
    pushed: list[int] = []
    texts: list[str] = []
    for index, node in enumerate(predicates):
        text = predicate_sql(node)
        if text is None:
            continue
        try:
            bound = ex.bind(parse_predicate(text), schema, context)
        except PredicateError:
            continue  # not provably Spark's meaning: Spark evaluates it
        if ex.needs_time_zone(bound):
            continue
        pushed.append(index)
        texts.append(text)
    # Spark adds ``c IS NOT NULL`` beside every comparison on ``c``, which already holds only
    # for non-null values: taken, but left out of the scan's predicate, whose statistics
    # answers (a count by TAG) it would otherwise defeat.
    compared = {_compared(predicates[i]) for i in pushed} - {None}
    kept = [
        text
        for i, text in zip(pushed, texts, strict=True)
        if _not_null_of(predicates[i]) not in compared
    ]
    where = " AND ".join(f"({t})" for t in kept) if kept else None
    return {"pushed": pushed, "where": where}


def _not_null_of(node: Mapping[str, Any]) -> str | None:
    """The column of ``c IS NOT NULL``, else None."""
    args = node.get("args") or []
    return _column(args[0]) if node.get("op") == "IS_NOT_NULL" and len(args) == 1 else None


def _compared(node: Mapping[str, Any]) -> str | None:
    """The column a comparison or IN with literals holds for only when it is not null."""
    args = node.get("args") or []
    if node.get("op") in _COMPARISONS or node.get("op") == "IN":
        columns = {_column(a) for a in args} - {None}
        return columns.pop() if len(columns) == 1 else None
    return None


def plan_scan(
    scan: Mapping[str, Any],
    *,
    columns: Sequence[str],
    where: str | None,
    time_zone: str,
    parallelism: int | None,
    user_options: Mapping[str, str],
    limit: int | None = None,
    time_top: TimeTop | None = None,
    partial: PartialSpec | None = None,
) -> dict[str, Any]:
    """The read schema and ``tsfile`` source options of a scan returning ``columns``, at
    most ``limit`` rows per partition (Spark still applies the query's LIMIT), or the parts
    and rows that may be among the ``time_top`` first rows in time order (Spark still sorts
    and limits), or the ``partial`` pre-aggregation's rows instead.

    Spark prunes a ``count(*)`` to no column at all; the scan then reads ``time`` (never
    null, and the cheapest column) and Spark ignores it.

    Raises:
        OptionError: a read option of the user's that the plan sets itself.
    """
    schema = _table_schema(scan)
    if any(key.lower() == "readchangefeed" for key in user_options):
        # The extensions' rule turns such a read into the table's changes before any scan is
        # planned; reaching here, they are not installed in this session.
        raise OptionError(
            f"read option 'readChangeFeed' on catalog table {scan['table']!r} needs the "
            "plugin's session extensions (spark.sql.extensions = "
            'io.tsfilecatalog.spark.TsFileExtensions; docs/spark-catalog.md, "Change data '
            'feed")'
        )
    planned = {key.lower() for key in _PLANNED}
    for key in user_options:
        if key.lower() in planned:
            raise OptionError(
                f"read option '{key}' cannot be set on catalog table {scan['table']!r}: the "
                "catalog sets it from the query (use WHERE, a column list, VERSION AS OF)"
            )
    # The scan's options win over the user's, whatever the case of the user's key (the
    # source reads options case-insensitively).
    taken = {key.lower() for key in scan["options"]}
    options = {
        **{k: v for k, v in user_options.items() if k.lower() not in taken},
        **scan["options"],
    }
    if partial is None:
        names = resolve_columns(
            schema, [c.lower() for c in columns] or [TIME_COLUMN], what="the scan"
        )
        options["columns"] = ",".join(names)
        read_schema = spark_schema(schema, names, scan["timestamp_as"])
    else:
        options["partialAggregate"] = partial.to_json()
        read_schema = partial_schema(partial, schema, scan["timestamp_as"])
    if limit is not None:
        options["limit"] = str(limit)
    if time_top is not None:
        options[time_top.option] = str(time_top.n)
    if where is not None:
        options["where"] = where
        options["timeZone"] = time_zone
    if parallelism is not None and not any(k.lower() == "partitions" for k in user_options):
        options["partitions"] = str(parallelism)
    stream = {k: v for k, v in options.items() if k not in _BATCH_ONLY}
    shown = ""
    if partial is not None:
        keys = list(partial.keys)
        if partial.bucket is not None:
            keys.append(f"floor(time / {partial.bucket.width}) * {partial.bucket.width}")
        shown += f", pre-aggregated by {', '.join(keys)}" if keys else ", pre-aggregated"
    if limit is not None:
        shown += f", limit {limit}"
    if time_top is not None:
        shown += f", {time_top.option} {time_top.n} by time"
    if where:
        shown += f", where: {where}"
    return {
        "schema": read_schema.json(),
        "options": options,
        "stream_options": stream,
        "description": f"tsfile {scan['table']} version {scan['version']}{shown}",
    }
