"""add_files / drop_parts without Spark: real Parquet, ORC and CSV files, one commit each,
nothing committed on failure, and no path that deletes ever touches an external file."""

from __future__ import annotations

import dataclasses
import hashlib
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from tests.factories import table_schema
from tests.table.helpers import part, write
from tsfile_catalog.exceptions import (
    CorruptManifestError,
    DataError,
    InvalidCommitError,
    OptionError,
    SchemaMismatchError,
    TableNotFoundError,
)
from tsfile_catalog.exec.read import read_slices
from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.formats.parquet import PARQUET
from tsfile_catalog.inspect import describe_detail, show_parts
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.expressions import ScanPushdown
from tsfile_catalog.metadata.external import parse_add_part_options
from tsfile_catalog.metadata.manifest import AddPart, Operation
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.metadata.slices import plan_slices
from tsfile_catalog.table import (
    add_columns,
    add_files,
    append_parts,
    commit,
    create_table,
    drop_parts,
    open_table,
    purge,
    vacuum,
)
from tsfile_catalog.table.external import read_external_parts
from tsfile_catalog.table.log import write_checkpoint

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
    slices = [
        s for g in plan_slices(table.parts(), pushdown, SCHEMA.tag_names, 100, merges=()) for s in g
    ]
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
    result = describe_detail(table, name="t")
    detail = result.rows[0]
    assert detail[result.column_names.index("parts_by_format")] == {"orc": 1, "parquet": 1}
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
    slices = [
        s for g in plan_slices(table.parts(), ScanPushdown(), ("city",), 100, merges=()) for s in g
    ]
    rows = [
        r
        for b in read_slices(scan, slices, ScanPushdown(), ["time", "city"])
        for r in b.to_pylist()
    ]
    assert sorted((r["time"], r["city"]) for r in rows) == [(1, "a"), (2, "b")]
    # An object rewritten after ADD PART has another ETag: its reads fail.
    with fs.open(f"{bucket}/old/a.parquet", "wb") as handle:
        pq.write_table(
            pa.table({"time": [7], "city": ["z"], "temp": pa.array([7.0], pa.float32())}), handle
        )
    with pytest.raises(DataError, match=r"a\.parquet \(parquet\) changed after ADD PART"):
        list(read_slices(scan, slices, ScanPushdown(), ["time", "city"]))
    # So does a count from statistics alone (one HEAD per object, both parts at once).
    with pytest.raises(DataError, match=r"a\.parquet \(parquet\) changed after ADD PART"):
        table.scan().count()
    # A filter the old statistics say skips a.parquet fails too: the rewrite may hold rows
    # it matches (only b.parquet is unchanged).
    with pytest.raises(DataError, match=r"a\.parquet \(parquet\) changed after ADD PART"):
        table.scan(where="city = 'b'").count()


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


@pytest.mark.parametrize("where", ["root", "staging"])
def test_an_external_file_named_like_ours_is_never_deleted(tmp_path: Path, where: str) -> None:
    # Ownership comes from what the manifest says a file is, not from its name: a Parquet
    # file the writer could have named (a root part, a staged task file) stays the user's.
    from tsfile_catalog.metadata.ownership import new_job_id, new_part_name, task_dir_name

    url = _table(tmp_path)
    folder = Path(url) if where == "root" else Path(url) / "_staging" / new_job_id()
    if where == "staging":
        folder = folder / task_dir_name(0, 0)
    theirs = _parquet(
        folder / new_part_name(0), time=[1], city=["x"], temp=pa.array([1.0], pa.float32())
    )
    digest = hashlib.sha256(theirs.read_bytes()).hexdigest()
    add_files(url, str(theirs), format="parquet")
    assert vacuum(url, dry_run=True, retention_ms=0, retention_check=False) == []
    vacuum(url, dry_run=False, retention_ms=0, retention_check=False)
    assert _rows(url) == [(1, "x", 1.0)]
    drop_parts(url, str(theirs))
    vacuum(url, dry_run=False, retention_ms=0, retention_check=False)
    assert theirs.exists()
    assert str(theirs) not in purge(url)
    assert hashlib.sha256(theirs.read_bytes()).hexdigest() == digest


@pytest.mark.parametrize("fmt", ["parquet", "orc", "csv"])
def test_a_file_rewritten_after_add_part_fails_its_read(tmp_path: Path, fmt: str) -> None:
    url = _table(tmp_path)
    file = tmp_path / f"a.{fmt}"

    def put(times: list[int], cities: list[str]) -> None:
        data = pa.table({"time": times, "city": cities, "temp": [1.0] * len(times)})
        if fmt == "parquet":
            pq.write_table(data, file)
        elif fmt == "orc":
            orc.write_table(data, file)
        else:
            pacsv.write_csv(data, file)

    put([1, 2], ["x", "x"])
    add_files(url, str(file), format=fmt)
    stamp = open_table(url).parts()[0].source_stamp
    # The stamp survives a Parquet checkpoint (an extra key of the part's JSON).
    write_checkpoint(FileIO(url), url, open_table(url).snapshot)
    assert stamp is not None and open_table(url).parts()[0].source_stamp == stamp
    assert _rows(url) == [(1, "x", 1.0), (2, "x", 1.0)]
    assert open_table(url).scan().count() == 2
    put([1, 2, 3], ["x", "x", "new"])  # same schema, more rows, a new device
    with pytest.raises(DataError, match=rf"a\.{fmt} \({fmt}\) changed after ADD PART.*re-add it"):
        _rows(url)
    # Counted from statistics alone (no file opened), it fails the same way.
    scan = open_table(url).scan()
    assert "2 from statistics" in scan.explain()
    with pytest.raises(DataError, match=rf"a\.{fmt} \({fmt}\) changed after ADD PART.*re-add it"):
        scan.count()
    drop_parts(url, str(file))
    add_files(url, str(file), format=fmt)
    assert _rows(url) == [(1, "x", 1.0), (2, "x", 1.0), (3, "new", 1.0)]


def test_a_same_sized_rewrite_is_caught_by_its_stamp(tmp_path: Path) -> None:
    url = _table(tmp_path)
    file = tmp_path / "a.csv"
    file.write_text("time,city,temp\n1,x,1.0\n")
    add_files(url, str(file), format="csv")
    file.write_text("time,city,temp\n9,y,1.0\n")
    os.utime(file, ns=(file.stat().st_atime_ns, file.stat().st_mtime_ns + 5_000_000))
    with pytest.raises(DataError, match=r"a\.csv \(csv\) changed after ADD PART"):
        _rows(url)
    with pytest.raises(DataError, match=r"a\.csv \(csv\) changed after ADD PART"):
        open_table(url).scan().count()
    file.unlink()
    with pytest.raises(DataError, match=r"a\.csv \(csv\) is missing .*DROP PART it"):
        open_table(url).scan().count()


def test_parts_recorded_without_a_stamp_still_read(tmp_path: Path) -> None:
    url = _table(tmp_path)
    file = _parquet(tmp_path / "a.parquet", time=[1], city=["x"], temp=[1.0])
    table = open_table(url)
    _, part = PARQUET.read_part(
        FileIO(url),
        str(file),
        table=SCHEMA,
        options=parse_add_part_options({"path": str(file), "format": "parquet"}),
        partition_values={},
        size_bytes=file.stat().st_size,
    )
    assert part.source_stamp is not None
    body = part.to_json({"temp": DataType.DOUBLE})
    assert body["source_stamp"] == part.source_stamp
    del body["source_stamp"]  # as a manifest written before the stamp existed
    old = PartFile.from_json(body, {"temp": DataType.DOUBLE})
    assert old.source_stamp is None
    commit(FileIO(url), url, [AddPart(old)], read=table.snapshot, operation=Operation.ADD_PART)
    assert _rows(url) == [(1, "x", 1.0)]
    write_checkpoint(FileIO(url), url, open_table(url).snapshot)
    assert open_table(url).parts()[0].source_stamp is None


def test_a_file_is_one_part_however_its_path_is_spelled(tmp_path: Path) -> None:
    url = _table(tmp_path)
    real = _parquet(tmp_path / "data" / "a.parquet", time=[1], city=["x"], temp=[1.0])
    (tmp_path / "link.parquet").symlink_to(real)
    (tmp_path / "dirlink").symlink_to(tmp_path / "data")
    add_files(url, str(tmp_path / "link.parquet"), format="parquet")
    assert [p.path for p in open_table(url).parts()] == [str(real)]
    for other in (
        str(real),
        str(tmp_path / "dirlink" / "a.parquet"),
        f"{tmp_path}/data/../data/./a.parquet",
        f"file://{real}",
    ):
        with pytest.raises(InvalidCommitError, match=rf"{real} is already a part of table"):
            add_files(url, other, format="parquet")
    assert _rows(url) == [(1, "x", 1.0)]
    # One ADD that reaches a file twice (a link beside its target) is refused by name.
    (tmp_path / "data" / "b.parquet").symlink_to(real)
    drop_parts(url, str(real))
    with pytest.raises(InvalidCommitError, match=r"reaches the file .*a\.parquet twice"):
        add_files(url, str(tmp_path / "data"), format="parquet")


def test_a_part_recorded_under_a_link_is_still_found(tmp_path: Path) -> None:
    # A part added before paths were resolved keeps its spelling; the file is still one part.
    url = _table(tmp_path)
    real = _parquet(tmp_path / "data" / "a.parquet", time=[1], city=["x"], temp=[1.0])
    (tmp_path / "link.parquet").symlink_to(real)
    _, [linked] = read_external_parts(
        FileIO(url),
        SCHEMA,
        parse_add_part_options({"path": str(real), "format": "parquet"}),
    )
    linked = dataclasses.replace(linked, path=str(tmp_path / "link.parquet"))
    table = open_table(url)
    commit(FileIO(url), url, [AddPart(linked)], read=table.snapshot, operation=Operation.ADD_PART)
    with pytest.raises(InvalidCommitError, match=r"already a part of table .*\(as .*link"):
        add_files(url, str(real), format="parquet")


def test_a_header_less_csv_part_reads_after_add_columns(tmp_path: Path) -> None:
    url = _table(tmp_path)
    (tmp_path / "a.csv").write_text("5,x,1.5\n6,z,\n")
    add_files(url, str(tmp_path / "a.csv"), format="csv", options={"header": "false"})
    add_columns(url, [("wind", DataType.DOUBLE)])
    assert _rows(url) == [(5, "x", 1.5, None), (6, "z", None, None)]


def test_a_column_the_table_cannot_hold_is_refused_so_none_surfaces_later(
    tmp_path: Path,
) -> None:
    url = _table(tmp_path)
    file = _parquet(
        tmp_path / "a.parquet",
        time=[1],
        city=["x"],
        temp=[1.0],
        wind=pa.array([[1, 2]], pa.list_(pa.int64())),
    )
    with pytest.raises(SchemaMismatchError, match=r"a\.parquet: column 'wind' has type list"):
        add_files(url, str(file), format="parquet")
    add_columns(url, [("wind", DataType.INT64)])
    with pytest.raises(SchemaMismatchError, match=r"a\.parquet: column 'wind' has type list"):
        add_files(url, str(file), format="parquet")
    assert open_table(url).parts() == []


@pytest.mark.parametrize("fmt", ["parquet", "orc", "csv"])
def test_a_file_only_touched_or_copied_still_reads(tmp_path: Path, fmt: str) -> None:
    """Identical bytes with another modification time (``touch``, a copy without ``-p``, a
    restore from backup) are the same content: reads go on, and only a real change fails."""
    url = _table(tmp_path)
    file = tmp_path / f"a.{fmt}"
    data = pa.table({"time": [1, 2], "city": ["x", "y"], "temp": [1.0, 2.0]})
    {"parquet": pq.write_table, "orc": orc.write_table, "csv": pacsv.write_csv}[fmt](data, file)
    add_files(url, str(file), format=fmt)
    expected = [(1, "x", 1.0), (2, "y", 2.0)]
    stat = file.stat()
    os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 3_000_000_000))  # touch
    assert _rows(url) == expected
    assert open_table(url).scan().count() == 2
    # A copy without -p: new inode, new modification time, the same bytes.
    copy = tmp_path / "copy"
    copy.write_bytes(file.read_bytes())
    os.replace(copy, file)
    assert _rows(url) == expected
    assert open_table(url).scan(where="city = 'y'").count() == 1
    # Other bytes of the same size still fail every read.
    {"parquet": pq.write_table, "orc": orc.write_table, "csv": pacsv.write_csv}[fmt](
        pa.table({"time": [1, 2], "city": ["x", "z"], "temp": [1.0, 2.0]}), file
    )
    assert file.stat().st_size == stat.st_size
    with pytest.raises(DataError, match=rf"a\.{fmt} \({fmt}\) changed after ADD PART"):
        _rows(url)
    with pytest.raises(DataError, match=rf"a\.{fmt} \({fmt}\) changed after ADD PART"):
        open_table(url).scan().count()


def test_a_part_added_before_digests_keeps_the_strict_check(tmp_path: Path) -> None:
    from tsfile_catalog.formats.external import check_unchanged

    url = _table(tmp_path)
    file = _parquet(
        tmp_path / "a.parquet", time=[1], city=["x"], temp=pa.array([1.0], pa.float32())
    )
    add_files(url, str(file), format="parquet")
    part = open_table(url).parts()[0]
    assert part.source_stamp is not None and "|digest=sha256-tail65536:" in part.source_stamp
    legacy = dataclasses.replace(part, source_stamp=part.source_stamp.split("|digest=")[0])
    check_unchanged(FileIO(url), legacy)
    stat = file.stat()
    os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 3_000_000_000))
    check_unchanged(FileIO(url), part)
    with pytest.raises(DataError, match="changed after ADD PART .*no content digest to compare"):
        check_unchanged(FileIO(url), legacy)


def test_an_external_part_sharing_keys_reads_without_its_tags_asked_for(tmp_path: Path) -> None:
    """A ``last`` table's external part whose keys meet another part's is read by device
    (merged with the other part): a read that asks for no TAG column (Spark's run-time
    filter of a DELETE reads one column) once failed with 'Field "city" does not exist'."""
    from tsfile_catalog import write_table

    url = str(tmp_path / "t")

    def rows(times: list[int], cities: list[str], devices: list[str], temps: list[float]) -> Any:
        return pa.table(
            {"time": times, "city": cities, "device": devices, "temp": temps},
        )

    write_table(
        url,
        rows([1, 2], ["bj", "sh"], ["d1", "d3"], [1.0, 2.0]),
        table="t",
        tag_columns=["city", "device"],
    )
    write_table(url, rows([101], ["bj"], ["d1"], [20.5]))
    external = tmp_path / "ext.parquet"
    pq.write_table(
        rows([100, 101, 102], ["bj", "bj", "sh"], ["d1", "d1", "d3"], [1.5, 2.5, 3.5]), external
    )
    add_files(url, str(external), format="parquet")
    table = open_table(url)
    assert table.properties["key.duplicates"] == "last"
    assert sorted(table.scan(columns=["temp"]).to_arrow().column("temp").to_pylist()) == [
        1.0,
        1.5,
        2.0,
        2.5,
        3.5,
    ]
    cities = table.scan(columns=["city"]).to_arrow()
    assert cities.column_names == ["city"]
    assert sorted(cities.column("city").to_pylist()) == ["bj", "bj", "bj", "sh", "sh"]
    devices = table.scan(columns=["device"], where="city = 'bj'").to_arrow()
    assert devices.column("device").to_pylist() == ["d1"] * 3


@pytest.mark.parametrize("where", ["root", "staging"])
def test_an_external_file_named_like_ours_survives_delete_expire_and_vacuum(
    tmp_path: Path, where: str
) -> None:
    """Once a DELETE unreferenced an external part and EXPIRE SNAPSHOTS forgot the versions
    that recorded it, only its bytes say it is not the table's: a Parquet file is never one
    of the TsFiles the table's writers leave, whatever its name."""
    from tsfile_catalog.metadata.ownership import new_job_id, new_part_name, task_dir_name
    from tsfile_catalog.table import expire_snapshots

    url = _table(tmp_path)
    folder = Path(url) if where == "root" else Path(url) / "_staging" / new_job_id()
    if where == "staging":
        folder = folder / task_dir_name(0, 0)
    theirs = _parquet(
        folder / new_part_name(0),
        time=[1, 2],
        city=["x", "x"],
        temp=pa.array([1.0, 9.0], pa.float32()),
    )
    digest = hashlib.sha256(theirs.read_bytes()).hexdigest()
    add_files(url, str(theirs), format="parquet")
    open_table(url).delete("temp > 5")
    assert str(theirs) not in {p.path for p in open_table(url).parts()}
    expire_snapshots(url, retention_ms=0, retain_last=1)
    assert str(theirs) not in vacuum(url, dry_run=True, retention_ms=0, retention_check=False)
    vacuum(url, dry_run=False, retention_ms=0, retention_check=False)
    assert _rows(url) == [(1, "x", 1.0)]
    assert str(theirs) not in purge(url)
    assert hashlib.sha256(theirs.read_bytes()).hexdigest() == digest
