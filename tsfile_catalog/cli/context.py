"""The options every command shares, parsed once into a frozen :class:`CliContext` in
``ctx.obj``, as pyiceberg's ``cli/console.py`` keeps its catalog and output there.

The root callback (:mod:`tsfile_catalog.cli.main`) takes ``--json``, ``--warehouse``,
``--option`` and ``--time-zone`` before the command name (``tsfile-catalog --json -w wh
history weather``). The same options keep working after the command name, where the docs
and scripts written before put them: :func:`command` adds the groups a command uses to its
signature, so they are declared once here and not in every command, and merges what it
receives with the root's into the command's context. A command is a function of a
:class:`CliContext` and its own arguments.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Annotated, Any

import typer

from tsfile_catalog.cli.arguments import Target, resolve
from tsfile_catalog.exceptions import TableNotFoundError
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.scan import ScanPlan
from tsfile_catalog.table import Table

__all__ = [
    "CATALOG",
    "OUTPUT",
    "STORAGE",
    "TIME_TRAVEL",
    "ZONE",
    "CliContext",
    "JsonOpt",
    "OptionOpt",
    "TableArg",
    "TimeZoneOpt",
    "WarehouseOpt",
    "command",
    "root_context",
]

# -- the shared parameters, declared once -----------------------------------------------------

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
TimeZoneOpt = Annotated[
    str | None,
    typer.Option(
        "--time-zone",
        help="Zone of times without an offset in --timestamp, --where and --older-than "
        "(default UTC).",
    ),
]
VersionOpt = Annotated[int | None, typer.Option("--version", help="Time travel: this version.")]
TimestampOpt = Annotated[
    str | None,
    typer.Option(
        "--timestamp",
        "-t",
        help="Time travel: the version current at this instant (epoch ms or ISO-8601).",
    ),
]


@dataclass(frozen=True)
class CliContext:
    """What the shared options say, for one command.

    Attributes:
        as_json: print JSON instead of a table.
        warehouse: read TABLE as a name in this catalog warehouse.
        options: the ``--option`` pairs as given (the root's first); parsed when the table is
            resolved, since ``add-part`` reads its own ADD PART options from them.
        time_zone: the zone of times without an offset (None: UTC).
        version, timestamp: time travel, for the commands that read an older version.
    """

    as_json: bool = False
    warehouse: str | None = None
    options: tuple[str, ...] = ()
    time_zone: str | None = None
    version: int | None = None
    timestamp: str | None = None

    @property
    def zone(self) -> str:
        """The zone of times without an offset: ``--time-zone``, else UTC."""
        return self.time_zone or "UTC"

    def target(self, table: str, *, options: tuple[str, ...] | None = None) -> Target:
        """The table TABLE names, with ``options`` (default: the ``--option`` pairs).

        Raises:
            OptionError: a bad ``--option``.
            TableNotFoundError: a catalog name not in the catalog, or a path to a file (a
                part, say) rather than a table's folder.
        """
        target = resolve(
            table, warehouse=self.warehouse, options=self.options if options is None else options
        )
        if self.warehouse is None:
            _refuse_a_file(target)
        return target

    def open(self, table: str) -> tuple[Target, Table]:
        """The table TABLE names, at the version ``--version`` / ``--timestamp`` choose."""
        target = self.target(table)
        opened = target.open(version=self.version, timestamp=self.timestamp, time_zone=self.zone)
        return target.of_table(opened), opened

    def plan(self, target: Target, opened: Table, where: str | None) -> ScanPlan:
        """The plan for ``where`` as the table's scans read it (its ``timestampAs`` and
        precision), with times without an offset in :attr:`zone`."""
        return opened.plan(
            where, unit=target.unit, timestamp_as=target.timestamp_as, time_zone=self.zone
        )


def _refuse_a_file(target: Target) -> None:
    """A local path to a file is not a table: say so, and where the table may be, instead of
    the ``Not a directory`` that listing ``<file>/_tsfile_manifest/`` raises. (An object
    store lists nothing under a file's key, which is already "no table there".)"""
    io = FileIO(target.location, target.storage)
    if not io.is_local or not io.exists(target.location) or io.isdir(target.location):
        return
    folder = os.path.dirname(io.normalize(target.location))
    raise TableNotFoundError(
        f"{target.location} is a file, not a table: name the table's folder, the one holding "
        f"_tsfile_manifest/ (perhaps {folder})"
    )


def root_context(
    *, as_json: bool, warehouse: str | None, options: list[str] | None, time_zone: str | None
) -> CliContext:
    """The context the root callback stores: the shared options given before the command."""
    return CliContext(
        as_json=as_json, warehouse=warehouse, options=tuple(options or ()), time_zone=time_zone
    )


# -- groups of shared options, and the decorator that gives a command its groups --------------


@dataclass(frozen=True)
class _Group:
    """Shared options a command takes after its name, as parameters of its signature."""

    parameters: tuple[inspect.Parameter, ...]


def _group(**annotated: tuple[Any, Any]) -> _Group:
    return _Group(
        tuple(
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=a)
            for name, (a, default) in annotated.items()
        )
    )


OUTPUT = _group(as_json=(JsonOpt, False))
"""``--json``: every command."""
STORAGE = _group(option=(OptionOpt, None))
"""``--option``: every command but ``add-part``, whose ``--option`` takes ADD PART options too."""
CATALOG = _group(warehouse=(WarehouseOpt, None))
"""``--warehouse``: every command that names a table."""
ZONE = _group(time_zone=(TimeZoneOpt, None))
"""``--time-zone``: the commands that read a time (a ``--where``, ``--timestamp``, a cutoff)."""
TIME_TRAVEL = _group(version=(VersionOpt, None), timestamp=(TimestampOpt, None))
"""``--version`` / ``--timestamp``: the read commands (``restore`` has its own, with its own
meaning)."""

# Root options that mean something only to the commands taking their group: given before
# another command they are refused, not silently ignored.
_ONLY_WHERE_TAKEN = {
    "warehouse": (CATALOG, "--warehouse"),
    "time_zone": (ZONE, "--time-zone"),
}


def command(*groups: _Group) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command the shared options of ``groups`` after its name.

    The decorated function takes a :class:`CliContext` first, then its own typer
    parameters. Typer sees its own parameters plus the groups'; the wrapper merges the values
    given after the command name with the root's (after the name wins; ``--option`` pairs add
    up), stores the result in ``ctx.obj`` and calls the function with it. A root option the
    command has no use for (``--warehouse`` before ``adopt``) is a usage error.
    """

    def decorate(func: Callable[..., None]) -> Callable[..., None]:
        own = list(inspect.signature(func, eval_str=True).parameters.values())[1:]
        shared = [p for group in groups for p in group.parameters]
        names = [p.name for p in shared]
        context = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)
        parameters = [context, *(p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own)]

        @functools.wraps(func)
        def run(**kwargs: Any) -> None:
            ctx: typer.Context = kwargs.pop("ctx")
            given = {name: kwargs.pop(name) for name in names}
            cli = _merge(ctx, groups, given)
            ctx.obj = cli
            func(cli, **kwargs)

        signature = inspect.Signature([*parameters, *shared], return_annotation=None)
        # Typer reads parameters from the signature (and hints from __annotations__): give it
        # the evaluated ones, so no string annotation is resolved in this module's globals.
        run.__signature__ = signature  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()}
        return run

    return decorate


def _merge(ctx: typer.Context, groups: tuple[_Group, ...], given: dict[str, Any]) -> CliContext:
    root = ctx.obj if isinstance(ctx.obj, CliContext) else CliContext()
    for field, (group, flag) in _ONLY_WHERE_TAKEN.items():
        if getattr(root, field) is not None and group not in groups:
            raise typer.BadParameter(f"{ctx.info_name} does not take it", param_hint=flag)
    return replace(
        root,
        as_json=root.as_json or bool(given.get("as_json")),
        warehouse=given.get("warehouse") or root.warehouse,
        options=root.options + tuple(given.get("option") or ()),
        time_zone=given.get("time_zone") or root.time_zone,
        version=given.get("version"),
        timestamp=given.get("timestamp"),
    )
