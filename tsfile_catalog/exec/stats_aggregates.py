"""The rows an aggregate's statistics cannot answer, read and summarised per part and device.

:func:`~tsfile_catalog.metadata.stats_aggregates.plan_aggregates` names the slices to read (devices
straddling a time bound, parts without device statistics); :func:`read_device_stats` reads them
through the one shared read path (:func:`~tsfile_catalog.exec.read.read_slices`) and turns
each part's rows into the same per-device :class:`~tsfile_catalog.metadata.parts.DeviceStats`
the manifest holds, exact and Spark-ordered (a NaN is the largest number), so
:func:`~tsfile_catalog.metadata.stats_aggregates.finish_aggregates` merges both alike.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from tsfile_catalog.exec.read import read_slices
from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.metadata.expressions import INT64_MAX, ScanPushdown
from tsfile_catalog.metadata.parts import DeviceStats, SeriesStats, kept_double_sum
from tsfile_catalog.metadata.schema import TIME_COLUMN, DataType, TableSchema
from tsfile_catalog.metadata.slices import ReadSlice

__all__ = ["read_device_stats", "device_stats_of"]

_FLOATS = frozenset({DataType.FLOAT, DataType.DOUBLE})
_INTS = frozenset({DataType.INT32, DataType.INT64})
_KEY = "__device"  # the group key of a table without TAG columns (one device)


def read_device_stats(
    scan: ResolvedScan,
    slices: Iterable[ReadSlice],
    pushdown: ScanPushdown,
    columns: Sequence[str],
) -> list[DeviceStats]:
    """Per slice (one part each, or one merge by key), the statistics of ``columns``
    (FIELDs) of every device with a row in it. Kept per part: a device's equal times in two
    parts are two rows to Spark, which a max_by must see as a tie (parts of two writes of a
    ``last`` table never are: a merge reads them as one)."""
    wanted = [TIME_COLUMN, *scan.schema.tag_names, *columns]
    out: list[DeviceStats] = []
    for piece in slices:
        tables = list(read_slices(scan, [piece], pushdown, wanted))
        if tables:
            out.extend(device_stats_of(pa.concat_tables(tables), scan.schema, columns))
    return out


def device_stats_of(
    rows: pa.Table, schema: TableSchema, columns: Sequence[str]
) -> list[DeviceStats]:
    """Per device (TAG values) of ``rows`` (``time``, the TAG columns and ``columns``, raw
    domain), its row count, time range and, per column, a :class:`SeriesStats` with every
    statistic (an INT sum only while it cannot overflow BIGINT; a FLOAT/DOUBLE one, added as
    doubles, under :func:`~tsfile_catalog.metadata.parts.kept_double_sum`'s rule)."""
    tags = list(schema.tag_names)
    keys = tags or [_KEY]
    data: dict[str, pa.ChunkedArray | pa.Array] = {
        name: rows.column(name) for name in [TIME_COLUMN, *tags]
    }
    if not tags:
        data[_KEY] = pa.nulls(rows.num_rows, pa.int8())
    aggregations: list[tuple[str, str]] = [
        (TIME_COLUMN, "count"),
        (TIME_COLUMN, "min"),
        (TIME_COLUMN, "max"),
    ]
    time = rows.column(TIME_COLUMN)
    for i, name in enumerate(columns):
        column = schema.column(name)
        assert column is not None
        values = rows.column(name)
        data[f"v{i}"] = values
        # The time of each non-null value: its min/max are the first/last value's times.
        data[f"t{i}"] = pc.if_else(pc.is_valid(values), time, pa.scalar(None, pa.int64()))
        aggregations += [(f"v{i}", "count"), (f"v{i}", "first"), (f"v{i}", "last")]
        aggregations += [(f"t{i}", "min"), (f"t{i}", "max")]
        if column.type in _FLOATS:
            nan = pc.is_nan(values)
            data[f"x{i}"] = pc.if_else(nan, pa.scalar(None, values.type), values)
            data[f"n{i}"] = pc.cast(nan, pa.int64())
            aggregations += [(f"x{i}", "min"), (f"x{i}", "max"), (f"n{i}", "sum")]
            # Spark adds FLOAT values as doubles (float32 -> float64 is exact).
            data[f"d{i}"] = pc.cast(values, pa.float64())
            aggregations.append((f"d{i}", "sum"))
        elif column.type is not DataType.BLOB:
            aggregations += [(f"v{i}", "min"), (f"v{i}", "max")]
        if column.type in _INTS:
            aggregations.append((f"v{i}", "sum"))
        if column.type is DataType.BOOLEAN:
            data[f"b{i}"] = pc.cast(values, pa.int64())  # the number of true values
            aggregations.append((f"b{i}", "sum"))
    table = pa.table(data).sort_by([(k, "ascending") for k in keys] + [(TIME_COLUMN, "ascending")])
    # Ordered (single-threaded) grouping: "first"/"last" follow time order.
    grouped = table.group_by(keys, use_threads=False).aggregate(aggregations).to_pylist()
    types = {c.name: c.type for c in schema.fields}
    out = []
    for row in grouped:
        fields = {name: _series(row, i, types[name]) for i, name in enumerate(columns)}
        out.append(
            DeviceStats(
                tuple(row[t] for t in tags),
                int(row["time_count"]),
                int(row["time_min"]),
                int(row["time_max"]),
                fields=fields,
            )
        )
    return out


def _series(row: Mapping[str, Any], i: int, type_: DataType) -> SeriesStats:
    count = int(row[f"v{i}_count"])
    if count == 0:
        return SeriesStats(0)
    sum_double = None
    if type_ in _FLOATS:
        nans = int(row[f"n{i}_sum"] or 0)
        low, high = row[f"x{i}_min"], row[f"x{i}_max"]
        if nans:
            # Spark orders NaN above every number.
            high = math.nan
            low = math.nan if low is None else low
        else:
            sum_double = kept_double_sum(count, float(row[f"d{i}_sum"]), low, high)
    else:
        low, high = row.get(f"v{i}_min"), row.get(f"v{i}_max")
    total = row.get(f"v{i}_sum")
    if type_ is DataType.BOOLEAN:
        total = int(row[f"b{i}_sum"])
    elif total is not None:
        bound = count * max(abs(low), abs(high))
        total = total if bound <= INT64_MAX else None
    return SeriesStats(
        count,
        sum=total,
        min=low,
        max=high,
        first=row[f"v{i}_first"],
        first_time=row[f"t{i}_min"],
        last=row[f"v{i}_last"],
        last_time=row[f"t{i}_max"],
        sum_double=sum_double,
    )
