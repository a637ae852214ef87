"""Planning a write: the incoming columns checked against the options and the table, once.

:func:`plan_write` turns the columns a write receives (a DataFrame's, through
:func:`~tsfile_catalog.datasource.types.spark_columns`, or Arrow data's, through
:func:`~tsfile_catalog.write.arrow.arrow_columns`) into a :class:`WritePlan`; the same rules
refuse the same data whichever path wrote it. The ``replaceWhere`` checks live here too: the
predicate bound to the written schema, and the rule that every written row matches it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import pyarrow as pa

from tsfile_catalog.exceptions import (
    DataError,
    OptionError,
    PredicateError,
    SchemaError,
    UnsupportedTypeError,
)
from tsfile_catalog.formats.tsfile import validate_encoding
from tsfile_catalog.metadata.expressions import (
    BindContext,
    Expr,
    TimestampAs,
    TimeUnit,
    bind,
    needs_time_zone,
)
from tsfile_catalog.metadata.expressions.parser import parse_predicate
from tsfile_catalog.metadata.schema import TIME_COLUMN, Category, Column, DataType, TableSchema
from tsfile_catalog.metadata.schema_merge import merge_schema
from tsfile_catalog.metadata.table_time import table_unit, time_properties, written_properties
from tsfile_catalog.options import WriteOptions, check_tag_columns
from tsfile_catalog.table.rewrite import without_matching
from tsfile_catalog.write.arrow import IncomingColumn

if TYPE_CHECKING:
    from tsfile_catalog.table.handle import Table

__all__ = [
    "WritePlan",
    "plan_write",
    "check_write_mode",
    "replace_predicate",
    "check_replaced",
]


@dataclass(frozen=True)
class WritePlan:
    """How incoming columns become a TsFile table: validated once, before any row is read."""

    schema: TableSchema
    time_source: str
    sources: tuple[str, ...]  # incoming column name per ``schema.columns`` entry
    # The table the write was planned against (None: it creates one). The commit refuses to
    # land in another table, should this one be dropped and recreated while tasks run.
    table_uuid: str | None = None
    # How the data shows ``time`` (a timestamp or a long): what ``replaceWhere`` compares
    # against, as Spark would evaluate it on these rows.
    timestamp_as: TimestampAs = "long"
    # The unit of the raw times written: the table's own (metadata/table_time.py), else the
    # ``timestampPrecision`` option. Every step of the write converts with this one.
    unit: TimeUnit = "ms"

    def new_table_properties(self) -> dict[str, str]:
        """What a table this write creates records about its time (nothing when the write
        goes into an existing table, whose own time was planned with)."""
        if self.table_uuid is not None:
            return {}
        return time_properties(self.unit, self.timestamp_as)


def check_write_mode(options: WriteOptions, overwrite: bool) -> None:
    """Refuse options that contradict the write's mode.

    Raises:
        OptionError: naming the option.
    """
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


def plan_write(
    incoming: Sequence[IncomingColumn], options: WriteOptions, current: Table | None
) -> WritePlan:
    """Check the incoming columns against the options and ``current``, the table at the
    write's path (None: the write creates one).

    Raises:
        OptionError, SchemaError, UnsupportedTypeError: naming the column or option at fault.
    """
    by_lower: dict[str, str] = {}
    for column in incoming:
        lowered = column.name.lower()
        if lowered in by_lower:
            raise SchemaError(
                f"columns '{by_lower[lowered]}' and '{column.name}' collide: TsFile column "
                "names are case-insensitive"
            )
        by_lower[lowered] = column.name
    by_name = {c.name: c for c in incoming}

    def source(name: str, option: str) -> str:
        lowered = name.lower()
        if lowered not in by_lower:
            raise OptionError(
                f"option '{option}' names column '{name}', which the DataFrame does not have "
                f"(it has {', '.join(c.name for c in incoming)})"
            )
        return by_lower[lowered]

    def stored_type(name: str) -> DataType:
        column = by_name[name]
        if column.type is None:
            raise UnsupportedTypeError(column.unsupported)
        return column.type

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
    time_column = by_name[time_source]
    if time_column.type not in (DataType.INT64, DataType.INT32, DataType.TIMESTAMP):
        raise UnsupportedTypeError(
            f"time column '{time_source}' is {time_column.type_name}; it must be "
            "bigint, int or timestamp"
        )
    tag_sources = [source(t, "tagColumns") for t in tags]
    taken = {time_source, *tag_sources}
    if options.field_columns is not None:
        field_sources = [source(f, "fieldColumns") for f in options.field_columns]
        extra = [c.name for c in incoming if c.name not in taken | set(field_sources)]
        if extra:
            raise OptionError(
                f"column(s) {', '.join(extra)} are in neither 'timeColumn', 'tagColumns' nor "
                "'fieldColumns'; select them away or list them"
            )
    else:
        field_sources = [c.name for c in incoming if c.name not in taken]
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
        if by_name[name].type is not DataType.STRING:
            raise UnsupportedTypeError(
                f"TAG column '{name}' is {by_name[name].type_name}; TAG columns must be "
                "strings (cast it)"
            )
        columns.append(Column(name.lower(), DataType.STRING, Category.TAG))
    for name in field_sources:
        columns.append(Column(name.lower(), stored_type(name), Category.FIELD))
    if existing is None:
        # A new table is shown in the order the data has, ``time`` where its source is (as
        # a Parquet or Delta table a DataFrame creates); part files keep the canonical one.
        taken_sources = {time_source, *tag_sources, *field_sources}
        shown = [
            TIME_COLUMN if c.name == time_source else c.name.lower()
            for c in incoming
            if c.name in taken_sources
        ]
        schema = TableSchema.declared(table, columns, shown)
    else:
        schema = TableSchema.of(table, columns)
    validate_encoding(schema, options.settings())
    if existing is not None:
        merged = merge_schema(existing, schema, merge=options.merge_schema)
        # The parts hold each column under the table's physical name for it (a renamed
        # column keeps its own; a column added back after a drop has a fresh one).
        schema = _identified(schema, merged)
    unit = (
        options.precision
        if current is None
        else table_unit(
            current.properties,
            options.precision if options.precision_given else None,
            table=options.path,
            option="option 'timestampPrecision'",
        )
    )
    plan = WritePlan(
        schema,
        time_source,
        (*tag_sources, *field_sources),
        None if current is None else current.table_uuid,
        "timestamp" if time_column.timestamp else "long",
        unit,
    )
    if options.replace_where is not None:
        # Parse and bind now, so a bad predicate fails before any row is written.
        replace_predicate(plan, options, options.time_zone)
    # The statement's table properties are committed with the rows: refused now, as the
    # commit would refuse them, so that no row is written for nothing.
    written_properties(
        None if current is None else current.properties,
        plan.new_table_properties(),
        options.table_properties,
        table=options.path,
    )
    return plan


def _identified(written: TableSchema, table: TableSchema) -> TableSchema:
    """The written columns (their own types) with the ids and physical names ``table``
    gives them."""
    columns = []
    for col in written.columns:
        known = table.column(col.name)
        if known is not None:
            col = replace(col, id=known.id, physical_name=known.physical_name)
        columns.append(col)
    return TableSchema(table=written.table, columns=tuple(columns))


def replace_predicate(
    plan: WritePlan, options: WriteOptions, time_zone: str | None, *, exact: bool = False
) -> Expr:
    """The ``replaceWhere`` predicate bound to the written schema (``time_zone`` None:
    comparisons that need one stay approximate, unless ``exact``, which refuses them).

    Raises:
        OptionError: naming the option, when the predicate cannot be parsed or bound, or
            (``exact``) needs a time zone nobody gave.
    """
    text = options.replace_where
    assert text is not None
    context = BindContext(unit=plan.unit, timestamp_as=plan.timestamp_as, time_zone=time_zone)
    try:
        bound = bind(parse_predicate(text), plan.schema, context)
    except PredicateError as e:
        raise OptionError(f"option 'replaceWhere' = {text!r}: {e}") from e
    if exact and needs_time_zone(bound):
        raise OptionError(
            f"option 'replaceWhere' = {text!r} compares with a time whose instant depends on "
            "the session time zone, which the write was not given; set the 'timeZone' write "
            "option (in Spark, or spark.sql.session.timeZone)"
        )
    return bound


def check_replaced(raw: pa.Table, predicate: Expr, options: WriteOptions) -> None:
    """Every row a replaceWhere overwrite writes must match its predicate (Delta's rule):
    otherwise the write would add rows outside what it replaces.

    Raises:
        DataError: showing the first row outside the predicate.
    """
    outside = without_matching(_raw_domain(raw), predicate)
    if outside.num_rows:
        row = outside.slice(0, 1).to_pylist()[0]
        raise DataError(
            f"option 'replaceWhere' = {options.replace_where!r}: the written row "
            f"{row} does not match it; every row of a replaceWhere overwrite must (nothing "
            "was committed)"
        )


def _raw_domain(raw: pa.Table) -> pa.Table:
    """Writer-typed rows in the raw domain predicates are bound to (TIMESTAMP as int64)."""
    out = raw
    for index, arrow_field in enumerate(raw.schema):
        if pa.types.is_timestamp(arrow_field.type):
            out = out.set_column(index, arrow_field.name, raw.column(index).cast(pa.int64()))
    return out
