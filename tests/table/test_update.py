"""Table.update without Spark: real TsFile parts, keep and last tables, against a pandas
model of the statement (the rows the key rule shows, updated where the predicate holds)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.table.helpers import key_view
from tsfile_catalog import open_table, write_table
from tsfile_catalog.exceptions import CommitConflictError, InvalidCommitError, OptionError
from tsfile_catalog.metadata.manifest import Operation
from tsfile_catalog.table import add_files, set_properties

SCHEMA = pa.schema([("time", pa.int64()), ("city", pa.string()), ("temp", pa.float64())])

Row = tuple[int, str, float | None]


def _rows(*values: Row) -> pa.Table:
    return pa.Table.from_pylist(
        [{"time": t, "city": c, "temp": v} for t, c, v in values], schema=SCHEMA
    )


def _table(root: Path, mode: str, *writes: list[Row]) -> str:
    url = str(root / f"t-{mode}")
    write_table(url, _rows(*writes[0]), table="w", tag_columns=["city"])
    if mode == "keep":
        set_properties(url, {"key.duplicates": "keep"})
    for rows in writes[1:]:
        write_table(url, _rows(*rows))
    return url


def _model(url: str, where: Any, new: Any) -> list[tuple[Any, ...]]:
    """The table's key-rule rows with ``new(row)`` applied where ``where(row)`` holds."""
    frame = pd.DataFrame(key_view(url), columns=["time", "city", "temp"])
    hit = frame.apply(where, axis=1).astype(bool) if len(frame) else []
    if len(frame):
        frame.loc[hit, "temp"] = frame[hit].apply(new, axis=1)
    return sorted(
        (
            (int(t), c, None if pd.isna(v) else float(v))
            for t, c, v in frame.itertuples(index=False)
        ),
        key=repr,
    )


def test_last_table_update_is_a_new_write_that_replaces_the_rows(tmp_path: Path) -> None:
    url = _table(tmp_path, "last", [(1, "a", 1.0), (2, "a", 2.0), (1, "b", 5.0)])
    before = open_table(url)
    result = before.update({"temp": pc.field("temp") * 10}, "city = 'a' AND temp > 1.5")
    after = open_table(url)
    assert (result.version, result.num_updated_rows, result.files_removed) == (1, 1, 0)
    # Appended, nothing rewritten: the old part is still there, the new row wins by key.
    assert {p.path for p in before.parts()} < {p.path for p in after.parts()}
    assert key_view(url) == [(1, "a", 1.0), (1, "b", 5.0), (2, "a", 20.0)]
    info = after.history(limit=1)[0]
    assert info.operation == Operation.UPDATE
    assert info.operation_parameters["numUpdatedRows"] == "1"


def test_last_table_update_sees_the_newest_row_of_each_key(tmp_path: Path) -> None:
    # (a, 2) was re-sent: its newest row (9.0) is what the update judges and changes; the
    # stale 2.0 must neither match "temp < 5" nor come back.
    url = _table(tmp_path, "last", [(1, "a", 1.0), (2, "a", 2.0)], [(2, "a", 9.0)])
    result = open_table(url).update({"temp": -1.0}, "temp < 5")
    assert result.num_updated_rows == 1
    assert key_view(url) == [(1, "a", -1.0), (2, "a", 9.0)]


def test_keep_table_update_rewrites_the_parts_keeping_their_sequence(tmp_path: Path) -> None:
    url = _table(tmp_path, "keep", [(1, "a", 1.0), (2, "a", 2.0)], [(2, "a", 3.0)])
    before = open_table(url)
    result = before.update({"temp": None}, "temp >= 3")
    after = open_table(url)
    assert (result.num_updated_rows, result.files_removed, result.files_added) == (1, 1, 1)
    assert key_view(url) == [(1, "a", 1.0), (2, "a", 2.0), (2, "a", None)]
    old, new = {p.path: p for p in before.parts()}, {p.path: p for p in after.parts()}
    (rewritten,) = [new[p] for p in new.keys() - old.keys()]
    (source,) = [old[p] for p in old.keys() - new.keys()]
    assert rewritten.key_sequence == source.key_sequence < after.version


def test_update_matching_nothing_commits_nothing(tmp_path: Path) -> None:
    url = _table(tmp_path, "last", [(1, "a", 1.0)])
    assert open_table(url).update({"temp": 0.0}, "temp > 100").version is None
    assert open_table(url).version == 0


@pytest.mark.parametrize(
    ("column", "reason"),
    [("city", "'city': it is a TAG column"), ("time", "'time': it is the time column")],
)
def test_setting_the_key_is_refused(tmp_path: Path, column: str, reason: str) -> None:
    url = _table(tmp_path, "last", [(1, "a", 1.0)])
    with pytest.raises(OptionError, match=rf"{reason}, part of the table key"):
        open_table(url).update({column: "x"})
    assert open_table(url).version == 0


def test_unknown_column_and_bad_value_are_refused_naming_them(tmp_path: Path) -> None:
    url = _table(tmp_path, "last", [(1, "a", 1.0)])
    with pytest.raises(OptionError, match="no column 'rain'"):
        open_table(url).update({"rain": 1})
    with pytest.raises(OptionError, match="new values of temp"):
        open_table(url).update({"temp": "not a number"})
    assert open_table(url).version == 0


KEYS = st.tuples(st.integers(0, 5), st.sampled_from(["a", "b"]))
WRITE = st.dictionaries(KEYS, st.integers(-3, 3), min_size=1, max_size=6)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    mode=st.sampled_from(["last", "keep"]),
    writes=st.lists(WRITE, min_size=1, max_size=3),
    bound=st.integers(-3, 3),
    literal=st.booleans(),
)
def test_update_matches_the_pandas_model(
    tmp_path_factory: pytest.TempPathFactory,
    mode: str,
    writes: list[dict[tuple[int, str], int]],
    bound: int,
    literal: bool,
) -> None:
    root = tmp_path_factory.mktemp("update")
    url = _table(
        root, mode, *[[(t, c, float(v)) for (t, c), v in sorted(w.items())] for w in writes]
    )
    expected = _model(
        url,
        lambda r: r["temp"] > bound and r["city"] == "a",
        (lambda r: 100.0) if literal else (lambda r: r["temp"] + 0.5),
    )
    value = 100.0 if literal else pc.field("temp") + 0.5
    open_table(url).update({"temp": value}, f"temp > {bound} AND city = 'a'")
    assert key_view(url) == expected


def test_update_runs_without_pyspark(tmp_path: Path) -> None:
    url = _table(tmp_path, "last", [(1, "a", 1.0)])
    code = textwrap.dedent(
        f"""
        import sys
        import pyarrow.compute as pc
        import tsfile_catalog
        table = tsfile_catalog.open_table({url!r})
        assert table.update({{"temp": pc.field("temp") + 1}}).num_updated_rows == 1
        assert not [m for m in sys.modules if m.split(".")[0] == "pyspark"], "pyspark"
        """
    )
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    assert key_view(url) == [(1, "a", 2.0)]


def test_a_failed_update_leaves_the_table_and_its_folder_unchanged(tmp_path: Path) -> None:
    url = _table(tmp_path, "keep", [(1, "a", 1.0), (2, "b", 2.0)])
    external = tmp_path / "ext" / "x.parquet"
    external.parent.mkdir()
    pq.write_table(pa.table({"time": [3], "city": ["a"], "temp": [3.0]}), external)
    add_files(url, str(external), format="parquet")
    files = sorted(p for p in Path(url).rglob("*") if p.is_file())
    # The table's own part is rewritten (staged) before the external part refuses.
    with pytest.raises(InvalidCommitError, match=r"external part '.*x\.parquet' \(parquet, 1 "):
        open_table(url).update({"temp": 0.0}, "city = 'a'")
    assert sorted(p for p in Path(url).rglob("*") if p.is_file()) == files
    assert open_table(url).version == 2
    # A stale handle whose parts a later commit replaced conflicts, and commits nothing.
    stale = open_table(url)
    open_table(url).update({"temp": 5.0}, "city = 'b'")
    with pytest.raises(CommitConflictError):
        stale.update({"temp": 9.0}, "city = 'b'")
    assert key_view(url) == [(1, "a", 1.0), (2, "b", 5.0), (3, "a", 3.0)]
