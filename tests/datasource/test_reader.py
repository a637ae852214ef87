"""The batch readers without Spark: the row limit (the ``limit`` read option: the first rows,
and no read past them), and the devices a FIELD filter leaves to read or to statistics."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tests.factories import weather_schema
from tests.table.helpers import append_rows
from tsfile_catalog.datasource.partial_aggregates import TsFileStatsPartition
from tsfile_catalog.datasource.reader import _first_rows
from tsfile_catalog.datasource.source import TsFileDataSource
from tsfile_catalog.exec.arrow_filter import apply_filter
from tsfile_catalog.metadata.expressions import Compare
from tsfile_catalog.metadata.partial_aggregates import PartialSpec, PartialState
from tsfile_catalog.metadata.schema import DataType


@pytest.mark.parametrize(
    ("limit", "expected", "pulled"),
    [(0, [], 0), (3, [0, 1, 2], 1), (5, [0, 1, 2, 3, 4], 2), (9, list(range(8)), 3)],
)
def test_a_limit_returns_the_first_rows_and_reads_no_further(
    limit: int, expected: list[int], pulled: int
) -> None:
    opened: list[int] = []

    def tables() -> Iterator[pa.Table]:
        for start in (0, 4):
            opened.append(start)  # a slice read: what a limit must stop
            yield pa.table({"v": list(range(start, start + 4))})
        opened.append(-1)

    rows = [v for t in _first_rows(tables(), limit) for v in t.column("v").to_pylist()]
    assert rows == expected
    assert len(opened) == pulled


def test_a_field_filter_reads_only_devices_whose_statistics_allow_a_match(
    tmp_path: Path,
) -> None:
    schema = weather_schema(("v", DataType.DOUBLE))
    rows = pa.table(
        {
            "time": pa.array(list(range(6)) * 3, pa.int64()),
            "city": ["bj"] * 18,
            "device": ["cold"] * 6 + ["warm"] * 6 + ["hot"] * 6,
            "v": [10.0, 12.0, 11.0, 15.0, 20.0, 13.0]
            + [25.0, 31.0, 28.0, 30.0, 26.0, 29.0]
            + [30.0, 35.0, 31.0, 40.0, 33.0, math.nan],
        }
    )
    append_rows(str(tmp_path), rows, schema)
    source = TsFileDataSource({"path": str(tmp_path), "where": "v > 29", "columns": "device,v"})
    reader = source.reader(source.schema())
    partitions = reader.partitions()
    read = {s.devices for p in partitions for s in p.slices}  # type: ignore[attr-defined]
    assert read == {(("bj", "hot"), ("bj", "warm"))}
    got = pa.Table.from_batches([b for p in partitions for b in reader.read(p)])
    expected = apply_filter(rows, Compare("v", ">", 29.0, as_double=True)).select(["device", "v"])
    # As text: NaN (above 29 in Spark's order) equals itself there.
    assert sorted(map(str, got.to_pylist())) == sorted(map(str, expected.to_pylist()))


def test_a_field_filter_answers_whole_devices_in_the_partition_that_reads_the_rest(
    tmp_path: Path,
) -> None:
    schema = weather_schema(("v", DataType.DOUBLE))
    rows = pa.table(
        {
            "time": pa.array(list(range(4)) * 3, pa.int64()),
            "city": ["bj"] * 12,
            "device": ["cold"] * 4 + ["warm"] * 4 + ["hot"] * 4,
            "v": [10.0, 12.0, 11.0, 15.0] + [25.0, 31.0, 28.0, 30.0] + [30.0, 35.0, 31.0, 40.0],
        }
    )
    append_rows(str(tmp_path), rows, schema)
    spec = PartialSpec(
        (), None, (PartialState("count_all", None, "n"), PartialState("sum", "v", "total"))
    )
    source = TsFileDataSource(
        {"path": str(tmp_path), "where": "v > 29", "partialAggregate": spec.to_json()}
    )
    reader = source.reader(source.schema())
    (partition,) = reader.partitions()  # no task of its own for the answered rows
    assert isinstance(partition, TsFileStatsPartition)
    assert [s.devices for s in partition.slices] == [(("bj", "warm"),)]
    # The hot device's partial row, and the row of no rows every global aggregate gets.
    assert partition.rows == ((4, 136.0), (0, None))
    got = pa.Table.from_batches(list(reader.read(partition)))
    assert (pc.sum(got["n"]).as_py(), pc.sum(got["total"]).as_py()) == (6, 197.0)
