"""The ``tsfile-catalog`` commands (typer): each one resolves its table, calls one function of
:mod:`tsfile_catalog.table` / :mod:`tsfile_catalog.inspect` and one output helper.

Exit codes: 0 success; 1 a user error (no table there, a bad ``--where``, an unknown column,
a storage failure), reported as one line on stderr (``--debug`` shows the traceback); 2 a
usage error (an unknown command or option, a missing argument). Nothing here imports
pyspark: metadata commands read the manifest directly and answer without a JVM.

Adding a command costs one function here: resolve the table (:func:`arguments.resolve`),
call the table-level operation (passing ``progress=`` from :func:`output.progress_bar` when it
works through many files) and hand its :class:`~tsfile_catalog.inspect.Result` to
:func:`output.show`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from tsfile_catalog import inspect
from tsfile_catalog.cli import arguments, output
from tsfile_catalog.exceptions import OptionError, TsFileCatalogError
from tsfile_catalog.inspect import Result
from tsfile_catalog.metadata.scan import ScanPlan
from tsfile_catalog.table import (
    Table,
    add_files,
    drop_parts,
    expire_snapshots,
    vacuum_table,
)
from tsfile_catalog.table import optimize as optimize_table
from tsfile_catalog.table import restore as restore_table

__all__ = ["app", "main"]

_DEBUG = "tsfile_catalog.debug"


class _Commands(TyperGroup):
    """Turns the package's own errors (and storage failures) into exit code 1 with one line
    on stderr; ``--debug`` lets them through with their traceback."""

    # ``Any``: the Context class is click's, which typer vendors from 0.2x on (typer._click).
    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (TsFileCatalogError, OSError) as e:
            if ctx.meta.get(_DEBUG):
                raise
            output.error(str(e) or type(e).__name__)
            raise typer.Exit(1) from None


app = typer.Typer(
    cls=_Commands,
    name="tsfile-catalog",
    help="Inspect and maintain tsfile-catalog tables without Spark.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root(
    ctx: typer.Context,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks of errors.")] = False,
) -> None:
    ctx.meta[_DEBUG] = debug


# -- arguments every command shares -----------------------------------------------------------

TableArg = Annotated[
    str,
    typer.Argument(
        metavar="TABLE",
        help="A table path or URL (s3://bucket/t), or a catalog name with --warehouse.",
    ),
]
WarehouseOpt = Annotated[
    str | None,
    typer.Option("--warehouse", "-w", help="Read TABLE as a name in this catalog warehouse."),
]
OptionOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--option",
        "-o",
        metavar="KEY=VALUE",
        help="fs.<name> storage setting (fs.endpoint_url=...), timestampAs or "
        "timestampPrecision; repeatable. Credentials come from the environment.",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
VersionOpt = Annotated[int | None, typer.Option("--version", help="Time travel: this version.")]
TimestampOpt = Annotated[
    str | None,
    typer.Option(
        "--timestamp",
        "-t",
        help="Time travel: the version current at this instant (epoch ms or ISO-8601).",
    ),
]
TimeZoneOpt = Annotated[
    str | None,
    typer.Option(
        "--time-zone",
        help="Zone of times without an offset in --timestamp and --where (default UTC).",
    ),
]
WhereOpt = Annotated[
    str | None, typer.Option("--where", help="A Spark SQL predicate, as the `where` option.")
]


def _open(
    table: str,
    warehouse: str | None,
    option: list[str] | None,
    version: int | None = None,
    timestamp: str | None = None,
    time_zone: str | None = None,
) -> tuple[arguments.Target, Table]:
    target = arguments.resolve(table, warehouse=warehouse, options=option or ())
    return target, target.open(version=version, timestamp=timestamp, time_zone=time_zone)


def _plan_where(
    target: arguments.Target, opened: Table, where: str | None, time_zone: str | None
) -> ScanPlan:
    """The plan for ``where`` as the table's scans read it (its ``timestampAs`` and precision),
    with times without an offset in ``time_zone`` (UTC by default, as in the output)."""
    return opened.plan(
        where, unit=target.unit, timestamp_as=target.timestamp_as, time_zone=time_zone or "UTC"
    )


# -- read commands ----------------------------------------------------------------------------


@app.command()
def describe(
    table: TableArg,
    warehouse: WarehouseOpt = None,
    option: OptionOpt = None,
    extended: Annotated[bool, typer.Option("--extended", help="Add table details.")] = False,
    version: VersionOpt = None,
    timestamp: TimestampOpt = None,
    time_zone: TimeZoneOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The columns (and with --extended the details) of a table, as DESCRIBE shows them."""
    target, opened = _open(table, warehouse, option, version, timestamp, time_zone)
    result = inspect.describe(
        opened,
        extended=extended,
        name=target.name,
        timestamp_as=target.timestamp_as,
        options=target.options,
    )
    output.show(result, as_json=as_json, title=f"{target.name} @ version {opened.version}")


@app.command()
def history(
    table: TableArg,
    warehouse: WarehouseOpt = None,
    option: OptionOpt = None,
    limit: Annotated[int | None, typer.Option("--limit", "-n", help="Newest N only.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """The table's commits, newest first (DESCRIBE HISTORY); times in UTC."""
    target, opened = _open(table, warehouse, option)
    if limit is not None and limit < 1:
        raise OptionError(f"--limit must be at least 1, got {limit}")
    result = inspect.describe_history(opened, limit=limit)
    output.show(result, as_json=as_json, title=target.name, hide=("engine_info",))


@app.command()
def detail(
    table: TableArg,
    warehouse: WarehouseOpt = None,
    option: OptionOpt = None,
    version: VersionOpt = None,
    timestamp: TimestampOpt = None,
    time_zone: TimeZoneOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """One summary of a version: location, parts, rows, size, time range (DESCRIBE DETAIL)."""
    target, opened = _open(table, warehouse, option, version, timestamp, time_zone)
    result = inspect.describe_detail(
        opened, name=target.name, timestamp_as=target.timestamp_as, options=target.options
    )
    output.show(result, as_json=as_json, vertical=True)


@app.command()
def parts(
    table: TableArg,
    warehouse: WarehouseOpt = None,
    option: OptionOpt = None,
    where: WhereOpt = None,
    version: VersionOpt = None,
    timestamp: TimestampOpt = None,
    time_zone: TimeZoneOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The parts of a version; with --where, whether a scan keeps or prunes each one."""
    target, opened = _open(table, warehouse, option, version, timestamp, time_zone)
    plan = _plan_where(target, opened, where, time_zone)
    result = inspect.planned_parts(opened, plan)
    footer = f"{len(result.rows)} parts: {len(plan.parts)} kept, {len(plan.pruned)} pruned"
    output.show(
        result,
        as_json=as_json,
        title=f"{target.name} @ version {opened.version}",
        hide=("format", "external"),
        footer=footer,
    )


@app.command()
def plan(
    table: TableArg,
    where: Annotated[str, typer.Option("--where", help="A Spark SQL predicate to plan.")],
    warehouse: WarehouseOpt = None,
    option: OptionOpt = None,
    columns: Annotated[
        str | None, typer.Option("--columns", help="Comma-separated columns to read.")
    ] = None,
    version: VersionOpt = None,
    timestamp: TimestampOpt = None,
    time_zone: TimeZoneOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The parts a scan with --where opens and prunes, as EXPLAIN PARTS shows them."""
    target, opened = _open(table, warehouse, option, version, timestamp, time_zone)
    chosen = None if columns is None else [c.strip() for c in columns.split(",") if c.strip()]
    for name in chosen or ():
        if name not in opened.schema.names:
            raise OptionError(
                f"--columns: no column {name!r} in {target.name} "
                f"(columns: {', '.join(opened.schema.names)})"
            )
    scan = _plan_where(target, opened, where, time_zone)
    rows = inspect.explain_rows(0, target.name, None, opened, scan, chosen, where)
    read = sum(p.row_count for p in scan.parts)
    footer = (
        f"opens {len(scan.parts)} of {len(scan.parts) + len(scan.pruned)} parts "
        f"({read} rows before filtering), prunes {len(scan.pruned)}"
    )
    output.show(
        Result(inspect.EXPLAIN_SCHEMA, rows),
        as_json=as_json,
        title=f"{target.name} @ version {opened.version} where {where}",
        hide=("ref", "table", "alias", "version", "columns", "pushed_where"),
        footer=footer,
    )


@app.command()
def timeline(
    table: TableArg,
    picture: Annotated[
        Path, typer.Argument(metavar="OUT", help="The picture to write: a .png or .svg file.")
    ],
    warehouse: WarehouseOpt = None,
    option: OptionOpt = None,
    group_by: Annotated[
        str, typer.Option("--group-by", help="'device' or a TAG column: one row per value.")
    ] = inspect.DEVICE,
    where: WhereOpt = None,
    version: VersionOpt = None,
    timestamp: TimestampOpt = None,
    time_zone: TimeZoneOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """A picture of the parts as bars over time, one row per device or TAG value, one colour
    per part: gaps, overlaps and piles of small files show at a glance."""
    if picture.suffix.lower() not in output.PICTURE_FORMATS:
        raise typer.BadParameter(
            f"{picture} must end in {' or '.join(output.PICTURE_FORMATS)}", param_hint="OUT"
        )
    target, opened = _open(table, warehouse, option, version, timestamp, time_zone)
    scan = None if where is None else _plan_where(target, opened, where, time_zone)
    data = inspect.timeline(opened, group_by=group_by, plan=scan)
    summary = (
        f"{len(data.parts)} parts, {len(data.bars)} bars in {len(data.groups)} rows, "
        f"{data.overlaps} overlapping device ranges"
    )
    title = f"{target.name} @ version {opened.version}" + (f" where {where}" if where else "")
    with output.progress_bar("drawing parts") as progress:
        output.draw_timeline(
            data, picture, title=f"{title}: {summary}", unit=target.unit, progress=progress
        )
    if as_json:
        output.show(inspect.timeline_result(data), as_json=True)
    else:
        typer.echo(f"wrote {picture}: {summary}")


# -- commands that change a table -------------------------------------------------------------


@app.command()
def vacuum(
    table: TableArg,
    warehouse: WarehouseOpt = None,
    option: OptionOpt = None,
    retain: Annotated[
        str | None,
        typer.Option(
            "--retain",
            help="Keep files removed (or orphaned) less than this long ago (168h, 7d, 0s; a "
            "bare number is hours). Default: the table's deletedFileRetention, 7 days.",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would be deleted; delete nothing.")
    ] = False,
    no_retention_check: Annotated[
        bool,
        typer.Option(
            "--no-retention-check",
            help="Allow a retention below the table's deletedFileRetention (Delta's "
            "retentionDurationCheck): only safe when no write is running.",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Delete parts removed longer ago than the retention, and files the table's writers left
    behind that no version references."""
    retention_ms = None if retain is None else arguments.parse_duration(retain)
    target = arguments.resolve(table, warehouse=warehouse, options=option or ())
    with output.progress_bar("deleting files") as progress:
        vacuumed = vacuum_table(
            target.location,
            dry_run=dry_run,
            retention_ms=retention_ms,
            retention_check=not no_retention_check,
            storage_options=target.storage,
            progress=progress,
        )
    files = vacuumed.files
    verb = "would delete" if dry_run else "deleted"
    output.show(
        inspect.vacuum_result(vacuumed),
        as_json=as_json,
        title=target.name,
        footer=f"{verb} {len(files)} files and folders",
    )


@app.command()
def optimize(
    table: TableArg,
    warehouse: WarehouseOpt = None,
    option: OptionOpt = None,
    where: Annotated[
        str | None,
        typer.Option(
            "--where",
            help="Only parts that may hold rows matching this predicate on time and TAG "
            "columns (parts are still rewritten whole).",
        ),
    ] = None,
    target_size: Annotated[
        str | None,
        typer.Option(
            "--target-size",
            help="Bytes per new part (134217728, 128MB, 1GB). Default: the table's "
            "targetFileSize, else 128MB.",
        ),
    ] = None,
    time_zone: TimeZoneOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Compact small TsFile parts into parts of about --target-size, in this process (no
    Spark): one OPTIMIZE commit; the old files stay for time travel until vacuum."""
    size = (
        None if target_size is None else arguments.parse_size(target_size, option="--target-size")
    )
    target, opened = _open(table, warehouse, option)
    # A catalog table's stored compression and encoding, as its SQL OPTIMIZE writes with.
    from tsfile_catalog.sql.table_options import write_settings

    with output.progress_bar("writing parts") as progress:
        done = optimize_table(
            opened,
            where=where,
            target_file_size=size,
            settings=write_settings(target.options),
            unit=target.unit,
            timestamp_as=target.timestamp_as,
            time_zone=time_zone or "UTC",
            progress=progress,
        )
    footer = (
        "nothing to compact"
        if done.version is None
        else f"version {done.version}: {done.files_removed} parts ({done.rows} rows) rewritten "
        f"as {done.files_added}"
    )
    output.show(inspect.optimize_result(done), as_json=as_json, title=target.name, footer=footer)


@app.command()
def expire(
    table: TableArg,
    warehouse: WarehouseOpt = None,
    option: OptionOpt = None,
    retain: Annotated[
        str | None,
        typer.Option(
            "--retain",
            help="Expire versions replaced longer ago than this (720h, 30d; a bare number is "
            "hours). Default: the table's logRetention, 30 days.",
        ),
    ] = None,
    older_than: Annotated[
        str | None,
        typer.Option(
            "--older-than",
            help="Expire versions replaced before this instant (epoch ms or ISO-8601).",
        ),
    ] = None,
    retain_last: Annotated[
        int | None,
        typer.Option("--retain-last", help="Keep at least the newest N versions."),
    ] = None,
    time_zone: TimeZoneOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would be expired; change nothing.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Remove old versions from the log (EXPIRE SNAPSHOTS): they leave history and time
    travel; the version current at the cutoff and every later one stay. Data files stay
    for vacuum."""
    if retain is not None and older_than is not None:
        raise OptionError("give --retain or --older-than, not both")
    if retain_last is not None and retain_last < 1:
        raise OptionError(f"--retain-last must be at least 1, got {retain_last}")
    retention_ms = None if retain is None else arguments.parse_duration(retain)
    target = arguments.resolve(table, warehouse=warehouse, options=option or ())
    expired = expire_snapshots(
        target.location,
        older_than=older_than,
        retention_ms=retention_ms,
        retain_last=retain_last,
        time_zone=time_zone or "UTC",
        dry_run=dry_run,
        storage_options=target.storage,
    )
    verb = "would expire" if dry_run else "expired"
    footer = (
        f"{verb} {len(expired.versions)} versions; the oldest version left is {expired.oldest_kept}"
    )
    output.show(inspect.expire_result(expired), as_json=as_json, title=target.name, footer=footer)


@app.command()
def restore(
    table: TableArg,
    warehouse: WarehouseOpt = None,
    option: OptionOpt = None,
    version: Annotated[
        int | None, typer.Option("--version", help="Restore the table to this version.")
    ] = None,
    timestamp: Annotated[
        str | None,
        typer.Option(
            "--timestamp",
            "-t",
            help="Restore the version current at this instant (epoch ms or ISO-8601).",
        ),
    ] = None,
    time_zone: TimeZoneOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Commit a new version with an older version's parts and schema (RESTORE); the
    versions in between stay in history."""
    if (version is None) == (timestamp is None):
        raise OptionError("restore needs exactly one of --version and --timestamp")
    target = arguments.resolve(table, warehouse=warehouse, options=option or ())
    restored = restore_table(
        target.location,
        version=version,
        timestamp=timestamp,
        time_zone=time_zone or "UTC",
        storage_options=target.storage,
    )
    result = inspect.restore_result(target.open(version=restored))
    output.show(result, as_json=as_json, title=target.name)


@app.command("add-part")
def add_part(
    table: TableArg,
    path: Annotated[
        str, typer.Argument(help="A Parquet, ORC or CSV file, a directory of them, or a glob.")
    ],
    file_format: Annotated[
        str, typer.Option("--format", "-f", help="The files' format: parquet, orc or csv.")
    ],
    warehouse: WarehouseOpt = None,
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option",
            "-o",
            metavar="KEY=VALUE",
            help="An ADD PART option (partition, timeColumn, timestampPrecision, mergeSchema; "
            "for CSV header, delimiter, quote, nullValue) or an fs.<name> storage setting; "
            "repeatable.",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Add existing Parquet, ORC or CSV files to the table in place (ALTER TABLE ... ADD
    PART): one commit for all of them; the files stay the user's."""
    storage, part_options = arguments.split_part_options(option or ())
    target = arguments.resolve(table, warehouse=warehouse, options=storage)
    if "timestampprecision" not in {k.lower() for k in part_options}:
        # TIMESTAMP/DATE times become raw values in the unit the table is read with (as SQL).
        part_options["timestampPrecision"] = target.unit
    with output.progress_bar("reading file metadata") as progress:
        version = add_files(
            target.location,
            path,
            format=file_format,
            options=part_options,
            storage_options=target.storage,
            progress=progress,
        )
    _show_changed(target, version, as_json=as_json, done="added")


@app.command("drop-part")
def drop_part(
    table: TableArg,
    pattern: Annotated[
        str,
        typer.Argument(
            help="A part's path (an external part's URL), a folder or a glob, as parts lists them."
        ),
    ],
    warehouse: WarehouseOpt = None,
    option: OptionOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Remove parts from the table (ALTER TABLE ... DROP PART): a new version without them;
    no file is deleted, and time travel still reads them."""
    target = arguments.resolve(table, warehouse=warehouse, options=option or ())
    version = drop_parts(target.location, pattern, storage_options=target.storage)
    _show_changed(target, version, as_json=as_json, done="dropped")


def _show_changed(target: arguments.Target, version: int, *, as_json: bool, done: str) -> None:
    """What a version that added or dropped parts holds, and how many it changed."""
    changed = target.open(version=version)
    info = changed.history(limit=1)[0]
    count = info.parts_added if done == "added" else info.parts_removed
    output.show(
        inspect.table_summary(changed),
        as_json=as_json,
        title=target.name,
        footer=f"version {version}: {done} {count} parts",
    )


@app.command()
def adopt(
    path: Annotated[str, typer.Argument(help="A directory of *.tsfile files (path or URL).")],
    option: OptionOpt = None,
    tsfile_table: Annotated[
        str | None, typer.Option("--table", help="The TsFile table, when files hold several.")
    ] = None,
    merge_schema: Annotated[
        bool, typer.Option("--merge-schema", help="Union the files' FIELD columns.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Make a table of a directory of TsFiles: a manifest listing them, files left in place."""
    from tsfile_catalog.adopt import adopt_table

    target = arguments.resolve(path, warehouse=None, options=option or ())
    with output.progress_bar("reading file metadata") as progress:
        adopted = adopt_table(
            target.location,
            table=tsfile_table,
            merge_schema=merge_schema,
            storage_options=target.storage,
            progress=progress,
        )
    output.show(inspect.table_summary(adopted), as_json=as_json, title="adopted")


def main() -> None:
    """The console script (``tsfile-catalog``) and ``python -m tsfile_catalog``."""
    app(prog_name="tsfile-catalog")
