from __future__ import annotations

import datetime as dt
import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.factories import part_file
from tsfile_catalog.exceptions import PredicateError
from tsfile_catalog.metadata.expressions import (
    And,
    Approx,
    BindContext,
    Compare,
    CompareOp,
    Expr,
    In,
    IsNull,
    Not,
    Or,
    Scalar,
)
from tsfile_catalog.metadata.expressions.pruning import PartEvaluator, might_match, prune
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.scan import plan_scan
from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema
from tsfile_catalog.metadata.stats import DeviceStats, FieldStats, SeriesStats, TagStats

SCHEMA = TableSchema.of(
    "t",
    [
        Column("t1", DataType.STRING, Category.TAG),
        Column("t2", DataType.STRING, Category.TAG),
        Column("i", DataType.INT64, Category.FIELD),
        Column("d", DataType.DOUBLE, Category.FIELD),
        Column("s", DataType.STRING, Category.FIELD),
        Column("b", DataType.BOOLEAN, Category.FIELD),
        Column("day", DataType.DATE, Category.FIELD),
    ],
)
FIELDS = ("i", "d", "s", "b", "day")
Row = dict[str, Any]


def part_from_rows(rows: Sequence[Row], path: str = "p.tsfile") -> PartFile:
    """Exact stats of ``rows``, as a writer would record them."""
    devices: dict[tuple[str | None, ...], list[int]] = {}
    for row in rows:
        devices.setdefault((row["t1"], row["t2"]), []).append(row["time"])
    fields = {}
    for name in FIELDS:
        values = [row[name] for row in rows if row.get(name) is not None]
        # The stats contract: bounds cover every value but NaN, which no stat rules out.
        numbers = [v for v in values if not (isinstance(v, float) and math.isnan(v))]
        fields[name] = FieldStats(
            min(numbers) if numbers else None,
            max(numbers) if numbers else None,
            len(rows) - len(values),
        )
    times = [row["time"] for row in rows]
    return part_file(
        path,
        row_count=len(rows),
        min_time=min(times) if times else None,
        max_time=max(times) if times else None,
        devices=tuple(DeviceStats(k, len(v), min(v), max(v)) for k, v in devices.items()),
        tag_names=SCHEMA.tag_names,
        fields=fields,
    )


def row(time: int, t1: str | None = "a", t2: str | None = "x", **fields: Any) -> Row:
    return {"time": time, "t1": t1, "t2": t2, **{f: fields.get(f) for f in FIELDS}}


# -- a tiny SQL evaluator (three-valued logic) --------------------------------------------------

_OPS: dict[CompareOp, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def spark_double(value: Any) -> tuple[int, float]:
    """Spark's total order on doubles: NaN equal to itself and above every number."""
    number = float(value)
    return (1, 0.0) if math.isnan(number) else (0, number)


def evaluate(expr: Expr, r: Row) -> bool | None:
    if isinstance(expr, Compare):
        value = r[expr.column]
        if value is None:
            return None
        if expr.as_double:
            return _OPS[expr.op](spark_double(value), spark_double(expr.value))
        return _OPS[expr.op](value, expr.value)
    if isinstance(expr, In):
        value = r[expr.column]
        if value is None:
            return None
        if expr.as_double:
            return spark_double(value) in {spark_double(v) for v in expr.values}
        return value in expr.values
    if isinstance(expr, Approx):
        return evaluate(APPROXIMATED[expr.text], r)
    if isinstance(expr, IsNull):
        return (r[expr.column] is None) != expr.negated
    if isinstance(expr, Not):
        inner = evaluate(expr.term, r)
        return None if inner is None else not inner
    results = [evaluate(t, r) for t in expr.terms]
    if isinstance(expr, And):
        if False in results:
            return False
        return True if all(x is True for x in results) else None
    if True in results:
        return True
    return False if all(x is False for x in results) else None


# -- unit tests ---------------------------------------------------------------------------------


def test_no_predicate_keeps_everything() -> None:
    assert might_match(None, part_from_rows([row(1)]), SCHEMA)


def test_empty_part_never_matches() -> None:
    assert not might_match(Compare("time", ">", 0), part_from_rows([]), SCHEMA)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (Compare("time", ">", 20), False),
        (Compare("time", ">=", 20), True),
        (Compare("time", "<", 10), False),
        (Compare("time", "=", 15), True),
        (Compare("time", "!=", 15), True),
        (In("time", (1, 2, 30)), False),
        (Not(Compare("time", "<", 30)), False),
        (Not(Compare("time", ">=", 10)), False),
        (Not(Not(Compare("time", "<", 10))), False),
        (Or((Compare("time", "<", 10), Compare("time", ">", 20))), False),
        (Not(And((Compare("time", ">=", 10), Compare("time", "<=", 20)))), False),
    ],
)
def test_time_range(expr: Expr, expected: bool) -> None:
    part = part_from_rows([row(10), row(20)])
    assert might_match(expr, part, SCHEMA) is expected


def test_time_not_equal_to_a_single_instant() -> None:
    part = part_from_rows([row(7, t1="a"), row(7, t1="b")])
    assert not might_match(Compare("time", "!=", 7), part, SCHEMA)
    assert not might_match(Not(In("time", (7,))), part, SCHEMA)


def test_per_device_time_ranges_prune_gaps() -> None:
    part = part_from_rows([row(0, t1="a"), row(5, t1="a"), row(100, t1="b")])
    assert might_match(Compare("time", "=", 100), part, SCHEMA)
    assert not might_match(And((Compare("time", ">", 10), Compare("time", "<", 90))), part, SCHEMA)
    assert not might_match(And((Compare("t1", "=", "a"), Compare("time", ">", 10))), part, SCHEMA)
    assert might_match(And((Compare("t1", "=", "b"), Compare("time", ">", 10))), part, SCHEMA)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (Compare("t1", "=", "a"), True),
        (Compare("t1", "=", "z"), False),
        (Compare("t1", "!=", "a"), True),
        (In("t1", ("q", "z")), False),
        (In("t1", ("q", "c")), True),
        (Compare("t1", ">", "c"), False),
        (Compare("t1", "<", "a"), False),
        (Compare("t1", "<=", "a"), True),
        (IsNull("t2"), False),
        (IsNull("t2", negated=True), True),
        (Not(In("t1", ("a", "c"))), False),
        (And((Compare("t1", "=", "a"), Compare("t2", "=", "y"))), False),
        (And((Compare("t1", "=", "c"), Compare("t2", "=", "y"))), True),
        (Or((Compare("t1", "=", "z"), Compare("t2", "=", "y"))), True),
        (Not(Or((Compare("t1", "=", "a"), Compare("t1", "=", "c")))), False),
    ],
)
def test_tags_and_device_combinations(expr: Expr, expected: bool) -> None:
    part = part_from_rows([row(1, t1="a", t2="x"), row(2, t1="c", t2="y")])
    assert might_match(expr, part, SCHEMA) is expected


def test_tag_min_max_only() -> None:
    part = replace(
        part_from_rows([row(1, t1="b"), row(2, t1="d")]),
        devices=None,
        tags={"t1": TagStats(None, "b", "d", False), "t2": TagStats(None, "x", "x", False)},
    )
    assert might_match(Compare("t1", "=", "c"), part, SCHEMA), "c is inside [b, d]"
    assert not might_match(Compare("t1", "=", "e"), part, SCHEMA)
    assert not might_match(Compare("t2", "!=", "x"), part, SCHEMA)
    assert not might_match(IsNull("t1"), part, SCHEMA)


def test_null_tags() -> None:
    part = part_from_rows([row(1, t1=None), row(2, t1="a")])
    assert might_match(IsNull("t1"), part, SCHEMA)
    assert not might_match(And((IsNull("t1"), Compare("time", ">", 1))), part, SCHEMA)
    only_null = part_from_rows([row(1, t1=None)])
    assert not might_match(Compare("t1", "!=", "a"), only_null, SCHEMA)
    assert not might_match(Not(Compare("t1", "=", "a")), only_null, SCHEMA)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (Compare("i", ">", 5), False),
        (Compare("i", ">=", 5), True),
        (Compare("d", "<", -1.0, as_double=True), False),
        (Compare("d", "<=", -1, as_double=True), True),
        (Compare("d", ">", 100.0, as_double=True), True),  # NaN may be there
        (Compare("d", "=", math.nan, as_double=True), True),
        (Compare("i", ">", 5.5, as_double=True), False),
        (Compare("i", "<", math.nan, as_double=True), True),
        (Compare("i", "=", math.nan, as_double=True), False),
        (Compare("s", "=", "m"), True),
        (Compare("s", "=", "zz"), False),
        (Compare("day", "<", dt.date(2024, 1, 1)), False),
        (Compare("b", "=", True), True),
        (Compare("b", "=", False), False),
        (Not(Compare("b", "=", True)), False),
        (IsNull("i"), True),
        (IsNull("d"), False),
    ],
)
def test_field_min_max_and_nulls(expr: Expr, expected: bool) -> None:
    part = part_from_rows(
        [
            row(1, i=1, d=-1.0, s="a", b=True, day=dt.date(2024, 1, 1)),
            row(2, i=5, d=2.5, s="z", b=True, day=dt.date(2024, 2, 1)),
            row(3, d=0.0, s="k", b=True, day=dt.date(2024, 3, 1)),
        ]
    )
    assert might_match(expr, part, SCHEMA) is expected


def test_all_null_field_only_matches_is_null() -> None:
    part = part_from_rows([row(1), row(2)])
    assert not might_match(IsNull("i", negated=True), part, SCHEMA)
    assert not might_match(Compare("i", "!=", 0), part, SCHEMA)
    assert not might_match(Not(Compare("i", "=", 0)), part, SCHEMA)
    assert might_match(IsNull("i"), part, SCHEMA)


def test_unknown_stats_might_match() -> None:
    part = replace(part_from_rows([row(1, i=1)]), fields={"i": FieldStats(None, None, None)})
    assert might_match(Compare("i", ">", 100), part, SCHEMA)
    assert might_match(IsNull("i", negated=True), part, SCHEMA)
    assert might_match(IsNull("i"), part, SCHEMA)
    no_stats = replace(part, fields={}, tags={}, devices=None, min_time=None, max_time=None)
    for expr in (Compare("d", "=", 1.0), Compare("t1", "=", "q"), Compare("time", "<", -5)):
        assert might_match(expr, no_stats, SCHEMA)


def test_nan_bounds_are_unknown() -> None:
    part = replace(part_from_rows([row(1, d=1.0)]), fields={"d": FieldStats(0.0, float("nan"), 0)})
    assert might_match(Compare("d", "<", -5.0, as_double=True), part, SCHEMA)


def test_a_double_column_may_always_hold_nan() -> None:
    part = part_from_rows([row(1, d=1.0), row(2, d=2.0)])
    assert might_match(Compare("d", ">", 5.0, as_double=True), part, SCHEMA)
    assert might_match(Not(Compare("d", "<", 5.0, as_double=True)), part, SCHEMA)
    assert not might_match(Compare("d", "<", 0.5, as_double=True), part, SCHEMA)
    assert not might_match(Compare("d", ">", 5.0, as_double=True), part_from_rows([row(1)]), SCHEMA)


def test_prune_splits_and_keeps_order() -> None:
    parts = [part_from_rows([row(t, t1=c)], path=f"{t}.tsfile") for t, c in enumerate("abab")]
    kept, pruned = prune(parts, Compare("t1", "=", "a"), SCHEMA)
    assert [p.path for p in kept] == ["0.tsfile", "2.tsfile"]
    assert [p.path for p in pruned] == ["1.tsfile", "3.tsfile"]


def test_plan_scan_parses_binds_and_prunes() -> None:
    parts = [part_from_rows([row(t * 1000, t1=c)], path=f"{t}") for t, c in enumerate("abc")]
    plan = plan_scan(
        SCHEMA,
        parts,
        "T1 IN ('a', 'c') AND time >= '1970-01-01T00:00:01Z'",
        BindContext(timestamp_as="timestamp"),
        key="keep",
    )
    assert [p.path for p in plan.parts] == ["2"]
    assert [p.path for p in plan.pruned] == ["0", "1"]
    assert plan.pushdown.time_min == 1000
    assert plan.pushdown.tag_dict() == {"t1": frozenset({"a", "c"})}
    assert plan.filter is not None


def test_plan_scan_with_a_contradiction_prunes_everything() -> None:
    parts = [part_from_rows([row(5)])]
    plan = plan_scan(SCHEMA, parts, "time > 10 AND time < 3", key="keep")
    assert plan.parts == () and len(plan.pruned) == 1


def test_plan_scan_without_a_predicate() -> None:
    parts = [part_from_rows([row(5)])]
    plan = plan_scan(SCHEMA, parts, None, key="keep")
    assert plan.parts == tuple(parts) and plan.filter is None


def test_plan_scan_rejects_unknown_columns() -> None:
    with pytest.raises(PredicateError, match="unknown column 'nope'"):
        plan_scan(SCHEMA, [], "nope = 1", key="keep")


# -- property: pruning never drops a part with a matching row ----------------------------------

_TAG_VALUES = st.sampled_from(["a", "b", "c", "x", "y", ""])
_LITERALS: dict[str, st.SearchStrategy[Any]] = {
    "time": st.integers(-2, 22),
    "t1": _TAG_VALUES,
    "t2": _TAG_VALUES,
    "i": st.integers(-6, 6),
    "d": st.one_of(
        st.floats(-6, 6, allow_nan=False), st.sampled_from([math.nan, math.inf, -math.inf, -0.0])
    ),
    "s": st.sampled_from(["", "a", "ab", "b", "z"]),
    "b": st.booleans(),
    "day": st.dates(dt.date(2024, 1, 1), dt.date(2024, 1, 9)),
}
_COLUMNS = tuple(_LITERALS)

rows_strategy = st.lists(
    st.fixed_dictionaries(
        {
            "time": st.integers(0, 20),
            "t1": st.none() | st.sampled_from(["a", "b", "c"]),
            "t2": st.none() | st.sampled_from(["x", "y"]),
            "i": st.none() | st.integers(-5, 5),
            "d": st.none()
            | st.floats(-5, 5, allow_nan=False)
            | st.sampled_from([math.nan, math.inf, -math.inf, -0.0]),
            "s": st.none() | st.sampled_from(["", "a", "ab", "b"]),
            "b": st.none() | st.booleans(),
            "day": st.none() | st.dates(dt.date(2024, 1, 2), dt.date(2024, 1, 8)),
        }
    ),
    min_size=1,
    max_size=12,
)


# Approx leaves stand for a time comparison bound without the session time zone: the
# reference evaluator uses the comparison they stand for.
APPROXIMATED: dict[str, Expr] = {}


def _approx(op: CompareOp, value: int, slack: int) -> Approx:
    exact = Compare("time", op, value)
    early, late = Compare("time", op, value - slack), Compare("time", op, value + slack)
    loose: Expr | None
    tight: Expr | None
    if op in (">", ">="):
        loose, tight = early, late
    elif op in ("<", "<="):
        loose, tight = late, early
    elif op == "=":
        loose = And((Compare("time", ">=", value - slack), Compare("time", "<=", value + slack)))
        tight = None
    else:
        loose = None
        tight = Or((Compare("time", "<", value - slack), Compare("time", ">", value + slack)))
    text = f"time {op} {value} ±{slack}"
    APPROXIMATED[text] = exact
    return Approx("time", loose, tight, text)


@st.composite
def leaves(draw: st.DrawFn) -> Expr:
    column = draw(st.sampled_from(_COLUMNS))
    kind = draw(st.sampled_from(["compare", "in", "null", "approx"]))
    # Bound comparisons on a DOUBLE column are always as doubles; on an integer column, a
    # double literal makes them so.
    as_double = column == "d" or (column == "i" and draw(st.booleans()))
    literal = _LITERALS["d"] if as_double else _LITERALS[column]
    if kind == "null":
        return IsNull(column, draw(st.booleans()))
    op: CompareOp = draw(st.sampled_from(["=", "!=", "<", "<=", ">", ">="]))
    if kind == "approx":
        return _approx(op, draw(_LITERALS["time"]), draw(st.integers(0, 5)))
    if kind == "in":
        values: tuple[Scalar, ...] = tuple(draw(st.lists(literal, min_size=0, max_size=3)))
        return In(column, values, as_double=as_double and bool(values))
    return Compare(column, op, draw(literal), as_double=as_double)


predicates = st.recursive(
    leaves(),
    lambda children: st.one_of(
        st.builds(lambda ts: And(tuple(ts)), st.lists(children, min_size=1, max_size=3)),
        st.builds(lambda ts: Or(tuple(ts)), st.lists(children, min_size=1, max_size=3)),
        st.builds(Not, children),
    ),
    max_leaves=6,
)


@st.composite
def degraded(draw: st.DrawFn, part: PartFile) -> PartFile:
    """The same part with some stats missing, as bounded or older writers record them."""
    if draw(st.booleans()):
        part = replace(part, devices=None)
    if draw(st.booleans()):
        part = replace(
            part, tags={k: TagStats(None, v.min, v.max, v.has_null) for k, v in part.tags.items()}
        )
    dropped = draw(st.sets(st.sampled_from(FIELDS)))
    unknown = draw(st.sets(st.sampled_from(FIELDS)))
    fields = {
        k: FieldStats(None, None, None) if k in unknown else v
        for k, v in part.fields.items()
        if k not in dropped
    }
    return replace(part, fields=fields)


@settings(max_examples=500, deadline=None)
@given(data=st.data(), rows=rows_strategy, expr=predicates)
def test_a_part_with_a_matching_row_is_never_pruned(
    data: st.DataObject, rows: list[Row], expr: Expr
) -> None:
    part = data.draw(degraded(part_from_rows(rows)))
    if any(evaluate(expr, r) is True for r in rows):
        assert might_match(expr, part, SCHEMA)
        assert prune([part], expr, SCHEMA) == ([part], [])


# -- property: per-device FIELD statistics skip and answer devices exactly -----------------------


def series_from_rows(rows: Sequence[Row], name: str) -> SeriesStats:
    """A device's statistics of FIELD ``name`` as the TsFile reader keeps them: the non-null
    count, and min/max only when exact under Spark's order (none when a NaN is among the
    values; BOOLEAN bounds from the number of true values)."""
    values = [r[name] for r in rows if r[name] is not None]
    if not values:
        return SeriesStats(0)
    if any(isinstance(v, float) and math.isnan(v) for v in values):
        return SeriesStats(len(values))
    return SeriesStats(len(values), min=min(values), max=max(values))


def part_with_device_fields(rows: Sequence[Row]) -> PartFile:
    """``part_from_rows`` with each device's own FIELD statistics."""
    part = part_from_rows(rows)
    devices = []
    for device in part.devices or ():
        mine = [r for r in rows if (r["t1"], r["t2"]) == device.tags]
        devices.append(replace(device, fields={f: series_from_rows(mine, f) for f in FIELDS}))
    return replace(part, devices=tuple(devices))


@settings(max_examples=500, deadline=None)
@given(rows=rows_strategy, expr=predicates)
def test_device_statistics_skip_only_devices_without_a_match_and_answer_only_full_ones(
    rows: list[Row], expr: Expr
) -> None:
    part = part_with_device_fields(rows)
    evaluator = PartEvaluator(expr, SCHEMA)
    for device in part.devices or ():
        results = [evaluate(expr, r) for r in rows if (r["t1"], r["t2"]) == device.tags]
        verdict = evaluator.device_verdict(part, device)
        assert evaluator.device_might_match(part, device) == (verdict is not False)
        if True in results:
            assert verdict is not False
        if verdict is True:
            assert all(v is True for v in results)


def test_device_statistics_decide_a_field_predicate() -> None:
    rows = [row(1, t2="x", d=1.0), row(2, t2="x", d=2.0), row(1, t2="y", d=30.0)]
    rows += [row(1, t2="z", d=31.0), row(2, t2="z", d=None), row(1, t2="n", d=math.nan)]
    part = part_with_device_fields(rows)
    evaluator = PartEvaluator(Compare("d", ">", 29.0, as_double=True), SCHEMA)
    by_device = {d.tags[1]: d for d in part.devices or ()}
    verdicts = {t: evaluator.device_verdict(part, d) for t, d in by_device.items()}
    # x: max 2 (no row); y: min 30 (every row); z: a NULL row fails; n: NaN > 29 may hold.
    assert verdicts == {"x": False, "y": True, "z": None, "n": None}
