"""Storage faults, injected: the table survives every failure of every storage operation.

Sequences of appends, overwrites, vacuums and reads (with checkpoints every other commit) run
on a table whose storage (:mod:`tests.faults`) fails reads, listings, writes, renames,
put-if-absent creates and deletes with a seeded probability, before the operation or after
it (a lost response). After every operation, with the faults off, the table must open and
read exactly the rows of the committed appends and overwrites (the model): nothing lost,
nothing twice, nothing of a failed write. A failed operation must raise a
:class:`~tsfile_catalog.exceptions.TsFileCatalogError` naming the storage operation and the
file it failed on.
"""

from __future__ import annotations

import itertools
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.factories import weather_schema
from tests.faults import KINDS, FaultKind, FaultPlan, InjectedFault
from tests.table.helpers import append_rows
from tsfile_catalog.exceptions import StorageError, TsFileCatalogError
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.table import commits, open_table, vacuum_table

SCHEMA = weather_schema(("temp", DataType.DOUBLE))
TABLE = "failing://t"
Row = tuple[int, str, str, float]

OPERATIONS = st.sampled_from(["append", "append", "append", "overwrite", "vacuum", "read"])


class Model:
    """The committed rows, and fresh rows to write (every time unique, so a row read twice
    or a row of a failed write shows)."""

    def __init__(self) -> None:
        self.rows: list[Row] = []
        # The rows a write in progress would leave.
        self.pending: list[Row] = []
        self._times = itertools.count()

    def batch(self, n: int = 3) -> list[Row]:
        return [
            (t, "bj" if t % 2 else "sh", f"d{t % 3}", float(t))
            for t in itertools.islice(self._times, n)
        ]


def _arrow(rows: list[Row]) -> pa.Table:
    return pa.Table.from_pylist(
        [{"time": t, "city": c, "device": d, "temp": v} for t, c, d, v in rows]
    )


def _read(options: dict[str, Any], *, use_cache: bool = True) -> list[Row]:
    table = open_table(TABLE, storage_options=options, use_cache=use_cache)
    got = table.scan(columns=["time", "city", "device", "temp"]).to_arrow()
    return sorted(tuple(r.values()) for r in got.to_pylist())  # type: ignore[misc]


def _run(operation: str, model: Model, options: dict[str, Any]) -> list[Row] | None:
    """Do ``operation``; the rows it leaves if it succeeds (None: unchanged)."""
    if operation in ("append", "overwrite"):
        batch = model.batch()
        after = batch if operation == "overwrite" else model.rows + batch
        model.pending = after
        overwrite = operation == "overwrite"
        append_rows(TABLE, _arrow(batch), SCHEMA, overwrite=overwrite, storage_options=options)
        return after
    if operation == "vacuum":
        # Retention 0: every removed part and every orphan of a failed write goes now.
        vacuum_table(
            TABLE, dry_run=False, retention_ms=0, retention_check=False, storage_options=options
        )
    else:
        assert _read(options) == sorted(model.rows)
    return None


def _check_names_the_operation(error: BaseException, plan: FaultPlan) -> None:
    """The error the caller sees is ours and names the storage operation and its file."""
    assert isinstance(error, TsFileCatalogError), repr(error)
    storage = error if isinstance(error, StorageError) else error.__cause__
    assert isinstance(storage, StorageError), repr(error)
    assert str(storage).startswith("storage "), str(storage)
    cause: BaseException | None = storage
    while isinstance(cause, StorageError):  # the store's own error is kept as the cause
        cause = cause.__cause__
    assert isinstance(cause, InjectedFault), repr(cause)
    _, path, _ = plan.injected[-1]
    assert path.rsplit("/", 1)[-1] in str(error), (str(error), path)


@pytest.fixture(autouse=True)
def checkpoint_every_other_commit() -> Iterator[None]:
    # Checkpoints are part of what must survive faults: write one every 2nd version.
    with mock.patch.object(commits, "CHECKPOINT_INTERVAL", 2):
        yield


def check_sequence(
    plan: FaultPlan, operations: list[str], options: dict[str, Any] | None = None
) -> None:
    options = options or plan.storage_options
    model = Model()
    model.rows = model.batch()
    append_rows(TABLE, _arrow(model.rows), SCHEMA, storage_options=options)
    for operation in operations:
        faults = len(plan.injected)
        try:
            with plan.armed():
                after = _run(operation, model, options)
        except Exception as e:  # noqa: BLE001 - every failure is checked below
            assert len(plan.injected) > faults, f"{operation} failed without a fault: {e!r}"
            _check_names_the_operation(e, plan)
            event(f"{operation} failed on {plan.injected[-1][0]}")
            if "whether the commit landed is unknown" in str(e):
                # Creating the commit and reading it back both failed: the caller was told
                # the write may have happened; the table decides.
                if _read(options) == sorted(model.pending):
                    model.rows = model.pending
        else:
            if after is not None:
                model.rows = after
        # Faults off: the table opens and holds exactly the committed rows.
        expected = sorted(model.rows)
        assert _read(options) == expected, (operation, plan.injected[faults:])
        assert _read(options, use_cache=False) == expected


@st.composite
def plans(draw: st.DrawFn, focus: FaultKind, root: str, **store: Any) -> FaultPlan:
    """Faults of kind ``focus`` often, a few other kinds now and then."""
    others = draw(st.sets(st.sampled_from([k for k in KINDS if k != focus]), max_size=2))
    rates = {focus: draw(st.sampled_from([0.2, 0.5])), **dict.fromkeys(others, 0.05)}
    seed = draw(st.integers(min_value=0, max_value=2**32 - 1))
    return FaultPlan(seed, rates, root=root, **store)


def operations(focus: FaultKind) -> st.SearchStrategy[list[str]]:
    # Deletes happen only when a vacuum finds something: removed parts, failed writes' files.
    some = st.sampled_from(["overwrite", "append", "vacuum"]) if focus == "delete" else OPERATIONS
    return st.lists(some, min_size=1, max_size=6)


FAULTS = settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.mark.parametrize("focus", KINDS)
@FAULTS
@given(data=st.data())
def test_every_failure_leaves_the_committed_rows_exactly_once(
    tmp_path: Path, focus: FaultKind, data: st.DataObject
) -> None:
    plan = data.draw(plans(focus, tempfile.mkdtemp(dir=tmp_path)))
    check_sequence(plan, data.draw(operations(focus)))


COMMIT_PATH = st.lists(st.sampled_from(["append", "append", "overwrite", "read"]), max_size=4)


@pytest.mark.s3
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data(), focus=st.sampled_from(["create", "read", "list", "write", "rename"]))
def test_commit_path_on_s3_survives_faults(
    s3_table: tuple[str, dict[str, Any]], data: st.DataObject, focus: FaultKind
) -> None:
    """The same on S3 (the moto server), for appends, overwrites and reads: conditional
    PUTs that fail or lose their response, listings and reads that fail."""
    url, options = s3_table
    root = f"{url.removeprefix('s3://')}/{uuid.uuid4().hex}"
    store = {"target_protocol": "s3", "target_options": options}
    check_sequence(data.draw(plans(focus, root, **store)), data.draw(COMMIT_PATH))


# -- regressions the property found ------------------------------------------------------------


def _table_with_rows(tmp_path: Path, rates: dict[FaultKind, float], lost: float) -> FaultPlan:
    plan = FaultPlan(0, rates, root=str(tmp_path), lost_response=lost)
    append_rows(TABLE, _arrow([(0, "bj", "d0", 0.0)]), SCHEMA, storage_options=plan.storage_options)
    return plan


def test_a_commit_whose_response_was_lost_counts_as_committed(tmp_path: Path) -> None:
    """It was reported failed although it had landed: a caller's retry wrote it twice."""
    plan = _table_with_rows(tmp_path, {"create": 1.0}, lost=1.0)
    with plan.armed():
        version = append_rows(
            TABLE, _arrow([(1, "sh", "d1", 1.0)]), SCHEMA, storage_options=plan.storage_options
        )
    assert version == 1 and [k for k, _, late in plan.injected] == ["create"]
    assert _read(plan.storage_options, use_cache=False) == [
        (0, "bj", "d0", 0.0),
        (1, "sh", "d1", 1.0),
    ]


def test_a_failed_commit_names_the_operation_and_the_commit_file(tmp_path: Path) -> None:
    plan = _table_with_rows(tmp_path, {"create": 1.0}, lost=0.0)
    with plan.armed(), pytest.raises(StorageError) as failed:
        append_rows(
            TABLE, _arrow([(1, "sh", "d1", 1.0)]), SCHEMA, storage_options=plan.storage_options
        )
    assert str(failed.value).startswith(
        "storage put-if-absent create of failing://t/_tsfile_manifest/00000000000000000001.json "
        "failed: InjectedFault"
    )
    assert isinstance(failed.value.__cause__, InjectedFault)
    assert _read(plan.storage_options, use_cache=False) == [(0, "bj", "d0", 0.0)]


def test_a_commit_that_may_have_landed_says_so(tmp_path: Path) -> None:
    """The response is lost and reading the file back fails too: the caller must not be told
    the write failed (it may be there), nor that it succeeded."""
    plan = _table_with_rows(tmp_path, {"create": 1.0}, lost=1.0)
    plan.rates = {"create": 1.0, "read": 1.0}
    plan.only = "_tsfile_manifest/00000000000000000001.json"
    with plan.armed(), pytest.raises(StorageError, match="whether the commit landed is unknown"):
        commits.commit(
            FileIO(TABLE, plan.storage_options),
            TABLE,
            [],
            read=open_table(TABLE, storage_options=plan.storage_options).snapshot,
            operation=commits.Operation.WRITE,
        )
    assert open_table(TABLE, storage_options=plan.storage_options, use_cache=False).version == 1
