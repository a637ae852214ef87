"""Partial rows from statistics equal the read path's partial rows, on real TsFiles (no Spark).

A table of four parts written by the project (its real statistics: NULLs, NaN, every FIELD
type, a device repeated across parts); for drawn specs and WHERE clauses, every (part, device)
pair :func:`split_by_stats` answers must give exactly the row
:func:`~tsfile_catalog.exec.partial_aggregates.partial_aggregate` computes from that device's
rows, and every other device of the plan must be left to read (none lost, none twice).
Spark's merge of these rows is the Spark differential test's job
(tests/sql/test_partial_aggregates_spark.py).
"""

from __future__ import annotations

import datetime as dt
import math
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.factories import weather_schema
from tests.table.helpers import append_rows
from tsfile_catalog.exec.arrow_filter import apply_filter
from tsfile_catalog.exec.partial_aggregates import partial_aggregate
from tsfile_catalog.exec.time_buckets import buckets_of
from tsfile_catalog.metadata.partial_aggregates import PartialSpec, PartialState, TimeBucket
from tsfile_catalog.metadata.partial_stats import split_by_stats
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.metadata.slices import matching_devices
from tsfile_catalog.table import Table, open_table

FIELDS = {
    "i": (DataType.INT32, pa.int32()),
    "l": (DataType.INT64, pa.int64()),
    "d": (DataType.DOUBLE, pa.float64()),
    "f": (DataType.FLOAT, pa.float32()),
    "s": (DataType.STRING, pa.string()),
    "b": (DataType.BOOLEAN, pa.bool_()),
    "day": (DataType.DATE, pa.date32()),
}
SCHEMA = weather_schema(*((name, t) for name, (t, _) in FIELDS.items()))
DEVICES = [("bj", "x"), ("bj", "y"), ("sh", "x"), ("sz", "z")]
STARTS = (0, 100, 200, 230)  # the last two parts overlap in time


def _value(rng: random.Random, type_: DataType) -> Any:
    if rng.random() < 0.25:
        return None
    if type_ in (DataType.INT32, DataType.INT64):
        return rng.randint(-1000, 1000)
    if type_ in (DataType.DOUBLE, DataType.FLOAT):
        return math.nan if rng.random() < 0.05 else rng.randint(-400, 400) / 8
    if type_ is DataType.STRING:
        return rng.choice(["a", "b", "zz", "é"])
    if type_ is DataType.BOOLEAN:
        return rng.random() < 0.5
    return dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(0, 30))


def _part(rng: random.Random, start: int) -> pa.Table:
    columns: dict[str, list[Any]] = {"time": [], "city": [], "device": []}
    columns.update({name: [] for name in FIELDS})
    for city, device in rng.sample(DEVICES, rng.randint(2, len(DEVICES))):
        for time in sorted(rng.sample(range(start, start + 60), rng.randint(1, 8))):
            columns["time"].append(time)
            columns["city"].append(city)
            columns["device"].append(device)
            for name, (type_, _) in FIELDS.items():
                columns[name].append(_value(rng, type_))
    return pa.table(
        {
            "time": pa.array(columns["time"], pa.int64()),
            "city": pa.array(columns["city"]),
            "device": pa.array(columns["device"]),
            **{name: pa.array(columns[name], arrow) for name, (_, arrow) in FIELDS.items()},
        }
    )


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Table, dict[str, pa.Table]]:
    """The table, and each part's rows by its path."""
    root = tmp_path_factory.mktemp("partial_stats")
    rng = random.Random(7)
    by_version = {}
    for start in STARTS:
        rows = _part(rng, start)
        by_version[append_rows(str(root), rows, SCHEMA)] = rows
    table = open_table(str(Path(root)))
    return table, {p.path: by_version[p.added_version] for p in table.parts()}


_POOL = [
    PartialState("count_all", None, "p0"),
    *(PartialState("count", c, f"p_count_{c}") for c in ("time", "city", *FIELDS)),
    *(PartialState("sum", c, f"p_sum_{c}") for c in ("i", "l", "d", "f")),
    *(PartialState("sum_double", c, f"p_sumd_{c}") for c in ("i", "l", "d", "f")),
    *(PartialState(fn, c, f"p_{fn}_{c}") for fn in ("min", "max") for c in ("time", *FIELDS)),
    *(PartialState(fn, c, f"p_{fn}_{c}") for fn in ("first", "last") for c in ("city", *FIELDS)),
]
_WHERE = [
    None,
    "time >= 100",
    "time >= 30 AND time < 215",
    "city = 'bj'",
    "device IN ('x')",
    # FIELD predicates: devices skipped or answered by their own statistics.
    "d > 10",
    "i >= -1000",
    "NOT (f < 0) AND city = 'bj'",
    "l < 0 OR s = 'a'",
    "b = true",
    "day >= DATE'2024-01-15'",
    "d > -100 AND i IS NOT NULL",
]


@settings(max_examples=40, deadline=None)
@given(
    keys=st.sampled_from([(), ("city",), ("city", "device")]),
    width=st.sampled_from([None, 7, 50, 1000]),
    states=st.lists(st.sampled_from(_POOL), min_size=1, max_size=6, unique=True),
    where=st.sampled_from(_WHERE),
)
def test_answered_rows_equal_the_read_path(
    written: tuple[Table, dict[str, pa.Table]],
    keys: tuple[str, ...],
    width: int | None,
    states: list[PartialState],
    where: str | None,
) -> None:
    table, rows_of = written
    bucket = None if width is None else TimeBucket("floor", "bucket", width=width)
    spec = PartialSpec(keys, bucket, tuple(states))
    plan = table.plan(where)
    of = buckets_of(bucket, "ms") if bucket is not None else None
    split = split_by_stats(SCHEMA, plan.parts, plan.pushdown, spec, of, merges=())

    def device_rows(path: str, tags: tuple[str | None, ...]) -> tuple[pa.Table, pa.Table]:
        """The device's rows in the part, and those of them the WHERE keeps."""
        rows = rows_of[path]
        mine = rows.filter(
            pc.and_(pc.equal(rows["city"], tags[0]), pc.equal(rows["device"], tags[1]))
        )
        return mine, apply_filter(mine, plan.filter)

    for path, tags in split.skipped:
        assert device_rows(path, tags)[1].num_rows == 0, "a skipped device has a matching row"
    for row, (path, tags) in zip(split.rows, split.pairs, strict=True):
        mine, kept = device_rows(path, tags)
        assert kept.num_rows == mine.num_rows, "an answered device has a row the WHERE drops"
        expected = partial_aggregate(mine, spec, "ms").to_pylist()
        assert len(expected) == 1, "an answered device lies in one bucket"
        assert list(expected[0]) == list(spec.output_names)
        for name, got, want in zip(spec.output_names, row, expected[0].values(), strict=True):
            assert _same(got, want, loose=name.startswith(("p_sum_", "p_sumd_"))), (name, got, want)

    # Every device the plan reads is answered, skipped or left to read, never two of them.
    left = {(p.path, d.tags) for p in split.parts for d in p.devices or ()}
    answered, skipped = set(split.pairs), set(split.skipped)
    assert not left & answered and not left & skipped and not answered & skipped
    assert len(answered) == len(split.pairs) and len(skipped) == len(split.skipped)
    wanted = {
        (p.path, d.tags)
        for p in plan.parts
        for d in matching_devices(p, plan.pushdown, SCHEMA.tag_names) or ()
    }
    assert wanted <= left | answered | skipped


def _same(got: Any, want: Any, *, loose: bool) -> bool:
    if isinstance(got, float) and isinstance(want, float):
        if math.isnan(got) or math.isnan(want):
            return math.isnan(got) and math.isnan(want)
        # A double sum is equal up to the order of additions (the DOUBLE-sum contract).
        return math.isclose(got, want, rel_tol=1e-12) if loose else got == want
    return type(got) is type(want) and bool(got == want)


def test_a_field_predicate_skips_and_answers_devices_by_their_statistics(
    written: tuple[Table, dict[str, pa.Table]],
) -> None:
    table, rows_of = written
    spec = PartialSpec((), None, (PartialState("count_all", None, "n"),))
    # Every non-null i is >= -1000: devices without a null i are answered whole, devices
    # whose i are all null are skipped.
    plan = table.plan("i >= -1000")
    split = split_by_stats(SCHEMA, plan.parts, plan.pushdown, spec, merges=())
    assert split.rows
    for path, (city, device) in split.skipped:
        rows = rows_of[path].filter((pc.field("city") == city) & (pc.field("device") == device))
        assert rows.num_rows and rows["i"].null_count == rows.num_rows
    # No i is above 1000: every device is skipped, nothing is left to read.
    plan = table.plan("i > 1000")
    split = split_by_stats(SCHEMA, plan.parts, plan.pushdown, spec, merges=())
    assert split.rows == () and split.parts == ()
    assert len(split.skipped) == sum(len(p.devices or ()) for p in plan.parts)
    assert split.narrowed == {p.path for p in plan.parts} and set(rows_of) >= split.narrowed


def test_whole_devices_without_a_bucket_are_all_answered(
    written: tuple[Table, dict[str, pa.Table]],
) -> None:
    table, rows_of = written
    spec = PartialSpec(("city",), None, (PartialState("count_all", None, "n"),))
    split = split_by_stats(SCHEMA, table.parts(), table.plan(None).pushdown, spec, merges=())
    assert split.parts == ()
    assert sum(r[1] for r in split.rows) == sum(t.num_rows for t in rows_of.values())  # type: ignore[misc]
