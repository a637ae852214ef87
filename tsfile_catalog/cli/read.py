"""The read commands: describe, history, detail, parts, plan and timeline. Each answers from a
version's manifest (timeline also draws a picture); none changes the table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tsfile_catalog import inspect
from tsfile_catalog import timeline as part_timeline
from tsfile_catalog.cli import output
from tsfile_catalog.cli.context import (
    CATALOG,
    OUTPUT,
    STORAGE,
    TIME_TRAVEL,
    ZONE,
    CliContext,
    TableArg,
    command,
)
from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.inspect import Result

__all__ = ["describe", "detail", "history", "parts", "plan", "timeline"]

WhereOpt = Annotated[
    str | None, typer.Option("--where", help="A Spark SQL predicate, as the `where` option.")
]
_READ = (OUTPUT, STORAGE, CATALOG, ZONE, TIME_TRAVEL)


@command(*_READ)
def describe(
    cli: CliContext,
    table: TableArg,
    extended: Annotated[bool, typer.Option("--extended", help="Add table details.")] = False,
) -> None:
    """The columns (and with --extended the details) of a table, as DESCRIBE shows them."""
    target, opened = cli.open(table)
    result = inspect.describe(
        opened,
        extended=extended,
        name=target.name,
        timestamp_as=target.timestamp_as,
        options=target.options,
    )
    output.show(result, as_json=cli.as_json, title=f"{target.name} @ version {opened.version}")


@command(OUTPUT, STORAGE, CATALOG)
def history(
    cli: CliContext,
    table: TableArg,
    limit: Annotated[int | None, typer.Option("--limit", "-n", help="Newest N only.")] = None,
) -> None:
    """The table's commits, newest first (DESCRIBE HISTORY); times in UTC."""
    target, opened = cli.open(table)
    if limit is not None and limit < 1:
        raise OptionError(f"--limit must be at least 1, got {limit}")
    result = inspect.describe_history(opened, limit=limit)
    output.show(result, as_json=cli.as_json, title=target.name, hide=("engine_info",))


@command(*_READ)
def detail(cli: CliContext, table: TableArg) -> None:
    """One summary of a version: location, parts, rows, size, time range (DESCRIBE DETAIL)."""
    target, opened = cli.open(table)
    result = inspect.describe_detail(
        opened, name=target.name, timestamp_as=target.timestamp_as, options=target.options
    )
    output.show(result, as_json=cli.as_json, unit=target.unit, vertical=True)


@command(*_READ)
def parts(cli: CliContext, table: TableArg, where: WhereOpt = None) -> None:
    """The parts of a version; with --where, whether a scan keeps or prunes each one."""
    target, opened = cli.open(table)
    plan = cli.plan(target, opened, where)
    result = inspect.planned_parts(opened, plan)
    footer = f"{len(result.rows)} parts: {len(plan.parts)} kept, {len(plan.pruned)} pruned"
    output.show(
        result,
        as_json=cli.as_json,
        unit=target.unit,
        title=f"{target.name} @ version {opened.version}",
        hide=("format", "external"),
        footer=footer,
    )


@command(*_READ)
def plan(
    cli: CliContext,
    table: TableArg,
    where: Annotated[str, typer.Option("--where", help="A Spark SQL predicate to plan.")],
    columns: Annotated[
        str | None, typer.Option("--columns", help="Comma-separated columns to read.")
    ] = None,
) -> None:
    """The parts a scan with --where opens and prunes, as EXPLAIN PARTS shows them, and
    which opened parts it reads merged (``merge``: one label per group of parts holding rows
    of the same devices and times from different writes, ``m1:3`` for 3 devices)."""
    target, opened = cli.open(table)
    chosen = None if columns is None else [c.strip() for c in columns.split(",") if c.strip()]
    for name in chosen or ():
        if name not in opened.schema.names:
            raise OptionError(
                f"--columns: no column {name!r} in {target.name} "
                f"(columns: {', '.join(opened.schema.names)})"
            )
    scan = cli.plan(target, opened, where)
    explained = inspect.explain_rows(0, target.name, None, opened, scan, chosen, where)
    # Which opened parts a read merges by the table key (key.duplicates = last).
    labels = inspect.merge_labels(opened, scan.parts)
    part_column = inspect.EXPLAIN_SCHEMA.split(", ").index("part string")
    rows = [(*row, labels.get(row[part_column], "")) for row in explained]
    read = sum(p.row_count for p in scan.parts)
    footer = (
        f"opens {len(scan.parts)} of {len(scan.parts) + len(scan.pruned)} parts "
        f"({read} rows before filtering), prunes {len(scan.pruned)}"
    )
    if labels:
        groups = {name.split(":")[0] for text in labels.values() for name in text.split(",")}
        plural = "group" if len(groups) == 1 else "groups"
        footer += (
            f"; merges {len(labels)} parts in {len(groups)} {plural} "
            "(rows of one key from several writes: the latest wins; OPTIMIZE removes this)"
        )
    output.show(
        Result(inspect.EXPLAIN_SCHEMA + ", merge string", rows),
        as_json=cli.as_json,
        unit=target.unit,
        title=f"{target.name} @ version {opened.version} where {where}",
        hide=("ref", "table", "alias", "version", "columns", "pushed_where"),
        footer=footer,
    )


@command(*_READ)
def timeline(
    cli: CliContext,
    table: TableArg,
    picture: Annotated[
        Path, typer.Argument(metavar="OUT", help="The picture to write: a .png or .svg file.")
    ],
    group_by: Annotated[
        str, typer.Option("--group-by", help="'device' or a TAG column: one row per value.")
    ] = part_timeline.DEVICE,
    where: WhereOpt = None,
) -> None:
    """A picture of the parts as bars over time, one row per device or TAG value, one colour
    per part: gaps, overlaps and piles of small files show at a glance."""
    if picture.suffix.lower() not in output.PICTURE_FORMATS:
        raise typer.BadParameter(
            f"{picture} must end in {' or '.join(output.PICTURE_FORMATS)}", param_hint="OUT"
        )
    target, opened = cli.open(table)
    scan = None if where is None else cli.plan(target, opened, where)
    data = part_timeline.timeline(opened, group_by=group_by, plan=scan)
    summary = (
        f"{len(data.parts)} parts, {len(data.bars)} bars in {len(data.groups)} rows, "
        f"{data.overlaps} overlapping device ranges"
    )
    title = f"{target.name} @ version {opened.version}" + (f" where {where}" if where else "")
    with output.progress_bar("drawing parts") as progress:
        output.draw_timeline(
            data, picture, title=f"{title}: {summary}", unit=target.unit, progress=progress
        )
    if cli.as_json:
        output.show(inspect.timeline_result(data), as_json=True, unit=target.unit)
    else:
        typer.echo(f"wrote {picture}: {summary}")
