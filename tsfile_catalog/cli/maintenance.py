"""The maintenance commands: vacuum, optimize, expire and restore. Each runs one table-level
maintenance operation in this process (no Spark) and shows its one-row answer.
"""

from __future__ import annotations

from typing import Annotated

import typer

from tsfile_catalog import inspect
from tsfile_catalog.cli import arguments, output
from tsfile_catalog.cli.context import CATALOG, OUTPUT, STORAGE, ZONE, CliContext, TableArg, command
from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.table import expire_snapshots, vacuum_table
from tsfile_catalog.table import optimize as optimize_table
from tsfile_catalog.table import restore as restore_table

__all__ = ["expire", "optimize", "restore", "vacuum"]


@command(OUTPUT, STORAGE, CATALOG)
def vacuum(
    cli: CliContext,
    table: TableArg,
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
) -> None:
    """Delete parts removed longer ago than the retention, and files the table's writers left
    behind that no version references."""
    retention_ms = None if retain is None else arguments.parse_duration(retain)
    target = cli.target(table)
    with output.progress_bar("deleting files") as progress:
        vacuumed = vacuum_table(
            target.location,
            dry_run=dry_run,
            retention_ms=retention_ms,
            retention_check=not no_retention_check,
            storage_options=target.storage,
            progress=progress,
        )
    verb = "would delete" if dry_run else "deleted"
    output.show(
        inspect.vacuum_result(vacuumed),
        as_json=cli.as_json,
        title=target.name,
        footer=f"{verb} {len(vacuumed.files)} files and folders",
    )


@command(OUTPUT, STORAGE, CATALOG, ZONE)
def optimize(
    cli: CliContext,
    table: TableArg,
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
) -> None:
    """Compact small TsFile parts into parts of about --target-size, in this process (no
    Spark): one OPTIMIZE commit; the old files stay for time travel until vacuum."""
    size = (
        None if target_size is None else arguments.parse_size(target_size, option="--target-size")
    )
    target = cli.target(table)
    opened = target.open()
    target = target.of_table(opened)
    # A catalog table's stored compression and encoding, as its SQL OPTIMIZE writes with; the
    # SQL package (sqlglot, the TsFile writer) loads only for this command.
    from tsfile_catalog.sql.table_options import write_settings

    with output.progress_bar("writing parts") as progress:
        done = optimize_table(
            opened,
            where=where,
            target_file_size=size,
            settings=write_settings(target.options),
            unit=target.unit,
            timestamp_as=target.timestamp_as,
            time_zone=cli.zone,
            progress=progress,
        )
    footer = (
        "nothing to compact"
        if done.version is None
        else f"version {done.version}: {done.files_removed} parts ({done.rows} rows) rewritten "
        f"as {done.files_added}"
    )
    output.show(
        inspect.optimize_result(done), as_json=cli.as_json, title=target.name, footer=footer
    )


@command(OUTPUT, STORAGE, CATALOG, ZONE)
def expire(
    cli: CliContext,
    table: TableArg,
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
        typer.Option(
            "--retain-last",
            help="Keep at least the newest N versions, even older than the cutoff (a floor: "
            "it never makes a younger version expire).",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would be expired; change nothing.")
    ] = False,
) -> None:
    """Remove old versions from the log (EXPIRE SNAPSHOTS): they leave history and time
    travel; the version current at the cutoff and every later one stay. Data files stay
    for vacuum."""
    if retain is not None and older_than is not None:
        raise OptionError("give --retain or --older-than, not both")
    if retain_last is not None and retain_last < 1:
        raise OptionError(f"--retain-last must be at least 1, got {retain_last}")
    retention_ms = None if retain is None else arguments.parse_duration(retain)
    target = cli.target(table)
    expired = expire_snapshots(
        target.location,
        older_than=older_than,
        retention_ms=retention_ms,
        retain_last=retain_last,
        time_zone=cli.zone,
        dry_run=dry_run,
        storage_options=target.storage,
    )
    verb = "would expire" if dry_run else "expired"
    footer = (
        f"{verb} {len(expired.versions)} versions; the oldest version left is {expired.oldest_kept}"
    )
    output.show(
        inspect.expire_result(expired), as_json=cli.as_json, title=target.name, footer=footer
    )


@command(OUTPUT, STORAGE, CATALOG, ZONE)
def restore(
    cli: CliContext,
    table: TableArg,
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
) -> None:
    """Commit a new version with an older version's parts and schema (RESTORE); the
    versions in between stay in history."""
    if (version is None) == (timestamp is None):
        raise OptionError("restore needs exactly one of --version and --timestamp")
    target = cli.target(table)
    restored = restore_table(
        target.location,
        version=version,
        timestamp=timestamp,
        time_zone=cli.zone,
        storage_options=target.storage,
    )
    result = inspect.restore_result(target.open(version=restored))
    output.show(result, as_json=cli.as_json, title=target.name)
