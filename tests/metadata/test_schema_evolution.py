"""Column ids and physical names, pure: how a schema evolves (rename, drop, add back, move),
what the manifest records for it, and how statistics follow a renamed column."""

from __future__ import annotations

import json

import pytest

from tests.metadata.manifest.helpers import SCHEMA, part
from tsfile_catalog.exceptions import CorruptManifestError, SchemaError, SchemaMismatchError
from tsfile_catalog.metadata.expressions import bind
from tsfile_catalog.metadata.expressions.parser import parse_predicate
from tsfile_catalog.metadata.expressions.pruning import might_match
from tsfile_catalog.metadata.manifest import (
    BASE_FORMAT_VERSION,
    COLUMN_MAPPING_FORMAT_VERSION,
    AddPart,
    Operation,
    SetSchema,
    apply,
    decode_commit,
    encode_commit,
    prepare_commit,
)
from tsfile_catalog.metadata.manifest import model as manifest_model
from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema, evolve
from tsfile_catalog.metadata.schema_evolution import (
    NewColumn,
    add_columns,
    check_drop_not_null,
    drop_columns,
    move_column,
    rename_column,
)
from tsfile_catalog.metadata.schema_merge import merge_schema
from tsfile_catalog.metadata.stats import DeviceStats, SeriesStats, by_column_name

LEGACY = {
    "table": "weather",
    "columns": [
        {"name": "city", "type": "STRING", "category": "TAG"},
        {"name": "temp", "type": "DOUBLE", "category": "FIELD"},
        {"name": "day", "type": "DATE", "category": "FIELD"},
    ],
}


def _committed() -> TableSchema:
    return TableSchema.from_json(LEGACY)


def test_a_schema_recorded_before_ids_gets_ids_in_column_order_and_its_names() -> None:
    schema = _committed()
    assert [(c.id, c.physical) for c in schema.columns] == [
        (1, "city"),
        (2, "temp"),
        (3, "day"),
    ]
    assert schema.last_column_id == 3 and not schema.is_mapped
    assert schema.file_schema() is schema
    # Round trip: ids written, nothing else changes; equality is what a user sees.
    again = TableSchema.from_json(json.loads(json.dumps(schema.to_json())))
    assert again == schema and again.same_mapping(schema)
    assert [c.id for c in again.columns] == [1, 2, 3]


def test_rename_keeps_the_id_and_physical_name() -> None:
    renamed = rename_column(_committed(), "TEMP", "Temperature")
    column = renamed.column("temperature")
    assert column is not None and (column.id, column.physical) == (2, "temp")
    assert renamed.physical_names() == {"temperature": "temp"}
    assert renamed.is_mapped
    assert [c.name for c in renamed.file_schema().columns] == ["city", "temp", "day"]
    assert renamed.stats_types() == {"temp": DataType.DOUBLE, "day": DataType.DATE}
    back = rename_column(renamed, "temperature", "temp")
    assert not back.is_mapped and back.column("temp") == Column(
        "temp", DataType.DOUBLE, Category.FIELD
    )
    assert rename_column(renamed, "day", "day") is renamed, "the same name: no change"
    with pytest.raises(SchemaError, match="cannot rename column 'day' .*'temperature'"):
        rename_column(renamed, "day", "temperature")
    with pytest.raises(SchemaError, match="cannot rename column 'day' .*'time'"):
        rename_column(renamed, "day", "time")


def test_a_dropped_name_added_back_is_a_new_column_under_a_fresh_physical_name() -> None:
    dropped = drop_columns(_committed(), ["temp"])
    assert [c.name for c in dropped.columns] == ["city", "day"]
    assert [(c.id, c.physical) for c in dropped.dropped] == [(2, "temp")]
    assert dropped.is_mapped, "a reader without ids could give 'temp' back its old data"
    added = merge_schema(
        dropped,
        TableSchema.of("weather", [*dropped.tags, Column("temp", DataType.INT64, Category.FIELD)]),
        merge=True,
    )
    temp = added.column("temp")
    assert temp is not None and (temp.id, temp.physical, temp.type) == (4, "temp_4", DataType.INT64)
    assert added.stats_types()["temp"] is DataType.DOUBLE, "the dropped column's stats keep"
    # A commit never gives a new column a physical name it was not staged under.
    with pytest.raises(SchemaError, match="'temp' .*physical name 'temp'"):
        evolve(
            TableSchema(
                "weather", (*dropped.columns, Column("temp", DataType.INT64, Category.FIELD))
            ),
            dropped,
            fresh_names=False,
        )


def test_tag_columns_are_never_renamed_or_dropped() -> None:
    schema = _committed()
    with pytest.raises(SchemaError, match="cannot rename TAG column 'city'"):
        rename_column(schema, "city", "town")
    with pytest.raises(SchemaError, match="cannot drop TAG column 'city'"):
        drop_columns(schema, ["temp", "city"])
    with pytest.raises(SchemaError, match="no column 'rain'"):
        drop_columns(schema, ["rain"])
    assert drop_columns(schema, ["rain"], if_exists=True) is schema
    with pytest.raises(SchemaError, match="column 'time'"):
        drop_columns(schema, ["time"], if_exists=True)


def test_a_field_moved_among_the_fields_reorders_the_columns() -> None:
    schema = _committed()
    moved = move_column(schema, "day", after="city")
    assert [c.name for c in moved.columns] == ["city", "day", "temp"]
    assert [c.id for c in moved.columns] == [1, 3, 2]
    assert not moved.is_mapped, "a move changes no physical name"
    assert [c.name for c in move_column(moved, "day", after="temp").columns] == [
        "city",
        "temp",
        "day",
    ]
    # Before the TAGs is only where users see it (tests/metadata/test_column_order.py).
    assert move_column(schema, "day", after=None).order is not None
    with pytest.raises(SchemaError, match="no column 'rain'"):
        move_column(schema, "day", after="rain")
    no_tags = TableSchema.from_json({**LEGACY, "columns": LEGACY["columns"][1:]})
    assert [c.name for c in move_column(no_tags, "day", after="time").columns] == ["day", "temp"]
    check_drop_not_null(schema, "temp")
    with pytest.raises(SchemaError, match="'time' .*every row has a time"):
        check_drop_not_null(schema, "time")


def test_added_columns_go_last_or_after_a_column() -> None:
    schema = drop_columns(_committed(), ["temp"])  # 'temp' back is a new column
    added = add_columns(
        schema,
        [
            NewColumn("wind", DataType.DOUBLE, after="city"),
            NewColumn("gust", DataType.INT32, after="wind"),  # one added before it
            NewColumn("temp", DataType.FLOAT),
            NewColumn("rain", DataType.INT64, after="DAY"),
        ],
    )
    assert [c.name for c in added.columns] == ["city", "wind", "gust", "day", "rain", "temp"]
    assert [c.id for c in added.columns] == [1, 4, 5, 3, 7, 6]
    assert added.column("temp").physical == "temp_6", "never reads the dropped column's data"
    refusals = {
        NewColumn("wind", DataType.DOUBLE, after="snow"): "AFTER snow: .*no column 'snow'",
        NewColumn("day", DataType.DOUBLE, after="city"): "'day' .*exists already",
    }
    for column, message in refusals.items():
        with pytest.raises(SchemaError, match=message):
            add_columns(schema, [column])
    two_tags = TableSchema.from_json(
        {**LEGACY, "columns": [*LEGACY["columns"][:1], {**LEGACY["columns"][0], "name": "dev"}]}
    )
    between = add_columns(two_tags, [NewColumn("wind", DataType.DOUBLE, after="city")])
    assert between.display_names == ("time", "city", "wind", "dev")
    no_tags = TableSchema.from_json({**LEGACY, "columns": LEGACY["columns"][1:]})
    assert [
        c.name
        for c in add_columns(no_tags, [NewColumn("wind", DataType.DOUBLE, after="time")]).columns
    ] == ["wind", "temp", "day"]


def test_a_mapped_schema_is_written_as_format_3_and_refused_by_a_format_2_reader(
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
    renamed = rename_column(created.schema, "temp", "temperature")
    change = prepare_commit(
        [SetSchema(renamed, 0)], base=created, timestamp_ms=2, operation=Operation.RENAME_COLUMN
    )
    data = encode_commit(change, created.schema)
    assert json.loads(data)["format_version"] == COLUMN_MAPPING_FORMAT_VERSION == 3
    after = apply(created, decode_commit(data, created.schema, source="1.json"))
    assert after.schema.physical_names() == {"temperature": "temp"}
    # The next append records no schema: its own file stays version 1.
    append = prepare_commit(
        [AddPart(part("b.tsfile"))], base=after, timestamp_ms=3, operation=Operation.WRITE
    )
    assert json.loads(encode_commit(append, after.schema))["format_version"] == BASE_FORMAT_VERSION
    # A release that reads up to format 2 stops at the rename instead of misreading.
    monkeypatch.setattr(manifest_model, "FORMAT_VERSION", 2)
    with pytest.raises(CorruptManifestError, match="format_version 3.*up to 2.*upgrade"):
        decode_commit(data, created.schema, source="1.json")


def test_statistics_follow_a_renamed_column() -> None:
    schema = rename_column(_committed(), "temp", "temperature")
    # Part statistics are keyed by the physical name the part file holds: "temp".
    stats = part("a.tsfile")
    cold = bind(parse_predicate("temperature < -10"), schema)
    assert not might_match(cold, stats, schema), "pruned by temp's min (-1.5)"
    assert might_match(bind(parse_predicate("temperature < -1"), schema), stats, schema)
    device = DeviceStats(("paris",), 4, 0, 3, {"temp": SeriesStats(4, min=1.0, max=2.0)})
    named = by_column_name(device, schema)
    assert named.fields == {"temperature": SeriesStats(4, min=1.0, max=2.0)}


def test_a_write_staged_for_a_column_replaced_meanwhile_is_refused() -> None:
    schema = _committed()
    staged = TableSchema("weather", (Column("temp", DataType.DOUBLE, Category.FIELD, 2),))
    replaced = merge_schema(
        drop_columns(schema, ["temp"]),
        TableSchema.of("weather", [*schema.tags, Column("temp", DataType.DOUBLE, Category.FIELD)]),
        merge=True,
    )
    with pytest.raises(SchemaMismatchError, match="'temp' .*while this write ran"):
        merge_schema(replaced, TableSchema("weather", (*schema.tags, *staged.columns)), merge=True)
    widened = merge_schema(
        rename_column(schema, "temp", "t2"),
        TableSchema.of("weather", [*schema.tags, Column("day", DataType.DATE, Category.FIELD)]),
        merge=False,
    )
    assert widened.physical_names() == {"t2": "temp"}


def test_a_write_staged_for_a_column_renamed_meanwhile_is_refused() -> None:
    schema = _committed()
    staged = TableSchema("weather", (*schema.tags, schema.columns[1]))  # temp, id 2
    renamed = rename_column(schema, "temp", "temperature")
    for merge in (False, True):
        with pytest.raises(SchemaMismatchError, match="'temp' .*renamed while this write ran"):
            merge_schema(renamed, staged, merge=merge)
