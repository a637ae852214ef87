"""The columnar pre-filter (PartIndex + part_window) plans exactly what the visitor alone plans:
over random parts and predicates, and over random tables (commits, removes, checkpoints,
external parts) opened cold and warm."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.factories import STRATEGY_UUID
from tests.metadata.expressions.test_pruning import SCHEMA as PRUNING_SCHEMA
from tests.metadata.expressions.test_pruning import (
    degraded,
    part_from_rows,
    predicates,
    rows_strategy,
)
from tests.table.helpers import SCHEMA, part
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.expressions import Expr, bind
from tsfile_catalog.metadata.expressions.parser import parse_predicate
from tsfile_catalog.metadata.expressions.pruning import might_match
from tsfile_catalog.metadata.manifest import AddPart, Operation, RemovePart, Snapshot
from tsfile_catalog.metadata.part_list import PartList
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.scan import PartWindow, ScanPlan, part_window, plan_bound
from tsfile_catalog.table import append_parts, clear_cache, open_table
from tsfile_catalog.table.checkpoint_parquet import (
    decode_parquet_snapshot,
    encode_parquet_snapshot,
)
from tsfile_catalog.table.commits import commit
from tsfile_catalog.table.log import write_checkpoint
from tsfile_catalog.table.part_index import PartIndex


def _paths(plan: ScanPlan) -> tuple[list[str], list[str]]:
    return [p.path for p in plan.parts], [p.path for p in plan.pruned]


@st.composite
def _parts(draw: st.DrawFn) -> list[PartFile]:
    """Parts from real rows, with stats degraded as older writers record them, some empty or
    without a time range (the index must pass those exactly as the visitor does)."""
    out = []
    for i in range(draw(st.integers(0, 6))):
        p = replace(draw(degraded(part_from_rows(draw(rows_strategy)))), path=f"p{i}.tsfile")
        shape = draw(st.sampled_from(["as is", "as is", "no rows", "no time range"]))
        if shape == "no rows":
            p = replace(p, row_count=0)
        elif shape == "no time range":
            p = replace(p, min_time=None, max_time=None)
        out.append(p)
    return out


@settings(max_examples=100, deadline=None)
@given(parts=_parts(), expr=predicates)
def test_the_prefilter_plans_exactly_what_the_visitor_plans(
    parts: list[PartFile], expr: Expr
) -> None:
    oracle = plan_bound(PRUNING_SCHEMA, parts, expr, key="keep")
    indexed = plan_bound(
        PRUNING_SCHEMA, parts, expr, candidates=PartIndex(parts).candidates, key="keep"
    )
    assert _paths(indexed) == _paths(oracle)
    assert indexed == oracle
    # The window is a necessary condition: every part passing the visitor is a candidate.
    candidates = set(PartIndex(parts).candidates(part_window(expr, PRUNING_SCHEMA.tag_names)))
    for i, p in enumerate(parts):
        if might_match(expr, p, PRUNING_SCHEMA):
            assert i in candidates


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=_parts(), expr=predicates, built=st.integers(0, 3))
def test_the_prefilter_over_a_checkpoints_columns_plans_what_the_visitor_plans(
    parts: list[PartFile], expr: Expr, built: int
) -> None:
    snapshot = Snapshot(10, 1, PRUNING_SCHEMA, 0, tuple(parts), {}, STRATEGY_UUID)
    read = decode_parquet_snapshot(encode_parquet_snapshot(snapshot), source="cp").parts
    assert isinstance(read, PartList)
    # A checkpoint's parts, some still stored, some built, some added after it.
    stored = read.select(range(max(len(parts) - built, 0)))
    listed = PartList(stored.stored, stored.rows, tuple(parts[len(stored) :]))
    oracle = plan_bound(PRUNING_SCHEMA, parts, expr, key="keep")
    indexed = plan_bound(
        PRUNING_SCHEMA, listed, expr, candidates=PartIndex(listed).candidates, key="keep"
    )
    assert _paths(indexed) == _paths(oracle)
    candidates = set(PartIndex(listed).candidates(part_window(expr, PRUNING_SCHEMA.tag_names)))
    assert candidates == set(
        PartIndex(parts).candidates(part_window(expr, PRUNING_SCHEMA.tag_names))
    )


def test_part_window_of_common_shapes() -> None:
    def window(sql: str) -> PartWindow:
        return part_window(bind(parse_predicate(sql), SCHEMA), SCHEMA.tag_names)

    paris = (("city", frozenset({"paris"})),)
    assert window("city = 'paris'") == PartWindow(tags=paris)
    assert window("NOT (city != 'paris')") == PartWindow(tags=paris)
    assert window("city IN ('a', 'b') OR city = 'c'") == PartWindow(
        tags=(("city", frozenset({"a", "b", "c"})),)
    )
    # Both conditions must hold: each is kept (their intersection would be wrong for a part
    # holding both values).
    assert window("city = 'a' AND city = 'b'") == PartWindow(
        tags=(("city", frozenset({"a"})), ("city", frozenset({"b"})))
    )
    assert window("city = 'a' OR time > 3") == PartWindow()
    assert window("city != 'a'") == PartWindow()
    assert window("city NOT IN ('a')") == PartWindow()
    assert window("temp = 1.5 AND city IS NULL") == PartWindow()

    assert window("time >= 10 AND time < 20") == PartWindow(10, 19)
    assert window("time > 10 AND time <= 20 AND city = 'paris'") == PartWindow(11, 20, paris)
    assert window("time = 7 OR time IN (3, 12)") == PartWindow(3, 12)
    # A bound on one side of an OR only: the other side may match any time.
    assert window("time > 10 OR city = 'paris'") == PartWindow()
    assert window("time > 10 OR (time = 4 AND city = 'oslo')") == PartWindow(lo=4)
    assert window("NOT (time < 10 OR time > 20)") == PartWindow(10, 20)
    assert window("time != 5") == PartWindow()


def test_bounds_beyond_int64_are_clamped() -> None:
    parts = [part("a.tsfile", start=0), part("b.tsfile", start=2**62)]
    index = PartIndex(parts)
    assert index.candidates(PartWindow(lo=2**63)) == []
    assert index.candidates(PartWindow(hi=-(2**63) - 1)) == []
    assert index.candidates(PartWindow(lo=2**62 + 5)) == [1]


_CITIES = ("paris", "oslo", "rome")


@st.composite
def _operations(draw: st.DrawFn) -> list[tuple[str, int, int, str]]:
    """(kind, start, rows, city) steps: appends, removes, external adds, checkpoints."""
    kinds = st.sampled_from(["append", "append", "remove", "external", "checkpoint"])
    return [
        (
            draw(kinds),
            draw(st.integers(0, 200)),
            draw(st.integers(0, 30)),
            draw(st.sampled_from(_CITIES)),
        )
        for _ in range(draw(st.integers(1, 12)))
    ]


_WHERE = st.one_of(
    st.builds(
        lambda lo, w: f"time >= {lo} AND time < {lo + w}", st.integers(-10, 230), st.integers(0, 60)
    ),
    st.builds(
        lambda lo, c: f"city = '{c}' AND time > {lo}",
        st.integers(-10, 230),
        st.sampled_from(_CITIES),
    ),
    st.builds(lambda a, b: f"time = {a} OR time <= {b}", st.integers(0, 230), st.integers(-5, 100)),
    st.builds(lambda lo: f"NOT (time < {lo}) AND temp > 1.5", st.integers(-10, 230)),
    st.just("time != 3"),
    st.builds(lambda c: f"city = '{c}'", st.sampled_from(_CITIES)),
    st.builds(
        lambda a, b: f"city IN ('{a}', '{b}') OR city = 'nowhere'",
        st.sampled_from(_CITIES),
        st.sampled_from(_CITIES),
    ),
    st.builds(lambda c: f"NOT (city != '{c}') AND temp > 1.5", st.sampled_from(_CITIES)),
)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(operations=_operations(), wheres=st.lists(_WHERE, min_size=1, max_size=3))
def test_a_table_plans_the_same_cold_warm_and_by_the_visitor(
    tmp_path_factory: object, operations: list[tuple[str, int, int, str]], wheres: list[str]
) -> None:
    url = str(Path(tmp_path_factory.mktemp("t")))  # type: ignore[attr-defined]
    io = FileIO(url)
    append_parts(url, [part("first.tsfile")], SCHEMA)
    read = open_table(url).snapshot
    checkpointed = set()
    for n, (kind, start, rows, city) in enumerate(operations):
        action: AddPart | RemovePart
        if kind == "checkpoint":
            # Every 10th version the commit loop wrote one already.
            if read.version not in checkpointed and read.version % 10:
                write_checkpoint(io, io.normalize(url), read)
                checkpointed.add(read.version)
            continue
        if kind == "remove" and read.parts:
            action = RemovePart(read.parts[start % len(read.parts)].path)
        elif kind == "external":
            outside = replace(
                part(f"x{n}", city=city, start=start, rows=rows),
                path=f"/elsewhere/x{n}.parquet",
                format="parquet",
                external=True,
                devices=None,
            )
            action = AddPart(outside)
        else:
            action = AddPart(part(f"p{n}.tsfile", city=city, start=start, rows=rows))
        read = commit(io, url, [action], read=read, operation=Operation.WRITE)
    for where in wheres:
        clear_cache()
        cold = open_table(url).plan(where)
        warm = open_table(url).plan(where)
        table = open_table(url, use_cache=False)
        bound = bind(parse_predicate(where), table.schema)
        oracle = plan_bound(table.schema, table.parts(), bound, key="keep")
        assert _paths(cold) == _paths(oracle)
        assert _paths(warm) == _paths(oracle)
        assert _paths(table.plan(where)) == _paths(oracle)
