"""The format-independent helpers every scan uses."""

from __future__ import annotations

import pyarrow as pa

from tsfile_catalog.formats.base import coalesce_tables


def _blocks(sizes: list[int]) -> list[pa.Table]:
    out, start = [], 0
    for size in sizes:
        out.append(pa.table({"time": pa.array(range(start, start + size), pa.int64())}))
        start += size
    return out


def test_blocks_are_recut_into_contiguous_tables_of_at_least_the_row_count() -> None:
    tables = list(coalesce_tables(_blocks([3, 0, 4, 2, 5, 1]), 6))
    assert [t.num_rows for t in tables] == [7, 7, 1]
    assert all(c.num_chunks == 1 for t in tables for c in t.columns)
    assert pa.concat_tables(tables).column("time").to_pylist() == list(range(15))


def test_a_large_contiguous_table_passes_through_uncopied() -> None:
    (big,) = _blocks([10])
    assert list(coalesce_tables([big], 4)) == [big]
    assert next(iter(coalesce_tables([big], 4))) is big


def test_a_block_typed_null_joins_the_typed_blocks() -> None:
    typed = pa.table({"temp": pa.array([1.5], pa.float64())})
    untyped = pa.table({"temp": pa.nulls(2)})
    (table,) = coalesce_tables([typed, untyped], 10)
    assert table.schema.field("temp").type == pa.float64()
    assert table.column("temp").to_pylist() == [1.5, None, None]


def test_nothing_in_nothing_out() -> None:
    assert list(coalesce_tables(_blocks([0, 0]), 5)) == []
