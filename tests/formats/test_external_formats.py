"""The Parquet, ORC and CSV adapters without Spark: statistics equal what the rows say, and
scans return exactly the rows of a slice, whatever the file's time representation."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from tests.factories import table_schema
from tsfile_catalog.exceptions import DataError, SchemaMismatchError
from tsfile_catalog.formats.base import ScanSlice
from tsfile_catalog.formats.csv import CSV
from tsfile_catalog.formats.external import ExternalFormat
from tsfile_catalog.formats.orc import ORC
from tsfile_catalog.formats.parquet import PARQUET
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.external import parse_add_part_options
from tsfile_catalog.metadata.parts import DeviceStats, FieldStats, PartFile
from tsfile_catalog.metadata.schema import DataType, TableSchema

SCHEMA = table_schema(
    "weather",
    tags=("city", "device"),
    fields=[("temp", DataType.DOUBLE), ("hum", DataType.INT64), ("note", DataType.STRING)],
)
# 40 rows, 4 devices; temp has nulls, note is sparse.
ROWS = pa.table(
    {
        "time": pa.array([1_000 + i * 10 for i in range(40)], pa.int64()),
        "city": ["bj" if i % 4 < 2 else "sh" for i in range(40)],
        "device": [f"d{i % 2}" for i in range(40)],
        "temp": [None if i % 7 == 0 else i / 4 for i in range(40)],
        "hum": pa.array([100 - i for i in range(40)], pa.int32()),
        "note": ["x" if i % 9 == 0 else None for i in range(40)],
    }
)


def _write(fmt: str, path: Path, data: pa.Table) -> None:
    if fmt == "parquet":
        pq.write_table(data, path, row_group_size=8)
    elif fmt == "orc":
        orc.write_table(data, path, stripe_size=1024)
    else:
        pacsv.write_csv(data, path)


ADAPTERS: dict[str, ExternalFormat] = {"parquet": PARQUET, "orc": ORC, "csv": CSV}


def _part(fmt: str, path: Path, **options: str) -> tuple[TableSchema, PartFile]:
    parsed = parse_add_part_options({"path": str(path), "format": fmt, **options})
    return ADAPTERS[fmt].read_part(
        FileIO(str(path)),
        str(path),
        table=SCHEMA,
        options=parsed,
        partition_values={},
        size_bytes=path.stat().st_size,
    )


def _expected_devices(data: pa.Table) -> list[DeviceStats]:
    out = []
    for row in (
        data.group_by(["city", "device"])
        .aggregate([("time", "count"), ("time", "min"), ("time", "max")])
        .to_pylist()
    ):
        out.append(
            DeviceStats(
                (row["city"], row["device"]), row["time_count"], row["time_min"], row["time_max"]
            )
        )
    return sorted(out, key=lambda d: d.tags)


@pytest.mark.parametrize("fmt", ["parquet", "orc", "csv"])
def test_part_statistics_equal_what_the_rows_say(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / f"w.{fmt}"
    _write(fmt, path, ROWS)
    schema, part = _part(fmt, path)
    assert schema == SCHEMA
    assert (part.row_count, part.min_time, part.max_time) == (40, 1_000, 1_390)
    assert part.devices == tuple(_expected_devices(ROWS))
    assert part.tags["city"].values == frozenset({"bj", "sh"})
    assert part.external and part.format == fmt and part.path == str(path)
    for name in ("temp", "hum", "note"):
        column = ROWS.column(name)
        bounds = pc.min_max(column).as_py()
        assert part.fields[name] == FieldStats(bounds["min"], bounds["max"], column.null_count)


def test_float_statistics_with_nan_are_unbounded(tmp_path: Path) -> None:
    # Parquet footers skip NaN; Spark orders NaN above every number, so no max bounds it.
    data = ROWS.set_column(3, "temp", pa.array([float("nan")] + [1.0] * 39))
    _write("parquet", tmp_path / "n.parquet", data)
    _, part = _part("parquet", tmp_path / "n.parquet")
    assert part.fields["temp"] == FieldStats(None, None, 0)


@pytest.mark.parametrize(
    ("arrow_type", "precision", "scale"),
    [
        (pa.timestamp("ns", "Asia/Shanghai"), "ms", 1_000_000),
        (pa.timestamp("s"), "us", 1),
        (pa.int64(), "ms", None),
    ],
)
def test_scan_returns_exactly_the_slice_for_any_time_representation(
    tmp_path: Path, arrow_type: pa.DataType, precision: str, scale: int | None
) -> None:
    # File times: seconds 1..40 as the file's type; raw table time in ``precision``.
    seconds = list(range(1, 41))
    per = {"ms": 1_000, "us": 1_000_000}[precision]
    if scale is None:
        stored = pa.array([s * per for s in seconds], arrow_type)
    else:
        stored = pa.array([s * (1_000_000_000 if arrow_type.unit == "ns" else 1) for s in seconds])
        stored = stored.cast(pa.int64()).cast(arrow_type)
    data = ROWS.set_column(0, "stamp", stored)
    path = tmp_path / "t.parquet"
    _write("parquet", path, data)
    _, part = _part("parquet", path, timeColumn="Stamp", timestampPrecision=precision)
    assert (part.min_time, part.max_time) == (1 * per, 40 * per)
    piece = ScanSlice(
        columns=("city", "device", "hum"),
        tag_names=SCHEMA.tag_names,
        time_min=5 * per + 1,  # between two rows: the first row must not come back
        time_max=20 * per,
        tag_values={"city": frozenset({"bj"})},
        devices=(("bj", "d1"),),
    )
    got = pa.concat_tables(list(PARQUET.scan(FileIO(str(path)), part, SCHEMA, piece)))
    expected = [
        (s * per, 100 - i)
        for i, s in enumerate(seconds)
        if 5 * per + 1 <= s * per <= 20 * per and i % 4 == 1
    ]
    pairs = zip(got.column("time").to_pylist(), got.column("hum").to_pylist(), strict=True)
    assert list(pairs) == expected
    assert set(got.column("device").to_pylist()) == {"d1"}


def test_date_time_column_is_midnight_utc(tmp_path: Path) -> None:
    days = pa.array([dt.date(2024, 1, d) for d in range(1, 3)])
    data = pa.table({"day": days, "city": ["a", "b"], "device": ["x", "y"]})
    path = tmp_path / "d.orc"
    _write("orc", path, data)
    _, part = _part("orc", path, timeColumn="day")
    epoch = int(dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc).timestamp() * 1000)
    assert (part.min_time, part.max_time) == (epoch, epoch + 86_400_000)
    assert part.fields["temp"] == FieldStats(None, None, 2)  # absent FIELD: all null


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_null_times_are_refused_naming_the_file_and_the_count(tmp_path: Path, fmt: str) -> None:
    data = ROWS.set_column(0, "time", pa.array([None, 2, None, *range(4, 41)], pa.int64()))
    path = tmp_path / f"n.{fmt}"
    _write(fmt, path, data)
    with pytest.raises(DataError, match=rf"n\.{fmt}: time column 'time' holds 2 null values"):
        _part(fmt, path)


@pytest.mark.parametrize(
    ("arrow_type", "value", "precision", "shown"),
    [
        (pa.timestamp("us"), dt.datetime(2286, 11, 20), "ns", "2286-11-20"),
        (pa.timestamp("ms", "UTC"), dt.datetime(9999, 12, 31), "ns", "9999-12-31"),
        (pa.date32(), dt.date(9999, 12, 31), "ns", "9999-12-31"),
        (pa.timestamp("s"), dt.datetime(9999, 12, 31), "ns", "9999-12-31"),
    ],
)
def test_times_outside_the_units_range_are_refused_not_wrapped(
    tmp_path: Path, arrow_type: pa.DataType, value: object, precision: str, shown: str
) -> None:
    early = dt.date(2020, 1, 1) if pa.types.is_date(arrow_type) else dt.datetime(2020, 1, 1)
    column = pa.array([early] * 39 + [value], arrow_type)
    path = tmp_path / "far.parquet"
    _write("parquet", path, ROWS.set_column(0, "stamp", column))
    with pytest.raises(DataError, match=rf"far\.parquet: column 'stamp' holds {shown}.*ns"):
        _part("parquet", path, timeColumn="stamp", timestampPrecision=precision)
    if pa.types.is_date(arrow_type):
        return  # a DATE FIELD stays a date
    # A FIELD of TIMESTAMP type is converted by the same rule.
    schema = table_schema("w", tags=("city", "device"), fields=[("seen", DataType.TIMESTAMP)])
    data = ROWS.select(["time", "city", "device"]).append_column("seen", column)
    _write("parquet", path, data)
    parsed = parse_add_part_options(
        {"path": str(path), "format": "parquet", "timestampPrecision": precision}
    )
    with pytest.raises(DataError, match=rf"far\.parquet: column 'seen' holds {shown}"):
        PARQUET.read_part(
            FileIO(str(path)),
            str(path),
            table=schema,
            options=parsed,
            partition_values={},
            size_bytes=1,
        )


def test_negative_sub_unit_times_floor_as_the_writer_does(tmp_path: Path) -> None:
    # -1.5 ms, -1 ms, -0.5 ns ... in ns, read in ms: the writer floors (-1.5 ms is -2).
    nanos = [-1_500_000, -1_000_000, -1, 0, 1, 1_500_000]
    stored = pa.array(nanos + [10**9] * 34, pa.int64()).cast(pa.timestamp("ns"))
    path = tmp_path / "neg.parquet"
    _write("parquet", path, ROWS.set_column(0, "time", stored))
    _, part = _part("parquet", path, timestampPrecision="ms")
    assert part.min_time == -2
    everything = ScanSlice(columns=(), tag_names=SCHEMA.tag_names)
    got = pa.concat_tables(list(PARQUET.scan(FileIO(str(path)), part, SCHEMA, everything)))
    assert sorted(got.column("time").to_pylist())[:6] == [-2, -1, -1, 0, 0, 1]
    # A pushed time range keeps every file value that floors into it (1 ns and 1.5 ms are
    # raw 0 and 1: both are in [0, 1]).
    narrow = ScanSlice(columns=(), tag_names=SCHEMA.tag_names, time_min=0, time_max=1)
    got = pa.concat_tables(list(PARQUET.scan(FileIO(str(path)), part, SCHEMA, narrow)))
    assert sorted(got.column("time").to_pylist()) == [0, 0, 1]


def test_half_floats_widen_to_float(tmp_path: Path) -> None:
    import numpy as np

    halves = np.array([0.5 + i for i in range(40)], dtype=np.float16)
    schema = table_schema("w", tags=("city", "device"), fields=[("temp", DataType.FLOAT)])
    path = tmp_path / "h.parquet"
    _write(
        "parquet",
        path,
        ROWS.select(["time", "city", "device"]).append_column("temp", pa.array(halves)),
    )
    parsed = parse_add_part_options({"path": str(path), "format": "parquet"})
    _, part = PARQUET.read_part(
        FileIO(str(path)),
        str(path),
        table=schema,
        options=parsed,
        partition_values={},
        size_bytes=1,
    )
    assert part.fields["temp"] == FieldStats(0.5, 39.5, 0)
    piece = ScanSlice(columns=("temp",), tag_names=schema.tag_names)
    got = pa.concat_tables(list(PARQUET.scan(FileIO(str(path)), part, schema, piece)))
    assert got.column("temp").type == pa.float32()
    assert got.column("temp").to_pylist() == [0.5 + i for i in range(40)]


def test_a_column_whose_type_changed_fails_naming_file_column_and_types(tmp_path: Path) -> None:
    path = tmp_path / "c.parquet"
    _write("parquet", path, ROWS)
    _, part = _part("parquet", path)
    # Rewritten with the same rows but 'hum' as text; an older part records no stamp, so
    # only the schema can tell.
    _write("parquet", path, ROWS.set_column(4, "hum", pa.array([str(i) for i in range(40)])))
    old = dataclasses.replace(part, source_stamp=None)
    piece = ScanSlice(columns=("hum",), tag_names=SCHEMA.tag_names)
    with pytest.raises(
        SchemaMismatchError,
        match=r"c\.parquet: column 'hum' is string now, but table column 'hum' is INT64 .*"
        r"re-add it with ALTER TABLE … ADD PART",
    ):
        list(PARQUET.scan(FileIO(str(path)), old, SCHEMA, piece))
