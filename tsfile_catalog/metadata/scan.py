"""Scan planning: one pure function from (schema, parts, predicate) to the parts to read.

``Table.plan`` and the Spark DataSource both call :func:`plan_scan`, so a manifest table and a
plain directory of TsFiles are pruned by exactly the same rules. For a ``key.duplicates =
last`` table the plan also names the slices to merge by key
(:mod:`~tsfile_catalog.metadata.key_reads`), found among the parts its time and TAG terms keep.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from tsfile_catalog.metadata.expressions.bind import BindContext, bind
from tsfile_catalog.metadata.expressions.model import And, Approx, Compare, Expr, In, Not, Or
from tsfile_catalog.metadata.expressions.pruning import PartEvaluator, prune
from tsfile_catalog.metadata.expressions.pushdown import ScanPushdown, split_pushdown
from tsfile_catalog.metadata.gc_pause import gc_paused
from tsfile_catalog.metadata.key import KeyMode
from tsfile_catalog.metadata.key_reads import key_predicate, plan_merges
from tsfile_catalog.metadata.part_list import PartList
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import TIME_COLUMN, TableSchema
from tsfile_catalog.metadata.slices import MergeRead

__all__ = [
    "Candidates",
    "PartWindow",
    "ScanPlan",
    "TagSets",
    "part_window",
    "plan_bound",
    "plan_scan",
]


@dataclass(frozen=True)
class ScanPlan:
    """The parts a scan must read, the parts it skips, and what to push into TsFile.

    ``filter`` is the bound predicate (None when there is none); ``pushdown.residual`` is the
    part of it that must still be applied to the rows read. ``merges`` are the slices of
    ``parts`` whose rows may share a key with another write's (a ``key.duplicates = last``
    table): they are read together and resolved before the residual applies, so ``parts``
    holds every part they name, even one the FIELD terms alone would prune.
    """

    parts: tuple[PartFile, ...]
    # Pruned parts read from a checkpoint stay unbuilt (a PartList) until something reads them.
    pruned: Sequence[PartFile]
    pushdown: ScanPushdown
    schema: TableSchema
    filter: Expr | None
    merges: tuple[MergeRead, ...] = ()


def plan_scan(
    schema: TableSchema,
    parts: Iterable[PartFile],
    where: str | Expr | None,
    context: BindContext | None = None,
    *,
    key: KeyMode,
    candidates: Candidates | None = None,
) -> ScanPlan:
    """Parse (if SQL text), bind, split and prune.

    Args:
        schema: the table schema the predicate is bound to.
        parts: candidate parts with their stats.
        where: a Spark SQL predicate, an unbound expression, or None.
        context: how Spark sees the columns (raw time unit, ``timestampAs``, session time
            zone); the default is raw ``ms`` longs with the time zone unknown.
        key: the table's ``key.duplicates`` (``last``: plan the merges by key).
        candidates: a vectorised pre-filter over ``parts`` (see :func:`plan_bound`).

    Raises:
        PredicateError: the predicate cannot be parsed or does not fit the schema.
    """
    expr: Expr | None
    if isinstance(where, str):
        # sqlglot is imported only when there is SQL text to parse: opening a table and
        # planning without a predicate (the CLI's history, detail, parts) must not pay for it.
        from tsfile_catalog.metadata.expressions.parser import parse_predicate

        expr = parse_predicate(where)
    else:
        expr = where
    bound = None if expr is None else bind(expr, schema, context)
    return plan_bound(schema, parts, bound, key=key, candidates=candidates)


def plan_bound(
    schema: TableSchema,
    parts: Iterable[PartFile],
    bound: Expr | None,
    *,
    key: KeyMode,
    candidates: Candidates | None = None,
) -> ScanPlan:
    """Split and prune for an already bound predicate.

    ``candidates`` (a columnar index over ``parts``, in their order) pre-filters them by
    :func:`part_window` and row count before the exact visitor runs on the survivors only:
    every part it drops the visitor would drop too, so the plan is the same, only cheaper.
    With ``key = "last"`` the plan names its merges (see :class:`ScanPlan`).
    """
    # Planning builds parts read from a checkpoint and decodes their statistics: many small
    # acyclic objects (see gc_pause).
    with gc_paused():
        if not isinstance(parts, Sequence):
            parts = tuple(parts)  # pruned twice below for a last table
        plan = _plan_bound(schema, parts, bound, candidates)
        if key == "keep":
            return plan
        return _with_merges(plan, parts, candidates)


def _with_merges(
    plan: ScanPlan, parts: Iterable[PartFile], candidates: Candidates | None
) -> ScanPlan:
    """``plan`` with the merges of the parts its time and TAG terms keep, and those parts
    among the parts read."""
    schema, bound = plan.schema, plan.filter
    if plan.pushdown.empty:
        return plan
    key_bound = key_predicate(bound, schema.tag_names)
    if key_bound == bound:
        keyed = plan.parts
    else:
        keyed = _plan_bound(schema, parts, key_bound, candidates).parts
    merges = plan_merges(keyed, plan.pushdown, schema.tag_names)
    if not merges:
        return plan
    kept = {p.path for p in plan.parts}
    extra = {p.path: p for m in merges for p in m.parts if p.path not in kept}
    if not extra:
        return replace(plan, merges=merges)
    pruned = tuple(p for p in plan.pruned if p.path not in extra)
    return replace(plan, parts=plan.parts + tuple(extra.values()), pruned=pruned, merges=merges)


def _plan_bound(
    schema: TableSchema,
    parts: Iterable[PartFile],
    bound: Expr | None,
    candidates: Candidates | None,
) -> ScanPlan:
    pushdown = split_pushdown(bound, schema)
    if pushdown.empty:
        everything = parts if isinstance(parts, PartList) else tuple(parts)
        return ScanPlan((), everything, pushdown, schema, bound)
    window = part_window(bound, schema.tag_names)
    stored = isinstance(parts, PartList) and parts.stored is not None
    if (
        candidates is None
        or window == _UNBOUNDED
        or (window.lo == window.hi is None and not stored)
    ):
        # Without a bound the pre-filter would only drop empty parts, which the visitor
        # drops as cheaply (and the index, pyarrow, is not built for nothing); TAG sets of
        # parts already built are as cheap to test one by one (a checkpoint's are columns).
        kept, pruned = prune(parts, bound, schema)
        return ScanPlan(tuple(kept), tuple(pruned), pushdown, schema, bound)
    listed = parts if isinstance(parts, Sequence) else tuple(parts)
    evaluator = PartEvaluator(bound, schema)
    candidate = ((i, listed[i]) for i in candidates(window))
    survivors = [(i, part) for i, part in candidate if evaluator.might_match(part)]
    kept_at = [i for i, _ in survivors]  # ascending, as candidates gives them
    skipped: Sequence[PartFile]
    if isinstance(listed, PartList):
        skipped = listed.excluding(sorted(kept_at))
    else:
        keep = set(kept_at)
        skipped = tuple(p for i, p in enumerate(listed) if i not in keep)
    return ScanPlan(tuple(part for _, part in survivors), skipped, pushdown, schema, bound)


# -- the part window: what a columnar pre-filter may prune on ----------------------------------


# Conjuncts "the part's TAG ``column`` holds one of ``values``" (see PartWindow.tags).
TagSets = tuple[tuple[str, frozenset[str]], ...]


@dataclass(frozen=True, slots=True)
class PartWindow:
    """Necessary conditions for a part to pass a bound predicate's part-level check:

    * its ``max_time >= lo`` and its ``min_time <= hi`` (None: no condition; a part whose
      time range is unknown always passes). Only necessary: ``lo > hi`` is no proof that
      nothing matches, since the two conditions hold or fail separately for each part;
    * for each ``(column, values)`` of ``tags``, the exact value set the part records for
      that TAG meets ``values`` (a part recording no set, min/max only, always passes).
    """

    lo: int | None = None
    hi: int | None = None
    tags: TagSets = ()


class Candidates(Protocol):
    """Given a window, the indices (ascending) of the parts that have rows and might pass it."""

    def __call__(self, window: PartWindow, /) -> Sequence[int]: ...


_UNBOUNDED = PartWindow()


def part_window(bound: Expr | None, tag_names: Iterable[str] = ()) -> PartWindow:
    """The :class:`PartWindow` implied by ``bound`` (as bound by ``bind``) for a table whose
    TAG columns are ``tag_names``.

    It mirrors the pruning visitor (``metadata/pruning.py``) at part level. On ``time``,
    whose statistics are ``lo = min_time``, ``hi = max_time``: ``time < v`` may hold only if
    ``min_time < v``, ``time >= v`` only if ``max_time >= v``, ``time = v`` (and ``IN``, by
    its hull) only if both. On a TAG with an exact value set: ``tag = 'v'`` may hold only if
    the set holds ``v``, ``tag IN (...)`` only if it meets the list. AND keeps every
    condition (intersecting time bounds), OR keeps the hull of the time bounds and, for a
    TAG every branch constrains, the union of their values; NOT pushes down as the visitor
    does; anything else (``!=``, ``NOT IN``, doubles, IS NULL, FIELDs) is unbounded, which
    is always safe.
    """
    return _UNBOUNDED if bound is None else _window(bound, False, frozenset(tag_names))


_NEGATED_OP = {"=": "!=", "!=": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def _window(expr: Expr, negate: bool, tags: frozenset[str]) -> PartWindow:
    if isinstance(expr, Not):
        return _window(expr.term, not negate, tags)
    if isinstance(expr, Approx):
        bound = expr.tight if negate else expr.loose
        return _UNBOUNDED if bound is None else _window(bound, negate, tags)
    if isinstance(expr, (And, Or)):
        windows = [_window(t, negate, tags) for t in expr.terms]
        if isinstance(expr, And) != negate:
            return PartWindow(
                _extreme(max, [w.lo for w in windows], absorbing=False),
                _extreme(min, [w.hi for w in windows], absorbing=False),
                tuple(c for w in windows for c in w.tags),
            )
        return PartWindow(
            _extreme(min, [w.lo for w in windows], absorbing=True),
            _extreme(max, [w.hi for w in windows], absorbing=True),
            _union_of_each(windows),
        )
    column = getattr(expr, "column", None)
    if column in tags:
        return _tag_window(expr, negate)
    if column != TIME_COLUMN:
        return _UNBOUNDED
    if isinstance(expr, Compare) and not expr.as_double and _is_int(expr.value):
        op = _NEGATED_OP[expr.op] if negate else expr.op
        value = int(expr.value)  # type: ignore[arg-type]
        if op == "<":
            return PartWindow(hi=value - 1)
        if op == "<=":
            return PartWindow(hi=value)
        if op == ">":
            return PartWindow(lo=value + 1)
        if op == ">=":
            return PartWindow(lo=value)
        if op == "=":
            return PartWindow(value, value)
        return _UNBOUNDED
    if (
        isinstance(expr, In)
        and not negate
        and not expr.as_double
        and expr.values
        and all(_is_int(v) for v in expr.values)
    ):
        values = [int(v) for v in expr.values]  # type: ignore[arg-type]
        return PartWindow(min(values), max(values))
    return _UNBOUNDED


def _tag_window(expr: Expr, negate: bool) -> PartWindow:
    """``tag = 'v'`` (or ``NOT tag != 'v'``) and ``tag IN (...)``: the part's value set must
    meet the literals (string literals only: anything else is left to the visitor)."""
    if isinstance(expr, Compare) and not expr.as_double and isinstance(expr.value, str):
        op = _NEGATED_OP[expr.op] if negate else expr.op
        if op == "=":
            return PartWindow(tags=((expr.column, frozenset((expr.value,))),))
    if (
        isinstance(expr, In)
        and not negate
        and not expr.as_double
        and all(isinstance(v, str) for v in expr.values)
    ):
        return PartWindow(tags=((expr.column, frozenset(expr.values)),))  # type: ignore[arg-type]
    return _UNBOUNDED


def _union_of_each(windows: Sequence[PartWindow]) -> TagSets:
    """For an OR: per TAG that every branch constrains, the union of the values each branch
    allows for it (a branch with several conditions on it implies each; one is taken)."""
    if not windows or any(not w.tags for w in windows):
        return ()
    first: list[dict[str, frozenset[str]]] = []
    for w in windows:
        seen: dict[str, frozenset[str]] = {}
        for column, values in w.tags:
            seen.setdefault(column, values)
        first.append(seen)
    shared = set(first[0]).intersection(*first[1:])
    return tuple(
        (column, frozenset().union(*(f[column] for f in first))) for column in sorted(shared)
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _extreme(
    pick: Callable[[Iterable[int]], int], bounds: list[int | None], *, absorbing: bool
) -> int | None:
    """``pick`` over the known bounds; an unknown one (None) absorbs the result for a hull
    (``absorbing``: OR) and is ignored for an intersection (AND)."""
    known = [b for b in bounds if b is not None]
    if not known or (absorbing and len(known) < len(bounds)):
        return None
    return pick(known)
