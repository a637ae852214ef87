"""The registry's databases: implicit while they hold a table, explicit once created; and
the registry on hostile storage: an unreadable entry, a warehouse that is a file."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from tsfile_catalog.exceptions import (
    CorruptManifestError,
    LocationError,
    SqlError,
    TableNotFoundError,
)
from tsfile_catalog.sql.registry import Registry, UnreadableEntry
from tsfile_catalog.sql.statements import TableName


def test_databases_are_created_held_and_dropped(tmp_path: Path) -> None:
    registry = Registry(str(tmp_path))
    assert registry.databases() == ["default"]
    assert registry.create_database("Sales")
    assert not registry.create_database("sales")  # names are case-insensitive
    assert registry.databases() == ["default", "sales"]
    # The marker is no table.
    assert registry.entries("sales") == []
    registry.create(TableName("t", "ops"), str(tmp_path / "ops.db" / "t"), {})
    assert registry.databases() == ["default", "ops", "sales"]
    registry.drop_database("sales")
    assert registry.databases() == ["default", "ops"]
    with pytest.raises(SqlError, match="invalid database name"):
        registry.create_database("no-dashes")


def _corrupt(registry: Registry, table: TableName, data: bytes) -> str:
    url = f"{registry.root}/{table.database}/{table.name}.json"
    Path(url).write_bytes(data)
    return url


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b'{"format_version": 1, "datab', "is not valid JSON"),  # a write cut short
        (b"[]", "is not a JSON object"),
        (b'{"format_version": 1, "database": "db"}', "is invalid: 'name'"),
        (b'{"format_version": 9, "database": "db", "name": "bad", "location": "/x"}', "9"),
    ],
)
def test_an_unreadable_entry_is_listed_and_hides_nothing(
    tmp_path: Path, data: bytes, reason: str
) -> None:
    registry = Registry(str(tmp_path))
    good = registry.create(TableName("good", "db"), str(tmp_path / "db.db" / "good"), {})
    registry.create(TableName("bad", "db"), str(tmp_path / "db.db" / "bad"), {})
    url = _corrupt(registry, TableName("bad", "db"), data)
    listed = registry.listing("db")
    assert listed[1] == good
    unreadable = listed[0]
    assert isinstance(unreadable, UnreadableEntry) and unreadable.url == url
    assert reason in unreadable.reason and url in unreadable.reason
    assert registry.entries() == [good]  # and every listing of readable entries goes on
    with pytest.raises(CorruptManifestError) as caught:
        registry.require(TableName("bad", "db"))
    message = str(caught.value)
    assert url in message and "DROP TABLE db.bad removes this entry" in message
    assert "\n" not in message
    # Another name can still be created; the unreadable one exists until dropped.
    registry.create(TableName("other", "db"), str(tmp_path / "db.db" / "other"), {})
    assert registry.exists(TableName("bad", "db"))
    registry.drop(TableName("bad", "db"))
    assert not registry.exists(TableName("bad", "db"))
    assert [e.name for e in registry.listing("db")] == ["good", "other"]


def test_a_warehouse_that_is_a_file_is_refused_in_one_line(tmp_path: Path) -> None:
    file = tmp_path / "wh"
    file.write_text("not a warehouse")
    for warehouse, says in [(file, "is a file"), (file / "sub", f"lies under the file {file}")]:
        registry = Registry(str(warehouse))
        for call in (
            registry.entries,
            registry.databases,
            functools.partial(registry.listing, "db"),
        ):
            with pytest.raises(LocationError) as caught:
                call()
            message = str(caught.value)
            assert message.startswith(f"the warehouse {warehouse} {says}, not a directory")
            assert "\n" not in message
        with pytest.raises(LocationError, match="is a file|lies under the file"):
            registry.require(TableName("t"))


def test_a_registry_folder_that_is_a_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "_catalog").write_text("x")
    with pytest.raises(LocationError, match=r"registry folder .*_catalog/tables is not a dir"):
        Registry(str(tmp_path)).entries()


def test_a_local_warehouse_not_made_yet_is_empty(tmp_path: Path) -> None:
    registry = Registry(str(tmp_path / "new"))
    assert registry.entries() == [] and registry.databases() == ["default"]
    with pytest.raises(TableNotFoundError, match="is not in the catalog"):
        registry.require(TableName("t"))
