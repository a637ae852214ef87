"""``tsfile-catalog spark-conf``: the Spark settings that serve a warehouse's catalog from any
Spark client (``spark-sql``, ``spark-submit``, a Spark Connect or Thrift server), printed as
command-line arguments or ``spark-defaults.conf`` lines (:mod:`tsfile_catalog.spark_catalog.
settings`). The only command that builds the plugin's jar (with the JDK's ``javac``); none
starts Spark.
"""

from __future__ import annotations

import json
from typing import Annotated, Literal

import typer

from tsfile_catalog.cli.context import CATALOG, OUTPUT, STORAGE, CliContext, command
from tsfile_catalog.exceptions import OptionError

__all__ = ["spark_conf"]


@command(OUTPUT, STORAGE, CATALOG)
def spark_conf(
    cli: CliContext,
    name: Annotated[
        str, typer.Option("--name", help="The catalog's name in Spark (ts: ts.db.weather).")
    ] = "tsfile",
    format: Annotated[
        Literal["args", "defaults"],
        typer.Option(
            "--format",
            help="args: --jars/--conf arguments for spark-sql, spark-submit or "
            "start-connect-server.sh; defaults: spark-defaults.conf lines.",
        ),
    ] = "args",
) -> None:
    """Print the Spark settings that serve --warehouse as catalog --name, with the fs.*
    settings given as --option."""
    from tsfile_catalog.spark_catalog import settings

    if cli.warehouse is None:
        raise OptionError("spark-conf needs --warehouse: the warehouse the catalog serves")
    fs_options = {}
    for pair in cli.options:
        key, sep, value = pair.partition("=")
        if not sep or not key.startswith("fs.") or len(key) == 3:
            raise OptionError(
                f"--option {pair!r}: spark-conf takes the catalog's storage settings, "
                "fs.<name>=<value> (fs.endpoint_url=...)"
            )
        fs_options[key[3:]] = value
    found = settings.catalog_config(cli.warehouse, name=name, **fs_options)
    if cli.as_json:
        typer.echo(json.dumps(found, indent=2))
    elif format == "defaults":
        typer.echo(settings.as_defaults(found))
    else:
        typer.echo(settings.as_arguments(found))
