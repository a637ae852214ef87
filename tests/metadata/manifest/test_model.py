"""The manifest model's JSON objects: optional keys stay absent, bad values are refused."""

from __future__ import annotations

import json

import pytest

from tsfile_catalog.metadata.manifest import CommitInfo, StreamTxn


def test_commit_info_round_trips() -> None:
    info = CommitInfo(3, 5, "ADOPT", {"files": "2"}, "e", 2, 1, 10, 1, 5)
    assert CommitInfo.from_json(json.loads(json.dumps(info.to_json()))) == info


def test_data_change_is_recorded_only_when_false_and_round_trips() -> None:
    changing = CommitInfo(3, 5, "WRITE")
    assert "data_change" not in changing.to_json()  # byte-identical to earlier releases
    optimize = CommitInfo(4, 6, "OPTIMIZE", data_change=False)
    assert optimize.to_json()["data_change"] is False
    assert CommitInfo.from_json(json.loads(json.dumps(optimize.to_json()))) == optimize
    with pytest.raises(ValueError, match="data_change"):
        CommitInfo.from_json({**optimize.to_json(), "data_change": "no"})


def test_complete_until_is_an_optional_key_that_round_trips() -> None:
    plain = CommitInfo(3, 5, "WRITE")
    assert "complete_until" not in plain.to_json()  # byte-identical to earlier releases
    declared = CommitInfo(4, 6, "WRITE", complete_until=3_600_000)
    assert declared.to_json()["complete_until"] == 3_600_000
    assert CommitInfo.from_json(declared.to_json()) == declared
    with pytest.raises(ValueError, match="complete_until"):
        CommitInfo.from_json({**declared.to_json(), "complete_until": "soon"})


def test_txn_is_an_optional_commit_info_key_that_round_trips() -> None:
    plain = CommitInfo(3, 5, "WRITE")
    assert "txn" not in plain.to_json()  # byte-identical to earlier releases
    info = CommitInfo(4, 6, "STREAMING UPDATE", txn=StreamTxn("q-1", 7, 3_600_000))
    assert info.to_json()["txn"] == {"app_id": "q-1", "version": 7, "max_time": 3_600_000}
    assert CommitInfo.from_json(info.to_json()) == info
    assert CommitInfo.from_json({**info.to_json(), "txn": {"app_id": "q", "version": 0}}).txn == (
        StreamTxn("q", 0)
    )
    with pytest.raises(ValueError, match="version"):
        CommitInfo.from_json({**info.to_json(), "txn": {"app_id": "q", "version": "7"}})
    with pytest.raises(ValueError, match="app_id"):
        CommitInfo.from_json({**info.to_json(), "txn": {"app_id": "", "version": 7}})
