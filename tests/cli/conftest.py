"""Small real tables for the CLI tests: TsFiles written by the project, adopted (version 0),
then one more file appended (version 1) whose device ``bj.d1`` overlaps the first file's; and
a table of writer-named parts, as appends make them (what OPTIMIZE compacts)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.cli.helpers import APPENDED, FILES, WRITTEN, append_file, write_appends, write_file
from tsfile_catalog.adopt import adopt_table
from tsfile_catalog.table import clear_cache


@pytest.fixture(autouse=True)
def _fresh_metadata_cache() -> Iterator[None]:
    clear_cache()
    yield
    clear_cache()


@pytest.fixture
def table_dir(tmp_path: Path) -> Path:
    root = tmp_path / "weather"
    root.mkdir()
    for name, devices in FILES.items():
        write_file(root, name, devices)
    adopt_table(str(root))
    for name, devices in APPENDED.items():
        append_file(root, name, devices)
    return root


@pytest.fixture
def written_dir(tmp_path: Path) -> Path:
    """A table of three writer-named parts (versions 0-2), one device each: OPTIMIZE's."""
    root = tmp_path / "written"
    write_appends(root, WRITTEN)
    return root


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()
