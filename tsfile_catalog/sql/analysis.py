"""Pure analysis of a parsed query: which tables it reads, how, and how to rewrite it.

For every table reference that could name a catalog table, :func:`table_refs` reports its time
travel clause, the columns the query may read from it (projection pushdown) and the WHERE
conjuncts that may be evaluated by its scan (predicate pushdown); :func:`placed_table_refs`
finds where each reference sits, for :mod:`tsfile_catalog.sql.ref_rewrite` to swap it for a
temporary view the executor registered; and :func:`as_metadata_count` spots
``SELECT count(*)`` queries that manifest row counts can answer.

Everything errs on the side of reading more: a column set may hold names that are not columns of
the table (select aliases, struct fields, lambda parameters; intersect it with the schema), is
``None`` ("all columns") whenever a ``*`` or an unresolvable construct could reach the table, and
a conjunct is pushed only when it certainly filters that table alone. The pushed predicate is
redundant with the query's own WHERE, which stays in place; it only lets the scan skip data.

Identifiers are resolved case-insensitively, as Spark does: table names, aliases and column
names in the results are lower case.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.errors import OptimizeError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers
from sqlglot.optimizer.scope import Scope, traverse_scope, walk_in_scope

from tsfile_catalog.exceptions import PredicateError, SqlError
from tsfile_catalog.metadata.expressions.parser import parse_predicate
from tsfile_catalog.metadata.schema import TIME_COLUMN, TableSchema
from tsfile_catalog.sql.dialect import TsFileSpark
from tsfile_catalog.sql.parse import (
    table_url_from_sqlglot,
    time_travel_from_sqlglot,
)
from tsfile_catalog.sql.statements import URL_FUNCTION, TableName, TableUrl, TimeTravel

__all__ = [
    "TableRef",
    "table_refs",
    "placed_table_refs",
    "as_metadata_count",
    "single_table_ref",
    "as_single_table_scan",
    "projection",
]

_DIALECT = TsFileSpark()

_PUSHABLE_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.Between, exp.In)

# Table clauses a metadata-only count can ignore; anything else (TABLESAMPLE, PIVOT, hints...)
# changes which rows are counted.
_COUNTABLE_TABLE_ARGS = frozenset({"this", "db", "alias", "version"})
_COUNT_SELECT_ARGS = frozenset({"expressions", "from_", "where"})


@dataclass(frozen=True, slots=True, kw_only=True)
class TableRef:
    """One reference to a table that could be a catalog table.

    Attributes:
        index: position of the reference in the query text (0 = first), so two references
            to the same table (a self-join) stay distinguishable.
        table: the referenced name (lower case), or the location of a URL reference
            (``tsfile('<url>', ...)``, ``tsfile.`<url>` ``) without its time travel.
        alias: the alias the query gives it, or None.
        time_travel: its ``VERSION AS OF`` / ``TIMESTAMP AS OF`` clause (or a URL
            reference's ``version`` / ``timestamp`` setting), or None.
        columns: the column names the query may read from it (possibly with extra names
            that are not columns), or None when it may read every column.
        where: a predicate over its columns (unqualified, accepted by
            :func:`~tsfile_catalog.metadata.expressions.parser.parse_predicate`) that every row the
            query uses from this reference satisfies, or None.
    """

    index: int
    table: TableName | TableUrl
    alias: str | None
    time_travel: TimeTravel | None
    columns: frozenset[str] | None
    where: str | None

    @property
    def name_in_query(self) -> str:
        """The name columns are qualified with in the query: the alias, else the table name
        (a URL reference without an alias has none: "")."""
        return self.alias or _bare_name(self.table)


def table_refs(query: exp.Expr) -> tuple[TableRef, ...]:
    """Every reference in ``query`` to a table that could be a catalog table, in text order.

    Looks through joins, subqueries, derived tables, set operations and CTE bodies; references
    to CTEs are not tables and are left out, as are names that cannot be catalog tables
    (three-part names, names that are not plain identifiers). URL references are included.

    Raises:
        SqlError: ``query`` is not a query, or a time travel clause is malformed.
    """
    return tuple(found.ref for found in _analyze(_normalized(query)))


def placed_table_refs(query: exp.Expr) -> tuple[exp.Query, list[tuple[exp.Table, TableRef]]]:
    """A copy of ``query`` and each of its table references (see :func:`table_refs`) with
    the node that holds it in that copy, in text order: what
    :func:`~tsfile_catalog.sql.ref_rewrite.rewrite_table_refs` edits.

    The analysis runs on a normalized twin of the copy (lower-case identifiers), so the copy
    keeps the user's spelling.
    """
    original = _as_query(query).copy()
    tree = _normalized(original)
    twins = {
        id(node): twin
        for node, twin in zip(tree.walk(bfs=False), original.walk(bfs=False), strict=True)
    }
    placed: list[tuple[exp.Table, TableRef]] = []
    for found in _analyze(tree):
        node = twins[id(found.node)]
        assert isinstance(node, exp.Table)
        placed.append((node, found.ref))
    return original, placed


def as_metadata_count(query: exp.Expr) -> tuple[TableRef, str | None] | None:
    """Recognise ``SELECT count(*) [AS alias] FROM <table> [WHERE <pushable conjuncts>]``.

    Returns the table reference and its predicate (None without WHERE) when the query is
    exactly that, so the executor may answer it from manifest row counts; None otherwise
    (joins, GROUP BY, HAVING, DISTINCT, LIMIT, ORDER BY, CTEs, any conjunct that cannot be
    pushed, ...).
    """
    ref = single_table_ref(query, _COUNT_SELECT_ARGS)
    if ref is None:
        return None
    projections = query.expressions
    if len(projections) != 1 or not _is_count_star(projections[0].unalias()):
        return None
    return ref, ref.where


def as_single_table_scan(query: exp.Expr) -> TableRef | None:
    """The table reference of a query that reads exactly one table, in its own FROM, whose
    every WHERE conjunct that reference's scan evaluates (its ``where``); None otherwise.

    Such a query may be answered from that one scan alone, its WHERE dropped (the partial
    aggregates of ``tsfile_catalog.sql.partial_aggregates``).
    """
    return single_table_ref(query, None)


@dataclass(eq=False)
class _Found:
    """A reference while it is being analysed (mutable), tied to its node and scope."""

    node: exp.Table
    scope: Scope
    table: TableName | TableUrl
    alias: str | None
    time_travel: TimeTravel | None
    columns: set[str] | None = field(default_factory=set)
    where: str | None = None
    pushed_count: int = 0
    index: int = 0

    @property
    def name_in_query(self) -> str:
        return self.alias or _bare_name(self.table)

    @property
    def ref(self) -> TableRef:
        return TableRef(
            index=self.index,
            table=self.table,
            alias=self.alias,
            time_travel=self.time_travel,
            columns=frozenset(self.columns) if self.columns is not None else None,
            where=self.where,
        )

    def add_column(self, name: str) -> None:
        if self.columns is not None:
            self.columns.add(name)

    def qualified_by(self, qualifier: list[str]) -> bool:
        if len(qualifier) == 1:
            return qualifier[0] == self.name_in_query
        return (
            len(qualifier) == 2
            and self.alias is None
            and isinstance(self.table, TableName)
            and (qualifier[0], qualifier[1]) == (self.table.database, self.table.name)
        )


def projection(schema: TableSchema, columns: frozenset[str] | None) -> list[str] | None:
    """The scan's ``columns`` option: the schema's columns the query may read, in schema
    order (the order users see); None for all. A query reading none (``count(*)``) still
    scans ``time``."""
    if columns is None:
        return None
    kept = [name for name in schema.display_names if name in columns]
    return kept or [TIME_COLUMN]


def _bare_name(table: TableName | TableUrl) -> str:
    return table.name if isinstance(table, TableName) else ""


def _keep_url_case(tree: exp.Expr) -> None:
    """Mark the path of every ``tsfile.`<url>` `` case-sensitive: it is a location, which
    normalising identifiers would lower-case."""
    for table in tree.find_all(exp.Table):
        db = table.args.get("db")
        if (
            isinstance(db, exp.Identifier)
            and db.name.lower() == URL_FUNCTION
            and isinstance(table.this, exp.Identifier)
        ):
            table.this.meta["case_sensitive"] = True


def _as_query(query: exp.Expr) -> exp.Query:
    if not isinstance(query, exp.Query):
        raise SqlError(f"expected a query, got {query.sql(dialect=_DIALECT)!r}")
    return query


def _normalized(query: exp.Expr) -> exp.Expr:
    # Spark resolves identifiers case-insensitively; sqlglot's scopes compare names exactly,
    # so a CTE named C would not shadow a table referenced as c without this.
    tree = _as_query(query).copy()
    _keep_url_case(tree)
    return normalize_identifiers(tree, dialect=_DIALECT)


def _analyze(tree: exp.Expr) -> list[_Found]:
    try:
        scopes = traverse_scope(tree)
    except OptimizeError as e:
        raise SqlError(f"cannot analyse the query: {e}") from e
    found: list[_Found] = []
    local: dict[int, list[_Found]] = {}
    seen: set[int] = set()
    for scope in scopes:
        for node in scope.tables:
            if id(node) in seen:
                continue
            seen.add(id(node))
            candidate = _candidate(node, scope)
            if candidate is not None:
                found.append(candidate)
                local.setdefault(id(scope), []).append(candidate)
    for scope in scopes:
        _collect_columns(scope, local)
    for candidate in found:
        _push_predicate(candidate)
    found.sort(key=_text_order(tree, found))
    for index, candidate in enumerate(found):
        candidate.index = index
    return found


def _text_order(tree: exp.Expr, found: list[_Found]) -> Callable[[_Found], int]:
    # sqlglot keeps a SELECT's WITH clause after its FROM, so tree order is not text order;
    # parsed identifiers know their offset, trees built in code fall back to tree order.
    starts = [candidate.node.this.meta.get("start") for candidate in found]
    if all(isinstance(start, int) for start in starts):
        return lambda candidate: int(candidate.node.this.meta["start"])
    order = {id(node): position for position, node in enumerate(tree.walk(bfs=False))}
    return lambda candidate: order[id(candidate.node)]


def _candidate(node: exp.Table, scope: Scope) -> _Found | None:
    function = node.this
    if isinstance(function, exp.Anonymous) and function.name.lower() == _TABLE_CHANGES:
        # The catalog plugin's table function: Spark resolves it through the plugin only.
        raise SqlError(
            f"{_TABLE_CHANGES}(...) reads a table's change data feed through the catalog "
            "plugin, which does not serve this warehouse in this session (docs/spark-catalog.md,"
            " \"Change data feed\"); without it use spark.read.format('tsfile')"
            ".option('readChangeFeed', 'true') on the table's location, or Table.changes"
        )
    url = table_url_from_sqlglot(node)
    if url is not None:
        return _Found(
            node=node,
            scope=scope,
            table=url.located,
            alias=node.alias or None,
            time_travel=url.time_travel,
        )
    if not isinstance(node.this, exp.Identifier) or node.args.get("catalog"):
        return None
    db = node.args.get("db")
    if db is None and node.name in scope.cte_sources:
        return None
    try:
        table = TableName(node.name, db.name if db is not None else None)
    except SqlError:
        return None
    version = node.args.get("version")
    return _Found(
        node=node,
        scope=scope,
        table=table,
        alias=node.alias or None,
        time_travel=time_travel_from_sqlglot(version) if version is not None else None,
    )


_TABLE_CHANGES = "table_changes"


def _visible(scope: Scope, local: dict[int, list[_Found]]) -> list[_Found]:
    """References a column in ``scope`` may resolve to: its own, and if the scope may be
    correlated (a subquery, or inside one), those of every enclosing scope."""
    visible = list(local.get(id(scope), []))
    if scope.can_be_correlated:
        parent = scope.parent
        while parent is not None:
            visible.extend(local.get(id(parent), []))
            parent = parent.parent
    return visible


def _collect_columns(scope: Scope, local: dict[int, list[_Found]]) -> None:
    own = local.get(id(scope), [])
    visible = _visible(scope, local)
    for node in walk_in_scope(scope.expression):
        if isinstance(node, exp.Column):
            _attribute_column(node, scope, own, visible)
        elif isinstance(node, exp.Star):
            # count(*) reads no column; t.* is handled with its Column; any other * (SELECT *,
            # struct(*), ...) expands to every column of every source in scope.
            if not isinstance(node.parent, (exp.Count, exp.Column)):
                _read_all(own)
        elif isinstance(node, exp.Dot) and node.is_star:
            _read_all(visible)
        elif isinstance(node, exp.Join):
            if node.method.upper() == "NATURAL":
                _read_all(own)
            for identifier in node.args.get("using") or []:
                for candidate in own:
                    candidate.add_column(identifier.name)
    for candidate in own:
        if candidate.node.args.get("pivots"):
            candidate.columns = None


def _read_all(candidates: list[_Found]) -> None:
    for candidate in candidates:
        candidate.columns = None


def _attribute_column(
    column: exp.Column, scope: Scope, own: list[_Found], visible: list[_Found]
) -> None:
    names = [part.name for part in column.parts]
    if isinstance(column.this, exp.Star):
        matches = [c for c in visible if c.qualified_by(names[:-1])]
        if matches:
            _read_all(matches)
        elif not _names_source(scope, names[:-1]):
            _read_all(own)
        return
    matched = False
    # a.b.c may be table a's column b (struct field c) or database a's table b's column c;
    # credit every reading that names a visible reference.
    for split in range(1, len(names)):
        for candidate in visible:
            if candidate.qualified_by(names[:split]):
                candidate.add_column(names[split])
                matched = True
    if not matched and (len(names) == 1 or not _names_source(scope, names[:1])):
        # Unqualified, or a.b where a is no source at all: a is a column (b a struct field).
        for candidate in visible:
            candidate.add_column(names[0])


def _names_source(scope: Scope, qualifier: list[str]) -> bool:
    """Whether ``qualifier`` names a derived table or CTE visible in ``scope``."""
    if len(qualifier) != 1:
        return False
    current: Scope | None = scope
    while current is not None:
        if qualifier[0] in current.sources:
            return True
        current = current.parent if current.can_be_correlated else None
    return False


def _push_predicate(candidate: _Found) -> None:
    node = candidate.node
    clause = node.parent
    select = clause.parent if clause is not None else None
    if (
        not isinstance(clause, (exp.From, exp.Join))
        or not isinstance(select, exp.Select)
        or select is not candidate.scope.expression
        or node.args.get("pivots")
        or node.args.get("sample")
        or _null_supplying(node, select)
    ):
        return
    where = select.args.get("where")
    if where is None:
        return
    # Unqualified names resolve to this table only when it is the scope's single source and
    # no outer query could supply a same-named column.
    sole_source = (
        isinstance(clause, exp.From)
        and not select.args.get("joins")
        and not select.args.get("laterals")
        and not candidate.scope.can_be_correlated
    )
    rendered = []
    for conjunct in _conjuncts(where.this):
        text = _render_pushable(conjunct, candidate, sole_source)
        if text is not None:
            rendered.append(text)
    candidate.pushed_count = len(rendered)
    candidate.where = " AND ".join(rendered) if rendered else None


def _null_supplying(node: exp.Table, select: exp.Select) -> bool:
    """Whether an outer join may pad ``node``'s rows with NULLs (or hide them, for the right
    side of a semi/anti join); pre-filtering such a side would change the join's result."""
    joins = select.args.get("joins") or []
    from_ = select.args.get("from_")
    sources = [from_.this if from_ is not None else None, *(join.this for join in joins)]
    position = next((i for i, source in enumerate(sources) if source is node), None)
    if position is None:
        return True
    for index, join in enumerate(joins, start=1):
        side, kind = join.side.upper(), join.kind.upper()
        if kind in ("SEMI", "ANTI"):
            if index == position:
                return True
            continue
        if side in ("LEFT", "FULL") and index == position:
            return True
        if side in ("RIGHT", "FULL") and position < index:
            return True
    return False


def _conjuncts(node: exp.Expr) -> Iterator[exp.Expr]:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        yield from _conjuncts(node.left)
        yield from _conjuncts(node.right)
    else:
        yield node


def _pushable_shape(node: exp.Expr) -> bool:
    """Whether ``node`` is comparisons and IS [NOT] NULL under AND, OR and NOT: the forms
    the scan's predicate language has (which of them it binds, ``parse_predicate`` and the
    plan decide)."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, (exp.And, exp.Or)):
        return _pushable_shape(node.left) and _pushable_shape(node.right)
    if isinstance(node, exp.Not):
        return _pushable_shape(node.this)
    return isinstance(node, (*_PUSHABLE_COMPARISONS, exp.Is))


def _render_pushable(conjunct: exp.Expr, candidate: _Found, sole_source: bool) -> str | None:
    if not _pushable_shape(conjunct):
        return None
    columns = list(conjunct.find_all(exp.Column))
    if not columns or conjunct.find(exp.Query) is not None:
        return None
    for column in columns:
        qualifier = [part.name for part in column.parts][:-1]
        if isinstance(column.this, exp.Star):
            return None
        if qualifier and not candidate.qualified_by(qualifier):
            return None
        if not qualifier and not sole_source:
            return None
    unqualified = conjunct.copy()
    for column in list(unqualified.find_all(exp.Column)):
        column.replace(exp.column(column.this.copy()))
    if isinstance(unqualified, exp.Or):
        # The pushed conjuncts are joined with AND, which binds tighter than OR.
        unqualified = exp.Paren(this=unqualified)
    text = unqualified.sql(dialect=_DIALECT)
    try:
        # The scan parses this text itself; only hand it what that parser accepts
        # (literals only, no column-vs-column, no functions).
        parse_predicate(text)
    except PredicateError:
        return None
    return text


def _is_count_star(node: exp.Expr) -> bool:
    return (
        type(node) is exp.Count
        and isinstance(node.this, exp.Star)
        and not any(value for key, value in node.args.items() if key not in ("this", "big_int"))
        and not any(node.this.args.values())
    )


def single_table_ref(query: exp.Expr, clauses: frozenset[str] | None) -> TableRef | None:
    """The reference of ``SELECT ... FROM <table> [WHERE <pushable conjuncts>] ...`` when the
    query reads exactly that one table, uses no SELECT clause outside ``clauses`` (sqlglot
    argument names, e.g. ``group``; None: any clause but joins and CTEs) and its scan
    evaluates every WHERE conjunct; else None.

    The statistics-answered aggregates (:mod:`tsfile_catalog.sql.stats_aggregates`) build on
    it, as :func:`as_metadata_count` does for ``count(*)``.
    """
    if not isinstance(query, exp.Select):
        return None
    if clauses is None:
        if query.args.get("joins") or query.args.get("with_"):
            return None
    elif any(value for key, value in query.args.items() if key not in clauses):
        return None
    from_ = query.args.get("from_")
    if from_ is None or not isinstance(from_.this, exp.Table):
        return None
    if any(value for key, value in from_.this.args.items() if key not in _COUNTABLE_TABLE_ARGS):
        return None
    found = _analyze(_normalized(query))
    if len(found) != 1:
        return None
    where = query.args.get("where")
    conjuncts = list(_conjuncts(where.this)) if where is not None else []
    if found[0].pushed_count != len(conjuncts):
        return None
    return found[0].ref
