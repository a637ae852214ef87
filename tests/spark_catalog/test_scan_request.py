"""The plugin's scan calls parse the scan description once and open its table version once
(they opened it three or four times), binding ``where`` in one place."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from tsfile_catalog import write_table
from tsfile_catalog.spark_catalog import rewrites, scan_request
from tsfile_catalog.spark_catalog.scan_request import ScanRequest
from tsfile_catalog.table.handle import open_table


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
