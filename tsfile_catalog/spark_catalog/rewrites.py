"""``UPDATE``, ``MERGE INTO`` and ``DELETE FROM`` through plain ``spark.sql``: the parts a
copy-on-write statement reads and replaces.

The table's ``SupportsRowLevelOperations`` (``io.tsfilecatalog.spark.TsFileRowLevelOperation``)
is Spark's group-based copy-on-write with one part as one group: Spark reads whole parts,
computes their new rows with its own UPDATE/MERGE/DELETE semantics, and the ``tsfile`` writer
replaces those parts with the new rows in one commit (``rewriteParts``, see
:mod:`tsfile_catalog.write.commit`). This module picks the parts: those the statement's
predicates may match (pruned by statistics, as DELETE prunes), and in a ``key.duplicates =
last`` table every part sharing a key with one of them, transitively
(:func:`~tsfile_catalog.metadata.key.close_over_key_overlap`), read merged: a stale row of a
key must neither be rewritten over the newest nor come back once the newest is replaced. A
``last`` table's MERGE takes no predicate of its ON condition at planning time: a row it
inserts may share its key with a row the condition left, which the commit refuses
(:mod:`tsfile_catalog.write.commit`).

At run time Spark narrows the parts further (its ``RowLevelOperationRuntimeGroupFiltering``):
it first runs the statement's condition (a MERGE's join with its source) as an ordinary
query and hands the scan an ``IN`` predicate on :func:`runtime_filter_columns` (a TAG column,
or time)
holding the values of the rows that matched; the scan plans again with it (``runtime``),
per-part statistics pruning, so a statement touching one device reads and rewrites that
device's parts only, and one matching no row reads and commits nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from tsfile_catalog.exceptions import InvalidCommitError, SqlError
from tsfile_catalog.metadata.compaction import is_own_tsfile, plan_removal
from tsfile_catalog.metadata.key import close_over_key_overlap, key_mode
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import TIME_COLUMN, TableSchema
from tsfile_catalog.metadata.table_time import spark_rewrite_refusal
from tsfile_catalog.spark_catalog.scan_request import ScanRequest
from tsfile_catalog.spark_catalog.scans import plan_scan, push_predicates
from tsfile_catalog.table.update import set_refusal

__all__ = [
    "ONLY_PARTS_OPTION",
    "appending_commit",
    "key_set_refusal",
    "plan_delta",
    "plan_rewrite_scan",
    "runtime_filter_columns",
]

ONLY_PARTS_OPTION = "onlyParts"


def plan_rewrite_scan(
    scan: ScanRequest,
    *,
    command: str,
    predicates: Sequence[Mapping[str, Any]],
    time_zone: str,
    parallelism: int | None,
    user_options: Mapping[str, str],
    runtime: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The scan of a copy-on-write ``command`` (Spark's ``UPDATE``, ``MERGE``, ``DELETE``):
    every column and every row of the parts it rewrites, those parts (``rewrite``), and the
    columns Spark may filter it on at run time (``filter_columns``).

    ``runtime`` holds Spark's run-time filter predicate (an ``IN`` list of the values the
    matching rows hold, or their range where the JVM shortened a long list): the parts read are
    those both they and ``predicates`` may match. A predicate the scan cannot take prunes
    nothing; an empty ``IN`` matches no part. A ``last`` table's MERGE ignores it when a
    part it would leave has no per-device statistics or is external: the commit checks the
    keys of the parts left against the rows written, by those statistics.

    Raises:
        InvalidCommitError: an ``UPDATE`` or ``MERGE`` whose external part may hold rows
            the statement changes (naming it): the table never rewrites files it does not
            own. A ``DELETE`` replaces the part in the manifest instead.
        SqlError: the table's nanosecond times would pass through Spark's microsecond
            TIMESTAMP (before anything is read or written).
    """
    refusal = spark_rewrite_refusal(
        scan.unit,
        scan.timestamp_as,
        statement=f"spark.sql {command} on {scan.table}",
        instead=(
            "use Catalog.sql DELETE, or tsfile_catalog.open_table(location).update(...) / "
            ".delete(...), which rewrite the stored times exactly"
        ),
    )
    if refusal is not None:
        raise SqlError(refusal)
    table = scan.opened
    parts = table.parts()
    last = key_mode(table.properties) == "last"
    # A last table's MERGE may insert a key its ON condition left: the commit checks it.
    static = [] if last and command == "MERGE" else predicates
    texts = [
        where
        for where in (
            push_predicates(scan, static, time_zone)["where"],
            push_predicates(scan, runtime or [], time_zone)["where"],
        )
        if where is not None
    ]
    where = " AND ".join(f"({t})" for t in texts) if texts else None
    if runtime is not None and any(_matches_nothing(p) for p in runtime):
        chosen = []
    elif where is None:
        chosen = [i for i, p in enumerate(parts) if p.row_count > 0]
    else:
        # push_predicates took only predicates that need no time zone.
        bound = scan.bind(where, time_zone)
        removal = plan_removal(parts, bound, table.schema)
        wanted = {p.path for p in (*removal.drop, *removal.rewrite)}
        chosen = [i for i, p in enumerate(parts) if p.path in wanted]
    if last:
        chosen = sorted(close_over_key_overlap(parts, chosen))
    if last and command == "MERGE" and runtime is not None:
        read_now = set(chosen)
        left = [p for i, p in enumerate(parts) if i not in read_now and p.row_count > 0]
        if any(p.devices is None or not is_own_tsfile(p) for p in left):
            # The commit could not show a part without per-device statistics (or an
            # external one) holds none of the keys the MERGE inserts: read every part, as
            # without the filter.
            chosen = [i for i, p in enumerate(parts) if p.row_count > 0]
    read = [parts[i] for i in chosen]
    # A DELETE replaces an external part as any other: Spark's rows without the deleted
    # ones go into new parts of the table's own, and the external file is only dropped from
    # the manifest (never modified). UPDATE and MERGE refuse it.
    foreign = [f"'{p.path}' ({p.format})" for p in read if not is_own_tsfile(p)]
    if foreign and command != "DELETE":
        raise InvalidCommitError(
            f"{command} on {scan.table}: external part{'s' if len(foreign) > 1 else ''} "
            f"{', '.join(foreign)} may hold rows the statement changes, and the table never "
            "rewrites files it does not own: drop the part (ALTER TABLE ... DROP PART), or "
            "narrow the statement's condition to leave its rows"
        )
    # The scan's schema: a MERGE WITH SCHEMA EVOLUTION reads under the one it commits.
    columns = list(scan.schema.names)
    plan = plan_scan(
        scan,
        columns=columns,
        where=None,
        time_zone=time_zone,
        parallelism=parallelism,
        user_options=user_options,
    )
    paths = [p.path for p in read]
    plan["options"][ONLY_PARTS_OPTION] = json.dumps(paths)
    plan["stream_options"] = plan["options"]
    shown = f"{len(paths)} of {len(parts)} parts, whole"
    if runtime is not None:
        shown += ", filtered at run time"
    plan["description"] = f"{scan.shown} ({command}: {shown})"
    plan["filter_columns"] = runtime_filter_columns(table.schema, parts)
    plan["rewrite"] = {
        "parts": paths,
        "write_options": {
            "rewriteParts": json.dumps(paths),
            "rewriteVersion": str(scan.version),
            "rewriteOperation": command,
            # An append-only table keeps rows sharing a key (in separate parts), so its
            # rewrite does too; a ``last`` table's rewritten rows hold each key once.
            "rewriteDuplicates": "error" if last else "keep",
            # Never the table's onDuplicate = last: the rows' order says nothing here.
            "onDuplicate": "error",
        },
    }
    return plan


def plan_delta(scan: ScanRequest, command: str) -> dict[str, Any] | None:
    """How Spark writes ``command`` on the loaded version as a delta (``SupportsDelta``:
    only the rows it changes), or None for the copy-on-write of :func:`plan_rewrite_scan`.

    An ``UPDATE`` of a ``key.duplicates = last`` table is a delta, as ``Catalog.sql``'s own
    UPDATE of it: Spark reads the rows its condition matches (an ordinary scan of the
    version, merged by key), and the write appends their new values, which replace the old
    rows of their keys by the key rule; no part is rewritten. An UPDATE may not set the key
    (``KeyAssignments`` refuses it with :func:`key_set_refusal`'s message, as
    ``Catalog.sql`` does, whatever the condition). The commit is an UPDATE against the
    version read (:mod:`tsfile_catalog.write.commit`, ``rewriteDuplicates = replace``).
    Returns ``row_id``, the columns Spark hands the write as each row's id (``time``: Spark
    requires them never null, which TAG values may be; the write keys the rows by their
    TAG values and time itself and reads no id), and the write's ``write_options``.

    Raises:
        SqlError: the table's nanosecond times would pass through Spark's microsecond
            TIMESTAMP (before anything is read or written).
    """
    table = scan.opened
    if command != "UPDATE" or key_mode(table.properties) != "last":
        return None
    refusal = spark_rewrite_refusal(
        scan.unit,
        scan.timestamp_as,
        statement=f"spark.sql {command} on {scan.table}",
        instead=(
            "use tsfile_catalog.open_table(location).update(...), which rewrites the "
            "stored times exactly"
        ),
    )
    if refusal is not None:
        raise SqlError(refusal)
    return {
        "row_id": [TIME_COLUMN],
        "write_options": appending_commit(scan, command, "replace"),
    }


def appending_commit(scan: ScanRequest, operation: str, duplicates: str) -> dict[str, str]:
    """The write options of a row-level statement Spark writes as new rows only (no part
    replaced): committed as ``operation`` against the version ``scan`` read, a row of an
    existing key handled by ``duplicates`` (``replace`` in a ``last`` table, ``keep``)."""
    return {
        "rewriteParts": "[]",
        "rewriteVersion": str(scan.version),
        "rewriteOperation": operation,
        "rewriteDuplicates": duplicates,
        "onDuplicate": "error",
    }


def runtime_filter_columns(schema: TableSchema, parts: Sequence[PartFile]) -> list[str]:
    """The column Spark filters a copy-on-write scan on at run time: the TAG column with the
    most distinct values in the parts' device statistics (the most specific part of the
    key; the later one on a tie), or time when no TAG column tells two parts' devices apart
    (a table of one device: its parts differ only in time).

    One column: Spark (4.2, 4.3) asks for every filter column's values together, as one
    ``named_struct(...) IN (...)`` it cannot hand a data source, so with several the scan is
    never filtered.
    """
    values: list[set[str | None]] = [set() for _ in schema.tag_names]
    for part in parts:
        for device in part.devices or ():
            for seen, value in zip(values, device.tags, strict=False):
                seen.add(value)
    if not values or all(len(seen) < 2 for seen in values):
        return [TIME_COLUMN]
    best = max(range(len(values)), key=lambda i: (len(values[i]), i))
    return [schema.tag_names[best]]


def _matches_nothing(node: Mapping[str, Any]) -> bool:
    """An ``IN`` with no value: Spark's run-time filter when no row matched."""
    return node.get("op") == "IN" and len(node.get("args") or []) == 1


def key_set_refusal(scan: ScanRequest, columns: Sequence[str]) -> str | None:
    """Why an UPDATE through ``spark.sql`` may not set ``columns`` (the ones Spark's plan
    gives a new value; ``__row_operation`` is Spark's own), as ``Catalog.sql``'s UPDATE
    says it; None when it may."""
    schema = scan.schema
    for column in columns:
        name = column.lower()
        if name != TIME_COLUMN and schema.column(name) is None:
            continue  # a column of Spark's plan, not the table's
        refusal = set_refusal(schema, name, f"UPDATE {scan.table}")
        if refusal is not None:
            return refusal
    return None
