"""UPDATE and MERGE INTO on a catalog table: the new rows computed by Spark, one commit.

Spark evaluates the statement over the table's current rows (a fresh scan of the version
the commit is made against; for a ``key.duplicates = last`` table, the rows reads show),
keeps the result on its executors for the statement (persisted), and the table layer commits
it in one version (:func:`~tsfile_catalog.table.keyed.commit_key_change`):

- a ``last`` table gets the updated and inserted rows as a new write, which replaces the
  old rows of the same keys; when a MERGE deletes, the deleted and updated keys are also
  removed from every part that holds them (an older row of a key must not come back once
  the newest is gone);
- a ``keep`` table (every row kept) has the keys it changes removed from every part that
  holds them, copy-on-write with their key sequences kept, and gets the rows of those keys
  as they are after the statement (changed and unchanged) as new parts.

The parts losing keys are rewritten as Spark tasks (``spark.tsfile.distributedRewrites.enabled``,
:func:`~tsfile_catalog.sql.maintenance.rewrite_runner`), each task given the changed keys,
and the new rows are staged by Spark tasks too, each its share (clustered by key first
where a ``last`` table's MERGE inserts, which may repeat a key;
:func:`~tsfile_catalog.sql.maintenance.new_rows_of`). The driver receives the counts, the
changed keys (key columns only) and the new parts' statistics, never the rows. With
distributed rewrites off, the new rows are collected and staged in the driver.

The table key is (TAG values, time): a MERGE's ON must equate each of its columns between
target and source, and neither statement may SET them (:mod:`~tsfile_catalog.sql.merge_checks`,
the refusals Spark's copy-on-write through the plugin shares).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from sqlglot import exp

from tsfile_catalog import inspect
from tsfile_catalog.exceptions import PredicateError, SqlError
from tsfile_catalog.inspect import Result
from tsfile_catalog.metadata.key import key_mode
from tsfile_catalog.metadata.manifest import Operation
from tsfile_catalog.metadata.schema import TableSchema
from tsfile_catalog.metadata.table_time import spark_rewrite_refusal
from tsfile_catalog.sql import dml, table_options
from tsfile_catalog.sql.maintenance import delete_rows, new_rows_of, rewrite_args, rewrite_runner
from tsfile_catalog.sql.merge_checks import aliases, check
from tsfile_catalog.sql.query import Tables, run
from tsfile_catalog.sql.registry import TableEntry
from tsfile_catalog.sql.statements import (
    Delete,
    Merge,
    MergeClause,
    Update,
    VersionAsOf,
    quote_identifier,
    row_level_parameters,
)
from tsfile_catalog.table.handle import Table
from tsfile_catalog.table.keyed import commit_key_change, key_columns
from tsfile_catalog.write.arrow import raw_table

__all__ = ["delete", "merge", "update"]

# Columns the statements add to the rows they compute; a table column never starts so.
_HIT = "__tsfile_hit"
_TARGET = "__tsfile_target"
_SOURCE = "__tsfile_source"
_ROW = "__tsfile_row"
_CLAUSE = "__tsfile_clause"
_COUNT = "__tsfile_count"


def _coerced(
    frame: DataFrame, value: SparkColumn, name: str, schema: TableSchema, entry: TableEntry
) -> SparkColumn:
    """``value`` as the table's column ``name`` is written (INSERT's coercion)."""
    source = frame.select(value).schema.fields[0].dataType
    return dml.coerce(value, source, name, schema, entry)


@contextmanager
def _persisted(frame: DataFrame) -> Iterator[DataFrame]:
    """``frame`` kept on the executors while the statement reads it several times (counts,
    keys, new rows): computed once, so every read sees the same rows and row ids."""
    kept = frame.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        yield kept
    finally:
        kept.unpersist()


def _count(frame: DataFrame, *conditions: SparkColumn) -> list[int]:
    """How many rows of ``frame`` each condition holds for (one Spark job)."""
    row = frame.agg(*[F.sum(c.cast("long")) for c in conditions]).first()
    assert row is not None
    return [int(v or 0) for v in row]


def _keys(frame: DataFrame, schema: TableSchema, entry: TableEntry) -> pa.Table:
    """The distinct keys of ``frame``'s rows, collected in the raw domain."""
    keys = key_columns(schema)
    collected = frame.select(*[quote_identifier(c) for c in keys]).distinct().toArrow()
    key_schema = TableSchema.of(schema.table, schema.tags)
    return raw_table(collected, key_schema, table_options.precision(entry))


def _open(tables: Tables, entry: TableEntry, statement: str) -> tuple[Table, DataFrame]:
    """The table's latest version, and a scan of exactly that version (the commit is made
    against it: a concurrent commit that removes a part this one rewrites conflicts).

    Raises:
        SqlError: the rows would pass through Spark with their times truncated (a table of
            nanoseconds read as timestamps); nothing is read or written.
    """
    refusal = spark_rewrite_refusal(
        table_options.precision(entry),
        table_options.timestamp_as(entry),
        statement=f"{statement} {entry.display_name}",
        instead=(
            "use DELETE, or tsfile_catalog.open_table(location).update(...), which rewrite "
            "the stored times exactly"
        ),
    )
    if refusal is not None:
        raise SqlError(refusal)
    table = tables.open(entry)
    return table, tables.scan(entry, time_travel=VersionAsOf(table.version))


# -- DELETE -------------------------------------------------------------------------------------


def delete(tables: Tables, statement: Delete) -> DataFrame:
    """``DELETE FROM`` a catalog table: ``num_affected_rows``, ... (``inspect.DELETE_SCHEMA``).

    A predicate the scan takes (``where`` binds it) deletes by statistics and copy-on-write
    (:func:`~tsfile_catalog.sql.maintenance.delete_rows`). Any other (``i % 2 = 0``, a
    function of a column, a subquery) is evaluated by Spark over the rows reads show, as
    UPDATE's condition is, and the keys of the matching rows are removed from every part
    that holds them in one commit; in a ``keep`` table the rows of those keys the predicate
    leaves are written back.
    """
    try:
        return delete_rows(tables, statement)
    except PredicateError:
        if statement.where is None or tables.spark_owns(statement.table):
            raise
    entry = tables.registry.require(statement.table)
    table, scan = _open(tables, entry, "DELETE")
    schema = table.schema
    keys = key_columns(schema)
    target = scan.alias(statement.table.name)
    hit = F.coalesce(F.expr(statement.where), F.lit(False))
    last = key_mode(table.properties) == "last"
    hit_keys = target.filter(hit).select(*[quote_identifier(c) for c in keys]).distinct()
    # A keep table's key may hold rows the predicate leaves: they are written back.
    rows = scan.join(hit_keys, on=keys, how="left_semi").alias(statement.table.name)
    computed_frame = rows.select(
        hit.alias(_HIT), *[rows[quote_identifier(c)] for c in schema.names]
    )
    change = None
    with _persisted(computed_frame) as computed:
        (deleted,) = _count(computed, F.col(_HIT))
        if deleted:
            kept = computed.filter(~F.col(_HIT)).drop(_HIT)
            change = commit_key_change(
                table,
                new_rows=None
                if last
                else new_rows_of(tables, entry, kept, schema, clustered=False),
                remove=_keys(computed, schema, entry),
                operation=Operation.DELETE,
                parameters={
                    **row_level_parameters(
                        "DELETE", statement.history_predicate or statement.where
                    ),
                    "numDeletedRows": str(deleted),
                },
                settings=rewrite_args(tables, entry)["settings"],
                runner=rewrite_runner(tables),
            )
    tables.refresh_view(entry)
    # DELETE's columns (inspect.delete_result); which removed parts were dropped whole and
    # which rewritten, this path does not tell apart: null.
    row = (
        deleted,
        None if change is None else change.version,
        0 if change is None else change.files_removed,
        0 if change is None else change.files_added,
        None,
        None,
    )
    return tables.result(Result(inspect.DELETE_SCHEMA, [row]))


# -- UPDATE -------------------------------------------------------------------------------------


def update(tables: Tables, statement: Update) -> DataFrame:
    """``UPDATE`` of a catalog table (a Spark table's is Spark's): ``num_affected_rows``."""
    if tables.spark_owns(statement.table):
        return tables.spark.sql(statement.to_sql())
    entry = tables.registry.require(statement.table)
    table, scan = _open(tables, entry, "UPDATE")
    schema = table.schema
    check(statement, schema, entry.display_name)
    target = scan.alias(statement.alias or statement.table.name)
    hit = (
        F.lit(True)
        if statement.where is None
        else F.coalesce(F.expr(statement.where), F.lit(False))
    )
    values = dict(statement.assignments)
    last = key_mode(table.properties) == "last"
    if last:
        rows = target.filter(hit)
    else:
        # Every row of a changed key is rewritten (the key leaves its parts): the rows the
        # WHERE leaves keep their values.
        keys = target.filter(hit).select(*[quote_identifier(c) for c in key_columns(schema)])
        rows = scan.join(keys.distinct(), on=key_columns(schema), how="left_semi").alias(
            statement.alias or statement.table.name
        )
    columns = [hit.alias(_HIT)]
    for column in schema.names:
        current = rows[quote_identifier(column)]
        if column not in values:
            columns.append(current.alias(column))
            continue
        value = _coerced(rows, F.expr(values[column]), column, schema, entry)
        columns.append((value if last else F.when(hit, value).otherwise(current)).alias(column))
    with _persisted(rows.select(*columns)) as computed:
        (updated,) = _count(computed, F.col(_HIT))
        # No row hit: no key changes (a keep table's rows are those of the keys hit).
        if updated:
            commit_key_change(
                table,
                # Each key once in a last table (its reads); a keep table's may repeat.
                new_rows=new_rows_of(tables, entry, computed.drop(_HIT), schema, clustered=False),
                remove=None if last else _keys(computed, schema, entry),
                operation=Operation.UPDATE,
                parameters={
                    **row_level_parameters(
                        "UPDATE", statement.where, [c for c, _ in statement.assignments]
                    ),
                    "numUpdatedRows": str(updated),
                },
                settings=rewrite_args(tables, entry)["settings"],
                runner=rewrite_runner(tables),
            )
    tables.refresh_view(entry)
    return tables.result(Result(inspect.UPDATE_SCHEMA, [(updated,)]))


# -- MERGE --------------------------------------------------------------------------------------


def merge(tables: Tables, statement: Merge) -> DataFrame:
    """``MERGE INTO`` a catalog table (a Spark table's is Spark's): ``num_affected_rows``,
    ``num_updated_rows``, ``num_deleted_rows``, ``num_inserted_rows`` (Delta's answer).

    Raises:
        SqlError: the ON condition does not pin the key, a clause sets a key column or an
            unknown one, an INSERT leaves a key column out, or a target row is matched by
            more than one source row that would change it.
    """
    if tables.spark_owns(statement.table):
        return tables.spark.sql(statement.to_sql())
    entry = tables.registry.require(statement.table)
    table, scan = _open(tables, entry, "MERGE INTO")
    schema = table.schema
    target_alias, source_alias = aliases(statement)
    pins = check(statement, schema, entry.display_name)
    # Only target rows whose key some source row names can be matched (or, in a keep
    # table, share a key with a changed row): the join reads no other.
    on_key = " AND ".join(
        f"{quote_identifier(target_alias)}.{quote_identifier(c)} = {pins[c].sql(dialect='spark')}"
        for c in key_columns(schema)
    )
    candidates = (
        scan.alias(target_alias)
        .join(_source(tables, statement, source_alias), on=F.expr(on_key), how="left_semi")
        .select("*", F.lit(True).alias(_TARGET), F.monotonically_increasing_id().alias(_ROW))
        .alias(target_alias)
    )
    source = _source(tables, statement, source_alias)
    joined = candidates.join(source, on=F.expr(statement.on_sql), how="full_outer")
    matched = joined[_TARGET].isNotNull() & joined[_SOURCE].isNotNull()
    clause = _clause_index(statement.clauses, matched, joined)
    keep = key_mode(table.properties) == "keep"
    values = [
        _value(statement.clauses, c, joined, candidates, source, schema, entry, clause).alias(c)
        for c in schema.names
    ]
    acting = joined.filter(clause.isNotNull() | (F.lit(keep) & joined[_TARGET].isNotNull())).select(
        joined[_ROW].alias(_ROW),
        matched.alias(_HIT),
        clause.alias(_CLAUSE),
        *values,
    )
    with _persisted(acting) as computed:
        outcome = _outcome(statement.clauses, computed, schema, entry, keep=keep)
        if outcome.updated or outcome.deleted or outcome.inserted:
            commit_key_change(
                table,
                # A last table's inserts may repeat a key (refused): its rows go together.
                new_rows=new_rows_of(
                    tables,
                    entry,
                    outcome.new_rows,
                    schema,
                    clustered=not keep and outcome.inserted > 0,
                ),
                remove=outcome.remove,
                operation=Operation.MERGE,
                parameters={
                    **row_level_parameters("MERGE", statement.on_sql),
                    "numUpdatedRows": str(outcome.updated),
                    "numDeletedRows": str(outcome.deleted),
                    "numInsertedRows": str(outcome.inserted),
                },
                settings=rewrite_args(tables, entry)["settings"],
                runner=rewrite_runner(tables),
            )
    tables.refresh_view(entry)
    affected = outcome.updated + outcome.deleted + outcome.inserted
    return tables.result(
        Result(
            inspect.MERGE_SCHEMA,
            [(affected, outcome.updated, outcome.deleted, outcome.inserted)],
        )
    )


def _source(tables: Tables, statement: Merge, alias: str | None) -> DataFrame:
    """A fresh read of the MERGE's source, with a marker column, under its alias (each call
    reads anew: the source joins twice, and Spark must not see one relation on both sides)."""
    query = statement.source
    select = exp.select("*").from_(query.copy()) if isinstance(query, exp.Table) else query
    frame = run(tables, select)
    # Each read's columns renamed to themselves: new attributes, so the two reads of one
    # temporary view (or Spark table), which resolve to the same attributes, are not one
    # relation on both sides of the join to Spark (its ambiguous self-join error).
    frame = frame.toDF(*frame.columns).select("*", F.lit(True).alias(_SOURCE))
    return frame.alias(alias) if alias else frame


@dataclass(frozen=True)
class _Outcome:
    new_rows: DataFrame  # a column per table column
    remove: pa.Table | None
    updated: int
    deleted: int
    inserted: int


def _outcome(
    clauses: Sequence[MergeClause],
    computed: DataFrame,
    schema: TableSchema,
    entry: TableEntry,
    *,
    keep: bool,
) -> _Outcome:
    """What the joined rows Spark computed make of the table: the rows to write (still in
    Spark) and the keys to remove (collected).

    Raises:
        SqlError: a target row is matched by more than one source row that would change it.
    """
    index = computed[_CLAUSE]

    def acting(*actions: str) -> SparkColumn:
        wanted = [i for i, c in enumerate(clauses) if c.action in actions]
        return F.coalesce(index.isin(wanted), F.lit(False)) if wanted else F.lit(False)

    updated, deleted, inserted = _count(
        computed, acting("update"), acting("delete"), acting("insert")
    )
    changing = computed.filter(acting("update", "delete"))
    if updated + deleted:
        _check_single_match(clauses, changing, schema, entry)
    columns = [quote_identifier(c) for c in schema.names]
    updates = computed.filter(acting("update")).select(*columns)
    inserts = computed.filter(acting("insert")).select(*columns)
    changed = changing.select(*[quote_identifier(c) for c in key_columns(schema)])
    if keep:
        # Every other row of a changed key is written again as it is (its part loses it);
        # a target row joined with several source rows that leave it as it is comes once.
        unchanged = (
            computed.filter(index.isNull() & computed[_ROW].isNotNull())
            .join(changing.select(_ROW), on=_ROW, how="left_anti")
            .dropDuplicates([_ROW])
            .join(changed.distinct(), on=key_columns(schema), how="left_semi")
            .select(*columns)
        )
        new_rows = updates.unionByName(unchanged).unionByName(inserts)
        removing = updated + deleted > 0
    else:
        new_rows = updates.unionByName(inserts)
        # Updates replace their keys by the key rule; a deleted key must leave every part.
        removing = deleted > 0
    remove = _keys(changed, schema, entry) if removing else None
    return _Outcome(new_rows, remove, updated, deleted, inserted)


def _check_single_match(
    clauses: Sequence[MergeClause],
    changing: DataFrame,
    schema: TableSchema,
    entry: TableEntry,
) -> None:
    """Delta's rule: a target row may be changed by one source row only. Several source
    rows may match it when the only MATCHED clause is an unconditional DELETE (each would
    delete it)."""
    matched = [c for c in clauses if c.matched]
    if len(matched) == 1 and matched[0].action == "delete" and matched[0].condition is None:
        return
    repeated = (
        changing.groupBy(_ROW)
        .agg(F.count(F.lit(1)).alias(_COUNT))
        .filter(F.col(_COUNT) > 1)
        .limit(1)
        .collect()
    )
    if not repeated:
        return
    target_row, count = repeated[0][_ROW], repeated[0][_COUNT]
    sample = changing.filter(F.col(_ROW) == target_row).limit(1)
    shown = sample.select(*[quote_identifier(c) for c in schema.names]).toArrow()
    row = raw_table(shown, schema, table_options.precision(entry)).to_pylist()[0]
    key = ", ".join(f"{c}={row[c]!r}" for c in key_columns(schema))
    raise SqlError(
        f"MERGE INTO {entry.display_name}: {count} source rows match "
        f"the target row ({key}) and would change it; a target row may be updated or deleted "
        "by one source row only (Delta's rule: multiple source rows matched). Make the "
        "source hold one row per key, e.g. with GROUP BY or a window"
    )


def _clause_index(
    clauses: Sequence[MergeClause], matched: SparkColumn, joined: DataFrame
) -> SparkColumn:
    """The index of the clause that acts on each joined row: the first WHEN [NOT] MATCHED
    whose condition holds, in statement order (NULL: none acts)."""

    def first(kind: bool) -> SparkColumn:
        out: SparkColumn | None = None
        for index, clause in enumerate(clauses):
            if clause.matched != kind:
                continue
            holds = F.lit(True) if clause.condition is None else F.expr(clause.condition)
            test = F.coalesce(holds, F.lit(False))
            out = F.when(test, F.lit(index)) if out is None else out.when(test, F.lit(index))
        return F.lit(None).cast("int") if out is None else out

    source_only = joined[_TARGET].isNull() & joined[_SOURCE].isNotNull()
    return F.when(matched, first(True)).when(source_only, first(False))


def _value(
    clauses: Sequence[MergeClause],
    column: str,
    joined: DataFrame,
    target: DataFrame,
    source: DataFrame,
    schema: TableSchema,
    entry: TableEntry,
    clause: SparkColumn,
) -> SparkColumn:
    """Column ``column`` of each joined row after the statement: the acting clause's value
    (UPDATE SET / INSERT), else the target row's own (NULL for a source-only row)."""
    current = target[quote_identifier(column)]
    out: SparkColumn | None = None
    for index, item in enumerate(clauses):
        value = _clause_value(item, column, source, schema)
        if value is None:
            continue
        coerced = _coerced(joined, value, column, schema, entry)
        test = clause == index
        out = F.when(test, coerced) if out is None else out.when(test, coerced)
    return current if out is None else out.otherwise(current)


def _clause_value(
    clause: MergeClause, column: str, source: DataFrame, schema: TableSchema
) -> SparkColumn | None:
    """What ``clause`` sets ``column`` to (None: it leaves it as it is)."""
    if clause.action == "delete":
        return None
    if clause.assignments is None:
        # UPDATE SET * / INSERT *: the source's column of the same name. An UPDATE leaves
        # the key as it is: the ON condition made the source's equal already.
        if clause.action == "update" and column in key_columns(schema):
            return None
        return source[quote_identifier(column)]
    given = dict(clause.assignments)
    if column in given:
        return F.expr(given[column])
    return F.lit(None) if clause.action == "insert" else None
