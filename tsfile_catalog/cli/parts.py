"""The commands that change which files a table lists: add-part and drop-part (external and
other parts, one commit each) and adopt (a new table over a directory of TsFiles).
"""

from __future__ import annotations

from typing import Annotated

import typer

from tsfile_catalog import inspect
from tsfile_catalog.cli import arguments, output
from tsfile_catalog.cli.arguments import Target
from tsfile_catalog.cli.context import CATALOG, OUTPUT, STORAGE, CliContext, TableArg, command
from tsfile_catalog.table import add_files, drop_parts

__all__ = ["add_part", "adopt", "drop_part"]


@command(OUTPUT, CATALOG)
def add_part(
    cli: CliContext,
    table: TableArg,
    path: Annotated[
        str, typer.Argument(help="A Parquet, ORC or CSV file, a directory of them, or a glob.")
    ],
    file_format: Annotated[
        str, typer.Option("--format", "-f", help="The files' format: parquet, orc or csv.")
    ],
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
) -> None:
    """Add existing Parquet, ORC or CSV files to the table in place (ALTER TABLE ... ADD
    PART): one commit for all of them; the files stay the user's."""
    storage, part_options = arguments.split_part_options(cli.options + tuple(option or ()))
    target = cli.target(table, options=tuple(storage))
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
    _show_changed(cli, target, version, done="added")


@command(OUTPUT, STORAGE, CATALOG)
def drop_part(
    cli: CliContext,
    table: TableArg,
    pattern: Annotated[
        str | None,
        typer.Argument(
            metavar="PATTERN",
            help="A part's path (an external part's URL), a folder or a glob, as parts lists "
            "them. Optional with --all.",
        ),
    ] = None,
    all_parts: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Allow dropping every part: with no PATTERN, or with one that matches them all.",
        ),
    ] = False,
) -> None:
    """Remove parts from the table (ALTER TABLE ... DROP PART): a new version without them;
    no file is deleted, and time travel still reads them."""
    if pattern is None and not all_parts:
        raise typer.BadParameter(
            "name the parts to drop, or give --all to drop every part", param_hint="PATTERN"
        )
    target = cli.target(table)
    version = drop_parts(
        target.location, pattern or "", all_parts=all_parts, storage_options=target.storage
    )
    _show_changed(cli, target, version, done="dropped")


def _show_changed(cli: CliContext, target: Target, version: int, *, done: str) -> None:
    """What a version that added or dropped parts holds, and how many it changed."""
    changed = target.open(version=version)
    info = changed.history(limit=1)[0]
    count = info.parts_added if done == "added" else info.parts_removed
    output.show(
        inspect.table_summary(changed),
        as_json=cli.as_json,
        title=target.name,
        footer=f"version {version}: {done} {count} parts",
    )


@command(OUTPUT, STORAGE)
def adopt(
    cli: CliContext,
    path: Annotated[str, typer.Argument(help="A directory of *.tsfile files (path or URL).")],
    tsfile_table: Annotated[
        str | None, typer.Option("--table", help="The TsFile table, when files hold several.")
    ] = None,
    merge_schema: Annotated[
        bool, typer.Option("--merge-schema", help="Union the files' FIELD columns.")
    ] = False,
) -> None:
    """Make a table of a directory of TsFiles: a manifest listing them, files left in place."""
    # Adopting reads TsFile footers (pyarrow, the TsFile library): only this command pays.
    from tsfile_catalog.adopt import adopt_table

    target = arguments.resolve(path, warehouse=None, options=cli.options)
    with output.progress_bar("reading file metadata") as progress:
        adopted = adopt_table(
            target.location,
            table=tsfile_table,
            merge_schema=merge_schema,
            storage_options=target.storage,
            progress=progress,
        )
    output.show(inspect.table_summary(adopted), as_json=cli.as_json, title="adopted")
