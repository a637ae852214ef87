"""Table.scan(): reading a table without Spark, against real TsFiles written by the project.

Rows are checked against the data the test wrote, filtered in plain Python; that the answers
equal Spark's is tests/exec/test_table_scan_spark.py's job.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.factories import table_schema
from tests.table.helpers import CHILD_ENV
from tsfile_catalog.adopt import adopt_table
from tsfile_catalog.exceptions import OptionError, PredicateError, VersionNotFoundError
from tsfile_catalog.exec.table_scan import TableScan
from tsfile_catalog.formats.tsfile import TSFILE, WriteSettings, write_file
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.table import Table, append_parts, open_table

SCHEMA = table_schema(
    "weather", tags=("city",), fields=[("temp", DataType.DOUBLE), ("at", DataType.TIMESTAMP)]
)
CITIES = ("berlin", "paris", "rome")


def _rows(part: int, city: str, n: int = 20) -> list[dict[str, Any]]:
    """``n`` rows of one city in part ``part``: times part*1000 + i, every 7th temp null."""
    return [
        {
            "time": part * 1_000 + i,
            "city": city,
            "temp": None if i % 7 == 3 else float(part * 10 + i) / 2,
            "at": 1_704_067_200_000 + part * 3_600_000 + i,
        }
        for i in range(n)
    ]


def _write(root: Path, name: str, rows: list[dict[str, Any]]) -> None:
    data = pa.table(
        {
            "time": pa.array([r["time"] for r in rows], pa.int64()),
            "city": pa.array([r["city"] for r in rows]),
            "temp": pa.array([r["temp"] for r in rows], pa.float64()),
            # The native writer takes TIMESTAMP values as timestamp[ns] holding the raw long.
            "at": pa.array([r["at"] for r in rows], pa.int64()).cast(pa.timestamp("ns")),
        }
    )
    write_file(str(root / name), data, SCHEMA, WriteSettings())


def _append(root: Path, name: str, rows: list[dict[str, Any]]) -> None:
    _write(root, name, rows)
    io = FileIO(str(root))
    _, part = TSFILE.read_part(
        io, str(root / name), path=name, size_bytes=os.path.getsize(root / name)
    )
    append_parts(str(root), [part], SCHEMA)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[dict[str, Any]]]:
    """A table of six parts over two versions (version 0: parts 0-3, version 1: 4-5), each
    part holding one or two cities, and every row it holds."""
    root = tmp_path_factory.mktemp("scan") / "weather"
    root.mkdir()
    rows: list[dict[str, Any]] = []
    for part in range(4):
        part_rows = _rows(part, CITIES[part % 3]) + _rows(part, CITIES[(part + 1) % 3], 5)
        _write(root, f"part-{part}.tsfile", part_rows)
        rows += part_rows
    adopt_table(str(root))
    for part in (4, 5):
        part_rows = _rows(part, CITIES[part % 3])
        _append(root, f"part-{part}.tsfile", part_rows)
        rows += part_rows
    return str(root), rows


def _sorted(rows: list[dict[str, Any]], columns: list[str]) -> list[tuple[Any, ...]]:
    return sorted((tuple(r[c] for c in columns) for r in rows), key=repr)


def _arrow_rows(table: pa.Table) -> list[tuple[Any, ...]]:
    return sorted(
        (tuple(row[c] for c in table.column_names) for row in table.to_pylist()), key=repr
    )


def test_scan_returns_the_matching_rows_and_prunes_parts(
    written: tuple[str, list[dict[str, Any]]],
) -> None:
    url, rows = written
    scan = open_table(url).scan(
        where="time >= 1000 AND time < 3000 AND city = 'paris' AND temp > 6",
        columns=["temp", "time", "city"],
    )
    expected = [
        r
        for r in rows
        if 1000 <= r["time"] < 3000
        and r["city"] == "paris"
        and r["temp"] is not None
        and r["temp"] > 6
    ]
    got = scan.to_arrow()
    assert got.column_names == ["temp", "time", "city"]
    assert expected and _arrow_rows(got) == _sorted(expected, ["temp", "time", "city"])
    # Parts 0 and 3-5 lie outside the time range; part 2 holds rome and berlin only.
    assert sorted(p.path for p in scan.plan.parts) == ["part-1.tsfile"]
    assert len(scan.plan.pruned) == 5
    assert "1 of 6 read, 5 pruned" in scan.explain()


def test_count_comes_from_statistics_when_exact_and_from_rows_otherwise(
    written: tuple[str, list[dict[str, Any]]],
) -> None:
    url, rows = written
    table = open_table(url)
    exact = table.scan(where="time BETWEEN 1000 AND 5999 AND city IN ('rome', 'paris')")
    assert exact.metadata_count is not None
    expected = [r for r in rows if 1000 <= r["time"] <= 5999 and r["city"] in ("rome", "paris")]
    assert exact.count() == len(expected) == exact.to_arrow().num_rows
    assert "from statistics" in exact.explain()

    residual = table.scan(where="temp IS NULL")
    assert residual.metadata_count is None
    assert residual.count() == sum(r["temp"] is None for r in rows) > 0
    assert "count(): by reading" in residual.explain()
    assert table.scan().count() == len(rows)
    assert table.scan(where="time > 1 AND time < 0").count() == 0


def test_threads_keep_the_order_of_parts(written: tuple[str, list[dict[str, Any]]]) -> None:
    url, _ = written
    table = open_table(url)
    serial = table.scan(max_workers=1).to_arrow()
    packed = table.scan(max_workers=4)
    assert len(packed.tasks) == 1  # tiny parts are packed into one task
    assert packed.to_arrow().equals(serial)
    # One task per part (a part of 25 rows fits in 30): the pool's ordering does the work.
    many_tasks = TableScan(table, max_workers=3, rows_per_task=30)
    assert len(many_tasks.tasks) == 6
    assert many_tasks.to_arrow().equals(serial)
    # Part files in path order, the order a single thread reads them.
    times = serial.column("time").to_pylist()
    assert [t // 1000 for t in times] == sorted(t // 1000 for t in times)


def test_to_batches_streams_and_can_stop_early(written: tuple[str, list[dict[str, Any]]]) -> None:
    url, _ = written
    scan = TableScan(open_table(url), columns=["time"], max_workers=2, rows_per_task=30)
    batches = scan.to_batches()
    first = next(batches)
    assert first.schema.names == ["time"] and first.num_rows > 0
    batches.close()  # the pool shuts down without reading the remaining parts


def test_timestamp_as_gives_arrow_timestamps_in_the_table_unit(
    written: tuple[str, list[dict[str, Any]]],
) -> None:
    url, rows = written
    for unit in ("ms", "us"):
        scan = open_table(url).scan(
            where="at >= TIMESTAMP '2024-01-01 02:00:00Z'",
            columns=["time", "at"],
            timestamp_as="timestamp",
            unit=unit,
        )
        got = scan.to_arrow()
        assert got.schema.field("at").type == pa.timestamp(unit, tz="UTC")
        assert got.schema.field("time").type == pa.timestamp(unit, tz="UTC")
        raw = got.cast(pa.schema([("time", pa.int64()), ("at", pa.int64())]))
        # The raw values are the same longs, read in the unit asked for.
        threshold = 1_704_074_400 * {"ms": 1_000, "us": 1_000_000}[unit]
        expected = [r for r in rows if r["at"] >= threshold]
        assert _arrow_rows(raw) == _sorted(expected, ["time", "at"])
    frame = open_table(url).scan(columns=["at"], timestamp_as="timestamp").to_pandas()
    assert str(frame["at"].dtype) == "datetime64[ms, UTC]"
    assert len(frame) == len(rows)


def test_naive_times_need_a_time_zone(written: tuple[str, list[dict[str, Any]]]) -> None:
    url, rows = written
    table = open_table(url)
    where = "at < TIMESTAMP '2024-01-01 09:00:00'"
    with pytest.raises(PredicateError, match="time_zone"):
        table.scan(where=where, timestamp_as="timestamp")
    # 09:00 in Shanghai is 01:00 UTC: the rows of parts 0 (00:00) only.
    got = table.scan(where=where, timestamp_as="timestamp", time_zone="Asia/Shanghai").count()
    assert got == sum(r["at"] < 1_704_070_800_000 for r in rows) == 25


def test_time_travel(written: tuple[str, list[dict[str, Any]]]) -> None:
    url, rows = written
    latest = open_table(url)
    assert latest.version == 2
    first = latest.scan(version=0)
    assert first.table.version == 0
    assert first.count() == sum(r["time"] < 4000 for r in rows)
    at = latest.history()[-1].timestamp_ms  # version 0's commit time
    assert latest.scan(timestamp=at).table.version == 0
    assert open_table(url, version=1).scan().count() == sum(r["time"] < 5000 for r in rows)
    with pytest.raises(VersionNotFoundError):
        latest.scan(version=9)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"columns": ["time", "nope"]}, OptionError, "columns names 'nope'.*it has time, city"),
        ({"columns": ["temp", "TEMP"]}, OptionError, "names 'TEMP' twice"),
        ({"columns": "time,temp"}, OptionError, "list of column names"),
        ({"where": "temp >"}, PredicateError, "cannot parse predicate"),
        ({"where": "nope = 1"}, PredicateError, "nope"),
        ({"timestamp_as": "date"}, OptionError, "timestamp_as"),
        ({"unit": "s"}, OptionError, "unit"),
        ({"max_workers": 0}, OptionError, "max_workers"),
        ({"version": 0, "timestamp": 0}, OptionError, "not both"),
    ],
)
def test_bad_arguments_name_what_is_wrong(
    written: tuple[str, list[dict[str, Any]]], kwargs: dict[str, Any], error: type, message: str
) -> None:
    table: Table = open_table(written[0])
    with pytest.raises(error, match=message):
        table.scan(**kwargs)


def test_the_scan_module_imports_no_pyspark(written: tuple[str, list[dict[str, Any]]]) -> None:
    code = (
        "import sys, tsfile_catalog\n"
        f"scan = tsfile_catalog.open_table({written[0]!r}).scan(where='city = \\'rome\\'')\n"
        "print(scan.to_arrow().num_rows, scan.count())\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')], "
        "'pyspark imported'\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], env=CHILD_ENV, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    rows, count = result.stdout.split()
    assert int(rows) == int(count) > 0


def _swap_test(url: str, storage_options: dict[str, Any] | None, put: Any) -> None:
    """Parts a.tsfile and b.tsfile; b then replaced by another valid TsFile (other rows,
    another size): reading it fails naming the file and the fix, never reads its rows with
    the statistics of the file the table wrote."""
    import shutil
    import tempfile

    from tsfile_catalog.exceptions import DataError

    io = FileIO(url, storage_options)
    with tempfile.TemporaryDirectory() as scratch:
        local = Path(scratch)
        for name, rows in (("a.tsfile", _rows(0, "paris")), ("b.tsfile", _rows(1, "rome", 5))):
            _write(local, name, rows)
            put(local / name, f"{url}/{name}")
            _, part = TSFILE.read_part(
                io, f"{url}/{name}", path=name, size_bytes=os.path.getsize(local / name)
            )
            append_parts(url, [part], SCHEMA, storage_options=storage_options)
        table = open_table(url, storage_options=storage_options)
        assert table.scan().to_arrow().num_rows == 25
        _write(local, "other.tsfile", _rows(1, "rome", 9) + _rows(1, "oslo", 3))
        assert os.path.getsize(local / "other.tsfile") != os.path.getsize(local / "b.tsfile")
        put(local / "other.tsfile", f"{url}/b.tsfile")
        shutil.rmtree(local)
    swapped = r"TsFile part .*/b\.tsfile no longer matches the table's manifest.*DROP PART it"
    with pytest.raises(DataError, match=swapped):
        table.scan().to_arrow()
    with pytest.raises(DataError, match=swapped):
        table.scan(where="city = 'rome'", columns=["time"]).to_arrow()
    assert table.scan(where="city = 'paris'").to_arrow().num_rows == 20  # a.tsfile still reads


def test_a_tsfile_part_swapped_for_another_fails_its_read(tmp_path: Path) -> None:
    import shutil

    url = str(tmp_path / "t")
    os.makedirs(url)
    _swap_test(url, None, lambda local, target: shutil.copyfile(local, target))


def test_a_tsfile_part_swapped_on_s3_fails_its_read(s3_table: tuple[str, dict[str, Any]]) -> None:
    import s3fs

    url, options = s3_table
    fs = s3fs.S3FileSystem(**options)
    _swap_test(url, options, lambda local, target: fs.put_file(str(local), target))
