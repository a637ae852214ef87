"""Option parsing: case-insensitive names, validated values, errors that name the option."""

from __future__ import annotations

from pathlib import Path

import pytest

from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.options import (
    DRIVER_CWD_ENV,
    check_tag_columns,
    parse_read_options,
    parse_stream_write_options,
    parse_write_options,
    qualify_local_path,
    relation_write_options,
)


def test_read_options_are_case_insensitive_and_typed() -> None:
    opts = parse_read_options(
        {
            "PATH": "/t",
            "timestampas": "TIMESTAMP",
            "TimestampPrecision": "us",
            "mergeschema": "True",
            "Columns": "time, City",
            "versionAsOf": "3",
            "LIMIT": "0",
        }
    )
    assert opts.path == "/t"
    assert opts.timestamp_as == "timestamp"
    assert opts.precision == "us"
    assert opts.merge_schema is True
    assert opts.columns == ("time", "City")
    assert opts.version_as_of == 3
    assert opts.limit == 0
    assert opts.pushdown is True


@pytest.mark.parametrize("key", ["pushFilters", "PUSHFILTERS"])
def test_the_removed_push_filters_option_names_the_where_option(key: str) -> None:
    with pytest.raises(OptionError, match="option 'pushFilters' was removed.*'where' option"):
        parse_read_options({"path": "/t", key: "false"})


def test_unknown_option_lists_valid_ones() -> None:
    with pytest.raises(OptionError, match="unknown read option 'colums'.*columns"):
        parse_read_options({"path": "/t", "colums": "a"})
    with pytest.raises(OptionError, match="unknown write option 'tagColumn'.*tagColumns"):
        parse_write_options({"path": "/t", "tagColumn": "a"})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"timestampPrecision": "s"}, "timestampPrecision"),
        ({"timestampAs": "date"}, "timestampAs"),
        ({"mergeSchema": "maybe"}, "mergeSchema"),
        ({"versionAsOf": "-1"}, "versionAsOf"),
        ({"versionAsOf": "x"}, "versionAsOf"),
        ({"versionAsOf": "1", "timestampAsOf": "2024-01-01"}, "mutually exclusive"),
        ({"rowsPerPartition": "0"}, "rowsPerPartition"),
        ({"partitions": "0"}, "partitions"),
        ({"partitions": "many"}, "partitions"),
        ({"limit": "-1"}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"model": "tree"}, "model"),
        ({"columns": "a,,b"}, "columns"),
    ],
)
def test_bad_read_option_values_name_the_option(options: dict[str, str], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        parse_read_options({"path": "/t", **options})


def test_missing_path_is_explained() -> None:
    with pytest.raises(OptionError, match="no path"):
        parse_read_options({})


def test_write_options_defaults_and_values() -> None:
    opts = parse_write_options(
        {
            "path": "/t",
            "table": "W",
            "tagColumns": "city,device",
            "compression": "zstd",
            "encoding": "gorilla",
            "onDuplicate": "LAST",
            "maxRowsPerFile": "10",
        }
    )
    assert opts.tag_columns == ("city", "device")
    assert opts.compression == "ZSTD" and opts.encoding == "GORILLA"
    assert opts.on_duplicate == "last" and opts.max_rows_per_file == 10
    assert parse_write_options({"path": "/t"}).compression == "ZSTD"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"nullTagPolicy": "skip"}, "nullTagPolicy"),
        ({"onDuplicate": "first"}, "onDuplicate"),
        ({"maxRowsPerFile": "0"}, "maxRowsPerFile"),
        ({"timeColumn": " "}, "timeColumn"),
        # Unknown names fail at parse time, not at the first file the writer configures.
        ({"compression": "BOGUS"}, "option 'compression' = 'BOGUS' is not supported"),
        ({"encoding": "FANCY"}, "option 'encoding' = 'FANCY' is not a TsFile encoding"),
        # A statement's TBLPROPERTIES, committed with its rows: refused before any is written.
        ({"tableProperties": "{team"}, "option 'tableProperties' is not JSON"),
        ({"tableProperties": '{"team": 1}'}, "option 'tableProperties' must be a JSON object"),
        ({"tableProperties": '{"watermark.interval": "-1 hour"}'}, "watermark.interval"),
    ],
)
def test_bad_write_option_values_name_the_option(options: dict[str, str], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        parse_write_options({"path": "/t", **options})


def test_storage_options_pass_through_with_json_values() -> None:
    opts = parse_read_options(
        {"path": "s3://b/t", "fs.endpoint_url": "http://127.0.0.1:9", "fs.anon": "true"}
    )
    assert opts.storage_options == {"endpoint_url": "http://127.0.0.1:9", "anon": True}


def test_tag_columns_follow_one_rule_whoever_creates_the_table() -> None:
    # The writer and CREATE TABLE share check_tag_columns; only the message prefix differs.
    assert check_tag_columns([" city", "Device "], time_column="ts") == ("city", "Device")
    with pytest.raises(OptionError, match="^option 'tagColumns' is required to create a table"):
        check_tag_columns(None)
    with pytest.raises(OptionError, match="^CREATE TABLE t: option 'tagColumns' = 'a,' has an"):
        check_tag_columns(["a", ""], where="CREATE TABLE t: ")
    with pytest.raises(OptionError, match="'tagColumns' names a column twice"):
        check_tag_columns(["City", "city"])
    with pytest.raises(OptionError, match="'TS' cannot be a TAG column: it is the time column"):
        check_tag_columns(["city", "ts"], time_column="TS")


# -- the streaming sink's options (issue 11) -------------------------------------------------


@pytest.mark.parametrize(
    ("precision", "delay", "raw"),
    [
        ("ms", "1 hour", 3_600_000),
        ("us", "interval 1 minute 30 seconds", 90_000_000),
        ("ns", "2 milliseconds", 2_000_000),
        ("ms", "1500 microseconds", 2),  # rounded up: never declares more than asked
        ("ms", "0 seconds", 0),
    ],
)
def test_complete_until_delay_is_an_interval_in_the_tables_time_unit(
    precision: str, delay: str, raw: int
) -> None:
    opts = parse_stream_write_options(
        {"path": "/t", "timestampPrecision": precision, "COMPLETEUNTILDELAY": delay}
    )
    assert opts.complete_until_delay(precision) == raw
    assert opts.write.precision == precision


def test_stream_write_options_are_the_batch_writers_plus_the_streams_own() -> None:
    # Spark passes its checkpointLocation among the sink's options.
    opts = parse_stream_write_options(
        {"path": "/t", "checkpointlocation": "/ck", "tagColumns": "city", "onDuplicate": "last"}
    )
    assert opts.write == parse_write_options(
        {"path": "/t", "tagColumns": "city", "onDuplicate": "last"}
    )
    assert opts.complete_until_delay_ns is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"completeUntilDelay": "soon"}, "option 'completeUntilDelay' = 'soon'"),
        ({"completeUntilDelay": "-1 hour"}, "option 'completeUntilDelay' = '-1 hour'"),
        ({"completeUntilDelay": "1 month"}, "option 'completeUntilDelay' = '1 month'"),
        ({"replaceWhere": "time > 5"}, "option 'replaceWhere' = 'time > 5' is not supported"),
        ({"triggerEvery": "1"}, "unknown streaming write option 'triggerEvery'.*completeUntil"),
        ({"compression": "ZIP"}, "option 'compression' = 'ZIP'"),
    ],
)
def test_bad_stream_write_options_are_named(options: dict[str, str], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        parse_stream_write_options({"path": "/t", **options})


def test_relative_local_paths_are_relative_to_the_driver_not_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A Python worker (here: this process) in its own working directory, and the driver's
    # handed over by register(): a relative path means the driver's, as for df.write.parquet.
    worker, driver = tmp_path / "worker", tmp_path / "driver"
    worker.mkdir()
    monkeypatch.chdir(worker)
    monkeypatch.setenv(DRIVER_CWD_ENV, str(driver))
    assert qualify_local_path("rel/t") == str(driver / "rel" / "t")
    assert qualify_local_path("./t/../u") == str(driver / "u")
    for unchanged in ("/abs/t", "s3://bucket/rel", "memory://rel/t"):
        assert qualify_local_path(unchanged) == unchanged


def test_a_relative_path_without_the_drivers_directory_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(DRIVER_CWD_ENV, raising=False)
    with pytest.raises(OptionError, match=r"path 'rel/t' is relative.*tsfile_catalog.register"):
        qualify_local_path("rel/t")
    assert qualify_local_path(str(tmp_path / "t")) == str(tmp_path / "t")


def test_a_view_scans_write_options_replace_its_read_options() -> None:
    # What a write into a Catalog view gets: the scan's options, the write's inside them.
    scan = {
        "path": "/t",
        "partitions": "2",
        "rowsPerPartition": "10",
        "fs.endpoint_url": "http://s3",
        "writeoptions": '{"onDuplicate": "last", "compression": "GZIP"}',
    }
    parse_read_options(scan)  # a read option, ignored by the read
    write = parse_write_options(relation_write_options(scan))
    assert (write.path, write.on_duplicate, write.compression) == ("/t", "last", "GZIP")
    assert write.storage_options == {"endpoint_url": "http://s3"}
    # Without it, a relation's options are all write options, checked as such.
    with pytest.raises(OptionError, match="unknown write option 'partitions'"):
        parse_write_options(relation_write_options({"path": "/t", "partitions": "2"}))
    with pytest.raises(OptionError, match="'writeOptions' must be a JSON object"):
        relation_write_options({"path": "/t", "writeOptions": "[1]"})
