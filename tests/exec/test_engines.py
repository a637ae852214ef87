"""Other engines on a scan: a streaming RecordBatchReader, DuckDB and polars.

The reader is checked to stream (parts are read as it is consumed, memory holds a few tasks'
rows, not the table); DuckDB and polars get exactly the rows ``to_arrow()`` returns. The
DuckDB and polars tests skip only when their optional extra is not installed (the test extra
installs both, so CI runs them).
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

import tsfile_catalog
from tsfile_catalog.exec import table_scan
from tsfile_catalog.exec.table_scan import TableScan

ROWS = 400_000
PART_ROWS = 25_000  # 16 parts


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> str:
    location = str(tmp_path_factory.mktemp("engines") / "weather")
    rows = pa.table(
        {
            "time": pa.array(range(ROWS), pa.int64()),
            "city": pa.array([f"c{i % 4}" for i in range(ROWS)]),
            "temp": pa.array([None if i % 9 == 0 else i / 4 for i in range(ROWS)], pa.float64()),
        }
    )
    tsfile_catalog.write_table(
        location,
        rows,
        table="weather",
        tag_columns=["city"],
        options={"maxRowsPerFile": PART_ROWS, "timestampPrecision": "ms"},
    )
    return location


def _scan(url: str, **kwargs: Any) -> TableScan:
    # One task per part, two threads: many tasks, so reading ahead can be seen.
    return TableScan(
        tsfile_catalog.open_table(url), max_workers=2, rows_per_task=PART_ROWS, **kwargs
    )


def test_the_batch_reader_reads_parts_only_as_it_is_consumed(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks_started: list[int] = []
    real = table_scan.read_slices

    def counting(*args: Any, **kwargs: Any) -> Iterator[pa.Table]:
        tasks_started.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(table_scan, "read_slices", counting)
    scan = _scan(url)
    assert len(scan.tasks) == ROWS // PART_ROWS
    reader = scan.to_arrow_batch_reader()
    assert isinstance(reader, pa.RecordBatchReader)
    assert reader.schema == scan.arrow_schema
    assert tasks_started == []  # nothing is read before the first batch is asked for
    first = reader.read_next_batch()
    assert first.num_rows > 0
    # The first task, the one read ahead, and the one submitted when the first was taken.
    assert len(tasks_started) <= 3
    rest = reader.read_all()
    assert len(tasks_started) == len(scan.tasks)
    assert first.num_rows + rest.num_rows == ROWS


def test_the_batch_reader_holds_a_few_tasks_not_the_table(url: str) -> None:
    scan = _scan(url)
    base = pa.total_allocated_bytes()
    whole = scan.to_arrow()
    table_bytes = pa.total_allocated_bytes() - base
    assert table_bytes >= whole.nbytes > 0
    del whole

    base, peak, rows = pa.total_allocated_bytes(), 0, 0
    for batch in scan.to_arrow_batch_reader():
        rows += batch.num_rows
        peak = max(peak, pa.total_allocated_bytes() - base)
    assert rows == ROWS
    # At most three tasks in flight plus the batch in hand: 4 of 16 parts' rows.
    assert peak <= table_bytes * 4 // 16 + 64 * 1024, (peak, table_bytes)


def test_the_batch_reader_returns_what_to_arrow_returns(url: str) -> None:
    scan = _scan(url, where="city = 'c1' AND temp > 100", columns=["temp", "time"])
    expected = scan.to_arrow()
    assert expected.num_rows > 0
    assert scan.to_arrow_batch_reader().read_all().equals(expected)


def test_duckdb_gets_a_view_it_can_query_twice(url: str) -> None:
    duckdb = pytest.importorskip("duckdb")
    scan = tsfile_catalog.open_table(url).scan(where="city IN ('c0', 'c2')")
    expected = scan.to_arrow()
    con = scan.to_duckdb("weather")
    query = "SELECT city, count(*), count(temp), sum(temp) FROM weather GROUP BY city ORDER BY 1"
    got = con.execute(query).fetchall()
    assert got == con.execute(query).fetchall()  # a view, not a one-shot reader
    by_city = expected.group_by("city").aggregate(
        [([], "count_all"), ("temp", "count"), ("temp", "sum")]
    )
    columns = ("city", "count_all", "temp_count", "temp_sum")
    want = sorted(zip(*(by_city[c].to_pylist() for c in columns), strict=True))
    assert [(c, n, k, pytest.approx(t)) for c, n, k, t in got] == want
    # An existing connection is used, not replaced.
    own = duckdb.connect()
    assert scan.to_duckdb("w", own) is own
    assert own.execute("SELECT count(*) FROM w").fetchone() == (expected.num_rows,)


def test_duckdb_streams_a_batch_reader(url: str) -> None:
    duckdb = pytest.importorskip("duckdb")
    scan = _scan(url, columns=["city", "temp"])
    reader = scan.to_arrow_batch_reader()
    got = duckdb.connect().from_arrow(reader).aggregate("count(*), count(temp)").fetchall()
    temps = scan.to_arrow()["temp"]
    assert got == [(ROWS, ROWS - temps.null_count)]


def test_polars_gets_the_rows_and_types(url: str) -> None:
    polars = pytest.importorskip("polars")
    scan = tsfile_catalog.open_table(url).scan(
        where="time < TIMESTAMP '1970-01-01 00:00:01'",
        columns=["time", "city", "temp"],
        timestamp_as="timestamp",
        time_zone="UTC",
    )
    frame = scan.to_polars()
    assert isinstance(frame, polars.DataFrame)
    assert frame.height == 1000
    assert frame.schema["time"] == polars.Datetime("ms", "UTC")
    # polars keeps strings as large_string and drops not-null; the values are the same.
    expected = scan.to_arrow()
    assert frame.to_arrow().to_pylist() == expected.to_pylist()


def test_a_missing_engine_names_the_extra(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # None in sys.modules makes an import fail as it does when the package is absent.
    monkeypatch.setitem(sys.modules, "polars", None)
    with pytest.raises(ImportError, match=r"tsfile-catalog\[polars\]"):
        tsfile_catalog.open_table(url).scan().to_polars()


def test_a_reader_dropped_early_stops_reading(url: str) -> None:
    def scan_threads() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name.startswith("tsfile-scan")]

    scan = _scan(url)
    reader = scan.to_arrow_batch_reader()
    assert reader.read_next_batch().num_rows > 0
    assert scan_threads()  # the pool is reading ahead
    del reader
    gc.collect()
    assert scan_threads() == []
