"""Per-type encoding defaults and ``encoding.<column>`` overrides: parsed, stored with a
catalog table, validated per column, and mapped onto TsFile 2.5's per-physical-type config."""

from __future__ import annotations

import pytest

from tests.factories import table_schema
from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.formats.tsfile import WriteSettings, native_encodings, validate_encoding
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.options import parse_write_options
from tsfile_catalog.sql.registry import TableEntry
from tsfile_catalog.sql.table_options import (
    check_encoding,
    check_table_options,
    write_options,
    write_settings,
)

SCHEMA = table_schema(
    "plant",
    fields=[
        ("temp", DataType.DOUBLE),
        ("load", DataType.FLOAT),
        ("energy", DataType.INT64),
        ("mode", DataType.STRING),
        ("day", DataType.DATE),
    ],
)


def _settings(**options: str) -> WriteSettings:
    return parse_write_options({"path": "/t", **options}).settings()


def test_defaults_are_the_measured_per_type_choices() -> None:
    settings = WriteSettings()
    assert settings.compression == "ZSTD"
    assert native_encodings(SCHEMA, settings) == {
        "double_encoding_type_": "PLAIN",
        "float_encoding_type_": "PLAIN",
        "int64_encoding_type_": "TS_2DIFF",
        "string_encoding_type_": "DICTIONARY",
        "int32_encoding_type_": "TS_2DIFF",
    }


def test_a_column_override_sets_its_physical_type_only() -> None:
    settings = _settings(**{"Encoding.TEMP": "gorilla", "encoding.energy": "rlbe"})
    assert settings.column_encodings == (("energy", "RLBE"), ("temp", "GORILLA"))
    encodings = native_encodings(SCHEMA, settings)
    assert encodings["double_encoding_type_"] == "GORILLA"
    assert encodings["int64_encoding_type_"] == "RLBE"
    assert encodings["float_encoding_type_"] == "PLAIN"
    # An override wins over the table-wide encoding for its column's type.
    mixed = _settings(encoding="PLAIN", **{"encoding.temp": "CHIMP"})
    assert native_encodings(SCHEMA, mixed)["double_encoding_type_"] == "CHIMP"
    assert native_encodings(SCHEMA, mixed)["int64_encoding_type_"] == "PLAIN"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"encoding.temp": "TS_2DIFF"}, r"'encoding\.temp' = 'TS_2DIFF' .*'temp' of type DOUBLE"),
        ({"encoding.mode": "GORILLA"}, r"'encoding\.mode' .*'mode' of type STRING"),
        ({"encoding.city": "PLAIN"}, r"'encoding\.city' names a TAG column"),
        ({"encoding.nope": "PLAIN"}, r"'encoding\.nope' names no column of table 'plant'"),
        # DATE shares INT32's native setting: ZIGZAG suits INT32 but is lossy on DATE.
        ({"encoding.day": "ZIGZAG"}, r"'encoding\.day' = 'ZIGZAG' .*'day' of type DATE"),
    ],
)
def test_a_bad_override_names_the_column(options: dict[str, str], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        validate_encoding(SCHEMA, _settings(**options))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"encoding.temp": "NOPE"}, r"option 'encoding\.temp' = 'NOPE' is not a TsFile encoding"),
        ({"encoding.": "PLAIN"}, r"option 'encoding\.' names no column"),
    ],
)
def test_a_bad_override_is_refused_when_parsed(options: dict[str, str], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        _settings(**options)


def test_columns_sharing_a_physical_type_must_agree() -> None:
    schema = table_schema(
        "pair", fields=[("a", DataType.DOUBLE), ("b", DataType.DOUBLE), ("n", DataType.INT32)]
    )
    with pytest.raises(OptionError, match=r"'encoding\.b' = 'CHIMP' conflicts with 'encoding\.a'"):
        validate_encoding(schema, _settings(**{"encoding.a": "GORILLA", "encoding.b": "CHIMP"}))
    # One override sets the shared setting for both; one another column cannot use is refused.
    agreed = native_encodings(schema, _settings(**{"encoding.a": "GORILLA"}))
    assert agreed["double_encoding_type_"] == "GORILLA"
    dated = table_schema("d", fields=[("n", DataType.INT32), ("day", DataType.DATE)])
    with pytest.raises(OptionError, match=r"'encoding\.n' .*'day' of type DATE.*shares"):
        validate_encoding(dated, _settings(**{"encoding.n": "ZIGZAG"}))


def test_strings_fall_back_to_plain_beside_a_blob() -> None:
    # BLOB cannot use DICTIONARY, and shares the native string setting with STRING.
    schema = table_schema("b", fields=[("s", DataType.STRING), ("raw", DataType.BLOB)])
    assert native_encodings(schema, WriteSettings())["string_encoding_type_"] == "PLAIN"


def test_a_catalog_table_stores_and_applies_column_encodings() -> None:
    stored = check_table_options({"tagColumns": "city", "ENCODING.Temp": "gorilla"})
    assert stored == {"tagColumns": "city", "encoding.temp": "gorilla"}
    check_encoding(stored, SCHEMA)
    entry = TableEntry(
        database="default", name="plant", location="/w/plant", options=stored, created_ms=0
    )
    assert write_options(entry, "plant")["encoding.temp"] == "gorilla"
    assert write_settings(stored).column_encodings == (("temp", "GORILLA"),)
    with pytest.raises(OptionError, match=r"'encoding\.mode' .*'mode' of type STRING"):
        check_encoding(check_table_options({"encoding.mode": "GORILLA"}), SCHEMA)
