"""``ALTER COLUMN … FIRST | AFTER`` without Spark: ``table.alter.move_column`` and
``add_columns`` put any column (``time`` and TAGs too) anywhere; ``open_table().scan()``, the
change feed and appends follow the order users see, older versions keep theirs, no part is
rewritten, and a release that cannot follow the order refuses the table instead of showing
another one."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from tsfile_catalog import write_table
from tsfile_catalog.exceptions import CorruptManifestError
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.table import open_table

ROWS = {
    "time": [1, 2, 3, 4],
    "dev": ["a", "b", "a", "b"],
    "temp": [1.5, 2.5, None, 4.5],
    "rain": [10, 20, 30, None],
}
KEYS = [("time", "ascending"), ("dev", "ascending")]


def _moved(tmp_path: Path) -> str:
    url = str(tmp_path / "t")
    write_table(url, pa.table(ROWS), table="t", tag_columns=["dev"])  # version 0
    alter = open_table(url).alter
    alter.move_column("rain", after=None)  # 1
    alter.move_column("time", after="temp")  # 2
    alter.add_columns([("wind", DataType.DOUBLE)])  # 3: last
    return url


def test_the_scan_reads_in_the_order_users_see_and_old_versions_in_theirs(
    tmp_path: Path,
) -> None:
    url = _moved(tmp_path)
    parts = sorted(p.path for p in open_table(url, version=0).parts())
    table = open_table(url)
    assert table.schema.display_names == ("rain", "dev", "temp", "time", "wind")
    read = table.scan().to_arrow()
    assert read.column_names == ["rain", "dev", "temp", "time", "wind"]
    expected = pa.table(ROWS).append_column("wind", pa.nulls(4, pa.float64()))
    assert (
        read.select(expected.column_names).sort_by(KEYS).to_pylist()
        == expected.sort_by(KEYS).to_pylist()
    )
    assert sorted(p.path for p in table.parts()) == parts, "nothing rewritten"
    # A column list is read in the order it gives; filters still read time and TAGs.
    assert table.scan(columns=["time", "rain"], where="dev = 'a'").to_arrow().to_pydict() == {
        "time": [1, 3],
        "rain": [10, 30],
    }
    # Time travel: each version with its own order.
    assert open_table(url, version=0).scan().to_arrow().column_names == [
        "time",
        "dev",
        "temp",
        "rain",
    ]
    assert open_table(url, version=1).scan().to_arrow().column_names == [
        "rain",
        "time",
        "dev",
        "temp",
    ]


def test_appends_and_the_change_feed_follow_the_order(tmp_path: Path) -> None:
    url = _moved(tmp_path)
    more = {"time": [9], "dev": ["c"], "temp": [0.5], "rain": [7], "wind": [3.0]}
    write_table(url, pa.table(more))  # by name, whatever the order: version 4
    changes = open_table(url).changes(4, 4)
    assert changes.column_names[:5] == ["rain", "dev", "temp", "time", "wind"]
    assert [tuple(r.values())[:5] for r in changes.to_pylist()] == [(7, "c", 0.5, 9, 3.0)]
    # Moving back to time, TAGs, FIELDs is the canonical order again.
    alter = open_table(url).alter
    alter.move_column("time", after=None)
    alter.move_column("rain", after="temp")
    assert open_table(url).scan().to_arrow().column_names == ["time", "dev", "temp", "rain", "wind"]
    assert open_table(url).schema.order is None


def test_a_release_reading_up_to_format_3_refuses_a_moved_table_never_misreads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tsfile_catalog.io import FileIO
    from tsfile_catalog.metadata.manifest import model
    from tsfile_catalog.table.log import write_checkpoint

    url = str(tmp_path / "t")
    write_table(url, pa.table(ROWS), table="t", tag_columns=["dev"])  # version 0
    open_table(url).alter.move_column("rain", after="dev")  # 1: FIELDs only, format kept
    open_table(url).alter.move_column("temp", after=None)  # 2: recorded order
    monkeypatch.setattr(model, "FORMAT_VERSION", 3)
    assert open_table(url, version=1, use_cache=False).scan().to_arrow().column_names == [
        "time",
        "dev",
        "rain",
        "temp",
    ]
    with pytest.raises(CorruptManifestError, match="format_version 4.*upgrade"):
        open_table(url, use_cache=False)
    # And so does a checkpoint of a moved schema.
    monkeypatch.setattr(model, "FORMAT_VERSION", 4)
    latest = open_table(url, use_cache=False)
    write_checkpoint(FileIO(url), latest.location, latest.snapshot)
    monkeypatch.setattr(model, "FORMAT_VERSION", 3)
    with pytest.raises(CorruptManifestError, match="format_version 4.*upgrade"):
        open_table(url, use_cache=False)
    # This release reads the order back from the checkpoint.
    monkeypatch.setattr(model, "FORMAT_VERSION", 4)
    assert open_table(url, use_cache=False).scan().to_arrow().column_names == [
        "temp",
        "time",
        "dev",
        "rain",
    ]


def test_a_header_less_csv_part_keeps_its_columns_through_later_moves_and_renames(
    tmp_path: Path,
) -> None:
    from tsfile_catalog.table import add_files

    url = str(tmp_path / "t")
    write_table(url, pa.table(ROWS), table="t", tag_columns=["dev"])  # time, dev, temp, rain
    csv = tmp_path / "more.csv"
    csv.write_text("9,c,0.5,7\n")  # by position: time, dev, temp, rain
    add_files(url, str(csv), format="csv", options={"header": "false"})
    added = {"time": 9, "dev": "c", "temp": 0.5, "rain": 7}
    alter = open_table(url).alter
    alter.move_column("rain", after="dev")  # FIELDs only: the columns' own order changes
    alter.rename_column("temp", "temperature")
    alter.add_columns([("wind", DataType.DOUBLE)])
    alter.move_column("wind", after=None)
    rows = open_table(url).scan(where="dev = 'c'").to_arrow().to_pylist()
    assert rows == [{"wind": None, "time": 9, "dev": "c", "rain": 7, "temperature": added["temp"]}]
