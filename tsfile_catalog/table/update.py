"""UPDATE without Spark: ``table.update(set=..., where=...)`` changes rows in one commit.

``where`` is a Spark SQL predicate judged as DELETE judges it (bound to the schema,
evaluated with pyarrow); the SET values are literals or pyarrow compute expressions, which
see the rows in the raw domain (``time`` and TIMESTAMP columns as int64 in the table's
precision, as ``Table.scan(timestamp_as="long")`` returns them). A Spark SQL expression as a
SET value needs Spark: ``Catalog.sql("UPDATE ...")``.

A ``key.duplicates = last`` table gets the updated rows as a new write, which replaces the
old rows by the key rule; a ``keep`` table has the parts holding matching rows rewritten
with the rows updated (copy-on-write, each new part keeping its source's key sequence;
:class:`Updated`), in this process or, given a
:class:`~tsfile_catalog.table.rewrite_tasks.TaskRunner`, in its tasks. TAG columns and
``time`` are the table key and cannot be SET (:func:`set_refusal`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from tsfile_catalog.exceptions import InvalidCommitError, OptionError
from tsfile_catalog.formats.base import NORMALIZED_ARROW
from tsfile_catalog.metadata.compaction import is_own_tsfile, plan_removal
from tsfile_catalog.metadata.expressions import Expr, TimestampAs, TimeUnit
from tsfile_catalog.metadata.key import close_over_key_overlap, key_mode
from tsfile_catalog.metadata.manifest import Operation
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import TIME_COLUMN, Category, TableSchema
from tsfile_catalog.table.keyed import commit_key_change, latest_rows
from tsfile_catalog.table.optimize import bind_exact
from tsfile_catalog.table.rewrite import (
    PartStager,
    RewriteJob,
    StagedFile,
    empty_rows,
    matches,
    read_part_rows,
    rewrite_each,
)
from tsfile_catalog.table.rewrite_tasks import TaskRunner, part_rewrites

if TYPE_CHECKING:
    from tsfile_catalog.formats.tsfile import WriteSettings
    from tsfile_catalog.table.handle import Table

__all__ = ["UpdateResult", "Updated", "set_refusal", "update"]


@dataclass(frozen=True)
class UpdateResult:
    """What UPDATE did. ``version`` is None when no row matched (no commit)."""

    version: int | None
    num_updated_rows: int
    files_removed: int
    files_added: int


def set_refusal(schema: TableSchema, column: str, statement: str) -> str | None:
    """Why ``statement`` may not set ``column`` (None: it may): there is no such column, or
    it is a TAG column or ``time``, the table key, and a row with another key is another
    row."""
    if column == TIME_COLUMN:
        kind = "the time column"
    else:
        found = schema.column(column)
        if found is None:
            return f"{statement}: no column '{column}' (columns: {', '.join(schema.names)})"
        if found.category is not Category.TAG:
            return None
        kind = "a TAG column"
    return (
        f"{statement} cannot set '{column}': it is {kind}, part of the table key (TAG "
        "values, time), and changing it would make the row another row; delete the row "
        "and insert the new one instead"
    )


def update(
    table: Table,
    set: Mapping[str, Any],
    where: str | Expr | None = None,
    *,
    settings: WriteSettings | None = None,
    unit: TimeUnit = "ms",
    timestamp_as: TimestampAs = "long",
    time_zone: str | None = None,
    runner: TaskRunner | None = None,
) -> UpdateResult:
    """Set the columns of ``set`` in the rows where ``where`` is TRUE (None: every row), in
    one ``UPDATE`` commit.

    Args:
        table: the table; its version is the one updated.
        set: column name to its new value: a literal (``1.5``, ``"ok"``, ``None``) or a
            ``pyarrow.compute`` expression over the row's columns (``pc.field("temp") +
            1``), both cast to the column's type. Time and TIMESTAMP columns are raw int64
            in the table's precision.
        where: a Spark SQL predicate (or a bound-able expression), read with ``unit``,
            ``timestamp_as`` and ``time_zone`` as :meth:`Table.plan` reads it.
        settings: the TsFile writer's compression and encodings for new parts.
        runner: where a ``keep`` table's parts are rewritten (``SparkTasks(spark)``: in
            Spark tasks, batches of about ``targetFileSize`` bytes; None: here, one after
            another); this process commits either way. A ``last`` table's updated rows are
            computed and written here.

    Raises:
        OptionError: ``set`` is empty, names an unknown column, a TAG column or ``time``
            (the table key), or a value pyarrow cannot evaluate or cast.
        PredicateError: ``where`` cannot be parsed or bound, or needs a time zone.
        InvalidCommitError: in a ``keep`` table, an external part holds a matching row.
        OptionError: with a ``runner``, the ``targetFileSize`` property is not a positive
            integer.
        CommitConflictError: a concurrent commit removed a part this one rewrites.
    """
    schema = table.schema
    _check_set(schema, set)
    # The values evaluated once over no rows: an unknown column or a cast pyarrow cannot
    # make fails here, with its OptionError, not inside a task.
    set_values(empty_rows(schema), set, schema)
    bound = bind_exact(table, where, unit=unit, timestamp_as=timestamp_as, time_zone=time_zone)
    parts = table.parts()
    if bound is None:
        candidates = [p for p in parts if p.row_count > 0]
    else:
        plan = plan_removal(parts, bound, schema)
        candidates = [*plan.drop, *plan.rewrite]
    parameters = {"predicate": _text(where), "set": ", ".join(sorted(set))}
    if key_mode(table.properties) == "last":
        # The rows reads show: the parts that may match, and every part sharing a key with
        # them (a newer row of a key hides an older one).
        chosen = {p.path for p in candidates}
        closed = close_over_key_overlap(parts, [i for i, p in enumerate(parts) if p.path in chosen])
        rows = latest_rows(table, [parts[i] for i in sorted(closed)])
        updated = set_values(rows.filter(matches(rows, bound)), set, schema)
        change = commit_key_change(
            table,
            new_rows=updated,
            remove=None,
            operation=Operation.UPDATE,
            parameters={**parameters, "numUpdatedRows": str(updated.num_rows)},
            settings=settings,
        )
        return UpdateResult(
            change.version, updated.num_rows, change.files_removed, change.files_added
        )
    return _rewrite_keep(table, candidates, Updated(bound, dict(set)), parameters, settings, runner)


@dataclass(frozen=True)
class Updated:
    """UPDATE's :class:`~tsfile_catalog.table.rewrite.PartChange` in a ``keep`` table: the
    part with the rows where ``predicate`` is TRUE (None: every row) set as ``set`` says
    (:func:`set_values`), its other rows first, keeping its key sequence. A part the table
    does not own is only counted: it is never rewritten."""

    predicate: Expr | None
    set: Mapping[str, Any]  # literals and pyarrow.compute expressions: both pickle

    def __call__(self, stager: PartStager, part: PartFile) -> tuple[int, tuple[StagedFile, ...]]:
        rows = read_part_rows(stager.source, part)
        hit = matches(rows, self.predicate)
        hits = int(pc.sum(hit).as_py() or 0)
        if not hits or not is_own_tsfile(part):
            return hits, ()
        updated = set_values(rows.filter(hit), self.set, stager.source.schema)
        new = pa.concat_tables([rows.filter(pc.invert(hit)), updated])
        return hits, (stager.write(new, sources=(part,)),)


def _rewrite_keep(
    table: Table,
    candidates: list[PartFile],
    change: Updated,
    parameters: Mapping[str, str],
    settings: WriteSettings | None,
    runner: TaskRunner | None,
) -> UpdateResult:
    """Copy-on-write of a ``keep`` table's parts that hold matching rows."""
    removed: list[PartFile] = []
    foreign: list[str] = []
    count = 0
    with RewriteJob(table, settings) as job:
        rewrite = None if runner is None else part_rewrites(job, runner)
        for part, hits, _ in rewrite_each(job, candidates, change, rewrite=rewrite):
            if not hits:
                continue
            if not is_own_tsfile(part):
                foreign.append(f"'{part.path}' ({part.format}, {hits} matching rows)")
                continue
            removed.append(part)
            count += hits
        if foreign:
            raise InvalidCommitError(
                f"external part{'s' if len(foreign) > 1 else ''} {', '.join(foreign)} hold "
                "rows the update matches; the table never rewrites files it does not own: "
                "drop the part (ALTER TABLE ... DROP PART), or narrow the predicate"
            )
        if not removed:
            return UpdateResult(None, 0, 0, 0)
        snapshot = job.commit(
            removed,
            operation=Operation.UPDATE,
            parameters={**parameters, "numUpdatedRows": str(count), "job": job.job},
            data_change=True,
        )
        return UpdateResult(snapshot.version, count, len(removed), len(job.staged))


def _check_set(schema: TableSchema, set: Mapping[str, Any]) -> None:
    if not set:
        raise OptionError("update needs at least one column in set")
    for name in set:
        refusal = set_refusal(schema, name, "update")
        if refusal is not None:
            raise OptionError(refusal)


def set_values(rows: pa.Table, set: Mapping[str, Any], schema: TableSchema) -> pa.Table:
    """``rows`` (raw domain, every column) with the columns of ``set`` replaced by their
    values: literals or ``pyarrow.compute`` expressions, cast to the column's type.

    Raises:
        OptionError: a value pyarrow cannot evaluate or cast, naming its column.
    """
    projection: dict[str, pc.Expression] = {}
    for index, name in enumerate(rows.column_names):
        if name not in set:
            projection[name] = pc.field(name)
            continue
        value = set[name]
        column = schema.column(name) if index else None
        wanted = pa.int64() if column is None else NORMALIZED_ARROW[column.type]
        expression = value if isinstance(value, pc.Expression) else pc.scalar(value)
        projection[name] = expression.cast(wanted)
    try:
        return ds.dataset(rows).to_table(columns=projection)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        raise OptionError(
            f"update: cannot compute the new values of {', '.join(sorted(set))}: {e}"
        ) from e


def _text(where: str | Expr | None) -> str:
    if where is None:
        return "true"
    return where if isinstance(where, str) else repr(where)
