"""Rows read in the driver summarised per device (table/aggregates.py), no Spark: the FLOAT/
DOUBLE double sum follows the footers' rule (kept_double_sum), so a NaN or an infinity leaves
it unknown and the query to Spark."""

from __future__ import annotations

import math

import pyarrow as pa

from tests.factories import weather_schema
from tsfile_catalog.exec.stats_aggregates import device_stats_of
from tsfile_catalog.metadata.parts import SeriesStats
from tsfile_catalog.metadata.schema import DataType

SCHEMA = weather_schema(("d", DataType.DOUBLE), ("f", DataType.FLOAT))


def _stats(d: list[float | None], f: list[float | None]) -> dict[str, SeriesStats]:
    rows = pa.table(
        {
            "time": pa.array(range(len(d)), pa.int64()),
            "city": ["bj"] * len(d),
            "device": ["x"] * len(d),
            "d": pa.array(d, pa.float64()),
            "f": pa.array(f, pa.float32()),
        }
    )
    (device,) = device_stats_of(rows, SCHEMA, ["d", "f"])
    assert device.fields is not None
    return dict(device.fields)


def test_double_sums_of_rows_read() -> None:
    stats = _stats([0.1, None, 0.2, -3.5], [0.1, 2.5, None, None])
    assert stats["d"].sum_double == 0.1 + 0.2 - 3.5
    # FLOAT values added as doubles, as Spark's sum(float) does: 0.1f is not 0.1.
    assert stats["f"].sum_double == float(pa.scalar(0.1, pa.float32()).as_py()) + 2.5
    assert (stats["d"].count, stats["f"].count) == (3, 2)


def test_no_double_sum_with_a_nan_or_an_infinity() -> None:
    stats = _stats([1.0, math.nan, 2.0], [1.0, math.inf, None])
    assert stats["d"].sum_double is None and stats["f"].sum_double is None
    assert math.isnan(stats["d"].max)  # Spark orders NaN above every number
    assert _stats([None, None], [1e300, 1e300])["f"].sum_double is None  # float32: inf
    assert _stats([1e300, 1e300], [None, None])["d"].sum_double is None  # could overflow
    assert _stats([None], [None])["d"] == SeriesStats(0)
