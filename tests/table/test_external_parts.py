"""add_files / drop_parts without Spark: real Parquet, ORC and CSV files, one commit each,
nothing committed on failure, and no path that deletes ever touches an external file."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from tests.factories import table_schema
from tests.table.helpers import part, write
from tsfile_catalog.exceptions import (
    CorruptManifestError,
    InvalidCommitError,
    OptionError,
    SchemaMismatchError,
    TableNotFoundError,
)
from tsfile_catalog.exec.read import read_slices
from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.inspect import describe_detail, show_parts
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.expressions import ScanPushdown
from tsfile_catalog.metadata.manifest import AddPart, Operation
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.metadata.slices import plan_slices
from tsfile_catalog.table import (
    add_files,
    append_parts,
    commit,
    create_table,
    drop_parts,
    open_table,
    purge,
    vacuum,
)

SCHEMA = table_schema("weather", tags=("city",), fields=[("temp", DataType.DOUBLE)])


def _table(root: Path) -> str:
    url = str(root / "t")
    create_table(url, SCHEMA)
    return url


def _parquet(path: Path, **columns: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns), path)
    return path


def _rows(url: str, **kwargs: Any) -> list[tuple[Any, ...]]:
    table = open_table(url, **kwargs)
    scan = ResolvedScan(
        table.location, table.schema, tuple(table.parts()), table.version, io=FileIO(url)
    )
    pushdown = ScanPushdown()
    slices = [s for g in plan_slices(table.parts(), pushdown, SCHEMA.tag_names, 100) for s in g]
    out = []
    for batch in read_slices(scan, slices, pushdown, table.schema.names):
        out.extend(tuple(r.values()) for r in batch.to_pylist())
    return sorted(out)


def _digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_add_files_is_one_commit_and_reads_with_the_table(tmp_path: Path) -> None:
    url = _table(tmp_path)
    src = tmp_path / "src"
    _parquet(
        src / "a.parquet", time=[1, 2], city=["x", "y"], temp=pa.array([1.0, 2.0], pa.float32())
    )
    orc.write_table(
        pa.table({"time": [3], "city": ["x"], "temp": pa.array([3.0], pa.float32())}), src / "b.orc"
    )
    assert add_files(url, str(src / "a.parquet"), format="parquet") == 1
    assert add_files(url, str(src / "b.orc"), format="ORC") == 2
    table = open_table(url)
    assert table.history(limit=1)[0].operation == Operation.ADD_PART
    assert table.schema == SCHEMA
    rows = show_parts(table).rows
    assert [(r[0], r[1], r[2]) for r in rows] == [
        (str(src / "a.parquet"), "parquet", True),
        (str(src / "b.orc"), "orc", True),
    ]
    detail = describe_detail(table, name="t").rows[0]
    assert detail[-1] == {"orc": 1, "parquet": 1}
    assert (detail[5], describe_detail(open_table(url, version=0), name="t").rows[0][5]) == (2, 1)
    assert _rows(url) == [(1, "x", 1.0), (2, "y", 2.0), (3, "x", 3.0)]
    assert _rows(url, version=1) == [(1, "x", 1.0), (2, "y", 2.0)]


def test_orc_column_of_another_type_is_refused(tmp_path: Path) -> None:
    url = _table(tmp_path)
    orc.write_table(pa.table({"time": [3], "city": ["x"], "temp": ["hot"]}), tmp_path / "b.orc")
    with pytest.raises(SchemaMismatchError, match=r"b\.orc: .*column 'temp'.*DOUBLE.*STRING"):
        add_files(url, str(tmp_path / "b.orc"), format="orc")


@pytest.mark.parametrize(
    ("columns", "error", "message"),
    [
        (
            {"time": [1, 2], "city": ["x", None], "temp": [1.0, 2.0]},
            SchemaMismatchError,
            r"bad\.parquet: TAG column 'city' holds nulls",
        ),
        (
            {"time": [1], "city": [7], "temp": [1.0]},
            SchemaMismatchError,
            r"bad\.parquet: TAG column 'city' has type INT64; TAG columns must be strings",
        ),
        (
            {"time": ["1"], "city": ["x"], "temp": [1.0]},
            SchemaMismatchError,
            r"bad\.parquet: time column 'time' has type string",
        ),
        (
            {"stamp": [1], "city": ["x"], "temp": [1.0]},
            SchemaMismatchError,
            r"bad\.parquet: no time column 'time'.*timeColumn",
        ),
        (
            {"time": [1], "city": ["x"], "temp": pa.array([1], pa.decimal128(5, 2))},
            SchemaMismatchError,
            r"bad\.parquet: column 'temp' has type decimal128\(5, 2\)",
        ),
        (
            {"time": [1], "city": ["x"], "temp": [1.0], "wind": [2.0]},
            SchemaMismatchError,
            r"bad\.parquet: column 'wind' is not in table 'weather'.*mergeSchema",
        ),
    ],
)
def test_a_bad_file_in_a_directory_commits_nothing(
    tmp_path: Path, columns: dict[str, Any], error: type[Exception], message: str
) -> None:
    url = _table(tmp_path)
    src = tmp_path / "src"
    _parquet(src / "good.parquet", time=[1], city=["x"], temp=pa.array([1.0], pa.float32()))
    _parquet(src / "bad.parquet", **columns)
    log = _digest(Path(url))
    with pytest.raises(error, match=message):
        add_files(url, str(src), format="parquet")
    assert open_table(url).version == 0
    assert _digest(Path(url)) == log


def test_hive_directories_need_the_partition_option(tmp_path: Path) -> None:
    url = _table(tmp_path)
    hive = tmp_path / "hive"
    for city in ("bj", "sh"):
        _parquet(hive / f"city={city}" / "p.parquet", time=[1], temp=pa.array([1.0], pa.float32()))
    with pytest.raises(
        OptionError,
        match=r"the partition option is required when the files are partitioned \(found keys "
        "city",
    ):
        add_files(url, str(hive), format="parquet")
    for bad in ("day=20211123 and hour=12", "day=20211123,hour=12"):
        with pytest.raises(OptionError, match="invalid partition option"):
            add_files(url, str(hive), format="parquet", options={"partition": bad})
    assert add_files(url, str(hive), format="parquet", options={"Partition": "city:string"}) == 1
    assert _rows(url) == [(1, "bj", 1.0), (1, "sh", 1.0)]
    part = open_table(url).parts()[0]
    assert part.tags["city"].values == frozenset({"bj"}) and part.partition_values == {"city": "bj"}


def test_csv_without_header_maps_columns_by_table_order(tmp_path: Path) -> None:
    url = _table(tmp_path)
    (tmp_path / "a.csv").write_text('5|"x|y"|1.5\n6|z|\n')
    add_files(
        url, str(tmp_path / "a.csv"), format="csv", options={"header": "false", "delimiter": "|"}
    )
    assert _rows(url) == [(5, "x|y", 1.5), (6, "z", None)]


def test_same_file_twice_missing_path_and_drop_without_match_are_errors(tmp_path: Path) -> None:
    url = _table(tmp_path)
    file = _parquet(
        tmp_path / "a.parquet", time=[1], city=["x"], temp=pa.array([1.0], pa.float32())
    )
    add_files(url, str(file), format="parquet")
    with pytest.raises(InvalidCommitError, match="already a part of table"):
        add_files(url, str(file), format="parquet")
    with pytest.raises(TableNotFoundError, match="does not exist"):
        add_files(url, str(tmp_path / "nope"), format="parquet")
    with pytest.raises(InvalidCommitError, match="no part of table .* matches"):
        drop_parts(url, str(tmp_path / "other.parquet"))
    assert open_table(url).version == 1


def test_drop_part_purge_and_vacuum_never_delete_external_files(tmp_path: Path) -> None:
    url = _table(tmp_path)
    outside = tmp_path / "outside"
    _parquet(outside / "a.parquet", time=[1], city=["x"], temp=pa.array([1.0], pa.float32()))
    # An external file may even sit inside the table's folder: it stays the user's.
    inside = Path(url) / "user" / "b.parquet"
    _parquet(inside, time=[2], city=["y"], temp=pa.array([2.0], pa.float32()))
    write(Path(url), "own.tsfile")
    append_parts(url, [part("own.tsfile")], SCHEMA)
    add_files(url, str(outside), format="parquet")
    add_files(url, str(inside), format="parquet")
    before = {**_digest(outside), "inside": hashlib.sha256(inside.read_bytes()).hexdigest()}
    version = drop_parts(url, "user/*.parquet")
    assert [p.path for p in open_table(url).parts() if p.external] == [str(outside / "a.parquet")]
    assert str(inside) in {p.path for p in open_table(url, version=version - 1).parts()}
    vacuum(url, dry_run=False, retention_ms=0, retention_check=False)
    purged = purge(url)
    assert str(Path(url) / "own.tsfile") in purged
    assert not any("parquet" in p for p in purged)
    after = {**_digest(outside), "inside": hashlib.sha256(inside.read_bytes()).hexdigest()}
    assert after == before


def test_a_part_of_an_unknown_format_fails_clearly(tmp_path: Path) -> None:
    url = _table(tmp_path)
    table = open_table(url)
    alien = part("/data/x.avro").__class__(
        path="/data/x.avro",
        format="avro",
        size_bytes=1,
        row_count=1,
        min_time=0,
        max_time=0,
        devices=None,
        external=True,
    )
    commit(FileIO(url), url, [AddPart(alien)], read=table.snapshot, operation=Operation.ADD_PART)
    with pytest.raises(CorruptManifestError, match="format 'avro'.*upgrade"):
        _rows(url)


def test_external_parts_on_s3(s3_table: tuple[str, dict[str, Any]]) -> None:
    import s3fs

    url, options = s3_table
    create_table(url, SCHEMA, storage_options=options)
    fs = s3fs.S3FileSystem(**options)
    bucket = url.split("/")[2]
    for name, t in (("a", 1), ("b", 2)):
        with fs.open(f"{bucket}/old/{name}.parquet", "wb") as handle:
            pq.write_table(
                pa.table({"time": [t], "city": [name], "temp": [float(t)]}).cast(
                    pa.schema([("time", pa.int64()), ("city", pa.string()), ("temp", pa.float32())])
                ),
                handle,
            )
    assert add_files(url, f"s3://{bucket}/old/", format="parquet", storage_options=options) == 1
    table = open_table(url, storage_options=options)
    assert sorted(p.path for p in table.parts()) == [
        f"s3://{bucket}/old/a.parquet",
        f"s3://{bucket}/old/b.parquet",
    ]
    scan = ResolvedScan(
        table.location, table.schema, tuple(table.parts()), table.version, io=FileIO(url, options)
    )
    slices = [s for g in plan_slices(table.parts(), ScanPushdown(), ("city",), 100) for s in g]
    rows = [
        r
        for b in read_slices(scan, slices, ScanPushdown(), ["time", "city"])
        for r in b.to_pylist()
    ]
    assert sorted((r["time"], r["city"]) for r in rows) == [(1, "a"), (2, "b")]


def test_add_files_reports_progress_per_file(tmp_path: Path) -> None:
    url = _table(tmp_path)
    for name in ("a", "b"):
        _parquet(
            tmp_path / "src" / f"{name}.parquet",
            time=[1],
            city=[name],
            temp=pa.array([1.0], pa.float32()),
        )
    calls: list[tuple[int, int]] = []
    add_files(
        url, str(tmp_path / "src"), format="parquet", progress=lambda d, t: calls.append((d, t))
    )
    assert calls == [(1, 2), (2, 2)]
    assert len(open_table(url).parts()) == 2
