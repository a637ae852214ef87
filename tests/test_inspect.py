"""Pure result builders of tsfile_catalog.inspect that SQL does not cover: result column
names and parts with their plan status (tables of hand-made parts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.factories import part_of_ranges, weather_schema
from tsfile_catalog import inspect
from tsfile_catalog.inspect import Result
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.table import append_parts, clear_cache, open_table

SCHEMA = weather_schema(("temp", DataType.DOUBLE))


@pytest.fixture(autouse=True)
def _fresh_metadata_cache() -> None:
    clear_cache()


part = part_of_ranges


def test_column_names_skip_commas_inside_types() -> None:
    result = Result("a string, b map<string,string>, d array<struct<x:int,y:int>>, e int", [])
    assert result.column_names == ["a", "b", "d", "e"]


def test_planned_parts_marks_each_part(tmp_path: Path) -> None:
    url = str(tmp_path)
    append_parts(url, [part("p1", ("bj", "d1", 0, 9)), part("p2", ("sh", "d1", 0, 9))], SCHEMA)
    table = open_table(url)
    result = inspect.planned_parts(table, table.plan("city = 'sh'"))
    assert result.column_names[-1] == "status"
    assert [(row[0], row[-1]) for row in result.rows] == [("p1", "pruned"), ("p2", "kept")]
