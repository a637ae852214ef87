"""Schema evolution without Spark: ``table.alter`` renames, drops, moves and adds columns back,
and every Spark-free path (scan, filters, appends, rewrites, RESTORE, external parts, time
travel) reads each column from its own physical name; a pandas copy with the same changes is
the expected answer."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tsfile_catalog import write_table
from tsfile_catalog.exceptions import SchemaError
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.table import add_files, open_table

FIRST = {
    "time": [1, 2, 3, 4],
    "dev": ["a", "b", "a", "b"],
    "temp": [1.5, 2.5, None, 4.5],
    "rain": [10, 20, 30, None],
}


def _rows(url: str, **scan: object) -> list[dict[str, object]]:
    table = open_table(url).scan(**scan).to_arrow()  # type: ignore[arg-type]
    return sorted(table.to_pylist(), key=lambda r: (r["time"], r["dev"]))


def _evolved(tmp_path: Path) -> str:
    url = str(tmp_path / "t")
    write_table(url, pa.table(FIRST), table="t", tag_columns=["dev"])  # version 0
    alter = open_table(url).alter
    alter.rename_column("temp", "temperature")  # 1
    alter.drop_columns(["rain"])  # 2
    alter.add_columns([("rain", DataType.INT64)])  # 3: a new, empty column
    alter.move_column("rain", after="dev")  # 4
    return url


def test_renamed_dropped_added_back_and_moved_columns_read_their_own_data(
    tmp_path: Path,
) -> None:
    url = _evolved(tmp_path)
    table = open_table(url)
    assert table.version == 4
    assert list(table.schema.names) == ["time", "dev", "rain", "temperature"]
    expected = [
        {"time": t, "dev": d, "rain": None, "temperature": v}
        for t, d, v in zip(FIRST["time"], FIRST["dev"], FIRST["temp"], strict=True)
    ]
    assert _rows(url) == expected
    assert _rows(url, where="temperature > 2") == [
        r for r in expected if (r["temperature"] or 0) > 2
    ]
    assert _rows(url, where="rain IS NOT NULL") == [], "the dropped column's data never returns"
    assert sorted(p.name for p in (tmp_path / "t").glob("*.tsfile")) == sorted(
        p.path for p in table.parts()
    ), "nothing rewritten"

    # Each version reads with its own schema.
    assert _rows(url, version=0) == sorted(
        pa.table(FIRST).to_pylist(), key=lambda r: (r["time"], r["dev"])
    )
    assert list(open_table(url, version=1).schema.names) == [
        "time",
        "dev",
        "temperature",
        "rain",
    ]
    assert [r["temperature"] for r in _rows(url, version=1)] == FIRST["temp"]


def test_appends_rewrites_and_restore_keep_the_mapping(tmp_path: Path) -> None:
    url = _evolved(tmp_path)
    table = open_table(url)
    table.append(
        pa.table(
            {"time": [5], "dev": ["a"], "rain": pa.array([7], pa.int64()), "temperature": [9.5]}
        )
    )
    appended = _rows(url)
    assert appended[-1] == {"time": 5, "dev": "a", "rain": 7, "temperature": 9.5}
    # A rewrite (copy-on-write DELETE) reads and writes under the physical names.
    open_table(url).delete("time = 2")
    rewritten = _rows(url)
    assert rewritten == [r for r in appended if r["time"] != 2]
    assert _rows(url, where="rain = 7") == [appended[-1]]
    # OPTIMIZE merges old and new parts without losing either column.
    open_table(url).maintenance.optimize()
    assert _rows(url) == rewritten
    # RESTORE to before the drop: its parts hold the old 'rain', which comes back with them.
    restored = open_table(url).maintenance.restore(version=1)
    table = open_table(url)
    assert table.version == restored
    assert list(table.schema.names) == ["time", "dev", "temperature", "rain"]
    assert [r["rain"] for r in _rows(url)] == FIRST["rain"]


def test_restore_across_a_drop_and_add_back_reads_the_restored_parts_data(tmp_path: Path) -> None:
    url = str(tmp_path / "t")
    write_table(url, pa.table(FIRST), table="t", tag_columns=["dev"])
    open_table(url).alter.drop_columns(["rain"])
    open_table(url).alter.add_columns([("rain", DataType.INT64)])
    open_table(url).alter.move_column("rain", after="temp")
    assert open_table(url).schema == open_table(url, version=0).schema, "same names and types"
    assert [r["rain"] for r in _rows(url)] == [None] * 4
    open_table(url).maintenance.restore(version=0)
    assert [r["rain"] for r in _rows(url)] == FIRST["rain"]


def test_external_parts_are_mapped_by_name_when_added(tmp_path: Path) -> None:
    url = str(tmp_path / "t")
    write_table(url, pa.table(FIRST), table="t", tag_columns=["dev"])
    before = tmp_path / "before.parquet"
    earlier = {"time": [10], "dev": ["c"], "temp": [0.5], "rain": pa.array([1], pa.int64())}
    pq.write_table(pa.table(earlier), before)
    add_files(url, str(before), format="parquet")
    open_table(url).alter.rename_column("temp", "temperature")
    open_table(url).alter.drop_columns(["rain"])
    open_table(url).alter.add_columns([("rain", DataType.INT32)])
    # Added after the changes: its columns are matched by their names now.
    after = tmp_path / "after.parquet"
    later = pa.table(
        {"time": [11], "dev": ["c"], "temperature": [1.5], "rain": pa.array([2], pa.int32())}
    )
    pq.write_table(later, after)
    add_files(url, str(after), format="parquet")
    rows = {r["time"]: r for r in _rows(url)}
    assert rows[10] == {"time": 10, "dev": "c", "temperature": 0.5, "rain": None}
    assert rows[11] == {"time": 11, "dev": "c", "temperature": 1.5, "rain": 2}
    assert _rows(url, where="temperature > 1 AND dev = 'c'") == [rows[11]]
    external = [
        p for p in open_table(url).parts() if p.external and p.path.endswith("after.parquet")
    ]
    assert json.loads(external[0].read_options["columnNames"]) == {
        "rain_4": "rain",
        "temp": "temperature",
    }


def test_tag_columns_are_refused_by_name_and_nothing_is_committed(tmp_path: Path) -> None:
    url = str(tmp_path / "t")
    write_table(url, pa.table(FIRST), table="t", tag_columns=["dev"])
    alter = open_table(url).alter
    with pytest.raises(SchemaError, match="cannot rename TAG column 'dev'"):
        alter.rename_column("dev", "device")
    with pytest.raises(SchemaError, match="cannot drop TAG column 'dev'"):
        alter.drop_columns(["temp", "dev"])
    assert alter.drop_not_null("temp") == 0, "every FIELD takes nulls: no commit"
    assert open_table(url).version == 0


def test_a_merge_schema_append_adds_a_dropped_name_back_as_a_new_column(tmp_path: Path) -> None:
    url = str(tmp_path / "t")
    write_table(url, pa.table(FIRST), table="t", tag_columns=["dev"])
    open_table(url).alter.drop_columns(["rain"])
    more = {"time": [9], "dev": ["a"], "temp": [0.5], "rain": [99], "wind": [1.0]}
    write_table(url, pa.table(more), options={"mergeSchema": "true"})  # one commit
    table = open_table(url)
    assert (table.version, list(table.schema.names)) == (2, ["time", "dev", "temp", "rain", "wind"])
    rain = table.schema.column("rain")
    assert rain is not None and rain.physical == "rain_4"
    rows = _rows(url)
    assert [r["rain"] for r in rows] == [None, None, None, None, 99]
    assert [r["wind"] for r in rows] == [None, None, None, None, 1.0]
    assert _rows(url, where="rain > 5") == [rows[-1]]


def test_a_release_reading_up_to_format_2_refuses_a_mapped_table_never_misreads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tsfile_catalog.exceptions import CorruptManifestError
    from tsfile_catalog.io import FileIO
    from tsfile_catalog.metadata.manifest import model
    from tsfile_catalog.table.log import write_checkpoint

    url = _evolved(tmp_path)
    monkeypatch.setattr(model, "FORMAT_VERSION", 2)
    # Versions before the first rename read as before; the rename's commit stops it.
    before = open_table(url, version=0, use_cache=False).scan().to_arrow()
    assert sorted(before.to_pylist(), key=lambda r: (r["time"], r["dev"])) == sorted(
        pa.table(FIRST).to_pylist(), key=lambda r: (r["time"], r["dev"])
    )
    with pytest.raises(CorruptManifestError, match="format_version 3.*upgrade"):
        open_table(url, use_cache=False)
    # And so does a checkpoint of a mapped schema.
    monkeypatch.setattr(model, "FORMAT_VERSION", 3)
    latest = open_table(url, use_cache=False)
    write_checkpoint(FileIO(url), latest.location, latest.snapshot)
    monkeypatch.setattr(model, "FORMAT_VERSION", 2)
    with pytest.raises(CorruptManifestError, match="format_version 3.*upgrade"):
        open_table(url, use_cache=False)


def test_a_last_table_merges_rows_of_parts_written_before_and_after_a_rename(
    tmp_path: Path,
) -> None:
    from tsfile_catalog.metadata.key import KEY_DUPLICATES

    url = str(tmp_path / "t")
    write_table(url, pa.table(FIRST), table="t", tag_columns=["dev"])
    open_table(url).alter.set_properties({KEY_DUPLICATES: "last"})
    open_table(url).alter.rename_column("temp", "temperature")
    replacing = {"time": [1, 5], "dev": ["a", "a"], "temperature": [-1.0, 5.5], "rain": [None, 50]}
    open_table(url).append(pa.table(replacing))
    rows = {(r["time"], r["dev"]): r for r in _rows(url)}
    assert rows[(1, "a")] == {"time": 1, "dev": "a", "temperature": -1.0, "rain": None}
    assert rows[(5, "a")]["temperature"] == 5.5 and rows[(2, "b")]["temperature"] == 2.5
    assert len(rows) == 5
    assert [r["time"] for r in _rows(url, where="temperature < 0")] == [1]
    assert [r["time"] for r in _rows(url, where="temperature = 1.5")] == [], "replaced"
