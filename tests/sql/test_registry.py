"""The registry's databases: implicit while they hold a table, explicit once created."""

from __future__ import annotations

from pathlib import Path

import pytest

from tsfile_catalog.exceptions import SqlError
from tsfile_catalog.sql.registry import Registry
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
