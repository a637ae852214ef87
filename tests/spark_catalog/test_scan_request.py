"""The plugin's scan calls parse the scan description once and open its table version once
(they opened it three or four times), binding ``where`` in one place."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from tsfile_catalog import write_table
from tsfile_catalog.exceptions import TableNotFoundError
from tsfile_catalog.spark_catalog import rewrites, scan_request
from tsfile_catalog.spark_catalog.scan_request import ScanRequest
from tsfile_catalog.table import snapshots
from tsfile_catalog.table.cache import clear_cache
from tsfile_catalog.table.handle import open_table
from tsfile_catalog.table.log import list_log
from tsfile_catalog.table.purge import purge


@pytest.fixture
def scan(tmp_path: Path) -> dict[str, object]:
    location = str(tmp_path / "t")
    rows = pa.table({"time": [1, 2, 3], "dev": ["a", "b", "a"], "v": [1.0, 2.0, 3.0]})
    write_table(location, rows, table="t", tag_columns=["dev"])
    write_table(location, rows.slice(0, 1), options={"onDuplicate": "last"})
    return {
        "table": "ts.db.t",
        "location": location,
        "version": 1,
        "unit": "ms",
        "timestamp_as": "long",
        "options": {"path": location},
    }


def test_a_copy_on_write_plan_opens_its_table_once(
    scan: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []

    def counting(*args: object, **kwargs: object) -> object:
        opened.append(str(args[0]))
        return open_table(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(scan_request, "open_table", counting)
    predicate = {"op": "=", "args": [{"ref": ["dev"]}, {"lit": "a", "type": '"string"'}]}
    plan = rewrites.plan_rewrite_scan(
        ScanRequest.parse(scan),
        command="DELETE",
        predicates=[predicate],
        time_zone="UTC",
        parallelism=None,
        user_options={},
        runtime=[predicate],
    )
    assert len(opened) == 1
    assert plan["description"].startswith("tsfile ts.db.t version 1 (DELETE: ")


def test_where_binds_with_the_versions_columns(scan: dict[str, object]) -> None:
    request = ScanRequest.parse(scan)
    assert request.shown == "tsfile ts.db.t version 1"
    assert request.bind("dev = 'a' AND time >= 2", "UTC") is not None
    with pytest.raises(Exception, match="nope"):
        request.bind("nope = 1", "UTC")


def _loaded(scan: dict[str, object]) -> dict[str, object]:
    """``scan`` as describe_table writes it once a load opened the version: with its table."""
    opened = open_table(str(scan["location"]), version=int(str(scan["version"])))
    return {**scan, "table_uuid": opened.table_uuid}


def test_a_scan_call_reopens_its_loaded_version_without_listing_the_log(
    scan: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each scan call of a query (push predicates, plan, push an aggregation) reopens the
    # version its load opened; that version never changes, so only the load lists the log
    # (one storage listing per call before, a round trip each on an object store).
    loaded = _loaded(scan)
    listed: list[str] = []

    def counting(*args: object, **kwargs: object) -> object:
        listed.append(str(args[1]))
        return list_log(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(snapshots, "list_log", counting)
    request = ScanRequest.parse(loaded)
    assert listed == []
    assert request.opened.version == 1
    assert request.opened.table_uuid == loaded["table_uuid"]
    assert [p.path for p in request.opened.parts()] == [
        p.path for p in open_table(str(scan["location"]), version=1).parts()
    ]


def test_a_scan_of_a_table_dropped_and_recreated_since_its_load_is_refused(
    scan: dict[str, object],
) -> None:
    # Another process dropped the table (PURGE) and created a new one at its location between
    # the query's load and its scan calls: the new table's version 1 holds other rows, which
    # the scan must not read as the loaded table's.
    loaded = _loaded(scan)
    location = str(scan["location"])
    purge(location)
    other = pa.table({"time": [7, 8], "dev": ["z", "z"], "v": [9.0, 9.0]})
    write_table(location, other, table="t", tag_columns=["dev"])
    write_table(location, other.slice(0, 1), options={"onDuplicate": "last"})
    clear_cache()  # this process never saw the old table (a server's catalog process)
    with pytest.raises(TableNotFoundError, match="dropped and another table created there"):
        ScanRequest.parse(loaded)
