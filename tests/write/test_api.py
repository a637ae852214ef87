"""Writing without Spark: write_table and Table.append/overwrite, against real TsFile parts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import tsfile_catalog
from tsfile_catalog import DataError, OptionError, open_table, write_table
from tsfile_catalog.exceptions import TableNotFoundError

SCHEMA = pa.schema([("time", pa.int64()), ("city", pa.string()), ("temp", pa.float64())])


def rows(*values: tuple[int, str, float]) -> pa.Table:
    return pa.Table.from_pylist(
        [{"time": t, "city": c, "temp": v} for t, c, v in values], schema=SCHEMA
    )


def read(url: Path) -> list[tuple[int, str, float]]:
    table = (
        open_table(str(url)).scan(columns=["time", "city", "temp"], timestamp_as="long").to_arrow()
    )
    return sorted((r["time"], r["city"], r["temp"]) for r in table.to_pylist())


def leftovers(url: Path) -> list[str]:
    """Files under the table's folder other than its manifest."""
    return sorted(
        str(p.relative_to(url))
        for p in url.rglob("*")
        if p.is_file() and "_tsfile_catalog" not in p.parts
    )


def test_create_append_overwrite_and_replace_where(tmp_path: Path) -> None:
    url = tmp_path / "weather"
    write_table(str(url), rows((1, "a", 1.0), (2, "b", 2.0)), table="w", tag_columns=["city"])
    table = open_table(str(url))
    assert table.schema.table == "w" and table.schema.tag_names == ("city",)
    table.append(pd.DataFrame({"time": [3], "city": ["a"], "temp": [3.0]}))
    assert read(url) == [(1, "a", 1.0), (2, "b", 2.0), (3, "a", 3.0)]
    # replaceWhere: only city 'a' is replaced; b's row stays
    open_table(str(url)).overwrite(rows((5, "a", 5.0)), where="city = 'a'")
    assert read(url) == [(2, "b", 2.0), (5, "a", 5.0)]
    write_table(str(url), rows((9, "c", 9.0)), mode="overwrite")
    assert read(url) == [(9, "c", 9.0)]
    history = open_table(str(url)).history()
    assert [h.operation for h in history] == ["OVERWRITE", "OVERWRITE", "WRITE", "WRITE"]
    assert history[0].operation_parameters["mode"] == "overwrite"
    assert history[1].operation_parameters["replaceWhere"] == "city = 'a'"


def test_replace_where_straddling_part_is_rewritten(tmp_path: Path) -> None:
    url = tmp_path / "t"
    # one part holding both cities straddles the predicate
    write_table(str(url), rows((1, "a", 1.0), (1, "b", 1.5)), table="t", tag_columns=["city"])
    write_table(
        str(url),
        rows((2, "b", 2.0)),
        mode="overwrite",
        options={"replaceWhere": "city = 'b'"},
    )
    assert read(url) == [(1, "a", 1.0), (2, "b", 2.0)]


def test_rows_outside_replace_where_are_refused_and_nothing_committed(tmp_path: Path) -> None:
    url = tmp_path / "t"
    write_table(str(url), rows((1, "a", 1.0)), table="t", tag_columns=["city"])
    table = open_table(str(url))
    with pytest.raises(DataError, match=r"replaceWhere.*does not match it"):
        table.overwrite(rows((2, "a", 2.0), (3, "b", 3.0)), where="city = 'a'")
    assert open_table(str(url)).version == table.version
    assert read(url) == [(1, "a", 1.0)]
    assert not (url / "_staging").exists()


def test_unknown_and_bad_options_are_refused_naming_the_option(tmp_path: Path) -> None:
    url = tmp_path / "t"
    with pytest.raises(OptionError, match="unknown write option 'rowsPerFile'"):
        write_table(
            str(url),
            rows((1, "a", 1.0)),
            table="t",
            tag_columns=["city"],
            options={"rowsPerFile": 10},
        )
    with pytest.raises(OptionError, match="option 'onDuplicate' = 'first'"):
        write_table(
            str(url),
            rows((1, "a", 1.0)),
            table="t",
            tag_columns=["city"],
            options={"onDuplicate": "first"},
        )
    with pytest.raises(OptionError, match="option 'replaceWhere'.*needs mode"):
        write_table(
            str(url),
            rows((1, "a", 1.0)),
            table="t",
            tag_columns=["city"],
            options={"replaceWhere": "city = 'a'"},
        )
    with pytest.raises(OptionError, match="option 'tagColumns' = 'x' contradicts"):
        write_table(
            str(url),
            rows((1, "a", 1.0)),
            table="t",
            tag_columns=["city"],
            options={"tagColumns": "x"},
        )
    with pytest.raises(OptionError, match="option 'table' is required"):
        write_table(str(url), rows((1, "a", 1.0)), tag_columns=["city"])
    assert not url.exists() or not any(url.iterdir())


def test_null_tag_is_refused_with_nothing_committed(tmp_path: Path) -> None:
    url = tmp_path / "t"
    write_table(str(url), rows((1, "a", 1.0)), table="t", tag_columns=["city"])
    before = leftovers(url)
    bad = pa.table({"time": [2, 3], "city": ["a", None], "temp": [2.0, 3.0]})
    with pytest.raises(DataError, match="TAG column 'city' has a null value"):
        open_table(str(url)).append(bad)
    assert open_table(str(url)).version == 0
    assert read(url) == [(1, "a", 1.0)]
    assert leftovers(url) == before
    assert not (url / "_staging").exists()


def test_a_failure_mid_write_commits_nothing_and_leaves_no_staging(tmp_path: Path) -> None:
    url = tmp_path / "t"
    write_table(str(url), rows((1, "a", 1.0)), table="t", tag_columns=["city"])
    before = leftovers(url)
    staged: list[bool] = []

    def batches() -> Iterator[pa.RecordBatch]:
        yield from rows((2, "a", 2.0), (3, "a", 3.0)).to_batches()
        # maxRowsPerFile=2: the first part is staged before the source fails
        staged.append((url / "_staging").exists())
        raise OSError("the source broke")

    reader = pa.RecordBatchReader.from_batches(SCHEMA, batches())
    with pytest.raises(OSError, match="the source broke"):
        write_table(str(url), reader, options={"maxRowsPerFile": 2})
    assert staged == [True]
    assert open_table(str(url)).version == 0
    assert read(url) == [(1, "a", 1.0)]
    assert leftovers(url) == before
    assert not (url / "_staging").exists()


def test_a_reader_is_written_in_parts_of_max_rows_per_file(tmp_path: Path) -> None:
    url = tmp_path / "t"
    count = 10
    pulled: list[int] = []

    def batches() -> Iterator[pa.RecordBatch]:
        for i in range(count):
            pulled.append(i)
            yield rows((count - i, "a", float(i)), (count - i, "b", float(i))).to_batches()[0]

    reader = pa.RecordBatchReader.from_batches(SCHEMA, batches())
    write_table(str(url), reader, table="t", tag_columns=["city"], options={"maxRowsPerFile": 4})
    table = open_table(str(url))
    assert sorted(p.row_count for p in table.parts()) == [4, 4, 4, 4, 4]
    assert len(read(url)) == 2 * count and pulled == list(range(count))
    # each part is sorted by device and time, as the Spark writer sorts it
    for part in table.parts():
        assert part.min_time is not None and part.max_time is not None


def test_duplicates_in_one_write_follow_on_duplicate(tmp_path: Path) -> None:
    url = tmp_path / "t"
    twice = rows((1, "a", 1.0), (1, "a", 2.0))
    with pytest.raises(DataError, match="duplicate"):
        write_table(str(url), twice, table="t", tag_columns=["city"])
    assert not (url / "_staging").exists()
    # across parts (maxRowsPerFile=1) the later row wins, as in a Spark write
    write_table(
        str(url),
        twice,
        table="t",
        tag_columns=["city"],
        options={"onDuplicate": "last", "maxRowsPerFile": 1},
    )
    assert read(url) == [(1, "a", 2.0)]


def test_timestamps_are_stored_in_the_precision_asked(tmp_path: Path) -> None:
    url = tmp_path / "t"
    frame = pd.DataFrame(
        {
            "time": pd.to_datetime(["2024-01-01T00:00:00.001500Z", "1969-12-31T23:59:59.9995Z"]),
            "city": ["a", "a"],
            "temp": [1.0, 2.0],
        }
    )
    write_table(str(url), frame, table="t", tag_columns=["city"])
    # ms precision: floored, as Spark floors a timestamp to milliseconds
    assert [t for t, _, _ in read(url)] == [-1, 1_704_067_200_001]


def test_append_refuses_a_table_recreated_since_it_was_opened(tmp_path: Path) -> None:
    url = tmp_path / "t"
    write_table(str(url), rows((1, "a", 1.0)), table="t", tag_columns=["city"])
    old = open_table(str(url))
    write_table(str(url), rows((1, "a", 1.0)), mode="overwrite")
    shutil.rmtree(url)
    write_table(str(url), rows((7, "b", 7.0)), table="t", tag_columns=["city"])
    with pytest.raises(TableNotFoundError, match="no longer at"):
        old.append(rows((2, "a", 2.0)))
    assert read(url) == [(7, "b", 7.0)]


def test_write_table_imports_no_pyspark(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """
        import sys
        import tsfile_catalog
        tsfile_catalog.write_table
        assert not [m for m in sys.modules if m.split(".")[0] == "pyspark"], "pyspark"
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=_child_env())


def test_a_second_process_appends_with_the_public_api(tmp_path: Path) -> None:
    url = tmp_path / "t"
    write_table(str(url), rows((1, "a", 1.0)), table="t", tag_columns=["city"])
    code = textwrap.dedent(
        f"""
        import sys
        import pyarrow as pa
        import tsfile_catalog
        table = tsfile_catalog.open_table({str(url)!r})
        table.append(pa.table({{"time": [2], "city": ["b"], "temp": [2.0]}}))
        assert not [m for m in sys.modules if m.split(".")[0] == "pyspark"], "pyspark"
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=_child_env())
    assert read(url) == [(1, "a", 1.0), (2, "b", 2.0)]
    assert open_table(str(url)).version == 1


def _child_env() -> dict[str, str]:
    root = str(Path(tsfile_catalog.__file__).resolve().parent.parent)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
