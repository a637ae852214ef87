"""open_location: the one resolution of a location that the data source and the SQL catalog's
URL references share (manifest table or plain TsFiles), without Spark."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.datasource.helpers import write_rows
from tests.factories import weather_schema
from tests.table.helpers import SCHEMA, append_n
from tsfile_catalog.discovery import open_location
from tsfile_catalog.exceptions import OptionError, TableNotFoundError, VersionNotFoundError
from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.table import Table, create_table


@pytest.fixture
def table_url(tmp_path: Path) -> str:
    url = str(tmp_path / "t")
    create_table(url, SCHEMA)
    append_n(url, 2)
    return url


def test_a_manifest_table_at_a_version_with_its_name_and_uuid(table_url: str) -> None:
    latest = open_location(table_url)
    assert isinstance(latest, Table) and latest.version == 2
    old = open_location(table_url, version=1, table="WEATHER", table_uuid=latest.table_uuid.upper())
    assert isinstance(old, Table) and (old.version, len(old.parts())) == (1, 1)


def test_a_recreated_or_other_table_is_refused(table_url: str) -> None:
    other = str(uuid.uuid4())
    with pytest.raises(TableNotFoundError, match=f"not '{other}'"):
        open_location(table_url, table_uuid=other)
    with pytest.raises(TableNotFoundError, match="table 'rain' is not at .* it holds 'weather'"):
        open_location(table_url, table="rain")


def test_time_travel_errors_are_open_tables(table_url: str) -> None:
    with pytest.raises(VersionNotFoundError, match="no version 7"):
        open_location(table_url, version=7)
    with pytest.raises(VersionNotFoundError, match="no version of table .* at or before 1970"):
        open_location(table_url, timestamp="1970-01-01 00:00:00")
    with pytest.raises(OptionError, match="not both"):
        open_location(table_url, version=1, timestamp=0)


def test_plain_files_have_no_versions_and_no_identity(tmp_path: Path) -> None:
    schema = weather_schema(("temp", DataType.DOUBLE))
    write_rows(
        str(tmp_path / "a.tsfile"),
        schema,
        [
            {"time": 1, "city": "bj", "device": "d1", "temp": 1.5},
            {"time": 2, "city": "sh", "device": "d2", "temp": 2.5},
        ],
    )
    found = open_location(str(tmp_path))
    assert isinstance(found, ResolvedScan) and found.version is None
    assert [p.row_count for p in found.parts] == [2]
    assert [p.path for p in found.plan("city = 'bj'").parts] == ["a.tsfile"]
    assert found.plan("time > 5").parts == ()
    with pytest.raises(OptionError, match="time travel .* needs a table with a manifest"):
        open_location(str(tmp_path), version=0)
    with pytest.raises(OptionError, match="tableUuid.* needs a table with a manifest"):
        open_location(str(tmp_path), table_uuid=str(uuid.uuid4()))


def test_nothing_there_or_an_unknown_scheme(tmp_path: Path) -> None:
    with pytest.raises(TableNotFoundError, match="does not exist"):
        open_location(str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(TableNotFoundError, match=r"no \*.tsfile files"):
        open_location(str(tmp_path / "empty"))
    with pytest.raises(OptionError, match="no file system for its scheme 'nosuchfs'"):
        open_location("nosuchfs://bucket/t")
