"""The ``tsfile-catalog`` program (typer): the root options, the error handling every command
shares, and the table of commands.

Exit codes: 0 success; 1 a user error (no table there, a bad ``--where``, an unknown column,
a storage failure), reported as one line on stderr (``--debug`` shows the traceback); 2 a
usage error (an unknown command or option, a missing argument). Nothing here imports
pyspark: metadata commands read the manifest directly and answer without a JVM.

The options every command shares are parsed once, by the root callback, into a
:class:`~tsfile_catalog.cli.context.CliContext` in ``ctx.obj``. Adding a command costs one
function in the module of its family (:mod:`~tsfile_catalog.cli.read`,
:mod:`~tsfile_catalog.cli.maintenance`, :mod:`~tsfile_catalog.cli.parts`,
:mod:`~tsfile_catalog.cli.alter`), decorated with
:func:`~tsfile_catalog.cli.context.command` and the shared option groups it takes, and one
line in :data:`_COMMANDS`: the function resolves its table through the context, calls the
table-level operation (passing ``progress=`` from :func:`output.progress_bar` when it works
through many files) and hands its :class:`~tsfile_catalog.inspect.Result` to
:func:`output.show`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from tsfile_catalog.cli import alter, maintenance, output, parts, read, spark
from tsfile_catalog.cli.context import (
    JsonOpt,
    OptionOpt,
    TimeZoneOpt,
    WarehouseOpt,
    root_context,
)
from tsfile_catalog.exceptions import TsFileCatalogError

__all__ = ["app", "main"]

_DEBUG = "tsfile_catalog.debug"


# The library's errors name its Python keywords; on the command line the same choice is a flag.
_FLAGS = {"retention_check=False": "--no-retention-check", "all_parts=True": "--all"}
_KEYWORD = re.compile("|".join(re.escape(k) for k in _FLAGS))


def cli_wording(message: str) -> str:
    """``message`` with the library's keyword arguments named as this program's flags."""
    return _KEYWORD.sub(lambda m: _FLAGS[m.group(0)], message)


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
            output.error(cli_wording(str(e) or type(e).__name__))
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
    as_json: JsonOpt = False,
    warehouse: WarehouseOpt = None,
    option: OptionOpt = None,
    time_zone: TimeZoneOpt = None,
) -> None:
    """Inspect and maintain tsfile-catalog tables without Spark. The options here apply to
    the command that follows; each command also takes them after its name."""
    ctx.meta[_DEBUG] = debug
    ctx.obj = root_context(
        as_json=as_json, warehouse=warehouse, options=option, time_zone=time_zone
    )


_COMMANDS: dict[str, Callable[..., None]] = {
    "describe": read.describe,
    "history": read.history,
    "detail": read.detail,
    "parts": read.parts,
    "plan": read.plan,
    "timeline": read.timeline,
    "vacuum": maintenance.vacuum,
    "optimize": maintenance.optimize,
    "expire": maintenance.expire,
    "restore": maintenance.restore,
    "add-part": parts.add_part,
    "drop-part": parts.drop_part,
    "adopt": parts.adopt,
    "add-column": alter.add_column,
    "rename-column": alter.rename_column,
    "drop-column": alter.drop_column,
    "move-column": alter.move_column,
    "alter-column-type": alter.alter_column_type,
    "spark-conf": spark.spark_conf,
}
for _name, _function in _COMMANDS.items():
    app.command(_name)(_function)


def main() -> None:
    """The console script (``tsfile-catalog``) and ``python -m tsfile_catalog``."""
    app(prog_name="tsfile-catalog")


if __name__ == "__main__":
    main()
