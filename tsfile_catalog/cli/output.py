"""How the CLI shows results: rich tables or JSON on stdout, one-line errors and progress bars
on stderr, timeline pictures (matplotlib, Agg) in a file.

Every read command's answer is an :class:`~tsfile_catalog.inspect.Result`, so one function
shows them all; ``--json`` prints its rows as a list of objects keyed by column name, with
instants as ISO-8601 in UTC. A table's raw times (``min_time``, ``max_time``,
``complete_until``, a timeline's ``start`` and ``end``) are numbers in the table's
``timestampPrecision``: JSON shows them as ISO-8601 too, read in that unit, and keeps the
number in ``<name>_raw``.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer

from tsfile_catalog.inspect import Result
from tsfile_catalog.metadata.expressions import TimeUnit
from tsfile_catalog.progress import Progress
from tsfile_catalog.timeline import Timeline

__all__ = [
    "PICTURE_FORMATS",
    "RAW_TIMES",
    "draw_timeline",
    "error",
    "iso_time",
    "progress_bar",
    "records",
    "show",
]

PICTURE_FORMATS = (".png", ".svg")
"""The timeline picture formats, chosen by the output file's extension."""


def _plain(value: Any) -> Any:
    """A JSON value: instants as ISO-8601 text, sets and tuples as lists, maps as objects."""
    if isinstance(value, dt.datetime):
        return value.isoformat(timespec="milliseconds")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


RAW_TIMES = frozenset({"min_time", "max_time", "complete_until", "start", "end"})
"""The columns of the CLI's answers that hold a table's raw times."""

_PER_SECOND: dict[TimeUnit, int] = {"ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_DIGITS: dict[TimeUnit, int] = {"ms": 3, "us": 6, "ns": 9}
_EPOCH = dt.datetime(1970, 1, 1)


def iso_time(raw: int, unit: TimeUnit) -> str | None:
    """A raw time in ``unit`` since the epoch as ISO-8601 in UTC, with as many fraction
    digits as the unit has (``2023-11-14T22:13:20.000+00:00`` in ms); None outside the
    years 1 to 9999, which ISO-8601 text cannot show."""
    seconds, fraction = divmod(raw, _PER_SECOND[unit])  # floor: times before 1970 too
    try:
        whole = _EPOCH + dt.timedelta(seconds=seconds)
    except OverflowError:
        return None
    return f"{whole.isoformat(timespec='seconds')}.{fraction:0{_DIGITS[unit]}d}+00:00"


def records(result: Result, *, unit: TimeUnit | None = None) -> list[dict[str, Any]]:
    """The rows of ``result`` as JSON-ready objects keyed by column name. With ``unit``, the
    :data:`RAW_TIMES` columns become ISO-8601 (read in ``unit``), each followed by
    ``<name>_raw`` holding the number."""
    names = result.column_names
    out = []
    for row in result.rows:
        record: dict[str, Any] = {}
        for name, value in zip(names, row, strict=True):
            if unit is not None and name in RAW_TIMES:
                record[name] = None if value is None else iso_time(value, unit)
                record[f"{name}_raw"] = value
            else:
                record[name] = _plain(value)
        out.append(record)
    return out


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in sorted(value.items()))
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    plain = _plain(value)
    return plain if isinstance(plain, str) else str(plain)


def show(
    result: Result,
    *,
    as_json: bool,
    unit: TimeUnit | None = None,
    title: str | None = None,
    hide: Iterable[str] = (),
    vertical: bool = False,
    footer: str | None = None,
) -> None:
    """Print ``result``: JSON (every column; raw times read in ``unit``, see :func:`records`),
    or a table without the ``hide`` columns (``vertical``: one name/value line per column,
    for one wide row) and a ``footer`` line."""
    if as_json:
        typer.echo(json.dumps(records(result, unit=unit), indent=2))
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    hidden = set(hide)
    names = result.column_names
    shown = [i for i, name in enumerate(names) if name not in hidden]
    table = Table(title=title, title_justify="left", show_lines=False)
    if vertical:
        table.add_column("name", no_wrap=True)
        table.add_column("value", overflow="fold")
        for row in result.rows:
            for i in shown:
                table.add_row(Text(names[i]), Text(_text(row[i])))
    else:
        for i in shown:
            table.add_column(names[i], overflow="fold")
        for row in result.rows:
            # Text, not markup: values such as "[a=b]" are data.
            table.add_row(*(Text(_text(row[i])) for i in shown))
    # Piped or captured output is not wrapped at 80 columns: tables keep one line per row.
    console = Console(soft_wrap=False, width=None if sys.stdout.isatty() else 10_000)
    console.print(table)
    if footer:
        console.print(Text(footer))


def error(message: str) -> None:
    """One line on stderr: what went wrong, no traceback."""
    typer.echo("error: " + " ".join(str(message).split()), err=True)


@contextmanager
def progress_bar(label: str) -> Iterator[Progress | None]:
    """A rich progress bar on stderr to pass as ``progress=``, or None (and nothing shown)
    when stderr is not a terminal: logs and pipes get no control characters."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.progress import Progress as Bar

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Bar(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=None)

        def report(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield report


# -- timeline pictures ------------------------------------------------------------------------

_PER_DAY: dict[TimeUnit, int] = {unit: 86_400 * n for unit, n in _PER_SECOND.items()}
# Matplotlib's dates run from year 1 to 9999: raw times outside are drawn as plain numbers.
_DATE_RANGE_DAYS = (-719_162, 2_932_896)


def draw_timeline(
    data: Timeline,
    path: Path,
    *,
    title: str,
    unit: TimeUnit = "ms",
    progress: Progress | None = None,
) -> None:
    """Draw ``data`` to ``path`` (PNG or SVG by extension): one row per group, one bar per
    (part, group) from its first to its last time, one colour per part. Overlapping bars in
    a row are drawn translucent with an outline, so overlaps read darker; a single instant
    still gets a visible sliver. ``progress`` counts the parts drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

    per_day = _PER_DAY[unit]
    starts = [b.start for b in data.bars] or [0]
    ends = [b.end for b in data.bars] or [0]
    lo, hi = min(starts) / per_day, max(ends) / per_day
    as_dates = _DATE_RANGE_DAYS[0] <= lo and hi <= _DATE_RANGE_DAYS[1]
    scale = per_day if as_dates else 1
    span = (max(ends) - min(starts)) / scale or 1 / scale
    sliver = span * 0.003
    row = {group: i for i, group in enumerate(data.groups)}
    # Qualitative maps while they have a colour per part (tab10's are the most distinct),
    # then a continuous one: neighbours in time still differ.
    qualitative = len(data.parts) <= 20
    colours = plt.get_cmap(
        "tab10" if len(data.parts) <= 10 else "tab20" if qualitative else "turbo"
    )
    count = max(len(data.parts) - 1, 1)

    height = min(2.0 + 0.32 * len(data.groups), 60.0)
    fig, ax = plt.subplots(figsize=(12, height))
    try:
        by_part: dict[str, list[tuple[int, float, float]]] = {p: [] for p in data.parts}
        for bar in data.bars:
            width = max((bar.end - bar.start) / scale, sliver)
            by_part[bar.part].append((row[bar.group], bar.start / scale, width))
        for i, (part, bars) in enumerate(by_part.items()):
            colour = colours(i if qualitative else i / count)
            ax.barh(
                [b[0] for b in bars],
                [b[2] for b in bars],
                left=[b[1] for b in bars],
                height=0.6,
                color=colour,
                alpha=0.75,
                edgecolor="black",
                linewidth=0.5,
                label=part,
            )
            if progress is not None:
                progress(i + 1, len(by_part))
        ax.set_yticks(range(len(data.groups)), labels=list(data.groups))
        ax.set_ylim(-0.6, len(data.groups) - 0.4)
        ax.invert_yaxis()
        ax.set_ylabel(data.group_by)
        if as_dates:
            ax.xaxis_date(tz="UTC")
            ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(ax.xaxis.get_major_locator()))
            ax.set_xlabel("time (UTC)")
        else:
            ax.set_xlabel(f"time (raw, {unit})")
        ax.grid(axis="x", linestyle=":", linewidth=0.5)
        ax.set_title(title, loc="left", fontsize=10)
        if 0 < len(data.parts) <= 12:
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7, title="part")
        fig.savefig(path, bbox_inches="tight", dpi=100)
    finally:
        plt.close(fig)
