"""Pure: --option pairs, --retain durations."""

from __future__ import annotations

import pytest

from tsfile_catalog.cli.arguments import parse_duration, parse_options, resolve
from tsfile_catalog.exceptions import OptionError


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("168h", 168 * 3_600_000),
        ("7d", 7 * 86_400_000),
        ("30m", 30 * 60_000),
        ("90s", 90_000),
        ("250ms", 250),
        ("0", 0),
        ("1.5", 5_400_000),
        (" 2 HOURS ", 7_200_000),
    ],
)
def test_durations(text: str, ms: int) -> None:
    assert parse_duration(text) == ms


@pytest.mark.parametrize("text", ["", "soon", "-1h", "3 weeks", "h"])
def test_bad_durations_name_the_text(text: str) -> None:
    with pytest.raises(OptionError, match=f"--retain {text!r} is not a duration"):
        parse_duration(text)


def test_options_keep_storage_settings_and_read_options() -> None:
    assert parse_options(
        ["fs.endpoint_url=http://localhost:9000", "timestampas=TIMESTAMP", "fs.anon=true"]
    ) == {
        "fs.endpoint_url": "http://localhost:9000",
        "timestampAs": "timestamp",
        "fs.anon": "true",
    }
    target = resolve("s3://b/t", warehouse=None, options=["fs.anon=true", "fs.use_ssl=false"])
    assert dict(target.storage) == {"anon": True, "use_ssl": False}
    assert (target.timestamp_as, target.unit) == ("long", "ms")


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("fs.key=AKIA", "credential"),
        ('fs.client_kwargs={"aws_secret_access_key": "s"}', "credential"),
        ("fs.endpoint_url=https://user:pw@host", "credential"),
        ("timestampPrecision=hours", "expected one of ms, us, ns"),
        ("where=x > 1", "unknown --option 'where'"),
        ("fs.=x", "unknown --option 'fs.'"),
        ("novalue", "not KEY=VALUE"),
    ],
)
def test_bad_options_are_refused(pair: str, message: str) -> None:
    with pytest.raises(OptionError, match=message):
        parse_options([pair])
