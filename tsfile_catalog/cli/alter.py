"""The schema evolution commands: add-column, rename-column, drop-column, move-column and
alter-column-type, one commit each over ``table.alter`` (``ALTER TABLE``'s verbs, named as
add-part and drop-part name ``ALTER TABLE … ADD PART``), no part rewritten. Each shows the
columns of the version it made, as ``describe`` does.
"""

from __future__ import annotations

from typing import Annotated

import typer

from tsfile_catalog import inspect
from tsfile_catalog.cli import output
from tsfile_catalog.cli.context import CATALOG, OUTPUT, STORAGE, CliContext, TableArg, command
from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.metadata.spark.types import SQL_TYPE_NAMES, tsfile_type_of_sql
from tsfile_catalog.table import alter as table_alter

__all__ = ["add_column", "alter_column_type", "drop_column", "move_column", "rename_column"]

ColumnArg = Annotated[str, typer.Argument(metavar="COLUMN", help="A FIELD column of the table.")]
TypeArg = Annotated[
    str,
    typer.Argument(
        metavar="TYPE",
        help=f"A Spark SQL type, as in ALTER TABLE: {', '.join(SQL_TYPE_NAMES)}.",
    ),
]


@command(OUTPUT, STORAGE, CATALOG)
def add_column(
    cli: CliContext,
    table: TableArg,
    name: Annotated[str, typer.Argument(metavar="NAME", help="The new FIELD column's name.")],
    type_name: TypeArg,
    after: Annotated[
        str | None,
        typer.Option(
            "--after",
            metavar="COLUMN",
            help="Put it right after this column (any, time too); default last.",
        ),
    ] = None,
    first: Annotated[bool, typer.Option("--first", help="Put it before every column.")] = False,
) -> None:
    """Add a FIELD column (ALTER TABLE ... ADD COLUMNS): NULL in the rows written before."""
    if first and after is not None:
        raise OptionError("add-column takes at most one of --first and --after COLUMN")
    target = cli.target(table)
    before = target.open().version
    column = table_alter.NewColumn(name, _type(type_name), after=after, first=first)
    version = table_alter.add_columns(target.location, [column], storage_options=target.storage)
    _show_columns(cli, table, version, before, done=f"added column {name.lower()!r}")


@command(OUTPUT, STORAGE, CATALOG)
def rename_column(
    cli: CliContext,
    table: TableArg,
    column: ColumnArg,
    new_name: Annotated[str, typer.Argument(metavar="NEW_NAME", help="Its new name.")],
) -> None:
    """Rename a FIELD column (ALTER TABLE ... RENAME COLUMN): every part reads it under the
    new name."""
    target = cli.target(table)
    before = target.open().version
    version = table_alter.rename_column(
        target.location, column, new_name, storage_options=target.storage
    )
    _show_columns(
        cli, table, version, before, done=f"renamed {column.lower()!r} to {new_name.lower()!r}"
    )


@command(OUTPUT, STORAGE, CATALOG)
def drop_column(
    cli: CliContext,
    table: TableArg,
    columns: Annotated[
        list[str], typer.Argument(metavar="COLUMN...", help="The FIELD columns to drop.")
    ],
    if_exists: Annotated[
        bool, typer.Option("--if-exists", help="Skip the columns the table does not have.")
    ] = False,
) -> None:
    """Drop FIELD columns (ALTER TABLE ... DROP COLUMNS): their data is never read again,
    even by a column added back under the same name."""
    target = cli.target(table)
    opened = target.open()
    before = opened.version
    # --if-exists skips the missing ones: name only what the table had (names are lower case).
    had = set(opened.schema.names)
    dropped = [c.lower() for c in columns if c.lower() in had]
    version = table_alter.drop_columns(
        target.location, columns, if_exists=if_exists, storage_options=target.storage
    )
    _show_columns(
        cli, table, version, before, done=f"dropped {', '.join(repr(c) for c in dropped)}"
    )


@command(OUTPUT, STORAGE, CATALOG)
def move_column(
    cli: CliContext,
    table: TableArg,
    column: ColumnArg,
    after: Annotated[
        str | None,
        typer.Option(
            "--after", metavar="COLUMN", help="The column it goes right after (any, time too)."
        ),
    ] = None,
    first: Annotated[bool, typer.Option("--first", help="Before every column.")] = False,
) -> None:
    """Move a column, time and TAGs too (ALTER TABLE ... ALTER COLUMN ... FIRST | AFTER): the
    order reads and positional inserts show; part files are not touched."""
    if first == (after is not None):
        raise OptionError("move-column takes exactly one of --first and --after COLUMN")
    target = cli.target(table)
    before = target.open().version
    version = table_alter.move_column(
        target.location, column, after=after, storage_options=target.storage
    )
    where = "first" if after is None else f"after {after.lower()!r}"
    _show_columns(cli, table, version, before, done=f"moved {column.lower()!r} {where}")


@command(OUTPUT, STORAGE, CATALOG)
def alter_column_type(
    cli: CliContext,
    table: TableArg,
    column: ColumnArg,
    type_name: TypeArg,
) -> None:
    """Widen a FIELD column's type (ALTER TABLE ... ALTER COLUMN ... TYPE): INT to BIGINT,
    FLOAT to DOUBLE; older parts are cast up, none rewritten."""
    target = cli.target(table)
    before = target.open().version
    version = table_alter.alter_column_type(
        target.location, column, _type(type_name), storage_options=target.storage
    )
    _show_columns(cli, table, version, before, done=f"{column.lower()!r} is {type_name.upper()}")


def _type(name: str) -> DataType:
    """The TsFile type of a Spark SQL type name, as ALTER TABLE spells them.

    Raises:
        OptionError: a type tsfile tables do not have, naming it.
    """
    if name.upper() not in SQL_TYPE_NAMES:
        raise OptionError(
            f"type {name!r} is not one tsfile tables support (supported: "
            f"{', '.join(SQL_TYPE_NAMES)})"
        )
    return tsfile_type_of_sql(name.upper())


def _show_columns(cli: CliContext, table: str, version: int, before: int, *, done: str) -> None:
    """The columns of the version the command made (``before``: none, nothing changed), as
    ``describe`` shows them."""
    target = cli.target(table)
    opened = target.open(version=version)
    target = target.of_table(opened)
    output.show(
        inspect.describe(
            opened, name=target.name, timestamp_as=target.timestamp_as, options=target.options
        ),
        as_json=cli.as_json,
        title=f"{target.name} @ version {version}",
        footer=f"version {version}: {done}" if version != before else "no change, no commit",
    )
