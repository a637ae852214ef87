"""Pure: how --json writes a table's raw times (ISO-8601 in UTC, read in the table's unit)."""

from __future__ import annotations

import pytest

from tsfile_catalog.cli.output import iso_time, records
from tsfile_catalog.inspect import Result
from tsfile_catalog.metadata.expressions import TimeUnit


@pytest.mark.parametrize(
    ("raw", "unit", "text"),
    [
        (0, "ms", "1970-01-01T00:00:00.000+00:00"),
        (1_700_000_000_123, "ms", "2023-11-14T22:13:20.123+00:00"),
        (1_700_000_000_123_456, "us", "2023-11-14T22:13:20.123456+00:00"),
        (1_700_000_000_123_456_789, "ns", "2023-11-14T22:13:20.123456789+00:00"),
        # Before the epoch the fraction counts forward from the second below, as instants do.
        (-1, "ms", "1969-12-31T23:59:59.999+00:00"),
        (-1, "ns", "1969-12-31T23:59:59.999999999+00:00"),
        (-62_135_596_800_000, "ms", "0001-01-01T00:00:00.000+00:00"),
        (253_402_300_799_999, "ms", "9999-12-31T23:59:59.999+00:00"),
    ],
)
def test_raw_times_as_iso(raw: int, unit: TimeUnit, text: str) -> None:
    assert iso_time(raw, unit) == text


@pytest.mark.parametrize("raw", [253_402_300_800_000, -62_135_596_800_001, 2**63 - 1, -(2**63)])
def test_times_outside_the_calendar_have_no_iso_text(raw: int) -> None:
    assert iso_time(raw, "ms") is None


def test_records_keep_the_raw_time_beside_the_iso_one() -> None:
    result = Result(
        "path string, min_time bigint, max_time bigint, rows bigint",
        [("a", 0, 1_000, 2), ("empty", None, None, 0)],
    )
    assert records(result, unit="ms") == [
        {
            "path": "a",
            "min_time": "1970-01-01T00:00:00.000+00:00",
            "min_time_raw": 0,
            "max_time": "1970-01-01T00:00:01.000+00:00",
            "max_time_raw": 1_000,
            "rows": 2,
        },
        {
            "path": "empty",
            "min_time": None,
            "min_time_raw": None,
            "max_time": None,
            "max_time_raw": None,
            "rows": 0,
        },
    ]
    # Without a unit (answers that hold no raw time) the rows are as they are.
    assert records(result)[0] == {"path": "a", "min_time": 0, "max_time": 1_000, "rows": 2}
