"""The batch writer: tasks stage sorted part files, the driver publishes them in one commit.

Two-phase and all-or-nothing: ``write()`` (an executor) writes ``part-*.tsfile`` files under
``_staging/<job>/<partition>-<attempt>/`` and returns their statistics; ``commit()`` (the
driver, another process) resolves duplicate rows across the parts (``onDuplicate`` holds for
the whole write, see :mod:`~tsfile_catalog.datasource.duplicates`), moves them into the table
and makes one manifest commit; ``abort()`` and any failure delete what was staged. Nothing is
visible to readers before the commit.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType, TimestampType

from tsfile_catalog.datasource.options import WriteOptions, check_tag_columns
from tsfile_catalog.datasource.reader import _session_time_zone
from tsfile_catalog.datasource.staging import (
    StagedPart,
    TsFileCommitMessage,
    publish_and_commit,
    remove_staging,
    stage_task,
    staged_parts,
)
from tsfile_catalog.datasource.types import tsfile_type_of
from tsfile_catalog.discovery import has_manifest, list_tsfiles
from tsfile_catalog.exceptions import (
    CommitConflictError,
    DataError,
    OptionError,
    PredicateError,
    SchemaError,
    TableNotFoundError,
    UnsupportedTypeError,
)
from tsfile_catalog.formats.tsfile import validate_encoding
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.completeness import (
    interval_complete_until,
    parse_complete_until,
    watermark_interval,
)
from tsfile_catalog.metadata.expressions import (
    BindContext,
    Expr,
    TimestampAs,
    bind,
    needs_time_zone,
)
from tsfile_catalog.metadata.expressions.parser import parse_predicate
from tsfile_catalog.metadata.manifest import Action, AddPart, Operation, SetSchema
from tsfile_catalog.metadata.ownership import new_job_id
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema
from tsfile_catalog.metadata.schema_merge import merge_schema
from tsfile_catalog.table import Table, append_parts, open_table
from tsfile_catalog.table.rewrite import (
    RewriteJob,
    remove_matching_rows,
    without_matching,
)

__all__ = ["WritePlan", "plan_write", "TsFileBatchWriter", "StagedPart", "TsFileCommitMessage"]


@dataclass(frozen=True)
class WritePlan:
    """How incoming Spark columns become a TsFile table: validated once, on the driver."""

    schema: TableSchema
    time_source: str
    sources: tuple[str, ...]  # incoming column name per ``schema.columns`` entry
    # The table the write was planned against (None: it creates one). The commit refuses to
    # land in another table, should this one be dropped and recreated while tasks run.
    table_uuid: str | None = None
    # How the DataFrame shows ``time`` (a Spark timestamp or a long): what ``replaceWhere``
    # compares against, as Spark would evaluate it on these rows.
    timestamp_as: TimestampAs = "long"


def existing_table(options: WriteOptions) -> Table | None:
    io = FileIO(options.path, options.storage_options)
    if not has_manifest(io, options.path):
        if io.exists(options.path) and io.isdir(options.path):
            _, files = list_tsfiles(io, options.path)
            if files:
                raise TableNotFoundError(
                    f"{options.path} holds TsFiles but no table manifest; adopt it first with "
                    "tsfile_catalog.adopt_table(path) so its existing files stay visible"
                )
        return None
    try:
        return open_table(options.path, storage_options=options.storage_options)
    except TableNotFoundError:
        # A manifest folder without a commit: the table's first commit was killed. This
        # write creates the table; files the killed one left behind are vacuum's orphans.
        return None


def plan_write(spark_schema: StructType, options: WriteOptions) -> WritePlan:
    """Check the DataFrame against the options (and the table, if one exists).

    Raises:
        OptionError, SchemaError, UnsupportedTypeError: naming the column or option at fault.
    """
    by_lower: dict[str, str] = {}
    for field in spark_schema.fields:
        lowered = field.name.lower()
        if lowered in by_lower:
            raise SchemaError(
                f"columns '{by_lower[lowered]}' and '{field.name}' collide: TsFile column names "
                "are case-insensitive"
            )
        by_lower[lowered] = field.name
    fields_by_name = {f.name: f for f in spark_schema.fields}

    def source(name: str, option: str) -> str:
        lowered = name.lower()
        if lowered not in by_lower:
            raise OptionError(
                f"option '{option}' names column '{name}', which the DataFrame does not have "
                f"(it has {', '.join(f.name for f in spark_schema.fields)})"
            )
        return by_lower[lowered]

    current = existing_table(options)
    existing = None if current is None else current.schema
    table = options.table or (existing.table if existing else None)
    if table is None:
        raise OptionError("option 'table' is required to create a table (the TsFile table name)")
    if existing is not None and table.lower() != existing.table:
        raise OptionError(
            f"option 'table' = {table!r} but the table at {options.path} is '{existing.table}'"
        )
    tags = check_tag_columns(
        options.tag_columns or (existing.tag_names if existing else None),
        time_column=options.time_column,
    )

    time_source = source(options.time_column, "timeColumn")
    time_field = fields_by_name[time_source]
    if tsfile_type_of(time_field) not in (DataType.INT64, DataType.INT32, DataType.TIMESTAMP):
        raise UnsupportedTypeError(
            f"time column '{time_source}' is {time_field.dataType.simpleString()}; it must be "
            "bigint, int or timestamp"
        )
    tag_sources = [source(t, "tagColumns") for t in tags]
    taken = {time_source, *tag_sources}
    if options.field_columns is not None:
        field_sources = [source(f, "fieldColumns") for f in options.field_columns]
        extra = [f.name for f in spark_schema.fields if f.name not in taken | set(field_sources)]
        if extra:
            raise OptionError(
                f"column(s) {', '.join(extra)} are in neither 'timeColumn', 'tagColumns' nor "
                "'fieldColumns'; select them away or list them"
            )
    else:
        field_sources = [f.name for f in spark_schema.fields if f.name not in taken]
    for name in field_sources:
        if "," in name:
            # Column lists travel as comma-separated options (columns, tagColumns): a stored
            # name holding a comma could never be projected or named again.
            raise SchemaError(
                f"column '{name}' contains a comma, which TsFile table column names may not "
                "hold here (they are passed in comma-separated options); rename it"
            )
    columns = []
    for name in tag_sources:
        if tsfile_type_of(fields_by_name[name]) is not DataType.STRING:
            raise UnsupportedTypeError(
                f"TAG column '{name}' is {fields_by_name[name].dataType.simpleString()}; TAG "
                "columns must be strings (cast it)"
            )
        columns.append(Column(name.lower(), DataType.STRING, Category.TAG))
    for name in field_sources:
        columns.append(Column(name.lower(), tsfile_type_of(fields_by_name[name]), Category.FIELD))
    schema = TableSchema.of(table, columns)
    validate_encoding(schema, options.settings())
    if existing is not None:
        merge_schema(existing, schema, merge=options.merge_schema)
    plan = WritePlan(
        schema,
        time_source,
        (*tag_sources, *field_sources),
        None if current is None else current.table_uuid,
        "timestamp" if isinstance(time_field.dataType, TimestampType) else "long",
    )
    if options.replace_where is not None:
        # Parse and bind now, so a bad predicate fails before any task runs.
        replace_predicate(plan, options, options.time_zone)
    return plan


def replace_predicate(plan: WritePlan, options: WriteOptions, time_zone: str | None) -> Expr:
    """The ``replaceWhere`` predicate bound to the written schema (``time_zone`` None:
    comparisons that need one stay approximate).

    Raises:
        OptionError: naming the option, when the predicate cannot be parsed or bound.
    """
    text = options.replace_where
    assert text is not None
    context = BindContext(
        unit=options.precision, timestamp_as=plan.timestamp_as, time_zone=time_zone
    )
    try:
        return bind(parse_predicate(text), plan.schema, context)
    except PredicateError as e:
        raise OptionError(f"option 'replaceWhere' = {text!r}: {e}") from e


class TsFileBatchWriter(DataSourceArrowWriter):
    def __init__(self, plan: WritePlan, options: WriteOptions, overwrite: bool) -> None:
        self._plan = plan
        self._options = options
        self._overwrite = overwrite
        self._job = new_job_id()
        if options.replace_where is not None and options.complete_until is not None:
            raise OptionError(
                f"option 'completeUntil' = {options.complete_until!r} cannot be combined with "
                "'replaceWhere': such an overwrite removes rows, which no stream reads as an "
                "append; declare completeness with a later append"
            )
        if options.replace_where is not None and not overwrite:
            raise OptionError(
                f"option 'replaceWhere' = {options.replace_where!r} replaces the rows matching "
                "it, so it needs mode('overwrite'); an append would keep them"
            )

    # -- executor side --------------------------------------------------------------------

    def write(self, iterator: Iterator[pa.RecordBatch]) -> TsFileCommitMessage:
        from pyspark import TaskContext

        context = TaskContext.get()
        time_zone = self._options.time_zone or _session_time_zone()
        replace = None if self._options.replace_where is None else self._replace(time_zone)
        parts, staging = stage_task(
            iterator,
            schema=self._plan.schema,
            time_source=self._plan.time_source,
            sources=self._plan.sources,
            options=self._options,
            job=self._job,
            partition=context.partitionId() if context else 0,
            attempt=context.attemptNumber() if context else 0,
            check=None if replace is None else lambda raw: self._check_replaced(raw, replace),
        )
        return TsFileCommitMessage(parts, staging, time_zone, self._job)

    def _replace(self, time_zone: str | None) -> Expr:
        bound = replace_predicate(self._plan, self._options, time_zone)
        if needs_time_zone(bound):
            raise OptionError(
                f"option 'replaceWhere' = {self._options.replace_where!r} compares with a time "
                "whose instant depends on the session time zone, which Spark did not pass; set "
                "spark.sql.session.timeZone or the 'timeZone' write option"
            )
        return bound

    def _check_replaced(self, raw: pa.Table, predicate: Expr) -> None:
        """Every row a replaceWhere overwrite writes must match its predicate (Delta's
        rule): otherwise the write would add rows outside what it replaces."""
        outside = without_matching(_raw_domain(raw), predicate)
        if outside.num_rows:
            row = outside.slice(0, 1).to_pylist()[0]
            raise DataError(
                f"option 'replaceWhere' = {self._options.replace_where!r}: the written row "
                f"{row} does not match it; every row of a replaceWhere overwrite must (nothing "
                "was committed)"
            )

    # -- driver side ----------------------------------------------------------------------

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        io = FileIO(self._options.path, self._options.storage_options)
        try:
            publish_and_commit(
                io,
                schema=self._plan.schema,
                options=self._options,
                job=self._job,
                staged=staged_parts(messages),
                commit=lambda parts: self._commit_parts(io, parts, messages),
            )
        finally:
            remove_staging(io, self._options, [self._job])

    def _commit_parts(
        self, io: FileIO, parts: list[PartFile], messages: list[WriterCommitMessage | None]
    ) -> None:
        if self._options.replace_where is not None and self._plan.table_uuid is not None:
            self._commit_replace(io, parts, messages)
            return
        append_parts(
            self._options.path,
            parts,
            self._plan.schema,
            merge_schema=self._options.merge_schema,
            overwrite=self._overwrite,
            operation_parameters={
                "mode": "overwrite" if self._overwrite else "append",
                "job": self._job,
            },
            storage_options=self._options.storage_options,
            expected_table_uuid=self._plan.table_uuid,
            complete_until=self._complete_until(parts, messages),
        )

    def _complete_until(
        self, parts: Sequence[PartFile], messages: list[WriterCommitMessage | None]
    ) -> int | None:
        """What this commit declares complete (docs/streaming.md): the ``completeUntil``
        option, and under the table property ``watermark.interval`` the interval all the
        written rows fall into; the larger when both."""
        options = self._options
        declared: list[int] = []
        if options.complete_until is not None:
            zones = [m.time_zone for m in messages if isinstance(m, TsFileCommitMessage)]
            zone = options.time_zone or next((z for z in zones if z), None)
            declared.append(parse_complete_until(options.complete_until, options.precision, zone))
        lows = [p.min_time for p in parts if p.min_time is not None]
        highs = [p.max_time for p in parts if p.max_time is not None]
        # Only an existing table has properties (a write that creates one sets none).
        if self._plan.table_uuid is not None and lows and highs:
            table = open_table(options.path, storage_options=options.storage_options)
            interval = watermark_interval(table.properties, options.precision)
            bound = (
                None
                if interval is None
                else interval_complete_until(min(lows), max(highs), interval)
            )
            if bound is not None:
                declared.append(bound)
        return max(declared) if declared else None

    def _commit_replace(
        self, io: FileIO, parts: list[PartFile], messages: list[WriterCommitMessage | None]
    ) -> None:
        """One commit that removes the table's rows matching ``replaceWhere`` (parts wholly
        inside dropped, straddling parts rewritten without them) and adds ``parts``."""
        options = self._options
        zones = [m.time_zone for m in messages if isinstance(m, TsFileCommitMessage)]
        time_zone = options.time_zone or next((z for z in zones if z), None)
        table = open_table(options.path, storage_options=options.storage_options)
        if table.table_uuid != self._plan.table_uuid:
            raise CommitConflictError(
                f"commit to table {table.location} refused: the write was prepared against "
                f"table {self._plan.table_uuid}, but the location holds table "
                f"{table.table_uuid} now (dropped and recreated while it ran); nothing was "
                "committed: retry the write"
            )
        predicate = self._replace(time_zone)
        # The predicate was bound to the written schema; the table's rows are read in the
        # table's, which the written one may only extend (schema_merge), never contradict.
        schema = merge_schema(table.schema, self._plan.schema, merge=options.merge_schema)
        extra: list[Action] = []
        if schema != table.schema:
            extra.append(SetSchema(schema, table.schema_id + 1))
        extra.extend(AddPart(p) for p in parts)
        with RewriteJob(table, options.settings()) as job:
            removal = remove_matching_rows(job, predicate)
            job.commit(
                removal.removed,
                operation=Operation.OVERWRITE,
                parameters={
                    "mode": "overwrite",
                    "replaceWhere": options.replace_where or "",
                    "mergeSchema": "true" if options.merge_schema else "false",
                    "job": self._job,
                    "numDeletedRows": str(removal.deleted_rows),
                },
                data_change=True,
                extra=extra,
            )

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        # Failed partitions arrive as None; their attempts live under the job's staging dir.
        remove_staging(
            FileIO(self._options.path, self._options.storage_options), self._options, [self._job]
        )


def _raw_domain(raw: pa.Table) -> pa.Table:
    """Writer-typed rows in the raw domain predicates are bound to (TIMESTAMP as int64)."""
    out = raw
    for index, arrow_field in enumerate(raw.schema):
        if pa.types.is_timestamp(arrow_field.type):
            out = out.set_column(index, arrow_field.name, raw.column(index).cast(pa.int64()))
    return out
