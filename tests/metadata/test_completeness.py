"""Part-watermark completeness: the interval rule, completeUntil, the table's bound."""

from __future__ import annotations

import pytest

from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.metadata.completeness import (
    check_table_properties,
    completeness,
    interval_complete_until,
    parse_complete_until,
    watermark_interval,
)
from tsfile_catalog.metadata.manifest import CommitInfo

HOUR = 3_600_000


def test_a_commit_inside_one_interval_completes_it_and_one_spanning_two_does_not() -> None:
    assert interval_complete_until(10 * HOUR, 10 * HOUR + 59 * 60_000, HOUR) == 11 * HOUR
    assert interval_complete_until(10 * HOUR, 10 * HOUR, HOUR) == 11 * HOUR
    assert interval_complete_until(10 * HOUR - 1, 10 * HOUR, HOUR) is None
    assert interval_complete_until(-1, -1, HOUR) == 0  # before the epoch, floor intervals


def test_watermark_interval_is_a_duration_in_raw_units_and_errors_name_it() -> None:
    assert watermark_interval({"watermark.interval": "1 hour"}, "ms") == HOUR
    assert watermark_interval({"watermark.interval": "30 minutes"}, "us") == HOUR // 2 * 1000
    assert watermark_interval({}, "ms") is None
    for bad in ("soon", "0 hours"):
        with pytest.raises(OptionError, match="watermark.interval"):
            check_table_properties({"watermark.interval": bad})


def test_complete_until_reads_raw_time_or_iso_in_the_session_zone() -> None:
    assert parse_complete_until("7200000", "ms", None) == 2 * HOUR
    assert parse_complete_until("1970-01-01T02:00:00Z", "us", None) == 2 * HOUR * 1000
    assert parse_complete_until("1970-01-01T10:00:00", "ms", "+08:00") == 2 * HOUR
    with pytest.raises(OptionError, match="completeUntil.*time zone"):
        parse_complete_until("1970-01-01T10:00:00", "ms", None)
    with pytest.raises(OptionError, match="'completeUntil' = 'later'"):
        parse_complete_until("later", "ms", "UTC")


def test_the_tables_completeness_is_the_largest_declaration_so_far() -> None:
    infos = [
        CommitInfo(0, 0, "WRITE"),
        CommitInfo(1, 1, "WRITE", complete_until=5 * HOUR),
        CommitInfo(2, 2, "WRITE", complete_until=3 * HOUR),
    ]
    assert completeness(infos[:1]) is None
    assert completeness(infos) == 5 * HOUR
