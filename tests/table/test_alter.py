"""ALTER TABLE through ``table.alter``, without Spark: each schema or property change is one
commit, and the changes that cannot be made are refused before anything is committed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.table.aging import history
from tests.table.test_ownership import SCHEMA, part_of, tsfile
from tsfile_catalog.exceptions import OptionError, SchemaError, SchemaMismatchError
from tsfile_catalog.metadata.ownership import new_part_name
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.table import append_parts, open_table


def test_add_columns_and_widen_types_each_make_a_schema_version(tmp_path: Path) -> None:
    url = str(tmp_path)
    name = new_part_name(0)
    tsfile(tmp_path / name)
    append_parts(url, [part_of(tmp_path, name)], SCHEMA)
    alter = open_table(url).alter
    assert alter.add_columns([("Rain", DataType.INT32), ("note", DataType.STRING)]) == 1
    assert alter.alter_column_type("rain", DataType.INT64) == 2
    assert alter.alter_column_type("rain", DataType.INT64) == 2, "no change, no commit"
    assert [(c.name, c.type) for c in open_table(url).schema.fields[-2:]] == [
        ("rain", DataType.INT64),
        ("note", DataType.STRING),
    ]
    assert open_table(url, version=0).schema == SCHEMA
    rain = open_table(url, version=1).schema.column("rain")
    assert rain is not None and rain.type is DataType.INT32
    assert [op for _, op in history(tmp_path)][:2] == ["CHANGE COLUMN", "ADD COLUMNS"]
    with pytest.raises(SchemaError, match="'temp' .*exists already"):
        alter.add_columns([("temp", DataType.DOUBLE)])
    with pytest.raises(SchemaMismatchError, match="'rain' .*INT64 to INT32.*never rewritten"):
        alter.alter_column_type("rain", DataType.INT32)
    with pytest.raises(SchemaError, match="TAG column 'city'"):
        alter.alter_column_type("city", DataType.TEXT)
    with pytest.raises(SchemaError, match="no column 'wind'"):
        alter.alter_column_type("wind", DataType.DOUBLE)
    assert open_table(url).version == 2


def test_set_properties_is_a_commit_of_its_own_on_the_latest_version(tmp_path: Path) -> None:
    url = str(tmp_path)
    name = new_part_name(0)
    tsfile(tmp_path / name)
    append_parts(url, [part_of(tmp_path, name)], SCHEMA)
    old = open_table(url)
    assert old.alter.add_columns([("rain", DataType.INT64)]) == 1
    assert old.alter.set_properties({"targetFileSize": "1024"}) == 2, "acts on the latest"
    table = open_table(url)
    assert table.properties["targetFileSize"] == "1024"
    assert table.schema.column("rain") is not None, "the commit read version 1, not 0"
    assert [p.path for p in table.parts()] == [name], "no part added or removed"
    info = table.history(limit=1)[0]
    assert (str(info.operation), info.data_change) == ("SET TBLPROPERTIES", False)
    assert (info.parts_added, info.parts_removed) == (0, 0)
    with pytest.raises(OptionError, match="watermark.interval"):
        table.alter.set_properties({"watermark.interval": "soon"})
    assert open_table(url).version == 2, "a refused property commits nothing"


def test_unset_properties_removes_keys_and_ignores_absent_ones(tmp_path: Path) -> None:
    url = str(tmp_path)
    name = new_part_name(0)
    tsfile(tmp_path / name)
    append_parts(url, [part_of(tmp_path, name)], SCHEMA, properties={"team": "ops"})
    table = open_table(url)
    assert table.alter.set_properties({"targetFileSize": "1024", "keep": "yes"}) == 1
    assert table.alter.unset_properties(["targetFileSize", "team", "absent"]) == 2
    kept = dict(open_table(url).properties)
    assert kept.get("keep") == "yes" and not {"targetFileSize", "team"} & set(kept)
    assert open_table(url, version=1).properties["targetFileSize"] == "1024"
    info = open_table(url).history(limit=1)[0]
    assert (str(info.operation), info.data_change) == ("UNSET TBLPROPERTIES", False)
    # As in Spark 4, a key the table does not have is no error: the commit records the
    # statement and changes nothing.
    assert table.alter.unset_properties(["absent"]) == 3
    assert open_table(url).properties == kept


def test_several_changes_are_one_commit_or_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tsfile_catalog.exceptions import CommitConflictError
    from tsfile_catalog.metadata.alterations import (
        AddColumns,
        ChangeColumnType,
        MoveColumn,
        RenameColumn,
        SetTableProperties,
    )
    from tsfile_catalog.table import alter as alter_module
    from tsfile_catalog.table.alter import NewColumn, alter_table, rename_column

    url = str(tmp_path)
    name = new_part_name(0)
    tsfile(tmp_path / name)
    append_parts(url, [part_of(tmp_path, name)], SCHEMA)
    fields = [c.name for c in SCHEMA.fields]
    # A refused change (a TAG retyped) after an accepted one: nothing committed.
    with pytest.raises(SchemaError, match="TAG column 'city'"):
        alter_table(
            url,
            [
                AddColumns((NewColumn("wind", DataType.DOUBLE),)),
                ChangeColumnType("city", DataType.INT64),
            ],
        )
    assert open_table(url).version == 0
    changes = [
        AddColumns((NewColumn("wind", DataType.DOUBLE),)),
        MoveColumn(fields[0], after="wind"),
        SetTableProperties({"team": "ops"}),
    ]
    assert alter_table(url, changes) == 1
    table = open_table(url)
    assert table.properties["team"] == "ops"
    assert table.schema.display_names[-2:] == ("wind", fields[0])
    assert [op for _, op in history(tmp_path)][0] == "ALTER TABLE"

    # A schema change committed after the call read the table: its commit is refused.
    fold = alter_module.alter

    def racing(*args: object, **kwargs: object) -> object:
        monkeypatch.setattr(alter_module, "alter", fold)  # the other writer's own fold
        rename_column(url, "wind", "gust")
        return fold(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(alter_module, "alter", racing)
    with pytest.raises(CommitConflictError, match="changed the table schema concurrently"):
        alter_table(url, [RenameColumn(fields[0], "first"), SetTableProperties({"x": "1"})])
    assert open_table(url).version == 2
    assert "x" not in open_table(url).properties
