"""Tables whose commits happened days ago, for the vacuum, expiry and restore tests: each
commit is one new real TsFile part, stamped by the ``clock`` fixture (tests/table/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from tests.table.test_ownership import SCHEMA, part_of, tsfile
from tsfile_catalog.metadata.ownership import new_part_name
from tsfile_catalog.table import append_parts, open_table

DAY_MS = 86_400_000


def write_days_ago(
    root: Path, clock: list[int], days_ago: float, *, overwrite: bool = False
) -> str:
    """Commit one new real part, ``days_ago``; returns its path."""
    name = new_part_name(0)
    tsfile(root / name, start=int(days_ago * 100))
    clock[0] = int(days_ago * DAY_MS)
    append_parts(str(root), [part_of(root, name)], SCHEMA, overwrite=overwrite)
    return name


def history(root: Path) -> Iterator[tuple[int, str]]:
    """(version, operation) of every version in the table's history, newest first."""
    return ((h.version, str(h.operation)) for h in open_table(str(root)).history())
