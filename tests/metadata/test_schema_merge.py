from __future__ import annotations

import pytest

from tsfile_catalog.exceptions import SchemaMismatchError
from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema
from tsfile_catalog.metadata.schema_merge import merge_schema

TAG, FIELD = Category.TAG, Category.FIELD


def schema(*columns: tuple[str, DataType, Category], table: str = "t") -> TableSchema:
    return TableSchema.of(table, [Column(n, t, c) for n, t, c in columns])


CITY = ("city", DataType.STRING, TAG)
DEVICE = ("device", DataType.STRING, TAG)
TEMP = ("temp", DataType.FLOAT, FIELD)
COUNT = ("count", DataType.INT32, FIELD)
OLD = schema(CITY, DEVICE, TEMP, COUNT)


def test_creating_takes_the_incoming_schema() -> None:
    assert merge_schema(None, OLD, merge=False) is OLD


@pytest.mark.parametrize("merge", [False, True])
def test_identical_schema_is_unchanged(merge: bool) -> None:
    assert merge_schema(OLD, schema(CITY, DEVICE, TEMP, COUNT), merge=merge) is OLD


def test_field_order_does_not_matter() -> None:
    assert merge_schema(OLD, schema(CITY, DEVICE, COUNT, TEMP), merge=False) is OLD


def test_missing_fields_are_allowed_and_read_as_null() -> None:
    assert merge_schema(OLD, schema(CITY, DEVICE, COUNT), merge=False) is OLD


def test_new_field_needs_merge() -> None:
    incoming = schema(CITY, DEVICE, ("humidity", DataType.DOUBLE, FIELD), TEMP, COUNT)
    with pytest.raises(SchemaMismatchError, match="'humidity'.*mergeSchema"):
        merge_schema(OLD, incoming, merge=False)
    merged = merge_schema(OLD, incoming, merge=True)
    assert merged.names == ("time", "city", "device", "temp", "count", "humidity")
    assert merged.column("humidity") == Column("humidity", DataType.DOUBLE, FIELD)


@pytest.mark.parametrize(
    "incoming",
    [
        schema(DEVICE, CITY, TEMP, COUNT),
        schema(CITY, TEMP, COUNT),
        schema(CITY, DEVICE, ("region", DataType.STRING, TAG), TEMP, COUNT),
        schema(("region", DataType.STRING, TAG), CITY, DEVICE, TEMP, COUNT),
    ],
    ids=["reordered", "removed", "added-last", "added-first"],
)
@pytest.mark.parametrize("merge", [False, True])
def test_tag_columns_never_change(incoming: TableSchema, merge: bool) -> None:
    with pytest.raises(SchemaMismatchError, match="TAG columns"):
        merge_schema(OLD, incoming, merge=merge)


def test_field_cannot_become_a_tag() -> None:
    incoming = schema(CITY, DEVICE, ("temp", DataType.STRING, TAG), COUNT)
    with pytest.raises(SchemaMismatchError, match="'temp' is a FIELD"):
        merge_schema(OLD, incoming, merge=True)


def test_tag_cannot_become_a_field() -> None:
    incoming = schema(CITY, TEMP, COUNT, ("device", DataType.STRING, FIELD))
    with pytest.raises(SchemaMismatchError, match="TAG"):
        merge_schema(OLD, incoming, merge=True)


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [("count", DataType.INT32, DataType.INT64), ("temp", DataType.FLOAT, DataType.DOUBLE)],
)
def test_widening_only_with_merge(name: str, old: DataType, new: DataType) -> None:
    incoming = schema(
        CITY, DEVICE, *((c.name, new if c.name == name else c.type, FIELD) for c in OLD.fields)
    )
    with pytest.raises(SchemaMismatchError) as info:
        merge_schema(OLD, incoming, merge=False)
    assert f"'{name}'" in str(info.value)
    assert old.value in str(info.value) and new.value in str(info.value)
    merged = merge_schema(OLD, incoming, merge=True)
    assert merged.column(name) == Column(name, new, FIELD)
    assert [c.name for c in merged.columns] == [c.name for c in OLD.columns]


@pytest.mark.parametrize("merge", [False, True])
def test_narrower_incoming_type_is_accepted(merge: bool) -> None:
    wide = schema(CITY, DEVICE, ("temp", DataType.DOUBLE, FIELD), ("count", DataType.INT64, FIELD))
    assert merge_schema(wide, OLD, merge=merge) is wide


@pytest.mark.parametrize("merge", [False, True])
def test_text_and_string_are_one_family(merge: bool) -> None:
    old = schema(CITY, ("note", DataType.TEXT, FIELD))
    assert merge_schema(old, schema(CITY, ("note", DataType.STRING, FIELD)), merge=merge) is old


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (DataType.INT64, DataType.DOUBLE),
        (DataType.INT32, DataType.FLOAT),
        (DataType.BOOLEAN, DataType.INT32),
        (DataType.DOUBLE, DataType.STRING),
        (DataType.DATE, DataType.TIMESTAMP),
    ],
)
def test_other_type_changes_fail_even_with_merge(old: DataType, new: DataType) -> None:
    with pytest.raises(SchemaMismatchError, match=f"'v'.*{old.value}.*{new.value}"):
        merge_schema(schema(CITY, ("v", old, FIELD)), schema(CITY, ("v", new, FIELD)), merge=True)


def test_table_name_must_match() -> None:
    with pytest.raises(SchemaMismatchError, match="'other'.*'t'"):
        merge_schema(OLD, schema(CITY, DEVICE, TEMP, COUNT, table="other"), merge=True)


def test_a_merged_read_schema_is_what_a_merge_makes_and_nothing_else() -> None:
    """The read option ``mergedSchema`` (a MERGE WITH SCHEMA EVOLUTION's scan) reads a
    version under a schema only a merge into the version's own could make."""
    import json

    from tsfile_catalog.metadata.schema_merge import merged_read_schema

    old = OLD.with_ids()
    merged = merge_schema(
        old,
        schema(
            CITY, DEVICE, ("temp", DataType.DOUBLE, FIELD), COUNT, ("wind", DataType.INT64, FIELD)
        ),
        merge=True,
    )
    assert merged_read_schema(old, json.dumps(merged.to_json())) == merged
    assert merged_read_schema(old, json.dumps(old.to_json())) == old
    # Another type (no widening), a column gone: no merge makes them.
    for wrong in (
        TableSchema(
            old.table,
            tuple(
                c
                if c.name != "count"
                else Column("count", DataType.TEXT, FIELD, c.id, c.physical_name)
                for c in merged.columns
            ),
        ),
        TableSchema(old.table, tuple(c for c in merged.columns if c.name != "temp")),
    ):
        with pytest.raises(SchemaMismatchError, match="option 'mergedSchema'"):
            merged_read_schema(old, json.dumps(wrong.to_json()))
    with pytest.raises(SchemaMismatchError, match="no table schema"):
        merged_read_schema(old, "[1, 2]")
