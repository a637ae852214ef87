"""Differential property test: Table.scan() returns exactly the rows Spark returns.

The random multi-part tables and predicates of tests/datasource/test_filter_semantics.py
(every type, NaN, ±inf, -0.0, nulls, pre-epoch times, every precision, naive and zoned time
literals), adopted as tables, are read two ways for each hypothesis-drawn case: Spark's own
filter over a plain ``spark.read.format("tsfile")`` load (the oracle, in the case's session
time zone) and ``open_table(path).scan(where=…, columns=…, time_zone=zone)``. They must
agree row for row, or fail together; the scan may refuse with a PredicateError only the
literal forms the ``where`` option documents as unsupported.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from tests.datasource.test_filter_semantics import (
    EXAMPLES,
    FIELDS,
    Spec,
    _is_predicate_error,
    _normal,
    _write_table,
    cases,
    session_zone,
)
from tsfile_catalog.adopt import adopt_table
from tsfile_catalog.table import open_table

pytestmark = pytest.mark.spark

_MICROS_PER_UNIT = {"ms": (1_000, 1), "us": (1, 1), "ns": (1, 1_000)}


@pytest.fixture(scope="module")
def adopted(tmp_path_factory: pytest.TempPathFactory) -> list[Spec]:
    root = tmp_path_factory.mktemp("scan-semantics")
    rng = random.Random(20240101)
    specs = [_write_table(root, i, rng)[0] for i in range(3)]
    for spec in specs:
        adopt_table(spec.path)
    return specs


def _micros(value: int | None, unit: str) -> int | None:
    """A raw time as Spark shows it: microseconds, floored (as Spark's conversion is)."""
    if value is None:
        return None
    mul, div = _MICROS_PER_UNIT[unit]
    return value * mul // div


def _counter(table: pa.Table, unit: str | None) -> Counter[tuple[Any, ...]]:
    """Rows as comparable tuples; timestamps as epoch micros (``unit``: the scan's, whose
    timestamps are in the table's precision; None: Spark's, already micros)."""
    columns = []
    for field, column in zip(table.schema, table.columns, strict=True):
        if pa.types.is_timestamp(field.type):
            raw = column.cast(pa.int64()).to_pylist()
            columns.append(raw if unit is None else [_micros(v, unit) for v in raw])
        else:
            columns.append(column.to_pylist())
    return Counter(tuple(_normal(v) for v in row) for row in zip(*columns, strict=True))


def _outcome(make: Any) -> Counter[tuple[Any, ...]] | Exception:
    try:
        return make()  # type: ignore[no-any-return]
    except Exception as e:  # noqa: BLE001 - the outcome is compared, not hidden
        return e


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=cases(), columns=st.lists(st.sampled_from(["time", "tag1", *FIELDS]), unique=True))
@example(case=(0, "d > 5", False, "Asia/Kolkata"), columns=[])  # NaN above every number
@example(case=(1, "ts < '2024-01-01 05:30:00'", False, "Asia/Kolkata"), columns=["ts", "time"])
@example(
    case=(2, "time >= TIMESTAMP '2024-01-01 00:00:00'", False, "America/Los_Angeles"),
    columns=["time", "day"],
)
@example(case=(0, "i NOT IN (1, 2)", False, "Asia/Kolkata"), columns=["i"])
@example(case=(0, "time = 0", False, "America/Los_Angeles"), columns=[])
def test_scan_returns_sparks_rows(
    spark: SparkSession, adopted: list[Spec], case: tuple[int, str, bool, str], columns: list[str]
) -> None:
    index, predicate, lenient, zone = case
    spec = adopted[index]
    selected = columns or None  # an empty draw means every column

    def oracle() -> Counter[tuple[Any, ...]]:
        df = (
            spark.read.format("tsfile")
            .option("timestampAs", spec.timestamp_as)
            .option("timestampPrecision", spec.unit)
            .load(spec.path)
            .where(predicate)
        )
        return _counter((df.select(*selected) if selected else df).toArrow(), None)

    def scanned() -> Counter[tuple[Any, ...]]:
        scan = open_table(spec.path).scan(
            where=predicate,
            columns=selected,
            timestamp_as=spec.timestamp_as,  # type: ignore[arg-type]
            unit=spec.unit,  # type: ignore[arg-type]
            time_zone=zone,
            max_workers=2,
        )
        rows = scan.to_arrow()
        assert scan.count() == rows.num_rows
        return _counter(rows, spec.unit)

    with session_zone(spark, zone):
        expected = _outcome(oracle)
    got = _outcome(scanned)
    context = f"table {spec.name} ({spec.unit}, {spec.timestamp_as}) in {zone}: {predicate}"
    if isinstance(expected, Exception):
        assert isinstance(got, Exception), f"scan answered where Spark fails; {context}"
        return
    if lenient and _is_predicate_error(got):
        return
    assert not isinstance(got, Exception), f"scan failed ({got!r}); {context}"
    assert got == expected, f"scan differs from Spark; {context}"
