"""The time a table records (time.unit, time.type): read, checked, never changed."""

from __future__ import annotations

import pytest

from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.metadata.table_time import (
    TableTime,
    check_time_change,
    spark_rewrite_refusal,
    table_time,
    table_unit,
    time_properties,
)


def test_a_table_records_unit_and_type_and_reads_them_back() -> None:
    recorded = time_properties("ns", "timestamp")
    assert recorded == {"time.unit": "ns", "time.type": "TIMESTAMP"}
    assert table_time(recorded) == TableTime("ns", "TIMESTAMP")
    assert table_time(recorded).timestamp_as == "timestamp"  # type: ignore[union-attr]
    assert table_time(time_properties("us", "long")) == TableTime("us", "BIGINT")
    # A table created before the properties: nothing recorded.
    assert table_time({"key.duplicates": "last"}) is None


@pytest.mark.parametrize(
    ("properties", "named"),
    [
        ({"time.unit": "s", "time.type": "BIGINT"}, "time.unit"),
        ({"time.unit": "ms", "time.type": "LONG"}, "time.type"),
        ({"time.unit": "ms"}, "time.type"),
        ({"time.type": "BIGINT"}, "time.unit"),
    ],
)
def test_bad_time_properties_are_refused_naming_the_property(
    properties: dict[str, str], named: str
) -> None:
    with pytest.raises(OptionError, match=named):
        table_time(properties)


def test_the_table_unit_wins_and_a_contradicting_option_is_refused() -> None:
    ns = time_properties("ns", "timestamp")
    assert table_unit(ns, None, table="/t", option="option 'timestampPrecision'") == "ns"
    assert table_unit(ns, "ns", table="/t", option="option 'timestampPrecision'") == "ns"
    with pytest.raises(OptionError) as refused:
        table_unit(ns, "ms", table="/t", option="option 'timestampPrecision'")
    assert str(refused.value) == (
        "option 'timestampPrecision' = 'ms' contradicts table /t, which stores time in "
        "nanoseconds ('ns'); leave it out to use the table's own unit"
    )
    # A table that records nothing is read as the caller says, ms by default (as always).
    assert table_unit({}, "us", table="/t", option="unit") == "us"
    assert table_unit({}, None, table="/t", option="unit") == "ms"


def test_the_recorded_time_cannot_change_or_go() -> None:
    ns = time_properties("ns", "timestamp")
    check_time_change(ns, {"time.unit": "ns", "owner": "ops"}, table="/t")  # no change
    with pytest.raises(OptionError, match="'time.unit' of table /t cannot be set to 'ms'"):
        check_time_change(ns, {"time.unit": "ms"}, table="/t")
    with pytest.raises(OptionError, match="'time.type' of table /t cannot be unset"):
        check_time_change(ns, {}, ["time.type"], table="/t")
    # A table that records none (from before) may be given both at once by its owner.
    check_time_change({}, time_properties("ns", "timestamp"), table="/t")
    with pytest.raises(OptionError, match="'time.unit' of table /t cannot be set alone"):
        check_time_change({}, {"time.unit": "ns"}, table="/t")
    with pytest.raises(OptionError, match="'time.unit' = 's'"):
        check_time_change({}, {"time.unit": "s", "time.type": "BIGINT"}, table="/t")


@pytest.mark.parametrize(
    ("unit", "timestamp_as", "refused"),
    [
        ("ns", "timestamp", True),
        # Raw longs pass through Spark exactly, whatever their unit.
        ("ns", "long", False),
        # Spark's TIMESTAMP holds microseconds: us and ms times go through it exactly.
        ("us", "timestamp", False),
        ("ms", "timestamp", False),
    ],
)
def test_spark_rewrites_refuse_only_what_they_would_truncate(
    unit: str, timestamp_as: str, refused: bool
) -> None:
    refusal = spark_rewrite_refusal(
        unit,  # type: ignore[arg-type]
        timestamp_as,  # type: ignore[arg-type]
        statement="UPDATE db.t",
        instead="use Table.update",
    )
    assert (refusal is not None) == refused
    if refusal is not None:
        assert refusal.startswith("UPDATE db.t: the table stores time in nanoseconds ('ns')")
        assert "truncated to microseconds" in refusal and refusal.endswith("use Table.update")
        assert "\n" not in refusal


def test_a_write_planned_for_a_new_table_keeps_the_time_of_the_one_it_finds() -> None:
    from tsfile_catalog.exceptions import CommitConflictError
    from tsfile_catalog.metadata.table_time import kept_time

    planned = {**time_properties("ns", "timestamp"), "owner": "ops"}
    # A table created concurrently in the same unit, or one from before: its time is kept.
    same = {**time_properties("ns", "long"), "owner": "ops"}
    assert kept_time(same, planned, table="/t") == {}
    assert kept_time({}, planned, table="/t") == {"owner": "ops"}
    with pytest.raises(CommitConflictError, match="in nanoseconds, but a table storing micro"):
        kept_time(time_properties("us", "timestamp"), planned, table="/t")
