"""One ALTER's changes folded over a schema, pure: each change sees what the ones before it
left, the first refusal refuses the call, and the history entry is the single change's own,
REPLACE COLUMNS, or ALTER TABLE listing each change."""

from __future__ import annotations

import json

import pytest

from tsfile_catalog.exceptions import SchemaError, SchemaMismatchError
from tsfile_catalog.metadata.alterations import (
    AddColumns,
    ChangeColumnType,
    DropColumns,
    DropNotNull,
    MoveColumn,
    RenameColumn,
    ReplaceColumns,
    SetTableProperties,
    UnsetTableProperties,
    alter,
)
from tsfile_catalog.metadata.manifest import Operation
from tsfile_catalog.metadata.schema import DataType, TableSchema
from tsfile_catalog.metadata.schema_evolution import NewColumn

WEATHER = {
    "table": "weather",
    "columns": [
        {"name": "city", "type": "STRING", "category": "TAG", "id": 1},
        {"name": "device", "type": "STRING", "category": "TAG", "id": 2},
        {"name": "temp", "type": "DOUBLE", "category": "FIELD", "id": 3},
        {"name": "rain", "type": "INT32", "category": "FIELD", "id": 4},
    ],
    "last_column_id": 4,
}


def _schema() -> TableSchema:
    return TableSchema.from_json(WEATHER)


def test_each_change_sees_the_schema_the_ones_before_it_left() -> None:
    altered = alter(
        _schema(),
        {},
        [
            AddColumns((NewColumn("wind", DataType.DOUBLE),)),
            MoveColumn("rain", after="wind"),
            RenameColumn("temp", "temperature"),
        ],
    )
    assert altered.schema.display_names == (
        "time",
        "city",
        "device",
        "temperature",
        "wind",
        "rain",
    )
    assert altered.operation is Operation.ALTER_TABLE
    assert json.loads(altered.parameters["changes"]) == [
        "ADD COLUMNS (`wind` DOUBLE)",
        "ALTER COLUMN `rain` AFTER `wind`",
        "RENAME COLUMN `temp` TO `temperature`",
    ]


@pytest.mark.parametrize(
    ("changes", "refusal"),
    [
        # A move after the column the change before it dropped.
        ([DropColumns(("rain",)), MoveColumn("temp", after="rain")], "no column 'rain'"),
        # A rename onto a name an earlier add took.
        (
            [AddColumns((NewColumn("wind", DataType.DOUBLE),)), RenameColumn("temp", "wind")],
            "'temp' .* to 'wind': a column of that name exists",
        ),
        # A widening, then a TAG retyped.
        (
            [ChangeColumnType("rain", DataType.INT64), ChangeColumnType("city", DataType.INT64)],
            "TAG column 'city'",
        ),
        ([SetTableProperties({"k": "v"}), DropColumns(("device",))], "TAG column 'device'"),
        ([AddColumns((NewColumn("x", DataType.INT32),)), DropColumns(("time",))], "'time'"),
    ],
)
def test_a_refused_change_refuses_the_call_naming_its_column(
    changes: list[object], refusal: str
) -> None:
    with pytest.raises(SchemaError, match=refusal) as raised:
        alter(_schema(), {}, changes)  # type: ignore[arg-type]
    assert len(str(raised.value).splitlines()) == 1


def test_a_single_kind_records_what_it_alone_records() -> None:
    schema = _schema()
    added = alter(
        schema,
        {},
        [
            AddColumns((NewColumn("wind", DataType.DOUBLE),)),
            AddColumns((NewColumn("gust", DataType.INT32, after="city"),)),
        ],
    )
    assert added.operation is Operation.ADD_COLUMNS
    assert added.parameters == {
        "columns": json.dumps([["wind", "DOUBLE"], ["gust", "INT32"]]),
        "positions": json.dumps({"gust": "AFTER city"}),
    }
    widened = alter(schema, {}, [ChangeColumnType("RAIN", DataType.INT64)])
    assert (widened.operation, widened.parameters) == (
        Operation.CHANGE_COLUMN,
        {"column": "rain", "from": "INT32", "to": "INT64"},
    )
    moved = alter(schema, {}, [MoveColumn("rain", after=None)])
    assert moved.parameters == {"column": "rain", "position": "FIRST"}
    renamed = alter(schema, {}, [RenameColumn("Temp", "T2")])
    assert (renamed.operation, renamed.parameters) == (
        Operation.RENAME_COLUMN,
        {"column": "temp", "new_name": "t2"},
    )
    dropped = alter(schema, {}, [DropColumns(("rain", "nope"), if_exists=True)])
    assert (dropped.operation, dropped.parameters) == (
        Operation.DROP_COLUMNS,
        {"columns": json.dumps(["rain", "nope"])},
    )
    props = alter(schema, {"a": "1"}, [SetTableProperties({"b": "2", "a": "1"})])
    assert props.operation is Operation.SET_TBLPROPERTIES
    assert props.parameters == {"properties": json.dumps({"a": "1", "b": "2"})}
    assert props.set_properties == {"b": "2"} and not props.schema_changed and props.commits
    unset = alter(schema, {"a": "1"}, [UnsetTableProperties(("a", "zz"))])
    assert (unset.operation, unset.removed_properties) == (Operation.UNSET_TBLPROPERTIES, ("a",))


def test_changes_that_change_nothing_make_no_commit() -> None:
    schema = _schema()
    for changes in (
        [RenameColumn("temp", "temp")],
        [ChangeColumnType("temp", DataType.DOUBLE)],
        [DropNotNull("temp")],
        [DropColumns(("nope",), if_exists=True)],
        [RenameColumn("temp", "t2"), RenameColumn("t2", "temp")],
    ):
        assert not alter(schema, {}, changes).commits  # type: ignore[arg-type]
    with pytest.raises(SchemaError, match="'time'"):
        alter(schema, {}, [DropNotNull("time")])


def test_replace_columns_keeps_the_listed_columns_values_and_order() -> None:
    schema = _schema()
    altered = alter(
        schema,
        {},
        [
            ReplaceColumns(
                (
                    ("time", DataType.TIMESTAMP),
                    ("wind", DataType.DOUBLE),
                    ("city", DataType.STRING),
                    ("device", DataType.STRING),
                    ("rain", DataType.INT64),
                )
            )
        ],
    )
    out = altered.schema
    assert out.display_names == ("time", "wind", "city", "device", "rain")
    rain = out.column("rain")
    assert rain is not None and rain.id == 4 and rain.type is DataType.INT64, "the same column"
    assert out.column("temp") is None and [c.name for c in out.dropped] == ["temp"]
    assert altered.operation is Operation.REPLACE_COLUMNS
    assert json.loads(altered.parameters["columns"]) == [
        ["time", "TIMESTAMP"],
        ["wind", "DOUBLE"],
        ["city", "STRING"],
        ["device", "STRING"],
        ["rain", "INT64"],
    ]


@pytest.mark.parametrize(
    ("columns", "error", "refusal"),
    [
        ((("time", DataType.TIMESTAMP), ("city", DataType.STRING)), SchemaError, "'device'"),
        ((("city", DataType.STRING), ("device", DataType.STRING)), SchemaError, "'time'"),
        (
            (
                ("time", DataType.TIMESTAMP),
                ("city", DataType.INT32),
                ("device", DataType.STRING),
            ),
            SchemaError,
            "TAG column 'city' .* from STRING to INT32",
        ),
        (
            (
                ("time", DataType.TIMESTAMP),
                ("city", DataType.STRING),
                ("device", DataType.STRING),
                ("temp", DataType.FLOAT),
            ),
            SchemaMismatchError,
            "'temp' .* from DOUBLE to FLOAT",
        ),
        (
            (("time", DataType.TIMESTAMP), ("city", DataType.STRING), ("CITY", DataType.STRING)),
            SchemaError,
            "'city' given twice",
        ),
    ],
)
def test_replace_columns_refuses_by_name(
    columns: tuple[tuple[str, DataType], ...], error: type[Exception], refusal: str
) -> None:
    with pytest.raises(error, match=refusal):
        alter(_schema(), {}, [ReplaceColumns(columns)])
