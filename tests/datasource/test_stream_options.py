"""Streaming options (no Spark session): parsing, conflicts, and the Spark version floor."""

from __future__ import annotations

import pytest

from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.options import (
    StreamOptions,
    parse_read_options,
    parse_stream_options,
    parse_write_options,
    split_stream_options,
)


def _parse(**options: str) -> StreamOptions:
    batch, stream = split_stream_options({"path": "/t", **options})
    return parse_stream_options(stream, parse_read_options(batch))


def test_stream_options_parse_case_insensitively_and_leave_batch_ones_alone() -> None:
    batch, stream = split_stream_options(
        {"path": "/t", "MAXPARTSPERTRIGGER": "3", "where": "temp > 1", "startingversion": "2"}
    )
    assert batch == {"path": "/t", "where": "temp > 1"}
    assert stream == {"maxPartsPerTrigger": "3", "startingVersion": "2"}
    parsed = parse_stream_options(stream, parse_read_options(batch))
    assert (parsed.max_parts, parsed.starting_version, parsed.max_rows) == (3, 2, None)
    assert _parse(startingVersion=" Latest ").starting_version == "latest"
    assert _parse(timestampAs="timestamp", partWatermark="true").part_watermark


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"maxRowsPerTrigger": "0"}, "'maxRowsPerTrigger' = 0 must be at least 1"),
        ({"startingVersion": "soon"}, "'startingVersion' = 'soon' is not an integer"),
        (
            {"startingVersion": "1", "startingTimestamp": "2024-01-01"},
            "'startingVersion' and 'startingTimestamp' are mutually exclusive",
        ),
        ({"partWatermark": "true"}, "'partWatermark' needs timestampAs=timestamp"),
        ({"skipChangeCommits": "maybe"}, "'skipChangeCommits' = 'maybe' is not a boolean"),
    ],
)
def test_bad_stream_options_are_refused_naming_them(options: dict[str, str], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        _parse(**options)


def test_complete_until_write_option_is_checked_when_parsed() -> None:
    assert parse_write_options({"path": "/t", "completeUntil": "3600000"}).complete_until
    with pytest.raises(OptionError, match="'completeUntil' = 'tomorrow'"):
        parse_write_options({"path": "/t", "completeUntil": "tomorrow"})
