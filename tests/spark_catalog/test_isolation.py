"""Two real processes race row changes on one table through every pair of front ends
(``spark.sql``, ``Catalog.sql``, the ``Table`` API): no acknowledged change is ever lost.

Row changes are Serializable (docs/maintenance.md, "Isolation"): a statement whose rows
another commit changed after its read version is refused with ``CommitConflictError``, on
every path, since all of them commit through one commit loop. So:

* UPDATE ``v = v + 1``: the final ``v`` is the number of acknowledged increments;
* MERGE (upsert-increment of a key that does not exist yet): the same, so an acknowledged
  insert is never replaced by a statement that did not read it;
* DELETE against concurrent increments: a deleted row never comes back, and every row left
  holds every acknowledged increment.
"""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from tests.spark_catalog.isolation import FRONTS, Front, Racer

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
STATEMENTS = 3  # per process and race
PAIRS = list(itertools.combinations_with_replacement(FRONTS, 2))
_READY_SECONDS = 300
_RACE_SECONDS = 600


class Rival:
    """The second process (tests/spark_catalog/isolation_child.py) and its answers."""

    def __init__(self, warehouse: Path, catalog: str, log: IO[str]) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.spark_catalog.isolation_child", str(warehouse), catalog],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        self._log = log
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.receive(_READY_SECONDS)

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self._lines.put(line)

    def send(self, front: Front, table: str, statements: list[tuple[str, str]]) -> None:
        assert self._process.stdin is not None
        command = {"front": front, "table": table, "statements": statements}
        self._process.stdin.write(json.dumps(command) + "\n")
        self._process.stdin.flush()

    def receive(self, seconds: float = _RACE_SECONDS) -> Any:
        try:
            answer = json.loads(self._lines.get(timeout=seconds))
        except queue.Empty:
            self._log.flush()
            tail = Path(self._log.name).read_text()[-3000:]
            raise AssertionError(f"the second process did not answer:\n{tail}") from None
        assert "error" not in answer, answer["error"]
        return answer.get("outcomes")

    def stop(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        try:
            self._process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._process.kill()


@pytest.fixture(scope="module")
def rival(ts: str, warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rival]:
    log_path = tmp_path_factory.mktemp("rival") / "stderr.log"
    with log_path.open("w") as log:
        second = Rival(warehouse, ts, log)
        try:
            yield second
        finally:
            second.stop()


@pytest.fixture(scope="module")
def racer(spark: Any, ts: str, warehouse: Path) -> Racer:
    return Racer(spark, ts, str(warehouse))


def _table(spark: Any, ts: str, name: str, rows: str | None) -> None:
    spark.sql(
        f"CREATE TABLE {ts}.db.{name} (time BIGINT, dev STRING, v BIGINT) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'dev')"
    )
    if rows:
        spark.sql(f"INSERT INTO {ts}.db.{name} VALUES {rows}")


def _race(
    rival: Rival,
    racer: Racer,
    table: str,
    fronts: tuple[Front, Front],
    mine: list[tuple[str, str]],
    theirs: list[tuple[str, str]],
) -> tuple[list[int | None], list[int | None]]:
    """Both processes run their statements at once; each one's outcomes."""
    rival.send(fronts[1], table, theirs)
    own = [getattr(racer, op)(fronts[0], table, arg) for op, arg in mine]
    return own, rival.receive()


def _acked(outcomes: list[int | None]) -> int:
    return sum(o for o in outcomes if o is not None)


@pytest.mark.slow
@pytest.mark.parametrize("fronts", PAIRS, ids=["-".join(p) for p in PAIRS])
def test_no_acknowledged_update_is_lost(
    spark: Any, ts: str, rival: Rival, racer: Racer, fronts: tuple[Front, Front]
) -> None:
    table = f"upd_{'_'.join(fronts)}"
    _table(spark, ts, table, "(1, 'a', 0), (1, 'b', 0)")
    statements = [("increment", "dev = 'a'")] * STATEMENTS
    own, other = _race(rival, racer, table, fronts, statements, statements)
    (final,) = spark.sql(f"SELECT v FROM {ts}.db.{table} WHERE dev = 'a'").first()
    assert final == _acked(own) + _acked(other), (own, other)
    assert _acked(own) + _acked(other) >= 1, "no statement at all was acknowledged"
    assert spark.sql(f"SELECT v FROM {ts}.db.{table} WHERE dev = 'b'").first()[0] == 0


@pytest.mark.slow
@pytest.mark.parametrize("fronts", PAIRS, ids=["-".join(p) for p in PAIRS])
def test_no_acknowledged_insert_or_upsert_is_lost(
    spark: Any, ts: str, rival: Rival, racer: Racer, fronts: tuple[Front, Front]
) -> None:
    table = f"mrg_{'_'.join(fronts)}"
    _table(spark, ts, table, "(1, 'z', 0)")
    statements = [("upsert", "m")] * STATEMENTS
    own, other = _race(rival, racer, table, fronts, statements, statements)
    rows = spark.sql(f"SELECT v FROM {ts}.db.{table} WHERE dev = 'm'").collect()
    acked = _acked(own) + _acked(other)
    assert [r.v for r in rows] == ([acked] if acked else []), (own, other)


@pytest.mark.parametrize("fronts", PAIRS, ids=["-".join(p) for p in PAIRS])
def test_a_deleted_row_never_comes_back_and_no_increment_is_lost(
    spark: Any, ts: str, rival: Rival, racer: Racer, fronts: tuple[Front, Front]
) -> None:
    table = f"del_{'_'.join(fronts)}"
    _table(spark, ts, table, ", ".join(f"({t}, 'd', 0)" for t in range(2 * STATEMENTS)))
    odd = [2 * i + 1 for i in range(STATEMENTS)]
    deletes = [("delete", f"dev = 'd' AND time = {t}") for t in odd]
    increments = [("increment", "dev = 'd'")] * STATEMENTS
    own, other = _race(rival, racer, table, fronts, deletes, increments)
    rows = {r.time: r.v for r in spark.sql(f"SELECT time, v FROM {ts}.db.{table}").collect()}
    deleted = {t for t, outcome in zip(odd, own, strict=True) if outcome is not None}
    assert set(rows) == set(range(2 * STATEMENTS)) - deleted, (own, other)
    increments_acked = sum(1 for o in other if o is not None)
    assert set(rows.values()) <= {increments_acked}, (rows, own, other)
