"""The order a user sees, pure: ``ALTER COLUMN … FIRST | AFTER`` may put any column (``time``
and TAGs too) anywhere, recorded as the schema's display order only when it is not the
canonical one (time, TAGs, FIELDs), which the part files keep; the manifest gates it."""

from __future__ import annotations

import json

import pytest

from tests.metadata.manifest.helpers import SCHEMA, created, landed_after, part
from tsfile_catalog.exceptions import CommitConflictError, CorruptManifestError, SchemaError
from tsfile_catalog.metadata.manifest import (
    BASE_FORMAT_VERSION,
    COLUMN_ORDER_FORMAT_VERSION,
    AddPart,
    Operation,
    SetSchema,
    apply,
    decode_commit,
    encode_commit,
    prepare_commit,
    rebase,
)
from tsfile_catalog.metadata.manifest import model as manifest_model
from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema
from tsfile_catalog.metadata.schema_evolution import (
    NewColumn,
    add_columns,
    drop_columns,
    move_column,
    rename_column,
)
from tsfile_catalog.metadata.schema_merge import merge_schema

WEATHER = {
    "table": "weather",
    "columns": [
        {"name": "city", "type": "STRING", "category": "TAG"},
        {"name": "device", "type": "STRING", "category": "TAG"},
        {"name": "temp", "type": "DOUBLE", "category": "FIELD"},
        {"name": "rain", "type": "INT32", "category": "FIELD"},
    ],
}


def _weather() -> TableSchema:
    return TableSchema.from_json(WEATHER)


def test_any_column_moves_first_or_after_any_other_and_the_files_keep_their_order() -> None:
    schema = _weather()
    first = move_column(schema, "rain", after=None)
    assert first.display_names == ("rain", "time", "city", "device", "temp")
    # The canonical order keeps time and the TAGs first; the FIELDs follow the shown order.
    assert first.names == ("time", "city", "device", "rain", "temp")
    assert [c.id for c in first.columns] == [1, 2, 4, 3] and not first.is_mapped
    # time and the TAGs move too; the TAGs' identity order never does.
    moved = move_column(move_column(first, "time", after="temp"), "city", after="rain")
    assert moved.display_names == ("rain", "city", "device", "temp", "time")
    assert moved.tag_names == ("city", "device")
    assert move_column(moved, "device", after=None).display_names == (
        "device",
        "rain",
        "city",
        "temp",
        "time",
    )
    # Moving everything back is the canonical order again: nothing recorded.
    back = move_column(first, "rain", after="temp")
    assert back.display_names == back.names and back.order is None
    assert back == schema
    assert move_column(first, "rain", after="rain") is first
    for column, after, message in (
        ("snow", None, "no column 'snow'"),
        ("rain", "snow", "AFTER snow: the table has no column 'snow'"),
    ):
        with pytest.raises(SchemaError, match=message):
            move_column(schema, column, after=after)


def test_a_field_order_alone_stays_in_the_columns_and_is_not_recorded() -> None:
    moved = move_column(_weather(), "rain", after="device")
    assert moved.order is None
    assert moved.names == moved.display_names == ("time", "city", "device", "rain", "temp")
    # Once a display order exists, a FIELD move changes both, consistently.
    first = move_column(moved, "temp", after=None)
    assert first.display_names == ("temp", "time", "city", "device", "rain")
    assert first.names == ("time", "city", "device", "temp", "rain")


def test_the_display_order_follows_renames_drops_adds_and_merged_appends() -> None:
    schema = move_column(move_column(_weather(), "rain", after=None), "time", after="city")
    assert schema.display_names == ("rain", "city", "time", "device", "temp")
    renamed = rename_column(schema, "rain", "rainfall")
    assert renamed.display_names == ("rainfall", "city", "time", "device", "temp")
    dropped = drop_columns(renamed, ["rainfall"])
    assert dropped.display_names == ("city", "time", "device", "temp")
    added = add_columns(
        dropped,
        [
            NewColumn("wind", DataType.DOUBLE, first=True),
            NewColumn("gust", DataType.INT32, after="time"),
            NewColumn("snow", DataType.INT32),
            NewColumn("hail", DataType.INT32, after="city"),
        ],
    )
    assert added.display_names == (
        "wind",
        "city",
        "hail",
        "time",
        "gust",
        "device",
        "temp",
        "snow",
    )
    assert added.names == ("time", "city", "device", "wind", "hail", "gust", "temp", "snow")
    incoming = TableSchema.of(
        "weather", [*added.tags, Column("fog", DataType.BOOLEAN, Category.FIELD)]
    )
    merged = merge_schema(added, incoming, merge=True)
    assert merged.display_names == (*added.display_names, "fog"), "appended last"
    # Dropping the only moved column leaves the canonical order: nothing recorded.
    assert drop_columns(move_column(_weather(), "rain", after=None), ["rain"]).order is None


def test_the_order_round_trips_by_name_and_a_bad_one_is_refused() -> None:
    schema = rename_column(move_column(_weather(), "rain", after=None), "temp", "t")
    schema = move_column(schema, "time", after="t")
    recorded = schema.to_json()
    assert recorded["column_order"] == ["rain", "city", "device", "t", "time"]
    assert TableSchema.from_json(recorded) == schema
    assert "column_order" not in _weather().to_json()
    for order, message in (
        (["rain", "city", "device", "t"], "column_order .*lists 4 of the 5 columns"),
        (["rain", "city", "device", "t", "snow"], "column_order .*'snow'"),
        (["rain", "city", "device", "t", "t"], "column_order .*'t' twice"),
    ):
        with pytest.raises(SchemaError, match=message):
            TableSchema.from_json({**recorded, "column_order": order})


def test_a_moved_schema_is_format_4_and_refused_by_a_format_3_reader(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    created = apply(
        None,
        prepare_commit(
            [SetSchema(SCHEMA, 0), AddPart(part("a.tsfile"))],
            base=None,
            timestamp_ms=1,
            operation=Operation.CREATE,
        ),
    )
    field = created.schema.fields[-1].name
    within_fields = move_column(created.schema, field, after=created.schema.tag_names[-1])
    same = prepare_commit(
        [SetSchema(within_fields, 0)],
        base=created,
        timestamp_ms=2,
        operation=Operation.CHANGE_COLUMN,
    )
    assert json.loads(encode_commit(same, created.schema))["format_version"] == BASE_FORMAT_VERSION
    first = move_column(created.schema, field, after=None)
    change = prepare_commit(
        [SetSchema(first, 0)], base=created, timestamp_ms=2, operation=Operation.CHANGE_COLUMN
    )
    data = encode_commit(change, created.schema)
    assert json.loads(data)["format_version"] == COLUMN_ORDER_FORMAT_VERSION == 4
    after = apply(created, decode_commit(data, created.schema, source="1.json"))
    assert after.schema.display_names[0] == field
    # The next append records no schema: its own file keeps its version.
    append = prepare_commit(
        [AddPart(part("b.tsfile"))], base=after, timestamp_ms=3, operation=Operation.WRITE
    )
    assert json.loads(encode_commit(append, after.schema))["format_version"] == BASE_FORMAT_VERSION
    # A release reading up to format 3 would show (and insert by position into) the
    # canonical order: it stops instead.
    monkeypatch.setattr(manifest_model, "FORMAT_VERSION", 3)
    with pytest.raises(CorruptManifestError, match="format_version 4.*up to 3.*upgrade"):
        decode_commit(data, created.schema, source="1.json")


def test_a_write_prepared_before_a_concurrent_move_conflicts_naming_the_new_order() -> None:
    read = created(part("a"))
    moved = move_column(read.schema, "temp", after=None)
    landed = landed_after(read, [SetSchema(moved, 1)])
    with pytest.raises(CommitConflictError, match="columns moved: now temp, time, city, day"):
        rebase([AddPart(part("c"))], landed, read=read)
