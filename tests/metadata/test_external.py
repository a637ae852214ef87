"""ADD PART's pure rules: options, the partition option, and mapping a file's columns."""

from __future__ import annotations

import re

import pytest

from tests.factories import table_schema
from tsfile_catalog.exceptions import DataError, OptionError, SchemaError, SchemaMismatchError
from tsfile_catalog.metadata.external import (
    FileColumn,
    map_columns,
    parse_add_part_options,
    parse_partition_spec,
    partition_keys,
    partition_values,
    unescape_path_name,
)
from tsfile_catalog.metadata.schema import DataType

TABLE = table_schema(
    "weather", tags=("city",), fields=[("temp", DataType.DOUBLE), ("rain", DataType.INT64)]
)


def col(name: str, type_: DataType | None, native: str = "") -> FileColumn:
    return FileColumn(name, type_, native or (type_.value if type_ else "?"))


GOOD = [
    col("Time", DataType.INT64),
    col("CITY", DataType.STRING),
    col("temp", DataType.FLOAT),
    col("rain", DataType.INT32),
]


def test_options_keys_are_case_insensitive_and_csv_options_are_kept() -> None:
    parsed = parse_add_part_options(
        {"PATH": "/d", "Format": "CSV", "TIMECOLUMN": "TS", "nullvalue": "NA", "Header": "False"}
    )
    assert (parsed.path, parsed.format, parsed.time_column) == ("/d", "csv", "ts")
    assert parsed.read_options == {
        "timeColumn": "ts",
        "timestampPrecision": "ms",
        "nullValue": "NA",
        "header": "false",
    }


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"format": "parquet"}, "needs the option 'path'"),
        ({"path": "/d"}, "needs the option 'format'"),
        ({"path": "/d", "format": "avro"}, "'format' = 'avro' is not supported"),
        ({"path": "/d", "format": "orc", "colour": "x"}, "unknown ADD PART option 'colour'"),
        ({"path": "/d", "format": "orc", "delimiter": ";"}, "are CSV options"),
        ({"path": "/d", "format": "csv", "delimiter": ";;"}, "'delimiter' must be one character"),
        ({"path": "/d", "format": "orc", "timestampPrecision": "s"}, "timestampPrecision"),
        ({"path": "/d", "format": "orc", "mergeSchema": "yes"}, "'mergeSchema' must be"),
    ],
)
def test_bad_options_name_the_option(options: dict[str, str], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        parse_add_part_options(options)


@pytest.mark.parametrize(
    "spec", ["day=20211123 and hour=12 and type=0", "day=20211123,hour=12,type=0", "city", ""]
)
def test_malformed_partition_option_is_invalid(spec: str) -> None:
    with pytest.raises(OptionError, match="invalid partition option"):
        parse_partition_spec(spec)


def test_partition_spec_names_string_keys_and_refuses_other_types() -> None:
    assert parse_partition_spec(" City:string , device:STRING") == ("city", "device")
    with pytest.raises(OptionError, match="invalid partition option.*declare it 'day:string'"):
        parse_partition_spec("day:int")


def test_partition_keys_and_values_come_from_key_value_folders() -> None:
    relative = ["city=bj/device=d1/a.parquet", "city=sh/b.parquet", "c.parquet"]
    assert partition_keys(relative) == ("city", "device")
    url = "/w/t/city=bj/device=d1/a.parquet"
    assert partition_values(url, ("city", "device")) == {"city": "bj", "device": "d1"}
    with pytest.raises(SchemaError, match="not in a city=… folder"):
        partition_values("/w/t/a.parquet", ("city",))


@pytest.mark.parametrize(
    ("folder", "value"),
    [
        ("a%2Fb", "a/b"),
        ("50%25", "50%"),
        ("a b", "a b"),
        ("%E4", "\u00e4"),  # one code unit per escape, as Java's (char) cast
        ("x%3Dy%3A", "x=y:"),
        ("100%", "100%"),  # no two characters after the %
        ("%2", "%2"),
        ("%zz", "%zz"),
        ("%+F", "\x0f"),  # Java's parseInt takes a sign
        ("%-1x", "%-1x"),  # a negative code is not an escape
        ("北京", "北京"),
    ],
)
def test_partition_values_unescape_as_spark_does(folder: str, value: str) -> None:
    assert unescape_path_name(folder) == value
    assert partition_values(f"/w/city={folder}/a.parquet", ("city",)) == {"city": value}


@pytest.mark.parametrize("folder", ["__HIVE_DEFAULT_PARTITION__", ""])
def test_a_null_partition_value_is_refused(folder: str) -> None:
    with pytest.raises(DataError, match=rf"/w/city={folder}/a\.parquet: .*null city.*TAG"):
        partition_values(f"/w/city={folder}/a.parquet", ("city",))


def test_columns_map_by_name_case_insensitively_with_widenings() -> None:
    mapping = map_columns("f.parquet", GOOD, TABLE)
    assert mapping.time_source == "Time"
    assert mapping.sources == {"city": "CITY", "temp": "temp", "rain": "rain"}
    assert mapping.schema == TABLE


def test_missing_field_reads_null_and_named_time_column_is_used() -> None:
    columns = [col("ts", DataType.TIMESTAMP), col("city", DataType.STRING)]
    mapping = map_columns("f.orc", columns, TABLE, time_column="ts")
    assert mapping.time_source == "ts"
    assert mapping.sources["temp"] is None and mapping.sources["rain"] is None


@pytest.mark.parametrize(
    ("columns", "kwargs", "message"),
    [
        (GOOD[1:], {}, r"f\.x: no time column 'time'.*timeColumn"),
        ([GOOD[0], *GOOD[2:]], {}, "f.x: TAG column 'city' of table 'weather' is missing"),
        (
            [GOOD[0], col("city", DataType.INT64), *GOOD[2:]],
            {},
            "f.x: TAG column 'city' has type INT64; TAG columns must be strings",
        ),
        ([*GOOD, col("wind", DataType.DOUBLE)], {}, "column 'wind' is not in table.*mergeSchema"),
        (
            [GOOD[0], GOOD[1], col("temp", DataType.STRING)],
            {},
            "f.x: column 'temp' of table 'weather' is DOUBLE but the incoming data has STRING",
        ),
        (
            [*GOOD[:2], col("temp", None, "decimal128(10, 2)")],
            {},
            r"f.x: column 'temp' has type decimal128\(10, 2\), which TsFile cannot hold",
        ),
        (GOOD, {"partition": ("city",)}, "both a file column and a partition key"),
        ([GOOD[0], *GOOD[2:]], {"partition": ("region",)}, "TAG column 'city'.*is missing"),
    ],
)
def test_each_mismatch_names_file_column_and_fix(
    columns: list[FileColumn], kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(SchemaMismatchError, match=message):
        map_columns("f.x", columns, TABLE, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("merge", [False, True])
def test_a_column_of_a_type_tsfile_cannot_hold_is_refused_even_outside_the_table(
    merge: bool,
) -> None:
    # As an extra scalar column is: none is left unread to surface after ADD COLUMNS.
    for native in ("list<item: int32>", "decimal128(5, 2)", "struct<a: int32>"):
        extra = [*GOOD, col("blob", None, native)]
        with pytest.raises(
            SchemaMismatchError, match=f"f: column .blob. has type {re.escape(native)}"
        ):
            map_columns("f", extra, TABLE, merge_schema=merge)


def test_merge_adds_fields() -> None:
    merged = map_columns("f", [*GOOD, col("wind", DataType.DOUBLE)], TABLE, merge_schema=True)
    assert merged.schema.names[-1] == "wind" and merged.sources["wind"] == "wind"


def test_partition_key_must_be_a_tag() -> None:
    columns = [GOOD[0], col("city", DataType.STRING)]
    with pytest.raises(SchemaMismatchError, match="partition key 'region' is not a TAG"):
        map_columns("f", columns, TABLE, partition=("region",))
