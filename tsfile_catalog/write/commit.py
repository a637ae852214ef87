"""The commit of a write: staged parts published and added in one manifest version.

Both the Spark driver (:class:`~tsfile_catalog.datasource.writer.TsFileBatchWriter`) and the
Spark-free :func:`~tsfile_catalog.write.api.write_table` end here: an append or overwrite
adds the parts (:func:`~tsfile_catalog.table.commits.append_parts`); a ``replaceWhere``
overwrite removes the table's matching rows (parts wholly inside dropped, straddling parts
rewritten without them: in a runner's tasks when given one, or taken from the Spark tasks
that rewrote them before the write, :mod:`~tsfile_catalog.write.replace_staging`) and adds
the parts in the same commit; a copy-on-write (the catalog
plugin's UPDATE, MERGE, DELETE: ``rewriteParts``) replaces exactly the parts its scan read
with the written ones, against the version it read. Whatever happens, the job's
staging folder is removed, and nothing is visible to readers unless the commit lands.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from tsfile_catalog.exceptions import (
    CommitConflictError,
    DataError,
    TableNotFoundError,
    VersionNotFoundError,
)
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.completeness import (
    interval_complete_until,
    parse_complete_until,
    watermark_interval,
)
from tsfile_catalog.metadata.manifest import Action, AddPart, Operation, RemovePart, SetSchema
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.row_counts import RowCounts
from tsfile_catalog.metadata.schema import TIME_COLUMN
from tsfile_catalog.metadata.schema_merge import merge_schema
from tsfile_catalog.options import WriteOptions
from tsfile_catalog.table import ownership
from tsfile_catalog.table.commits import append_parts, commit
from tsfile_catalog.table.rewrite import PartRewrites, RewriteJob, remove_matching_rows
from tsfile_catalog.table.rewrite_tasks import TaskRunner, part_rewrites
from tsfile_catalog.table.snapshots import resolve_snapshot
from tsfile_catalog.write.duplicates import duplicates_to_drop
from tsfile_catalog.write.plan import WritePlan, replace_predicate
from tsfile_catalog.write.replace_staging import (
    PrestagedReplace,
    load_prestaged,
    prestaged_rewrites,
)
from tsfile_catalog.write.staging import StagedPart, publish_and_commit, remove_staging

if TYPE_CHECKING:
    from tsfile_catalog.table.handle import Table

__all__ = ["commit_write"]


def commit_write(
    plan: WritePlan,
    options: WriteOptions,
    *,
    current: Callable[[], Table | None],
    job: str,
    staged: list[StagedPart],
    overwrite: bool,
    time_zone: str | None,
    runner: TaskRunner | None = None,
    counts: RowCounts | None = None,
    write_id: str | None = None,
) -> None:
    """Publish ``staged`` and make the write's one commit; remove the job's staging always.

    ``current`` returns the latest version of the table at the write's path as the commit
    starts (None: there is none); the commit refuses to land in another table than the one
    planned against. ``time_zone`` is the zone ``replaceWhere`` and ``completeUntil`` are
    read in (the ``timeZone`` option, else the Spark session's; None: none known).
    ``runner`` rewrites a ``replaceWhere``'s straddling parts (None: in this process; a
    Spark data source's commit runs in a Python worker, which cannot start Spark jobs).
    ``counts``: the rows a copy-on-write's statement changed, as Spark counted them, and
    ``write_id`` Spark's id of its write (None: not known); see :func:`_commit_rewrite`.

    Raises:
        CommitConflictError: the table was dropped and recreated, or a concurrent commit
            conflicts; nothing was committed.
        OptionError: ``replaceWhere`` needs a time zone nobody gave.
    """
    io = FileIO(options.path, options.storage_options)
    try:
        if options.rewrite_parts is not None and counts is not None and counts.affected == 0:
            # A copy-on-write that changed no row: its parts would hold the rows they
            # replace. Nothing is published or committed, as for Catalog.sql's statements,
            # but the schema a MERGE WITH SCHEMA EVOLUTION evolves (as Delta commits it).
            if options.merge_schema:
                _commit_rewrite(plan, options, job, [], counts, write_id, unchanged=True)
            return
        publish_and_commit(
            io,
            schema=plan.schema,
            options=options,
            job=job,
            staged=staged,
            commit=lambda parts: _commit_parts(
                plan, options, current(), job, parts, overwrite, time_zone, runner, counts, write_id
            ),
        )
    finally:
        remove_staging(io, options, [job])


def _commit_parts(
    plan: WritePlan,
    options: WriteOptions,
    table: Table | None,
    job: str,
    parts: list[PartFile],
    overwrite: bool,
    time_zone: str | None,
    runner: TaskRunner | None,
    counts: RowCounts | None,
    write_id: str | None,
) -> None:
    if options.rewrite_parts is not None:
        _commit_rewrite(plan, options, job, parts, counts, write_id)
        return
    if options.replace_where is not None and plan.table_uuid is not None:
        _commit_replace(plan, options, table, job, parts, time_zone, runner)
        return
    append_parts(
        options.path,
        parts,
        plan.schema,
        merge_schema=options.merge_schema,
        overwrite=overwrite,
        operation_parameters={"mode": "overwrite" if overwrite else "append", "job": job},
        storage_options=options.storage_options,
        expected_table_uuid=plan.table_uuid,
        complete_until=_complete_until(plan, options, table, parts, time_zone),
        # A table this write creates records the time it was planned with.
        properties=plan.new_table_properties(),
        statement_properties=options.table_properties,
    )


def _complete_until(
    plan: WritePlan,
    options: WriteOptions,
    table: Table | None,
    parts: Sequence[PartFile],
    time_zone: str | None,
) -> int | None:
    """What this commit declares complete (docs/streaming.md): the ``completeUntil``
    option, and under the table property ``watermark.interval`` the interval all the
    written rows fall into; the larger when both."""
    declared: list[int] = []
    if options.complete_until is not None:
        declared.append(parse_complete_until(options.complete_until, plan.unit, time_zone))
    lows = [p.min_time for p in parts if p.min_time is not None]
    highs = [p.max_time for p in parts if p.max_time is not None]
    # Only an existing table has properties (a write that creates one sets none).
    if table is not None and lows and highs:
        interval = watermark_interval(table.properties, plan.unit)
        bound = (
            None if interval is None else interval_complete_until(min(lows), max(highs), interval)
        )
        if bound is not None:
            declared.append(bound)
    return max(declared) if declared else None


def _commit_replace(
    plan: WritePlan,
    options: WriteOptions,
    table: Table | None,
    job: str,
    parts: list[PartFile],
    time_zone: str | None,
    runner: TaskRunner | None,
) -> None:
    """One commit that removes the table's rows matching ``replaceWhere`` (parts wholly
    inside dropped, straddling parts rewritten without them) and adds ``parts``."""
    if table is None or table.table_uuid != plan.table_uuid:
        now = "no table" if table is None else f"table {table.table_uuid}"
        raise CommitConflictError(
            f"commit to table {options.path} refused: the write was prepared against "
            f"table {plan.table_uuid}, but the location holds {now} now (dropped or "
            "recreated while it ran); nothing was committed: retry the write"
        )
    predicate = replace_predicate(plan, options, time_zone, exact=True)
    # The predicate was bound to the written schema; the table's rows are read in the
    # table's, which the written one may only extend (schema_merge), never contradict.
    schema = merge_schema(table.schema, plan.schema, merge=options.merge_schema)
    extra: list[Action] = []
    if schema != table.schema:
        extra.append(SetSchema(schema, table.schema_id + 1))
    extra.extend(AddPart(p) for p in parts)
    with RewriteJob(table, options.settings()) as rewrite:
        prestaged = None if runner is not None else _prestaged(plan, options, table, time_zone)
        if runner is not None:
            rewrites: PartRewrites | None = part_rewrites(rewrite, runner)
        elif prestaged is not None:
            rewrites = prestaged_rewrites(prestaged, rewrite)
        else:
            rewrites = None
        removal = remove_matching_rows(rewrite, predicate, rewrite=rewrites)
        rewrite.commit(
            removal.removed,
            operation=Operation.OVERWRITE,
            parameters={
                "mode": "overwrite",
                "replaceWhere": options.replace_where or "",
                "mergeSchema": "true" if options.merge_schema else "false",
                "job": job,
                "numDeletedRows": str(removal.deleted_rows),
                # The Spark job group that rewrote the straddling parts before the write.
                **({} if prestaged is None else {"rewriteJob": prestaged.job}),
            },
            data_change=True,
            extra=extra,
        )


def _prestaged(
    plan: WritePlan, options: WriteOptions, table: Table, time_zone: str | None
) -> PrestagedReplace | None:
    """The straddling parts' rewrites Spark tasks staged before the write, when they stand
    for this commit's predicate (:mod:`~tsfile_catalog.write.replace_staging`); None: the
    commit rewrites the parts."""
    if options.replace_staged is None:
        return None
    prestaged = load_prestaged(table.io, table.location, options.replace_staged)
    if prestaged is None or not prestaged.applies(plan, options, time_zone, table.schema):
        return None
    return prestaged


def _refuse_keys_kept(
    io: FileIO,
    plan: WritePlan,
    options: WriteOptions,
    added: Sequence[PartFile],
    kept: Sequence[PartFile],
) -> None:
    """A ``key.duplicates = last`` table's UPDATE or MERGE wrote no key a part it did not
    read holds.

    The parts read are closed over key overlap, so the rows rewritten from them share no key
    with the rest as long as the statement keeps every row's key. A row a MERGE inserted (its
    ON condition matched no row of the parts read), or a row whose TAG values or time an
    UPDATE or a MERGE's UPDATE SET changed, may; the rewritten parts keep the key sequence of
    what they replace, so the other part's row would win and the written one would be lost.
    The table holds one row per key: the statement is refused, as when it writes a key twice
    itself. This is checked here, in the commit every session's copy-on-write reaches, never
    by a rule only some sessions have. Only the kept parts whose device time ranges meet an
    added part's are read back, and of them only the keys where they meet
    (:func:`duplicates_to_drop`).

    Raises:
        DataError: naming the statement and the first key written twice; a kept part
            without per-device statistics (or an external one) whose time range meets an
            added part's counts as holding one.
    """
    urls = [ownership.part_url(options.path, p) for p in added]
    devices = [p.devices for p in added]
    statement = options.rewrite_operation
    for part in kept:
        if not any(_times_meet(part, p) for p in added):
            continue
        if part.external or part.devices is None or any(d is None for d in devices):
            raise DataError(
                f"{statement} on {options.path}: duplicate rows may be written: part "
                f"'{part.path}', which the {statement} did not read, has no per-device "
                "statistics to show it shares no (TAG values, time) with the rows written; "
                "nothing was committed"
            )
        losing = duplicates_to_drop(
            io,
            [*urls, ownership.part_url(options.path, part)],
            [*(d for d in devices if d is not None), part.devices],
            plan.schema,
            "last",
        )
        if losing:
            row = next(iter(losing.values())).slice(0, 1).to_pylist()[0]
            key = ", ".join(f"{c}={row[c]!r}" for c in (*plan.schema.tag_names, TIME_COLUMN))
            raise DataError(
                f"{statement} on {options.path} writes the key ({key}), which another row of "
                "the table already holds (one the statement did not change); a table with "
                "key.duplicates = last holds one row per (TAG values, time): delete that row "
                "first, or leave the key as it is; nothing was committed"
            )


def _times_meet(a: PartFile, b: PartFile) -> bool:
    """Whether the time ranges of ``a`` and ``b`` meet (unknown ranges do)."""
    if None in (a.min_time, a.max_time, b.min_time, b.max_time):
        return True
    assert a.min_time is not None and a.max_time is not None
    assert b.min_time is not None and b.max_time is not None
    return a.min_time <= b.max_time and b.min_time <= a.max_time


def _commit_rewrite(
    plan: WritePlan,
    options: WriteOptions,
    job: str,
    parts: list[PartFile],
    counts: RowCounts | None,
    write_id: str | None,
    *,
    unchanged: bool = False,
) -> None:
    """One commit that replaces the parts a copy-on-write read (``rewriteParts`` of version
    ``rewriteVersion``) with ``parts``, its rows as Spark computed them; with ``unchanged``
    (the statement changed no row), one that only evolves the schema, when ``mergeSchema``
    does, else none.

    The commit is made against the version read: a concurrent commit that removed one of
    those parts conflicts, concurrent appends do not. The new parts take the largest key
    sequence of the parts they replace (as OPTIMIZE's and DELETE's rewrites do), so in a
    ``key.duplicates = last`` table a row a concurrent commit wrote after that version still
    replaces the rewritten one.

    With ``rewriteDuplicates = replace`` no part is replaced (``rewriteParts`` is empty):
    the written rows are a ``key.duplicates = last`` table's updated rows only, a write of
    its own whose rows replace the table's rows of their keys by the key rule (the key
    sequence of this commit), as ``Catalog.sql``'s UPDATE of such a table appends them. The
    commit is still made against the version read, as an UPDATE: a concurrent commit that
    changed the rows it read or writes conflicts
    (:mod:`~tsfile_catalog.metadata.manifest.footprint`).

    ``counts`` (Spark's, when it gave them) and ``rewriteParameters`` (the statement's
    ``predicate`` and ``set``) go into the history as ``Catalog.sql``'s statements record
    theirs (one that changed no row never gets here: :func:`commit_write`
    commits nothing for it). ``write_id`` is recorded as
    ``writeId``: the plugin's statement result finds its commit by it.

    Raises:
        CommitConflictError: the table was dropped and recreated, or a concurrent commit
            removed or rewrote a part read; nothing was committed.
    """
    assert options.rewrite_parts is not None and options.rewrite_operation is not None
    io = FileIO(options.path, options.storage_options)
    try:
        read = resolve_snapshot(io, options.path, version=options.rewrite_version)
    except (TableNotFoundError, VersionNotFoundError) as e:
        raise CommitConflictError(
            f"{options.rewrite_operation} on {options.path}: version {options.rewrite_version}, "
            f"which it read, is gone ({e}); nothing was committed: retry the statement"
        ) from e
    if read.table_uuid != plan.table_uuid:
        raise CommitConflictError(
            f"{options.rewrite_operation} on {options.path}: the statement read table "
            f"{plan.table_uuid}, but the location holds table {read.table_uuid} now (dropped "
            "or recreated while it ran); nothing was committed: retry the statement"
        )
    by_path = {p.path: p for p in read.parts}
    removed = [] if unchanged else [by_path[path] for path in options.rewrite_parts]
    added = [p.rewritten_from(removed) for p in parts]
    # A MERGE WITH SCHEMA EVOLUTION's rows (mergeSchema): their new columns and widenings
    # come with them, in this commit (one the schema changed concurrently conflicts).
    schema = merge_schema(read.schema, plan.schema, merge=options.merge_schema)
    if not removed and not added and schema == read.schema:
        return  # a statement that matched no row (Spark's run-time filter read no part)
    if options.rewrite_duplicates == "error" and options.rewrite_operation != "DELETE":
        # (``replace``: the written rows replace the kept parts' rows of their keys.)
        replaced = set(options.rewrite_parts)
        kept = [p for p in read.parts if p.path not in replaced]
        _refuse_keys_kept(io, plan, options, added, kept)
    actions: list[Action] = [RemovePart(p.path, p.row_count, p.size_bytes) for p in removed]
    if schema != read.schema:
        actions.insert(0, SetSchema(schema, read.schema_id + 1))
    actions.extend(AddPart(p) for p in added)
    commit(
        io,
        options.path,
        actions,
        read=read,
        operation=Operation(options.rewrite_operation),
        operation_parameters={
            # The statement's predicate and SET, as Catalog.sql's own records them.
            **options.rewrite_parameters,
            "job": job,
            "numRemovedFiles": str(len(removed)),
            "numAddedFiles": str(len(added)),
            "numCopiedOrUpdatedRows": str(sum(p.row_count for p in added)),
            **_recorded(counts, options),
            **({} if write_id is None else {"writeId": write_id}),
        },
        data_change=True,
    )


def _recorded(counts: RowCounts | None, options: WriteOptions) -> dict[str, str]:
    """The history's counts of a row-level write: Spark's, without ``numCopiedRows`` where
    no part was replaced (a delta or an insert-only MERGE copies no row: it writes the
    changed rows only, as ``Catalog.sql``'s own statements, which record none)."""
    if counts is None:
        return {}
    if not options.rewrite_parts:
        counts = dataclasses.replace(counts, copied=None)
    return counts.parameters()
