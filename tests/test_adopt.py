"""adopt_table: a plain folder of TsFiles becomes a table, and a folder holding another table
(at any depth) is refused, since that table's removed parts are still among its files."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from tests.factories import weather_schema
from tests.table.helpers import append_rows
from tsfile_catalog.adopt import adopt_table
from tsfile_catalog.discovery import ResolvedScan, open_location
from tsfile_catalog.exceptions import LocationError
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.table import MANIFEST_DIR, open_table

SCHEMA = weather_schema(("temp", DataType.DOUBLE))


def rows(start: int, temp: float) -> pa.Table:
    return pa.table(
        {
            "time": pa.array([start, start + 1], pa.int64()),
            "city": ["bj", "bj"],
            "device": ["d1", "d1"],
            "temp": [temp, temp],
        }
    )


def table_with_a_removed_part(root: Path) -> Path:
    """A table whose first part was overwritten: its file stays until the table's VACUUM."""
    root.mkdir(parents=True)
    append_rows(str(root), rows(0, 1.0), SCHEMA)
    append_rows(str(root), rows(10, 2.0), SCHEMA, overwrite=True)
    assert len(list(root.glob("*.tsfile"))) == 2 and len(open_table(str(root)).parts()) == 1
    return root


@pytest.mark.parametrize("depth", ["inner", "a/b/inner"])
def test_a_folder_holding_a_table_at_any_depth_is_refused(tmp_path: Path, depth: str) -> None:
    parent = tmp_path / "parent"
    inner = table_with_a_removed_part(parent / depth)
    before = sorted(p for p in parent.rglob("*"))

    named = f"holds the table at {inner} \\(its {MANIFEST_DIR}/\\)"
    with pytest.raises(LocationError, match=named):
        adopt_table(str(parent))
    # A plain read of the folder is refused the same way: it would return the removed rows.
    with pytest.raises(LocationError, match=f"holds the table at {inner}"):
        open_location(str(parent))

    assert sorted(p for p in parent.rglob("*")) == before, "nothing was written"
    assert not (parent / MANIFEST_DIR).exists()
    assert open_table(str(inner)).scan().to_arrow().column("temp").to_pylist() == [2.0, 2.0]


def test_a_folder_beside_a_table_is_still_adopted(tmp_path: Path) -> None:
    parent = tmp_path / "parent"
    table_with_a_removed_part(parent / "inner")
    plain = parent / "plain"
    plain.mkdir()
    append_rows(str(tmp_path / "source"), rows(0, 5.0), SCHEMA)
    for f in (tmp_path / "source").glob("*.tsfile"):
        f.rename(plain / f.name)
    adopted = adopt_table(str(plain))
    assert adopted.scan().to_arrow().column("temp").to_pylist() == [5.0, 5.0]


def test_a_glob_reaching_into_a_table_is_refused(tmp_path: Path) -> None:
    parent = tmp_path / "parent"
    inner = table_with_a_removed_part(parent / "inner")
    plain = parent / "plain"
    plain.mkdir()
    append_rows(str(tmp_path / "source"), rows(0, 5.0), SCHEMA)
    for f in (tmp_path / "source").glob("*.tsfile"):
        f.rename(plain / f.name)
    for glob in (f"{parent}/*", f"{inner}/*.tsfile", f"{parent}/*/*.tsfile"):
        with pytest.raises(LocationError, match=f"reaches into the table at {inner};"):
            open_location(glob)
    found = open_location(f"{parent}/p*/*.tsfile")
    assert isinstance(found, ResolvedScan)
    assert [p.path for p in found.parts] == [str(f) for f in plain.glob("*.tsfile")]
