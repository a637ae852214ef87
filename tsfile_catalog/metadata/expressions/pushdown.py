"""The split of a bound predicate into what TsFile evaluates exactly and a residual.

TsFile's query takes an inclusive time range and TAG value sets; :func:`split_pushdown`
hands it exactly those top-level terms, and everything else stays for the row filter.
"""

from __future__ import annotations

from dataclasses import dataclass

from tsfile_catalog.metadata.expressions.model import (
    INT64_MAX,
    INT64_MIN,
    Approx,
    Compare,
    Expr,
    In,
    Or,
    conjunction,
    conjuncts,
)
from tsfile_catalog.metadata.schema import TIME_COLUMN, TableSchema

__all__ = ["ScanPushdown", "split_pushdown"]


@dataclass(frozen=True, slots=True)
class ScanPushdown:
    """What a scan hands to TsFile: an inclusive time range and TAG value sets, exactly.

    ``tag_values`` maps a TAG column to the values it may take (an ``=`` is a one-value set).
    ``residual`` is what must still be evaluated on the rows; ``None`` means nothing.
    """

    time_min: int = INT64_MIN
    time_max: int = INT64_MAX
    tag_values: tuple[tuple[str, frozenset[str]], ...] = ()
    residual: Expr | None = None

    @property
    def empty(self) -> bool:
        """True when the pushed part alone already excludes every row."""
        return self.time_min > self.time_max or any(not v for _, v in self.tag_values)

    def tag_dict(self) -> dict[str, frozenset[str]]:
        return dict(self.tag_values)


def split_pushdown(expr: Expr | None, schema: TableSchema) -> ScanPushdown:
    """Split a bound predicate into the exact TsFile pushdown and a residual.

    Only top-level AND terms are considered: ``time`` comparisons (not ``!=``) narrow the
    range, TAG ``=``/``IN`` (and ORs of them on one TAG) narrow the TAG sets; everything
    else stays residual. An :class:`Approx` on ``time`` narrows the range by its loose
    bounds and stays residual.
    """
    lo, hi = INT64_MIN, INT64_MAX
    tags: dict[str, frozenset[str]] = {}
    residual: list[Expr] = []
    tag_names = set(schema.tag_names)

    def narrow(term: Compare) -> None:
        nonlocal lo, hi
        value = term.value
        assert isinstance(value, int)
        if term.op == "=":
            lo, hi = max(lo, value), min(hi, value)
        elif term.op == ">":
            lo = max(lo, value + 1)
        elif term.op == ">=":
            lo = max(lo, value)
        elif term.op == "<":
            hi = min(hi, value - 1)
        else:
            hi = min(hi, value)

    for term in conjuncts(expr):
        if _is_time_range(term):
            assert isinstance(term, Compare)
            narrow(term)
            continue
        if isinstance(term, Approx):
            for bound in conjuncts(term.loose):
                if _is_time_range(bound):
                    assert isinstance(bound, Compare)
                    narrow(bound)
            residual.append(term)
            continue
        tag_set = _tag_set(term, tag_names)
        if tag_set is not None:
            column, values = tag_set
            tags[column] = tags[column] & values if column in tags else values
            continue
        residual.append(term)
    return ScanPushdown(
        time_min=lo,
        time_max=hi,
        tag_values=tuple(sorted(tags.items())),
        residual=conjunction(residual),
    )


def _tag_set(term: Expr, tag_names: set[str]) -> tuple[str, frozenset[str]] | None:
    """The TAG column ``term`` restricts and the values it keeps, when ``term`` is exactly
    such a set: ``=``, ``IN``, or an OR of them on one TAG column (an OR of equalities
    means what the IN of their values means, a NULL TAG included); else None."""
    if isinstance(term, Or):
        found = [_tag_set(t, tag_names) for t in term.terms]
        columns = {f[0] for f in found if f is not None}
        if not found or None in found or len(columns) != 1:
            return None
        return columns.pop(), frozenset().union(*(f[1] for f in found if f is not None))
    if isinstance(term, Compare) and term.op == "=" and term.column in tag_names:
        return term.column, frozenset({str(term.value)})
    if isinstance(term, In) and term.column in tag_names:
        return term.column, frozenset(str(v) for v in term.values)
    return None


def _is_time_range(term: Expr) -> bool:
    return (
        isinstance(term, Compare)
        and term.column == TIME_COLUMN
        and term.op != "!="
        and not term.as_double
    )
