"""A table's own time unit, through every Spark-free write path, on real TsFile parts.

Each unit gets the same instants, some of which do not fall on a unit boundary (1_500 ns is
1.5 us and 0.0015 ms): a write floors them once, into the table's unit, and every later write
(append, overwrite, replaceWhere, update, delete, OPTIMIZE) carries the stored raw values
unchanged.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tsfile_catalog import DataError, OptionError, adopt_table, open_table, write_table
from tsfile_catalog.table import create_table, set_properties
from tsfile_catalog.table.alter import unset_properties

# Nanosecond instants: 1.5 us, 2 s + 1 ns, and 2024-01-01T00:00:00.000001500.
INSTANTS_NS = [1_500, 2_000_000_001, 1_704_067_200_000_001_500]
DIVISOR = {"ms": 1_000_000, "us": 1_000, "ns": 1}
UNITS = ("ms", "us", "ns")


def rows(instants: list[int], devices: list[str], values: list[int]) -> pa.Table:
    return pa.table(
        {
            "time": pa.array(instants, pa.timestamp("ns")),
            "dev": devices,
            "v": pa.array(values, pa.int64()),
        }
    )


def raw(url: Path) -> list[tuple[int, str, int]]:
    table = open_table(str(url)).scan(timestamp_as="long").to_arrow()  # the raw stored times
    return sorted((r["time"], r["dev"], r["v"]) for r in table.to_pylist())


def floored(unit: str) -> list[int]:
    return [t // DIVISOR[unit] for t in INSTANTS_NS]


def make(url: Path, unit: str) -> None:
    write_table(
        str(url),
        rows(INSTANTS_NS, ["a", "b", "a"], [1, 2, 3]),
        table="t",
        tag_columns=["dev"],
        options={"timestampPrecision": unit},
    )


@pytest.mark.parametrize("unit", UNITS)
def test_the_write_that_creates_a_table_records_its_time(tmp_path: Path, unit: str) -> None:
    make(tmp_path / "t", unit)
    table = open_table(str(tmp_path / "t"))
    assert (table.properties["time.unit"], table.properties["time.type"]) == (unit, "TIMESTAMP")
    first, second, third = floored(unit)
    assert raw(tmp_path / "t") == [(first, "a", 1), (second, "b", 2), (third, "a", 3)]


@pytest.mark.parametrize("unit", UNITS)
def test_append_without_options_writes_in_the_tables_unit(tmp_path: Path, unit: str) -> None:
    url = tmp_path / "t"
    make(url, unit)
    # No options: the table's own unit, not the writer's ms default.
    open_table(str(url)).append(rows([4_000_001_500], ["c"], [4]))
    write_table(str(url), rows([5_000_001_500], ["c"], [5]))
    written = [(t, v) for t, d, v in raw(url) if d == "c"]
    assert written == [(4_000_001_500 // DIVISOR[unit], 4), (5_000_001_500 // DIVISOR[unit], 5)]
    # Naming the table's unit is fine; naming another is refused, nothing committed.
    open_table(str(url)).append(
        rows([6_000_000_000], ["c"], [6]), options={"timestampPrecision": unit}
    )
    other = "ns" if unit != "ns" else "ms"
    version = open_table(str(url)).version
    with pytest.raises(OptionError) as refused:
        open_table(str(url)).append(
            rows([7_000_000_000], ["c"], [7]), options={"timestampPrecision": other}
        )
    assert str(refused.value).startswith(
        f"option 'timestampPrecision' = '{other}' contradicts table {url}, which stores time in "
    )
    assert open_table(str(url)).version == version


@pytest.mark.parametrize("unit", UNITS)
def test_rewrites_carry_the_stored_times_exactly(tmp_path: Path, unit: str) -> None:
    url = tmp_path / "t"
    make(url, unit)
    first, second, third = floored(unit)
    table = open_table(str(url))
    # update: a TIMESTAMP literal compares with time as the table reads it (TIMESTAMP).
    result = table.update(
        {"v": pc.field("v") + 100}, "time >= TIMESTAMP '2024-01-01 00:00:00'", time_zone="UTC"
    )
    assert result.num_updated_rows == 1
    assert raw(url) == [(first, "a", 1), (second, "b", 2), (third, "a", 103)]
    # delete rewrites the part without b's row; a's rows keep their raw times.
    open_table(str(url)).delete("dev = 'b'")
    assert raw(url) == [(first, "a", 1), (third, "a", 103)]
    open_table(str(url)).append(rows([8_000_000_001], ["b"], [8]))
    open_table(str(url)).maintenance.optimize()
    assert raw(url) == [
        (first, "a", 1),
        (8_000_000_001 // DIVISOR[unit], "b", 8),
        (third, "a", 103),
    ]
    # replaceWhere: the straddling part is rewritten without b, a's times unchanged.
    open_table(str(url)).overwrite(rows([9_000_000_001], ["b"], [9]), where="dev = 'b'")
    assert raw(url) == [
        (first, "a", 1),
        (9_000_000_001 // DIVISOR[unit], "b", 9),
        (third, "a", 103),
    ]


def test_an_instant_an_ns_table_cannot_hold_fails_naming_column_value_and_unit(
    tmp_path: Path,
) -> None:
    url = tmp_path / "t"
    make(url, "ns")
    version = open_table(str(url)).version
    late = pa.table(
        {
            "time": pa.array([0, 10_000_000_000_000], pa.timestamp("ms")),  # 2286-11-20
            "dev": ["a", "a"],
            "v": pa.array([1, 2], pa.int64()),
        }
    )
    with pytest.raises(DataError) as refused:
        open_table(str(url)).append(late)
    assert str(refused.value) == (
        "column 'time' holds 2286-11-20T17:46:40+00:00, which a table storing time in "
        "nanoseconds ('ns') cannot hold: its raw times reach "
        "1677-09-21 00:12:43.145224192 .. 2262-04-11 23:47:16.854775807 UTC"
    )
    assert open_table(str(url)).version == version


def test_the_recorded_time_cannot_be_altered(tmp_path: Path) -> None:
    url = tmp_path / "t"
    make(url, "ns")
    with pytest.raises(OptionError, match="'time.unit' of table .* cannot be set to 'ms'"):
        set_properties(str(url), {"time.unit": "ms"})
    with pytest.raises(OptionError, match="'time.type' of table .* cannot be unset"):
        unset_properties(str(url), ["time.type"])
    assert open_table(str(url)).properties["time.unit"] == "ns"


def test_create_table_records_the_unit_every_writer_then_uses(tmp_path: Path) -> None:
    url = tmp_path / "t"
    make(tmp_path / "src", "us")
    schema = open_table(str(tmp_path / "src")).schema
    create_table(str(url), schema, unit="ns", timestamp_as="timestamp")
    open_table(str(url)).append(rows([1_500], ["a"], [1]))
    assert raw(url) == [(1_500, "a", 1)]
    assert open_table(str(url)).scan(timestamp_as="timestamp").to_arrow().column(
        "time"
    ).type == pa.timestamp("ns", "UTC")
    with pytest.raises(OptionError, match="contradict"):
        create_table(
            str(tmp_path / "u"),
            schema,
            unit="us",
            properties={"time.unit": "ns", "time.type": "BIGINT"},
        )


def test_a_table_from_before_records_nothing_and_reads_as_it_always_did(tmp_path: Path) -> None:
    # adopt_table makes a manifest over existing files, whose unit nothing records.
    make(tmp_path / "src", "ns")
    (tmp_path / "old").mkdir()
    for part in (tmp_path / "src").glob("*.tsfile"):
        shutil.copy(part, tmp_path / "old" / part.name)
    old = adopt_table(str(tmp_path / "old"))
    assert old.time is None and "time.unit" not in old.properties
    assert old.time_unit() == "ms"  # what such a table was always read and written with
    # The caller's unit, as before: here the one the files were written in.
    scanned = old.scan(unit="ns", timestamp_as="timestamp").to_arrow().column("time")
    assert scanned.type == pa.timestamp("ns", "UTC")
    assert sorted(scanned.cast(pa.int64()).to_pylist()) == INSTANTS_NS


def test_the_owner_of_a_table_from_before_may_declare_its_time_once(tmp_path: Path) -> None:
    make(tmp_path / "src", "ns")
    (tmp_path / "old").mkdir()
    for part in (tmp_path / "src").glob("*.tsfile"):
        shutil.copy(part, tmp_path / "old" / part.name)
    url = tmp_path / "old"
    adopt_table(str(url))
    with pytest.raises(OptionError, match="cannot be set alone"):
        set_properties(str(url), {"time.unit": "ns"})
    set_properties(str(url), {"time.unit": "ns", "time.type": "TIMESTAMP"})
    # From now on every writer uses it: an append without options stores nanoseconds.
    open_table(str(url)).append(rows([4_000_001_500], ["c"], [4]))
    assert (4_000_001_500, "c", 4) in raw(url)
    with pytest.raises(OptionError, match="cannot be set to 'us'"):
        set_properties(str(url), {"time.unit": "us", "time.type": "TIMESTAMP"})


@pytest.mark.parametrize("unit", UNITS)
def test_add_part_reads_a_files_times_into_the_tables_unit(tmp_path: Path, unit: str) -> None:
    import pyarrow.parquet as pq

    from tsfile_catalog.table import add_files

    url = tmp_path / "t"
    make(url, unit)
    pq.write_table(rows([7_000_001_500], ["p"], [7]), tmp_path / "p.parquet")
    add_files(str(url), str(tmp_path / "p.parquet"), format="parquet")
    assert (7_000_001_500 // DIVISOR[unit], "p", 7) in raw(url)
    other = "ns" if unit != "ns" else "ms"
    with pytest.raises(OptionError, match="ADD PART option 'timestampPrecision'"):
        add_files(
            str(url),
            str(tmp_path / "p.parquet"),
            format="parquet",
            options={"timestampPrecision": other},
        )
