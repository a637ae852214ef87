"""OPTIMIZE and DELETE: the verbs that rewrite parts.

Which parts go together (OPTIMIZE) or which rows go (DELETE) is decided by the pure plans of
:mod:`tsfile_catalog.metadata.compaction`; the rows are read and the new parts staged and
committed by :mod:`tsfile_catalog.table.rewrite`, in this process. Both work on an open
:class:`~tsfile_catalog.table.handle.Table` (its version is the one rewritten): it is
``table.maintenance.optimize()`` and ``table.delete()``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from tsfile_catalog.exceptions import OptionError, PredicateError
from tsfile_catalog.metadata.compaction import plan_compaction, plan_removal
from tsfile_catalog.metadata.compaction import target_file_size as target_file_size_of
from tsfile_catalog.metadata.expressions import (
    Expr,
    TimestampAs,
    TimeUnit,
    columns_of,
    needs_time_zone,
)
from tsfile_catalog.metadata.key import close_over_key_overlap, key_mode, merge_groups
from tsfile_catalog.metadata.manifest import Operation
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import TIME_COLUMN
from tsfile_catalog.progress import Progress

if TYPE_CHECKING:
    from tsfile_catalog.formats.tsfile import WriteSettings
    from tsfile_catalog.table.handle import Table
    from tsfile_catalog.table.rewrite import PartRewrites, RewriteJob, RowRemoval
    from tsfile_catalog.table.rewrite_tasks import TaskRunner

__all__ = ["DeleteResult", "OptimizeResult", "bind_exact", "delete", "optimize"]


@dataclass(frozen=True)
class OptimizeResult:
    """What OPTIMIZE did. ``version`` is None when nothing needed compacting (no commit)."""

    version: int | None
    files_removed: int
    files_added: int
    bytes_removed: int
    bytes_added: int
    rows: int  # rows rewritten: the same rows, now in ``files_added`` parts


@dataclass(frozen=True)
class DeleteResult:
    """What DELETE did. ``version`` is None when no row matched (no commit)."""

    version: int | None
    num_deleted_rows: int
    files_removed: int
    files_added: int
    files_dropped: int  # removed in metadata only: every row matched
    files_rewritten: int  # rewritten without the matching rows


def optimize(
    table: Table,
    *,
    where: str | Expr | None = None,
    target_file_size: int | None = None,
    settings: WriteSettings | None = None,
    unit: TimeUnit = "ms",
    timestamp_as: TimestampAs = "long",
    time_zone: str | None = None,
    progress: Progress | None = None,
    runner: TaskRunner | None = None,
) -> OptimizeResult:
    """Compact small TsFile parts into parts of about ``target_file_size`` bytes.

    Which parts go together is :func:`~tsfile_catalog.metadata.compaction.plan_compaction`'s
    pure plan: the table's own TsFile parts below 3/4 of the target (external parts and parts
    near the target stay), packed in time order whatever their time ranges; each group's rows
    are read through the shared read path and written, sorted by device then time, as one new
    TsFile (:func:`~tsfile_catalog.table.compact.compact_parts`), in this process or, given
    a ``runner``, each group in a Spark task; this process commits. In a
    ``key.duplicates = last`` table every part a read must merge is rewritten too, with the
    parts that may share a key with it, keeping the latest row of each (device, time): no
    slice overlaps afterwards and reads need no merge; in a ``keep`` table parts that repeat
    a (device, time) keep both rows, in one new part per repeat. New parts keep the key
    sequence of the rows they hold (:meth:`PartFile.rewritten_from`). One commit
    (operation ``OPTIMIZE``, ``data_change`` false) removes the old parts and adds the new
    ones; the old files stay for time travel until VACUUM. Concurrent
    appends keep working (the commit rebases on them); a concurrent commit that removed one
    of the rewritten parts makes it fail with :class:`CommitConflictError`, with nothing
    committed.

    Args:
        table: the table; its version is the one compacted.
        where: limit the candidates to parts that may hold rows matching this predicate on
            ``time`` and TAG columns (Spark SQL or a bound-able expression); the parts are
            still rewritten whole.
        target_file_size: bytes; default the table property ``targetFileSize``, else 128 MiB.
        settings: the TsFile writer's compression and encoding (a catalog table passes its
            stored write options); default ZSTD and the per-type default encodings.
        unit, timestamp_as, time_zone: how ``where`` binds (see :meth:`Table.plan`).
        progress: called as ``progress(done, total)`` after each group is rewritten (in
            this process only).
        runner: where the groups' rewrites run (:mod:`tsfile_catalog.table.rewrite_tasks`):
            by default one after another in this process; ``SparkTasks(spark)`` spreads
            them over Spark tasks, each staging its parts, and this process commits.

    Raises:
        OptionError: ``target_file_size`` or the ``targetFileSize`` property is not a positive
            integer.
        PredicateError: ``where`` cannot be parsed, or reads a FIELD column.
        CommitConflictError: a concurrent commit removed a part this one rewrote.
    """
    try:
        target = target_file_size_of(dict(table.properties), target_file_size)
    except ValueError as e:
        raise OptionError(str(e)) from e
    everything = table.parts()
    candidates = everything
    if where is not None:
        plan = table.plan(where, unit=unit, timestamp_as=timestamp_as, time_zone=time_zone)
        allowed = {TIME_COLUMN, *table.schema.tag_names}
        others = sorted(columns_of(plan.filter) - allowed)
        if others:
            raise PredicateError(
                f"OPTIMIZE WHERE may only read time and TAG columns; it reads FIELD column "
                f"'{others[0]}'"
            )
        candidates = list(plan.parts)
    mode = key_mode(table.properties)
    compaction = plan_compaction(candidates, target_size=target, key=mode, table_parts=everything)
    if not compaction.groups:
        return OptimizeResult(None, 0, 0, 0, 0, 0)
    # Imported here: the rewrite machinery loads pyarrow and the TsFile writer, which the
    # metadata-only verbs beside this one (and every importer of the Table) must not pay for.
    from tsfile_catalog.table.rewrite import RewriteJob, TableParts
    from tsfile_catalog.table.rewrite_tasks import CompactionTask, run_in_process

    # Rows are read in commit order, so where parts repeat a (device, time) the earlier row
    # lands in the first new part.
    order = {p.path: i for i, p in enumerate(everything)}
    with RewriteJob(table, settings) as job:
        source = TableParts.of(table)
        tasks = [
            CompactionTask(
                source,
                tuple(sorted(group.parts, key=lambda p: order[p.path])),
                compaction.resolve_keys,
                target,
                job.settings,
                job.job,
                index,
            )
            for index, group in enumerate(compaction.groups)
        ]
        outcomes = sorted((runner or run_in_process(progress))(tasks), key=lambda o: o.index)
        removed_parts: list[PartFile] = []
        for outcome in outcomes:
            if outcome.rewritten:
                removed_parts.extend(tasks[outcome.index].parts)
                job.adopt(outcome.staged)
        if not removed_parts:
            return OptimizeResult(None, 0, 0, 0, 0, 0)
        removed = tuple(removed_parts)
        parameters = {
            "targetFileSize": str(target),
            "numRemovedFiles": str(len(removed)),
            "numAddedFiles": str(len(job.staged)),
            "job": job.job,
        }
        if where is not None:
            parameters["predicate"] = where if isinstance(where, str) else repr(where)
        snapshot = job.commit(
            removed, operation=Operation.OPTIMIZE, parameters=parameters, data_change=False
        )
        added = job.staged
    return OptimizeResult(
        version=snapshot.version,
        files_removed=len(removed),
        files_added=len(added),
        bytes_removed=sum(p.size_bytes for p in removed),
        bytes_added=sum(s.part.size_bytes for s in added),
        rows=sum(s.part.row_count for s in added),
    )


def delete(
    table: Table,
    where: str | Expr | None,
    *,
    predicate: str | None = None,
    settings: WriteSettings | None = None,
    unit: TimeUnit = "ms",
    timestamp_as: TimestampAs = "long",
    time_zone: str | None = None,
    progress: Progress | None = None,
    runner: TaskRunner | None = None,
) -> DeleteResult:
    """Delete the rows where ``where`` is TRUE (None: every row), in one ``DELETE`` commit.

    ``where`` means what it means to Spark over the table's scan (``unit``, ``timestamp_as``,
    ``time_zone`` as for :meth:`Table.plan`; a catalog passes the session time zone). Parts
    whose statistics prove every row matches are removed in metadata only; parts that may
    hold some matching rows are rewritten without them (copy-on-write: one new part per
    rewritten part); the old files stay for time travel until VACUUM. Concurrent appends
    rebase (their rows are not deleted: they commit after the delete); a concurrent commit
    that removed a part this one removes conflicts.

    In a ``key.duplicates = last`` table whose matching rows may share keys with other
    writes' rows, ``where`` is judged on the rows reads show (the newest per key), and a
    matching key is removed from every part that holds it: an older row of the key must not
    come back once the newest is gone. ``num_deleted_rows`` counts the rows reads showed.

    External parts are never modified and a DELETE is never refused for them (Delta's and
    Iceberg's rule for any data file): one holding matching rows leaves the manifest, and
    its other rows go into a new TsFile part of the table's own. The external file stays
    byte-identical and the user's: no VACUUM or purge deletes it, and older versions still
    read it.

    The history records ``predicate`` (default: ``where``'s text, ``true`` for None): a
    caller deleting by a rewritten condition records the one its user wrote.

    With a ``runner`` (``SparkTasks(spark)``), the parts are rewritten in tasks, each
    rewriting a batch of parts of about the table's ``targetFileSize`` bytes (at least as
    many batches as the runner's slots when there are that many parts; each part still
    becomes its own new part), and this process commits; a ``last`` table's removal of keys
    across overlapping parts judges the rows reads show in this process, then removes the
    matching keys from their parts in tasks.

    Raises:
        PredicateError: ``where`` cannot be parsed or bound, or needs a time zone it was not
            given.
        OptionError: with a ``runner``, the ``targetFileSize`` property is not a positive
            integer.
        CommitConflictError: a concurrent commit removed a part this one removes.
    """
    bound = bind_exact(table, where, unit=unit, timestamp_as=timestamp_as, time_zone=time_zone)
    # Imported here, as in optimize: pyarrow and the TsFile writer load only when rows go.
    from tsfile_catalog.table.rewrite import RewriteJob, remove_matching_rows
    from tsfile_catalog.table.rewrite_tasks import part_rewrites

    with RewriteJob(table, settings) as job:
        overlapping = _overlapping_candidates(table, bound)
        rewrite = None if runner is None else part_rewrites(job, runner)
        if overlapping is None or bound is None:
            removal = remove_matching_rows(job, bound, progress=progress, rewrite=rewrite)
        else:
            removal = _remove_latest_matching(job, bound, overlapping, rewrite)
        if not removal.removed:
            return DeleteResult(None, 0, 0, 0, 0, 0)
        parameters = {
            "predicate": _recorded_predicate(where, predicate),
            "numDeletedRows": str(removal.deleted_rows),
            "job": job.job,
        }
        snapshot = job.commit(
            removal.removed, operation=Operation.DELETE, parameters=parameters, data_change=True
        )
        return DeleteResult(
            version=snapshot.version,
            num_deleted_rows=removal.deleted_rows,
            files_removed=len(removal.removed),
            files_added=len(job.staged),
            files_dropped=removal.dropped,
            files_rewritten=removal.rewritten,
        )


def _overlapping_candidates(table: Table, bound: Expr | None) -> list[PartFile] | None:
    """For a ``key.duplicates = last`` table whose parts that may hold matching rows share
    keys with other writes' parts: those parts and every part sharing a key with them
    (transitively). None when rows can be judged part by part (a ``keep`` table, no
    predicate, or no such overlap)."""
    if bound is None or key_mode(table.properties) != "last":
        return None
    parts = table.parts()
    plan = plan_removal(parts, bound, table.schema)
    touched = {p.path for p in (*plan.drop, *plan.rewrite)}
    chosen = [i for i, p in enumerate(parts) if p.path in touched]
    closed = [parts[i] for i in sorted(close_over_key_overlap(parts, chosen))]
    return closed if merge_groups(closed) else None


def _remove_latest_matching(
    job: RewriteJob, bound: Expr, parts: list[PartFile], rewrite: PartRewrites | None
) -> RowRemoval:
    """Remove the keys whose *current* row (the newest among ``parts``) matches ``bound``
    from every part holding them: judged row by row, a FIELD predicate that matches the
    newest row but not an older one would delete the newest and bring the older back."""
    # Imported here, as the rewrite machinery is (pyarrow loads only when rows go).
    from tsfile_catalog.table.keyed import keys_of, latest_rows, remove_keys
    from tsfile_catalog.table.rewrite import matches

    rows = latest_rows(job.table, parts)
    matching = rows.filter(matches(rows, bound))
    removal = remove_keys(
        job, keys_of(matching, job.table.schema), parts, rewrite=rewrite, replace_external=True
    )
    # The rows reads showed, not the older rows of the same keys that went with them.
    return replace(removal, deleted_rows=matching.num_rows)


def _predicate_text(where: str | Expr) -> str:
    return where if isinstance(where, str) else repr(where)


def _recorded_predicate(where: str | Expr | None, predicate: str | None) -> str:
    """The predicate a DELETE's history records: ``predicate`` when given, else ``where``'s."""
    if predicate is not None:
        return predicate
    return "true" if where is None else _predicate_text(where)


def bind_exact(
    table: Table,
    where: str | Expr | None,
    *,
    unit: TimeUnit,
    timestamp_as: TimestampAs,
    time_zone: str | None,
) -> Expr | None:
    """``where`` bound for row-level evaluation: a predicate that needs a time zone it was
    not given may prune but cannot decide which rows go."""
    if where is None:
        return None
    plan = table.plan(where, unit=unit, timestamp_as=timestamp_as, time_zone=time_zone)
    if needs_time_zone(plan.filter):
        raise PredicateError(
            f"{_predicate_text(where)!r} compares with a time whose instant depends on the "
            "time zone; pass time_zone (a catalog passes spark.sql.session.timeZone)"
        )
    return plan.filter
