"""The writer's ordering and duplicate handling (no Spark, no files).

``sort_and_dedupe`` orders rows by integer device codes and skips the sort for input already
in order; ``_sort_and_dedupe_by_keys`` is the sort on the TAG strings it replaces (and still
uses when codes would not fit). Whatever the input, both must give the same rows in the same
order and refuse the same duplicates.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.factories import table_schema
from tsfile_catalog.exceptions import DataError
from tsfile_catalog.formats.tsfile import sort
from tsfile_catalog.formats.tsfile.sort import (
    _sort_and_dedupe_by_keys,
    sort_and_dedupe,
    split_duplicates,
)
from tsfile_catalog.metadata.schema import DataType, TableSchema

# Few values, so devices and (device, time) pairs repeat; byte-wise order differs from
# code-point order only past ASCII, hence the non-ASCII and empty values.
TAG_VALUES = st.one_of(st.none(), st.sampled_from(["", "a", "b", "B", "ab", "é", "z\u00ff", "日"]))


@st.composite
def tables(draw: st.DrawFn) -> tuple[pa.Table, tuple[str, ...]]:
    tags = tuple(draw(st.sampled_from([(), ("city",), ("city", "device")])))
    n = draw(st.integers(0, 40))
    columns: dict[str, pa.Array] = {
        "time": pa.array(draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n)), pa.int64())
    }
    for tag in tags:
        values = draw(st.lists(TAG_VALUES, min_size=n, max_size=n))
        columns[tag] = pa.array(values, pa.string())
    # The row's input position: which of two duplicates survives shows in it.
    columns["seq"] = pa.array(range(n), pa.int64())
    data = pa.table(columns)
    if draw(st.booleans()):
        # Spark hands a task many small batches: a chunked table.
        chunk = draw(st.integers(1, 8))
        data = pa.Table.from_batches(data.to_batches(max_chunksize=chunk), schema=data.schema)
    if draw(st.booleans()):
        # Input already in order (with its duplicates): the path that skips the sort.
        keys = [(k, "ascending") for k in (*tags, "time")]
        data = data.take(pc.sort_indices(data, sort_keys=keys))
    return data, tags


def _schema(tags: tuple[str, ...]) -> TableSchema:
    return table_schema("t", tags=tags, fields=[("seq", DataType.INT64)])


def _outcome(
    fn: Callable[[pa.Table, TableSchema, str], pa.Table],
    data: pa.Table,
    tags: tuple[str, ...],
    on_duplicate: str,
) -> object:
    try:
        return fn(data, _schema(tags), on_duplicate).to_pylist()
    except DataError as e:
        return ("error", str(e))


@settings(max_examples=150, deadline=None)
@given(tables(), st.sampled_from(["error", "last"]))
def test_same_rows_order_and_errors_as_the_sort_on_tag_strings(
    drawn: tuple[pa.Table, tuple[str, ...]], on_duplicate: str
) -> None:
    data, tags = drawn
    assert _outcome(sort_and_dedupe, data, tags, on_duplicate) == _outcome(
        _sort_and_dedupe_by_keys, data, tags, on_duplicate
    )


@st.composite
def device_runs(draw: st.DrawFn) -> tuple[pa.Table, tuple[str, ...]]:
    """What a task of a clustered write receives: runs of one device's rows, the devices out
    of order, a device in one run or several, times in a run ascending or not, keys repeated
    within and across runs."""
    tags = draw(st.sampled_from([("city",), ("city", "device")]))
    devices = draw(
        st.lists(st.tuples(*[TAG_VALUES for _ in tags]), min_size=1, max_size=4, unique=True)
    )
    runs = draw(
        st.lists(
            st.tuples(
                st.sampled_from(devices),
                st.lists(st.integers(0, 2), min_size=1, max_size=3),
                st.sampled_from([True, True, True, False]),
            ),
            min_size=1,
            max_size=6,
        )
    )
    times: list[int] = []
    values: list[list[str | None]] = [[] for _ in tags]
    for device, run_times, ascending in runs:
        for t in sorted(run_times) if ascending else run_times:
            times.append(t)
            for column, value in zip(values, device, strict=True):
                column.append(value)
    columns = {"time": pa.array(times, pa.int64())}
    for tag, column in zip(tags, values, strict=True):
        columns[tag] = pa.array(column, pa.string())
    columns["seq"] = pa.array(range(len(times)), pa.int64())
    data = pa.table(columns)
    chunk = draw(st.integers(1, 8))
    return pa.Table.from_batches(data.to_batches(max_chunksize=chunk), schema=data.schema), tags


@settings(max_examples=150, deadline=None)
@given(device_runs(), st.sampled_from(["error", "last"]))
def test_runs_of_a_device_moved_whole_give_what_the_sort_gives(
    drawn: tuple[pa.Table, tuple[str, ...]], on_duplicate: str
) -> None:
    # Runs of any length are moved whole here (in a write, runs of thousands of rows): the
    # rows, their order (the last of a repeated key is the last in the input) and the errors
    # are the stable sort's.
    data, tags = drawn
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sort, "_MIN_RUN_ROWS", 1)
        moved = _outcome(sort_and_dedupe, data, tags, on_duplicate)
    assert moved == _outcome(_sort_and_dedupe_by_keys, data, tags, on_duplicate)


def test_the_last_of_a_key_in_two_runs_of_a_device_is_the_later_runs() -> None:
    # Device 'x' in two runs (another device between them) repeating time 3: onDuplicate=last
    # keeps the row of the later run, as the stable sort does.
    data = _rows([3, 0, 3], ["x", "y", "x"])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sort, "_MIN_RUN_ROWS", 1)
        kept = sort_and_dedupe(data, SCHEMA, "last")
        with pytest.raises(DataError, match=r"device \(city='x'\) at time 3"):
            sort_and_dedupe(data, SCHEMA, "error")
    assert kept.column("seq").to_pylist() == [2, 1]


def test_a_shuffled_tasks_device_runs_are_put_in_order_without_copying_rows() -> None:
    # Three devices of 5,000 rows each, as a shuffle hands them over: each device's rows
    # together and in time order, the devices not. Moving the runs leaves the output's
    # columns slices of the input's own buffers.
    n = 5_000
    data = pa.table(
        {
            "time": pa.array([t for _ in range(3) for t in range(n)], pa.int64()),
            "city": pa.array([c for c in ("c", "a", "b") for _ in range(n)]),
            "seq": pa.array(range(3 * n), pa.int64()),
        }
    )
    out = sort_and_dedupe(data, SCHEMA, "error")
    assert out.column("city").to_pylist() == ["a"] * n + ["b"] * n + ["c"] * n
    assert out.column("seq").to_pylist() == [*range(n, 3 * n), *range(n)]
    source = data.column("seq").chunks[0].buffers()[1].address
    assert {c.buffers()[1].address for c in out.column("seq").chunks} == {source}


SCHEMA = table_schema("t", tags=("city",), fields=[("seq", DataType.INT64)])


def _rows(times: list[int], cities: list[str]) -> pa.Table:
    return pa.table(
        {
            "time": pa.array(times, pa.int64()),
            "city": pa.array(cities),
            "seq": pa.array(range(len(times)), pa.int64()),
        }
    )


def test_ordered_input_is_still_checked_for_duplicates() -> None:
    ordered = _rows([1, 2, 2, 3], ["a", "a", "a", "b"])
    with pytest.raises(DataError, match=r"duplicate rows for device \(city='a'\) at time 2"):
        sort_and_dedupe(ordered, SCHEMA, "error")
    kept = sort_and_dedupe(ordered, SCHEMA, "last")
    assert kept.column("seq").to_pylist() == [0, 2, 3]


def test_input_in_order_but_for_one_row_is_sorted() -> None:
    # Device-major, one time out of place inside device 'a'.
    data = _rows([1, 3, 2, 0], ["a", "a", "a", "b"])
    out = sort_and_dedupe(data, SCHEMA, "error")
    assert out.column("time").to_pylist() == [1, 2, 3, 0]
    assert out.column("seq").to_pylist() == [0, 2, 1, 3]


def test_time_major_input_is_grouped_by_device_keeping_time_order() -> None:
    # How a generated frame arrives: every device at time 0, then at time 1, ...
    data = _rows([0, 0, 1, 1, 2, 2], ["b", "a", "b", "a", "b", "a"])
    out = sort_and_dedupe(data, SCHEMA, "error")
    assert out.column("city").to_pylist() == ["a", "a", "a", "b", "b", "b"]
    assert out.column("time").to_pylist() == [0, 1, 2, 0, 1, 2]


def test_too_many_tag_combinations_for_codes_fall_back_to_the_string_sort() -> None:
    # 32 TAGs with 3 values each: 4**32 combinations (values and null) overflow the codes.
    tags = tuple(f"t{i}" for i in range(32))
    schema = table_schema("t", tags=tags, fields=[("seq", DataType.INT64)])
    columns = {"time": pa.array([5, 4, 3, 3], pa.int64())}
    columns.update({t: pa.array(["c", "b", "a", "a"]) for t in tags})
    columns["seq"] = pa.array(range(4), pa.int64())
    data = pa.table(columns)
    out = sort_and_dedupe(data, schema, "last")
    assert out.column("seq").to_pylist() == [3, 1, 0]
    with pytest.raises(DataError, match="at time 3"):
        sort_and_dedupe(data, schema, "error")


@settings(max_examples=150, deadline=None)
@given(tables())
def test_split_duplicates_keeps_every_row_and_the_kth_repeat_in_the_kth_table(
    drawn: tuple[pa.Table, tuple[str, ...]],
) -> None:
    data, tags = drawn
    schema = _schema(tags)
    layers = split_duplicates(data, schema)
    # Every row exactly once, each table a valid TsFile (sorted, no duplicate), and
    # "last" over the tables in order is "last" over the input.
    assert sorted(r["seq"] for t in layers for r in t.to_pylist()) == list(range(data.num_rows))
    for layer in layers:
        assert sort_and_dedupe(layer, schema, "error").to_pylist() == layer.to_pylist()
    merged = pa.concat_tables(layers) if layers else data
    assert sort_and_dedupe(merged, schema, "last").to_pylist() == _outcome(
        sort_and_dedupe, data, tags, "last"
    )
    assert len(layers) == 1 or all(t.num_rows for t in layers)


def test_split_duplicates_puts_repeats_in_input_order() -> None:
    data = _rows([2, 1, 2, 2, 1], ["a", "a", "a", "a", "b"])
    first, second, third = split_duplicates(data, SCHEMA)
    assert first.column("seq").to_pylist() == [1, 0, 4]
    assert second.column("seq").to_pylist() == [2]
    assert third.column("seq").to_pylist() == [3]
    assert [t.num_rows for t in split_duplicates(_rows([1, 2], ["a", "a"]), SCHEMA)] == [2]
