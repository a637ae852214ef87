"""Per-device FIELD statistics read from real TsFiles (tsfile 2.5's series metadata), kept only
where exact under Spark's semantics (no Spark here)."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from tests.factories import weather_schema
from tsfile_catalog.formats.tsfile import WriteSettings, opened, part_from_reader, write_file
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.metadata.stats import SeriesStats

NAN = math.nan
TYPES = {
    "b": (DataType.BOOLEAN, pa.bool_()),
    "i": (DataType.INT32, pa.int32()),
    "l": (DataType.INT64, pa.int64()),
    "f": (DataType.FLOAT, pa.float32()),  # a NaN after the first value
    "d": (DataType.DOUBLE, pa.float64()),  # a NaN first
    "e": (DataType.DOUBLE, pa.float64()),  # no NaN
    "g": (DataType.FLOAT, pa.float32()),  # finite
    "inf": (DataType.DOUBLE, pa.float64()),  # an infinity: order decides Spark's sum
    "s": (DataType.STRING, pa.string()),
    "t": (DataType.TEXT, pa.string()),
    "day": (DataType.DATE, pa.date32()),
    "bin": (DataType.BLOB, pa.binary()),
    "none": (DataType.INT64, pa.int64()),
    "huge": (DataType.INT64, pa.int64()),
}
SCHEMA = weather_schema(*((name, type_) for name, (type_, _) in TYPES.items()))
TIMES = [1, 2, 3, 4, 5]
VALUES: dict[str, list[Any]] = {
    "b": [True, None, False, True, None],
    "i": [5, None, -3, 7, None],
    "l": [None, 10, -20, 30, None],
    "f": [1.5, None, NAN, -2.0, 3.0],
    "d": [NAN, 1.0, None, -1.0, 2.5],
    "e": [0.5, None, -1.25, 4.0, None],
    "g": [0.5, 0.25, None, 3e7, -1.0],  # sums exactly in a double, not in a float
    "inf": [1.0, math.inf, None, None, -1.0],
    "s": ["m", None, "b", "zz", "é"],
    "t": ["x", "y", None, "a", None],
    "day": [dt.date(2024, 3, 1), None, dt.date(2023, 1, 2), None, dt.date(2024, 1, 1)],
    "bin": [b"x", None, b"a", None, None],
    "none": [None] * 5,
    "huge": [2**62, None, 2**62, None, None],  # TsFile sums in a double: not exact
}


def _stats(tmp_path: Path) -> dict[str, SeriesStats]:
    path = str(tmp_path / "all.tsfile")
    data = pa.table(
        {
            "time": pa.array(TIMES, pa.int64()),
            "city": pa.array(["bj"] * 5),
            "device": pa.array(["x"] * 5),
            **{name: pa.array(VALUES[name], arrow) for name, (_, arrow) in TYPES.items()},
        }
    )
    write_file(path, data, SCHEMA, WriteSettings(), chunk_rows=2)
    with opened(FileIO(path), path) as reader:
        part = part_from_reader(reader, SCHEMA, "all.tsfile", 1)
    assert part.devices is not None and len(part.devices) == 1
    fields = part.devices[0].fields
    assert fields is not None
    return dict(fields)


def _present(name: str) -> list[tuple[int, Any]]:
    return [(t, v) for t, v in zip(TIMES, VALUES[name], strict=True) if v is not None]


def _full(
    name: str, *, with_sum: bool = False, with_range: bool = True, with_double_sum: bool = False
) -> SeriesStats:
    """What Spark would compute from the rows: count, sum, min, max, first/last non-null."""
    pairs = _present(name)
    values = [v for _, v in pairs]
    return SeriesStats(
        len(values),
        sum=sum(values) if with_sum else None,
        min=min(values) if with_range else None,
        max=max(values) if with_range else None,
        first=pairs[0][1],
        first_time=pairs[0][0],
        last=pairs[-1][1],
        last_time=pairs[-1][0],
        sum_double=math.fsum(values) if with_double_sum else None,
    )


def test_exact_statistics_are_kept(tmp_path: Path) -> None:
    stats = _stats(tmp_path)
    assert stats["i"] == _full("i", with_sum=True)
    assert stats["l"] == _full("l", with_sum=True)
    # The number of true values as the sum; min/max follow from it.
    assert stats["b"] == replace(_full("b"), sum=2)
    # A double sum (Spark's own depends on the order of additions; these are exact in any).
    assert stats["e"] == _full("e", with_double_sum=True)
    assert stats["s"] == _full("s")
    assert stats["day"] == _full("day")
    assert stats["t"] == _full("t", with_range=False)  # TsFile keeps no TEXT min/max


def test_what_is_not_exact_is_dropped(tmp_path: Path) -> None:
    stats = _stats(tmp_path)
    # A NaN anywhere hides from TsFile's min/max (Spark orders it above every number).
    f = stats["f"]
    assert (f.count, f.min, f.max) == (4, None, None)
    assert (f.first, f.first_time, f.last, f.last_time) == (1.5, 1, 3.0, 5)
    d = stats["d"]
    assert (d.count, d.min, d.max, d.first, d.first_time) == (4, None, None, None, None)
    assert (d.last, d.last_time) == (2.5, 5)
    assert stats["huge"].sum is None and stats["huge"].max == 2**62
    assert stats["bin"] == SeriesStats(2)  # counted only
    # FLOAT values summed as doubles, as Spark's sum(float) does; no sum with a NaN or an inf.
    g = stats["g"]
    assert g.sum_double == 29_999_999.75
    assert (stats["f"].sum_double, stats["d"].sum_double, stats["inf"].sum_double) == (None,) * 3
    assert stats["none"] == SeriesStats(0)
