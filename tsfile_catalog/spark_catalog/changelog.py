"""The change data feed of a catalog table, for the Java adapter: the read schema and the
``tsfile`` source options of a changes scan (docs/spark-catalog.md, "Change data feed").

Three ways in, one answer: ``spark.read.option("readChangeFeed", "true").table(...)`` (the
relation's options), the table function ``table_changes('db.t', start[, end])`` and Spark
4.3's ``... CHANGES FROM VERSION a [TO VERSION b]`` (``TableCatalog.loadChangelog``: a range
and a deduplication mode, translated here into the same options). The rows are the source's
(:mod:`tsfile_catalog.datasource.change_feed`), so each way reads exactly the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import types as T

from tsfile_catalog.datasource.types import spark_schema
from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.metadata.change_feed import CHANGE_TYPE, COMMIT_TIMESTAMP, COMMIT_VERSION
from tsfile_catalog.metadata.schema import TableSchema
from tsfile_catalog.spark_catalog.tables import Warehouse, table_name
from tsfile_catalog.sql import table_options

__all__ = ["plan_changes", "range_options"]

# Options of a change feed the user may give (Delta's names, Spark's deduplicationMode).
_RANGE_KEYS = (
    "startingVersion",
    "endingVersion",
    "startingTimestamp",
    "endingTimestamp",
    "deduplicationMode",
)


def range_options(changelog: Mapping[str, Any]) -> dict[str, str]:
    """Spark 4.3's ``ChangelogContext`` (as the adapter sends it) as source options.

    Raises:
        OptionError: an unbounded range (Spark's ``CHANGES`` without ``FROM``).
    """
    kind = changelog["kind"]
    out: dict[str, str] = {}
    if kind == "version":
        start = int(changelog["start"]) + (0 if changelog["start_inclusive"] else 1)
        out["startingVersion"] = str(start)
        if changelog.get("end") is not None:
            end = int(changelog["end"]) - (0 if changelog["end_inclusive"] else 1)
            out["endingVersion"] = str(end)
    elif kind == "timestamp":
        # Microseconds since the epoch; commits are stamped in milliseconds.
        start_us = int(changelog["start_us"])
        start_ms = -(-start_us // 1000) if changelog["start_inclusive"] else start_us // 1000 + 1
        out["startingTimestamp"] = str(start_ms)
        if changelog.get("end_us") is not None:
            end_us = int(changelog["end_us"])
            end_ms = end_us // 1000 if changelog["end_inclusive"] else -(-end_us // 1000) - 1
            out["endingTimestamp"] = str(end_ms)
    else:
        raise OptionError(
            "a change feed of a tsfile table needs a start: CHANGES FROM VERSION n or "
            "CHANGES FROM TIMESTAMP t"
        )
    mode = changelog.get("deduplication")
    if mode:
        out["deduplicationMode"] = {
            "NONE": "none",
            "DROP_CARRYOVERS": "dropCarryovers",
            "NET_CHANGES": "netChanges",
        }.get(str(mode), str(mode))
    return out


def _change_schema(schema: TableSchema, timestamp_as: Any) -> T.StructType:
    return (
        spark_schema(schema, schema.display_names, timestamp_as)
        .add(CHANGE_TYPE, T.StringType(), nullable=False)
        .add(COMMIT_VERSION, T.LongType(), nullable=False)
        .add(COMMIT_TIMESTAMP, T.TimestampType(), nullable=False)
    )


def plan_changes(warehouse: Warehouse, request: Mapping[str, Any]) -> dict[str, Any]:
    """The changes scan of a catalog table: ``request`` names it (``namespace``, ``name``)
    and gives the relation's ``options`` and, from ``CHANGES FROM``, a ``changelog`` range.

    Raises:
        OptionError: a range option of the user's that ``CHANGES FROM`` also gives, or one a
            change feed does not take (the source names it).
    """
    name = table_name(request["namespace"], request["name"])
    entry = warehouse.registry.require(name)
    table = warehouse.open_as_of(entry, None, None)
    given = {str(k): str(v) for k, v in (request.get("options") or {}).items()}
    user = {k: v for k, v in given.items() if k.lower() != "readchangefeed"}
    if request.get("changelog") is not None:
        ranged = range_options(request["changelog"])
        by_key = {r.lower(): v for r, v in ranged.items()}
        # Spark 4.2 also hands CHANGES FROM's WITH (...) options over as the relation's: the
        # same value said once is no repetition, another value is.
        both = sorted(k for k in user if k.lower() in by_key and user[k] != by_key[k.lower()])
        if both:
            raise OptionError(
                f"option '{both[0]}' repeats what CHANGES FROM says; give the range once"
            )
        user = {k: v for k, v in user.items() if k.lower() not in by_key}
        user.update(ranged)
    timestamp_as = table_options.timestamp_as(entry)
    unit = table.time_unit(table_options.given_precision(entry))
    read = {**table_options.read_options(entry), "timestampPrecision": unit}
    read["timestampAs"] = timestamp_as
    options = {**user, **warehouse.source_options(entry, read), "readChangeFeed": "true"}
    stream = {k: v for k, v in options.items() if k not in ("endingVersion", "endingTimestamp")}
    shown = ", ".join(f"{k}={v}" for k, v in sorted(user.items()) if k in _RANGE_KEYS)
    return {
        "schema": _change_schema(table.schema, timestamp_as).json(),
        "options": options,
        "stream_options": stream,
        "description": f"tsfile changes of {entry.display_name} ({shown})",
        "name": entry.display_name,
    }
