"""Query analysis: table references, projected columns, pushable predicates, rewrite, count."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from tsfile_catalog.exceptions import SqlError
from tsfile_catalog.metadata.expressions.parser import parse_predicate
from tsfile_catalog.sql import (
    TableName,
    TableRef,
    TimestampAsOf,
    TsFileSpark,
    VersionAsOf,
    as_metadata_count,
    parse_statement,
    rewrite_table_refs,
    table_refs,
)


def _query(sql: str) -> exp.Query:
    tree = sqlglot.parse_one(sql, read=TsFileSpark)
    assert isinstance(tree, exp.Query)
    return tree


def _refs(sql: str) -> tuple[TableRef, ...]:
    refs = table_refs(_query(sql))
    for ref in refs:
        if ref.where is not None:
            parse_predicate(ref.where)  # everything emitted must be accepted by the scan
    return refs


def _by_name(sql: str) -> dict[str, TableRef]:
    refs = _refs(sql)
    named = {ref.name_in_query: ref for ref in refs}
    assert len(named) == len(refs)
    return named


def _columns(ref: TableRef) -> set[str] | None:
    return set(ref.columns) if ref.columns is not None else None


# -- which references ------------------------------------------------------------------------


def test_single_table() -> None:
    (ref,) = _refs("SELECT a FROM t")
    assert ref == TableRef(
        index=0,
        table=TableName("t"),
        alias=None,
        time_travel=None,
        columns=frozenset({"a"}),
        where=None,
    )


def test_references_through_joins_subqueries_and_set_operations() -> None:
    refs = _refs(
        "SELECT a FROM t1 JOIN db.t2 ON t1.k = t2.k "
        "WHERE a IN (SELECT a FROM t3) AND EXISTS (SELECT 1 FROM t4 WHERE t4.k = t1.k) "
        "AND b > (SELECT max(b) FROM t5) "
        "UNION ALL SELECT a FROM (SELECT a FROM t6) AS d"
    )
    assert [ref.table.qualified for ref in refs] == ["t1", "db.t2", "t3", "t4", "t5", "t6"]
    assert [ref.index for ref in refs] == list(range(6))


def test_cte_names_are_not_tables() -> None:
    refs = _refs("WITH c AS (SELECT a FROM t WHERE a > 0) SELECT c.a FROM c JOIN u ON c.a = u.a")
    assert [ref.table.name for ref in refs] == ["t", "u"]


def test_cte_names_shadow_tables_case_insensitively() -> None:
    assert _refs("WITH Recent AS (SELECT 1 AS a) SELECT * FROM RECENT") == ()


def test_a_cte_body_reads_the_table_it_shadows() -> None:
    (ref,) = _refs("WITH t AS (SELECT a FROM t) SELECT a FROM t")
    assert ref.table == TableName("t")


def test_aliases_and_case() -> None:
    refs = _by_name("SELECT X.A FROM Weather AS X JOIN `Db`.`Other` o ON x.k = O.k")
    assert refs["x"].table == TableName("weather")
    assert refs["x"].alias == "x"
    assert refs["o"].table == TableName("other", "db")


def test_self_join_gives_two_references() -> None:
    refs = _refs("SELECT a.v, b.v FROM t a JOIN t b ON a.k = b.k")
    assert [(ref.index, ref.alias) for ref in refs] == [(0, "a"), (1, "b")]


def test_names_that_cannot_be_catalog_tables_are_left_out() -> None:
    assert _refs("SELECT * FROM spark_catalog.db.t JOIN `odd-name` ON true") == ()
    assert _refs("SELECT * FROM range(10)") == ()
    assert _refs("SELECT * FROM VALUES (1, 2) AS v(a, b)") == ()


def test_time_travel() -> None:
    refs = _by_name(
        "SELECT * FROM t VERSION AS OF 3 JOIN u TIMESTAMP AS OF '2024-01-01 00:00:00' AS x "
        "ON t.k = x.k JOIN v ON v.k = t.k"
    )
    assert refs["t"].time_travel == VersionAsOf(3)
    assert refs["x"].time_travel == TimestampAsOf("2024-01-01 00:00:00")
    assert refs["v"].time_travel is None


@pytest.mark.parametrize(
    "clause", ["VERSION AS OF 'x'", "TIMESTAMP AS OF now()", "VERSION AS OF 1.5"]
)
def test_malformed_time_travel(clause: str) -> None:
    with pytest.raises(SqlError, match="AS OF"):
        table_refs(_query(f"SELECT * FROM t {clause}"))


def test_not_a_query() -> None:
    with pytest.raises(SqlError, match="expected a query"):
        table_refs(sqlglot.parse_one("DROP TABLE t", read=TsFileSpark))


# -- columns --------------------------------------------------------------------------------


def test_columns_of_a_single_table_from_every_clause() -> None:
    (ref,) = _refs(
        "SELECT city, max(temp) OVER (PARTITION BY device ORDER BY time) AS m FROM t "
        "WHERE status = 'ok' GROUP BY city, device, temp, time HAVING count(hum) > 1 ORDER BY m"
    )
    assert _columns(ref) is not None
    assert {"city", "temp", "device", "time", "status", "hum"} <= _columns(ref)  # type: ignore[operator]


def test_star_reads_all_columns() -> None:
    (ref,) = _refs("SELECT * FROM t WHERE a > 1")
    assert ref.columns is None


def test_qualified_star_reads_all_columns_of_that_table_only() -> None:
    refs = _by_name("SELECT x.*, u.b FROM t x JOIN u ON x.k = u.k")
    assert refs["x"].columns is None
    assert _columns(refs["u"]) == {"b", "k"}


def test_star_over_a_derived_table_does_not_reach_inside() -> None:
    (ref,) = _refs("SELECT * FROM (SELECT a, b FROM t) d")
    assert _columns(ref) == {"a", "b"}


def test_star_inside_a_derived_table() -> None:
    refs = _by_name("SELECT d.a, u.b FROM (SELECT * FROM t) d JOIN u ON d.a = u.a")
    assert refs["t"].columns is None
    assert _columns(refs["u"]) == {"a", "b"}


def test_count_star_reads_no_column() -> None:
    (ref,) = _refs("SELECT count(*) FROM t")
    assert ref.columns == frozenset()


def test_qualified_columns_resolve_to_their_table() -> None:
    refs = _by_name("SELECT x.a, y.b FROM t AS x JOIN u AS y ON x.k = y.j WHERE y.c > 0")
    assert _columns(refs["x"]) == {"a", "k"}
    assert _columns(refs["y"]) == {"b", "j", "c"}


def test_unqualified_columns_with_several_tables_count_for_each() -> None:
    refs = _by_name("SELECT a FROM t JOIN u ON t.k = u.k")
    assert _columns(refs["t"]) == {"a", "k"}
    assert _columns(refs["u"]) == {"a", "k"}


def test_database_qualified_columns() -> None:
    (ref,) = _refs("SELECT db.t.a FROM db.t")
    assert _columns(ref) == {"a"}


def test_struct_field_access_reads_the_struct_column() -> None:
    (ref,) = _refs("SELECT s.f, t.s2.g FROM t")
    assert _columns(ref) == {"s", "s2"}


def test_correlated_columns_count_for_the_outer_table() -> None:
    refs = _by_name("SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.k AND z > 0)")
    assert {"a", "k", "z"} <= _columns(refs["t"])  # type: ignore[operator]
    assert {"k", "z"} <= _columns(refs["u"])  # type: ignore[operator]


def test_using_and_natural_joins() -> None:
    refs = _by_name("SELECT a FROM t JOIN u USING (k)")
    assert "k" in _columns(refs["t"])  # type: ignore[operator]
    assert "k" in _columns(refs["u"])  # type: ignore[operator]
    refs = _by_name("SELECT a FROM t NATURAL JOIN u")
    assert refs["t"].columns is None
    assert refs["u"].columns is None


def test_pivot_reads_all_columns() -> None:
    (ref,) = _refs("SELECT a FROM t PIVOT (sum(v) FOR k IN ('a', 'b'))")
    assert ref.columns is None


# -- predicates -----------------------------------------------------------------------------


def test_pushes_every_simple_conjunct() -> None:
    (ref,) = _refs(
        "SELECT a FROM t WHERE time >= 10 AND time < TIMESTAMP '2024-01-02 00:00:00' "
        "AND (city = 'x') AND temp BETWEEN -1.5 AND 30 AND device IN ('a', 'b') "
        "AND hum IS NOT NULL AND note IS NULL AND 5 > level AND day <> DATE '2024-01-01' "
        "AND ok = true"
    )
    assert ref.where == (
        "time >= 10 AND time < TIMESTAMP '2024-01-02 00:00:00' AND city = 'x' "
        "AND temp BETWEEN -1.5 AND 30 AND device IN ('a', 'b') AND NOT hum IS NULL "
        "AND note IS NULL AND 5 > level AND day <> DATE '2024-01-01' AND ok = TRUE"
    )


def test_pushes_or_and_not_over_simple_comparisons() -> None:
    # OR is parenthesised: the pushed conjuncts are joined with AND, which binds tighter.
    (ref,) = _refs(
        "SELECT a FROM t WHERE (a = 1 OR b = 2) AND NOT a = 3 AND keep = 1 "
        "AND NOT (device IN ('x') OR (time > 5 AND NOT v IS NULL)) AND c NOT IN (1, 2)"
    )
    assert ref.where == (
        "(a = 1 OR b = 2) AND NOT a = 3 AND keep = 1 "
        "AND NOT (device IN ('x') OR (time > 5 AND NOT v IS NULL)) AND NOT c IN (1, 2)"
    )
    assert parse_predicate(ref.where) == parse_predicate(
        "(a = 1 OR b = 2) AND NOT a = 3 AND keep = 1 "
        "AND NOT (device IN ('x') OR (time > 5 AND v IS NOT NULL)) AND c NOT IN (1, 2)"
    )


def test_an_or_across_two_tables_is_not_pushed() -> None:
    refs = _by_name("SELECT * FROM t JOIN u ON t.k = u.k WHERE t.a = 1 OR u.b = 2")
    assert refs["t"].where is None and refs["u"].where is None


@pytest.mark.parametrize(
    "condition",
    [
        "a = 1 OR upper(b) = 'X'",
        "NOT (a = 1 AND b + 1 > 2)",
        "upper(city) = 'X'",
        "a = b",
        "a + 1 > 2",
        "a > abs(-1)",
        "a IN (SELECT a FROM u)",
        "a LIKE 'x%'",
        "a = NULL",
        "EXISTS (SELECT 1 FROM u)",
        "a <=> 1",
        "1 = 1",
        "a IS TRUE",
    ],
)
def test_does_not_push(condition: str) -> None:
    refs = _by_name(f"SELECT * FROM t WHERE ({condition}) AND keep = 1")
    assert refs["t"].where == "keep = 1"


def test_pushes_qualified_conjuncts_of_inner_joins() -> None:
    refs = _by_name(
        "SELECT * FROM t x JOIN u y ON x.k = y.k WHERE x.a > 1 AND y.b = 'q' AND x.c = y.c "
        "AND unqualified = 3"
    )
    assert refs["x"].where == "a > 1"
    assert refs["y"].where == "b = 'q'"


def test_comma_and_cross_joins_are_inner() -> None:
    refs = _by_name("SELECT * FROM t, u CROSS JOIN v WHERE t.a = 1 AND u.b = 2 AND v.c = 3")
    assert (refs["t"].where, refs["u"].where, refs["v"].where) == ("a = 1", "b = 2", "c = 3")


def test_left_join_pushes_onto_the_preserved_side_only() -> None:
    refs = _by_name(
        "SELECT * FROM t LEFT JOIN u ON t.k = u.k AND u.x = 1 AND t.y = 2 "
        "WHERE t.a > 1 AND u.b IS NULL"
    )
    assert refs["t"].where == "a > 1"
    assert refs["u"].where is None


def test_outer_join_on_clauses_are_never_pushed() -> None:
    refs = _by_name("SELECT * FROM t LEFT JOIN u ON t.k = u.k AND u.x = 1 AND t.y = 2")
    assert refs["t"].where is None
    assert refs["u"].where is None


def test_right_and_full_joins() -> None:
    refs = _by_name(
        "SELECT * FROM t JOIN u ON t.k = u.k RIGHT JOIN v ON u.k = v.k "
        "WHERE t.a = 1 AND u.b = 2 AND v.c = 3"
    )
    assert (refs["t"].where, refs["u"].where, refs["v"].where) == (None, None, "c = 3")
    refs = _by_name("SELECT * FROM t FULL OUTER JOIN u ON t.k = u.k WHERE t.a = 1 AND u.b = 2")
    assert (refs["t"].where, refs["u"].where) == (None, None)


def test_semi_join_right_side_gets_nothing() -> None:
    refs = _by_name("SELECT * FROM t x LEFT SEMI JOIN u ON x.k = u.k WHERE x.a = 1")
    assert refs["x"].where == "a = 1"
    assert refs["u"].where is None


def test_predicates_apply_only_to_the_select_that_scans_the_table() -> None:
    refs = _by_name(
        "SELECT * FROM (SELECT a, b FROM t WHERE b = 1) d JOIN u ON d.a = u.a "
        "WHERE d.a = 2 AND u.c = 3"
    )
    assert refs["t"].where == "b = 1"
    assert refs["u"].where == "c = 3"


def test_correlated_subquery_pushes_only_qualified_conjuncts() -> None:
    refs = _by_name(
        "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.k AND z > 0 AND u.w = 1)"
    )
    assert refs["u"].where == "w = 1"
    assert refs["t"].where is None


def test_lateral_view_makes_unqualified_names_ambiguous() -> None:
    (ref,) = _refs("SELECT x FROM t LATERAL VIEW explode(arr) tv AS x WHERE x > 1 AND t.a = 1")
    assert ref.where == "a = 1"


def test_tablesample_is_not_pushed_into() -> None:
    (ref,) = _refs("SELECT * FROM t TABLESAMPLE (10 PERCENT) WHERE a = 1")
    assert ref.where is None


def test_pushed_columns_are_unqualified_and_lower_case() -> None:
    (ref,) = _refs("SELECT * FROM Db.T AS W WHERE w.City = 'Paris' AND W.`Temp` > 3")
    assert ref.where == "city = 'Paris' AND `temp` > 3"


def test_time_travel_and_predicates_together() -> None:
    (ref,) = _refs("SELECT * FROM t VERSION AS OF 2 WHERE a = 1")
    assert (ref.time_travel, ref.where) == (VersionAsOf(2), "a = 1")


# -- rewrite --------------------------------------------------------------------------------


def _view(ref: TableRef) -> str:
    return f"__scan_{ref.index}"


def test_rewrite_aliases_unaliased_references_by_their_name() -> None:
    sql = rewrite_table_refs(_query("SELECT t.a FROM t WHERE t.b = 1"), _view)
    assert sql == "SELECT t.a FROM `__scan_0` AS `t` WHERE t.b = 1"


def test_rewrite_keeps_aliases_and_drops_time_travel() -> None:
    sql = rewrite_table_refs(
        _query(
            "SELECT x.a FROM db.t VERSION AS OF 3 AS x "
            "JOIN u TIMESTAMP AS OF '2024-01-01' ON x.k = u.k"
        ),
        _view,
    )
    assert sql == "SELECT x.a FROM `__scan_0` AS x JOIN `__scan_1` AS `u` ON x.k = u.k"


def test_rewrite_keeps_the_case_the_user_wrote() -> None:
    sql = rewrite_table_refs(_query("SELECT Weather.City AS City FROM Weather"), _view)
    assert sql == "SELECT Weather.City AS City FROM `__scan_0` AS `Weather`"


def test_rewrite_fixes_database_qualified_columns() -> None:
    sql = rewrite_table_refs(_query("SELECT db.t.a FROM db.t"), _view)
    assert sql == "SELECT t.a FROM `__scan_0` AS `t`"


def test_rewrite_inside_ctes_and_subqueries_but_not_cte_names() -> None:
    sql = rewrite_table_refs(
        _query("WITH c AS (SELECT a FROM t) SELECT * FROM c WHERE a IN (SELECT a FROM u)"), _view
    )
    assert sql == (
        "WITH c AS (SELECT a FROM `__scan_0` AS `t`) "
        "SELECT * FROM c WHERE a IN (SELECT a FROM `__scan_1` AS `u`)"
    )


def test_rewrite_leaves_references_the_mapping_declines() -> None:
    sql = rewrite_table_refs(
        _query("SELECT * FROM t JOIN spark_table s ON t.k = s.k"),
        lambda ref: _view(ref) if ref.table.name == "t" else None,
    )
    assert sql == "SELECT * FROM `__scan_0` AS `t` JOIN spark_table AS s ON t.k = s.k"


def test_rewrite_passes_each_reference_once() -> None:
    seen: list[TableRef] = []

    def mapping(ref: TableRef) -> str:
        seen.append(ref)
        return _view(ref)

    query = _query("SELECT * FROM t a JOIN t b ON a.k = b.k WHERE a.x = 1")
    sql = rewrite_table_refs(query, mapping)
    assert [(ref.alias, ref.where) for ref in seen] == [("a", "x = 1"), ("b", None)]
    assert sql == "SELECT * FROM `__scan_0` AS a JOIN `__scan_1` AS b ON a.k = b.k WHERE a.x = 1"


def test_rewrite_quotes_hostile_view_names_and_does_not_modify_its_input() -> None:
    query = _query("SELECT * FROM t")
    before = query.sql(dialect=TsFileSpark)
    sql = rewrite_table_refs(query, lambda ref: "v`; DROP TABLE x; --")
    assert sql == "SELECT * FROM `v``; DROP TABLE x; --` AS `t`"
    assert query.sql(dialect=TsFileSpark) == before
    (reparsed,) = sqlglot.parse(sql, read=TsFileSpark)
    assert reparsed is not None
    assert reparsed.find(exp.Table).name == "v`; DROP TABLE x; --"  # type: ignore[union-attr]


# -- metadata count -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "where"),
    [
        ("SELECT count(*) FROM t", None),
        ("SELECT COUNT(*) AS n FROM db.t", None),
        ("SELECT count(*) n FROM t x WHERE x.a > 1", "a > 1"),
        (
            "SELECT count(*) FROM t VERSION AS OF 4 WHERE a > 1 AND b IN (1, 2)",
            "a > 1 AND b IN (1, 2)",
        ),
        ("SELECT count(*) FROM t WHERE a > 1 OR NOT b < 2", "(a > 1 OR NOT b < 2)"),
    ],
)
def test_metadata_count(sql: str, where: str | None) -> None:
    result = as_metadata_count(_query(sql))
    assert result is not None
    ref, pushed = result
    assert pushed == where
    assert ref.where == where
    assert ref.table.name == "t"


def test_metadata_count_keeps_time_travel() -> None:
    result = as_metadata_count(_query("SELECT count(*) FROM t TIMESTAMP AS OF '2024-01-01'"))
    assert result is not None
    assert result[0].time_travel == TimestampAsOf("2024-01-01")


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT count(a) FROM t",
        "SELECT count(1) FROM t",
        "SELECT count(DISTINCT a) FROM t",
        "SELECT count(*), 1 FROM t",
        "SELECT count(*) + 1 FROM t",
        "SELECT DISTINCT count(*) FROM t",
        "SELECT count(*) FROM t GROUP BY a",
        "SELECT count(*) FROM t HAVING count(*) > 1",
        "SELECT count(*) FROM t LIMIT 1",
        "SELECT count(*) FROM t ORDER BY 1",
        "SELECT count(*) FROM t JOIN u ON t.k = u.k",
        "SELECT count(*) FROM t, u",
        "SELECT count(*) FROM t WHERE a > 1 OR upper(b) = 'X'",
        "SELECT count(*) FROM t WHERE a > 1 AND upper(b) = 'X'",
        "SELECT count(*) FROM (SELECT * FROM t)",
        "WITH c AS (SELECT * FROM t) SELECT count(*) FROM c",
        "SELECT count(*) FROM t TABLESAMPLE (10 PERCENT)",
        "SELECT count(*) FROM spark_catalog.db.t",
        "SELECT count(*) FROM t UNION ALL SELECT count(*) FROM t",
        "SELECT count(*) FILTER (WHERE a > 1) FROM t",
    ],
)
def test_not_a_metadata_count(sql: str) -> None:
    assert as_metadata_count(_query(sql)) is None


@pytest.mark.parametrize(
    ("text", "rewritten"),
    [
        # Spark names these columns after their text, which sqlglot would spell otherwise
        (
            "SELECT t.a, nvl(b, 0), a % 2, 2.5D FROM t WHERE t.b = 1",
            "SELECT t.a, nvl(b, 0), a % 2, 2.5D FROM `__scan_0` AS `t` WHERE t.b = 1",
        ),
        (
            "SELECT x.a FROM db.t VERSION AS OF 3 AS x "
            "JOIN u TIMESTAMP AS OF '2024-01-01' ON x.k=u.k",
            "SELECT x.a FROM `__scan_0` AS x JOIN `__scan_1` AS `u` ON x.k=u.k",
        ),
        ("SELECT db.t.a, `db` . `t`.b FROM db.t", "SELECT t.a, `t`.b FROM `__scan_0` AS `t`"),
        # a nested WITH stays nested (sqlglot's generator hoists it: duplicate names)
        (
            "WITH x AS (SELECT 1 AS a) SELECT * FROM (WITH x AS (SELECT a FROM t) SELECT * FROM x)",
            "WITH x AS (SELECT 1 AS a) SELECT * FROM (WITH x AS (SELECT a FROM `__scan_0` AS `t`) "
            "SELECT * FROM x)",
        ),
        # no parentheses added: Spark's precedence setting decides
        (
            "SELECT k FROM t UNION SELECT k FROM u INTERSECT SELECT k FROM u",
            "SELECT k FROM `__scan_0` AS `t` UNION SELECT k FROM `__scan_1` AS `u` "
            "INTERSECT SELECT k FROM `__scan_2` AS `u`",
        ),
        ("SELECT * FROM tsfile('/d/t', version => 2) AS a", "SELECT * FROM `__scan_0` AS a"),
        ("SELECT count(*) -- t\nFROM tsfile.`/d/t`", "SELECT count(*) -- t\nFROM `__scan_0`"),
        ("INSERT INTO w SELECT 1+1 FROM t;", "SELECT 1+1 FROM `__scan_0` AS `t`"),
        ("CREATE TABLE w USING tsfile AS (SELECT * FROM t)", "(SELECT * FROM `__scan_0` AS `t`)"),
    ],
)
def test_a_parsed_query_keeps_its_own_text_but_the_replaced_references(
    text: str, rewritten: str
) -> None:
    statement = parse_statement(text)
    query = statement.query  # type: ignore[union-attr]
    assert rewrite_table_refs(query, _view) == rewritten


def test_a_query_changed_since_it_was_parsed_is_generated_from_its_tree() -> None:
    query = parse_statement("SELECT a FROM t").query  # type: ignore[union-attr]
    changed = query.where("a > 1")  # a copy: its text is no longer the parsed one
    assert rewrite_table_refs(changed, _view) == "SELECT a FROM `__scan_0` AS `t` WHERE a > 1"
