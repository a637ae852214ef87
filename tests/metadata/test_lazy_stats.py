"""Statistics decoded on first read: equal to the decoded values, and damage surfaces as
CorruptManifestError when they are read."""

from __future__ import annotations

import json
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.factories import weather_schema
from tsfile_catalog.exceptions import CorruptManifestError
from tsfile_catalog.metadata.lazy_stats import (
    DeviceList,
    FieldStatsMap,
    SeriesStatsMap,
    _array_items,
)
from tsfile_catalog.metadata.manifest import AddPart, decode_commit
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.metadata.stats import DeviceStats, FieldStats, SeriesStats

DEVICES = (DeviceStats(("paris", "a"), 3, 0, 9), DeviceStats(("oslo", None), 1, 5, 5))


@pytest.mark.parametrize(
    "raw",
    [
        DeviceList.encode(DEVICES, {}),
        [d.to_json() for d in DEVICES],
        lambda: DeviceList.encode(DEVICES, {}),
    ],
    ids=["text", "parsed", "fetched"],
)
def test_a_device_list_is_the_tuple_it_decodes_to(raw: object) -> None:
    devices = DeviceList(raw, source="x")  # type: ignore[arg-type]
    assert devices == DEVICES and DEVICES == devices and hash(devices) == hash(DEVICES)
    assert list(devices) == list(DEVICES) and devices[1] == DEVICES[1] and len(devices) == 2
    assert pickle.loads(pickle.dumps(devices)) == DEVICES
    assert DeviceList.encode(devices, {}) == DeviceList.encode(DEVICES, {})


def test_field_stats_decode_typed_by_the_schema() -> None:
    raw = json.dumps({"d": {"min": "2024-01-02", "max": None, "null_count": 1}})
    stats = FieldStatsMap(raw, {"d": DataType.DATE}, source="x")
    expected = {"d": FieldStats.from_json(json.loads(raw)["d"], DataType.DATE)}
    assert stats == expected and expected == stats and dict(stats) == expected
    assert pickle.loads(pickle.dumps(stats)) == expected


def test_damaged_lazy_statistics_fail_as_corrupt_naming_the_file() -> None:
    with pytest.raises(CorruptManifestError, match="device list in file cp.parquet"):
        len(DeviceList('[["paris"], 1]', source="cp.parquet"))
    with pytest.raises(CorruptManifestError, match="FIELD statistics in file cp.parquet"):
        dict(FieldStatsMap('{"t": {"min": "x"}}', {"t": DataType.INT64}, source="cp.parquet"))


def test_a_commit_with_a_damaged_device_list_fails_when_the_devices_are_read() -> None:
    commit = {
        "format_version": 1,
        "table_uuid": "5f0c9a3e-8d1b-4c2e-9a57-2b6f1e0d4c3a",
        "commit_info": {"version": 1, "timestamp_ms": 1, "operation": "WRITE"},
        "actions": [
            {
                "add": {
                    "path": "p.tsfile",
                    "format": "tsfile",
                    "size_bytes": 1,
                    "row_count": 1,
                    "min_time": 0,
                    "max_time": 0,
                    "devices": [["paris"]],
                }
            }
        ],
    }
    decoded = decode_commit(json.dumps(commit).encode(), weather_schema(), source="1.json")
    action = decoded.actions[0]
    assert isinstance(action, AddPart) and action.part.devices is not None
    with pytest.raises(CorruptManifestError, match="device list"):
        tuple(action.part.devices)


_SERIES_TYPES = {"v": DataType.INT64, "d": DataType.DATE}
WITH_SERIES = (
    DeviceStats(("paris", "a"), 3, 0, 9, {"v": SeriesStats(2, sum=7, min=1, max=6)}),
    DeviceStats(("oslo", None), 1, 5, 5),
)


def test_device_series_statistics_equal_their_decoded_values_and_pickle_plain() -> None:
    devices = DeviceList(DeviceList.encode(WITH_SERIES, _SERIES_TYPES), field_types=_SERIES_TYPES)
    assert tuple(devices) == WITH_SERIES and devices == WITH_SERIES
    first = devices[0].fields
    assert isinstance(first, SeriesStatsMap) and first == WITH_SERIES[0].fields
    assert devices[1].fields is None
    restored = pickle.loads(pickle.dumps(devices))
    assert restored == WITH_SERIES and type(restored[0].fields) is dict
    assert DeviceList.encode(devices, _SERIES_TYPES) == DeviceList.encode(
        WITH_SERIES, _SERIES_TYPES
    )


def test_damaged_device_series_statistics_fail_only_when_read_naming_the_file() -> None:
    # Planning reads a device's TAGs, time range and rows; those stay readable.
    raw = json.dumps(
        {"devices": [[["paris"], 2, 0, 1]], "device_fields": [{"d": {"count": 1, "min": "x"}}]}
    )
    devices = DeviceList(raw, source="c.json", field_types=_SERIES_TYPES)
    assert (devices[0].tags, devices[0].row_count, devices[0].max_time) == (("paris",), 2, 1)
    fields = devices[0].fields
    assert fields is not None
    with pytest.raises(CorruptManifestError, match="FIELD statistics in file c.json"):
        fields["d"]
    # An entry that is no JSON object at all is damage in the device list itself.
    not_object = json.dumps({"devices": [[["paris"], 2, 0, 1]], "device_fields": [[1]]})
    with pytest.raises(CorruptManifestError, match="device list in file c.json"):
        len(DeviceList(not_object, source="c.json", field_types=_SERIES_TYPES))


def test_iterating_builds_devices_one_at_a_time_and_a_full_pass_checks_everything() -> None:
    # Pruning stops at the first device that may match: the broken third entry is only
    # reached (and blamed on the file) by a pass that gets that far.
    good = [d.to_json() for d in DEVICES]
    devices = DeviceList(json.dumps([*good, {"tags": 5}]), source="cp.parquet")
    assert next(iter(devices)) == DEVICES[0]
    assert any(d.tags[0] == "oslo" for d in devices)
    with pytest.raises(CorruptManifestError, match="cp.parquet"):
        list(devices)
    whole = DeviceList(json.dumps(good), source="x")
    assert list(whole) == list(DEVICES) and whole == DEVICES
    assert DeviceList.encode(whole, {}) == DeviceList.encode(DEVICES, {})


_JSON = st.recursive(
    st.none() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner),
    max_leaves=5,
)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.builds(
            lambda v, ws, indent: ws + json.dumps(v, indent=indent) + ws,
            st.lists(_JSON, max_size=4),
            st.sampled_from(["", " ", "\n\t"]),
            st.sampled_from([None, 1]),
        ),
        st.text(alphabet='[]{},:"0 1a\n\x0b', max_size=10),
    )
)
def test_the_item_by_item_parse_reads_exactly_what_json_loads_reads(text: str) -> None:
    try:
        expected = json.loads(text)
        valid = isinstance(expected, list)
    except ValueError:
        valid = False
    if valid:
        assert list(_array_items(text)) == expected
    else:
        with pytest.raises(ValueError):
            list(_array_items(text))
