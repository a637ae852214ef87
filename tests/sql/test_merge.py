"""UPDATE and MERGE INTO through ``catalog.sql`` on real tables: results against Delta's
semantics (ported cases and a pandas model), refusals, one atomic commit, keep and last.

The rows are checked with ``key_view`` (each part read raw, resolved by the key rule), so
these tests check what the statements commit, whatever a read path merges.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.factories import table_schema
from tests.table.helpers import key_view
from tsfile_catalog import Catalog, open_table
from tsfile_catalog.exceptions import DataError, SqlError
from tsfile_catalog.metadata.manifest import Operation
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.sql.merge_checks import pinned_key

pytestmark = pytest.mark.spark

SCHEMA = table_schema("w", tags=("k",), fields=[("value", DataType.INT64)])

_names = (f"t{i}" for i in itertools.count())

Row = tuple[int, str, Any]


def _table(catalog: Catalog, mode: str, rows: list[Row], columns: str = "") -> str:
    """A new table ``(time BIGINT, k STRING, value BIGINT)`` with TAG ``k`` holding
    ``rows`` (one INSERT, so one write)."""
    name = next(_names)
    catalog.sql(
        f"CREATE TABLE {name} ({columns or 'time BIGINT, k STRING, value BIGINT'}) USING "
        f"tsfile OPTIONS (tagColumns 'k') TBLPROPERTIES ('key.duplicates' = '{mode}')"
    )
    if rows:
        values = ", ".join(f"({t}, '{k}', {_sql(v)})" for t, k, v in rows)
        catalog.sql(f"INSERT INTO {name} VALUES {values}")
    return name


def _sql(value: Any) -> str:
    return "NULL" if value is None else repr(value)


def _source(rows: list[tuple[Any, ...]], columns: str) -> str:
    if not rows:
        types = ", ".join(f"CAST(NULL AS BIGINT) AS {c}" for c in columns.split(", "))
        return f"(SELECT {types} WHERE false)"
    values = ", ".join("(" + ", ".join(_sql(v) for v in r) + ")" for r in rows)
    return f"(SELECT * FROM VALUES {values} AS s({columns}))"


def _view(warehouse: Path, name: str) -> list[Row]:
    return [(t, k, v) for t, k, v in key_view(str(warehouse / name))]


# -- Delta's MERGE cases ------------------------------------------------------------------------
#
# Ported from delta-io/delta spark/src/test/scala/org/apache/spark/sql/delta/
# MergeIntoSuiteBase.scala, with Delta's key column as ``time`` and one TAG value 'd' (the
# ON condition pins k = 'd'). Updates of Delta's key column are left out (the key cannot be
# SET here); the rest of each case, and its expected rows, are Delta's:
#
# - "basic case - not all columns are specified in update"
# - "basic case - update value from both source and target table" (without key2 = 20 + key2)
# - "basic case - only update" (without key2 = 20 + key1)
# - "basic case - multiple inserts"
# - "basic case - upsert with only rows inserted"
# - "basic case - only insert"
# - "basic case - both source and target are empty"
# - "Source is a query"
# - "basic case - null handling - NULL in condition" (a keep table: Delta keeps both rows
#   of a key the ON condition does not match; a last table would replace one by the other)
# - "basic case - null handling - null value in both source and target + IS NOT NULL in
#   condition" (without the null key: TAG values and time are never null)

_TARGET = [(2, "d", 2), (1, "d", 4)]
_ON = "t.k = 'd' AND src.key1 = t.time"
_INSERT = "INSERT (time, k, value) VALUES (key1 - 10, 'd', src.value + 10)"

DELTA_CASES = [
    pytest.param(
        _ON,
        "last",
        _TARGET,
        [(1, 1), (0, 3)],
        f"WHEN MATCHED THEN UPDATE SET value = t.value + 3 WHEN NOT MATCHED THEN {_INSERT}",
        [(-10, 13), (1, 7), (2, 2)],
        id="not all columns are specified in update",
    ),
    pytest.param(
        _ON,
        "last",
        _TARGET,
        [(1, 1), (0, 3)],
        f"WHEN MATCHED THEN UPDATE SET value = t.value + src.value WHEN NOT MATCHED THEN {_INSERT}",
        [(-10, 13), (1, 5), (2, 2)],
        id="update value from both source and target table",
    ),
    pytest.param(
        _ON,
        "last",
        _TARGET,
        [(1, 5), (2, 9)],
        f"WHEN MATCHED THEN UPDATE SET value = 20 + src.value WHEN NOT MATCHED THEN {_INSERT}",
        [(1, 25), (2, 29)],
        id="only update",
    ),
    pytest.param(
        _ON,
        "last",
        _TARGET,
        [(1, 1), (0, 3), (3, 5)],
        "WHEN NOT MATCHED AND key1 = 0 THEN INSERT (time, k, value) VALUES (src.key1, 'd', "
        f"src.value + 3) WHEN NOT MATCHED THEN {_INSERT.replace('key1 - 10', 'src.key1 - 10')}",
        [(-7, 15), (0, 6), (1, 4), (2, 2)],
        id="multiple inserts",
    ),
    pytest.param(
        _ON,
        "last",
        _TARGET,
        [(1, 1), (0, 3)],
        f"WHEN MATCHED AND t.time = 5 THEN UPDATE SET value = src.value + 3 "
        f"WHEN NOT MATCHED THEN {_INSERT}",
        [(-10, 13), (1, 4), (2, 2)],
        id="upsert with only rows inserted",
    ),
    pytest.param(
        _ON,
        "last",
        [],
        [(5, 5)],
        f"WHEN MATCHED THEN UPDATE SET value = 20 + src.value WHEN NOT MATCHED THEN {_INSERT}",
        [(-5, 15)],
        id="only insert",
    ),
    pytest.param(
        _ON,
        "last",
        [],
        [],
        f"WHEN MATCHED THEN UPDATE SET value = 20 + src.value WHEN NOT MATCHED THEN {_INSERT}",
        [],
        id="both source and target are empty",
    ),
    pytest.param(
        f"{_ON} AND NULL",
        "keep",
        [(1, "d", 1)],
        [(1, 10), (2, 20)],
        "WHEN MATCHED THEN UPDATE SET t.value = src.value "
        "WHEN NOT MATCHED THEN INSERT (time, k, value) VALUES (src.key1, 'd', src.value)",
        [(1, 1), (1, 10), (2, 20)],
        id="null handling - NULL in condition",
    ),
    pytest.param(
        f"{_ON} AND t.value IS NOT NULL",
        "last",
        [(1, "d", 1)],
        [(1, None), (2, 20)],
        "WHEN MATCHED THEN UPDATE SET t.value = src.value "
        "WHEN NOT MATCHED THEN INSERT (time, k, value) VALUES (src.key1, 'd', src.value)",
        [(1, None), (2, 20)],
        id="null handling - IS NOT NULL in condition",
    ),
]


@pytest.mark.parametrize(("on", "mode", "target", "source", "clauses", "expected"), DELTA_CASES)
def test_delta_merge_cases(
    catalog: Catalog,
    warehouse: Path,
    on: str,
    mode: str,
    target: list[Row],
    source: list[tuple[int, int | None]],
    clauses: str,
    expected: list[tuple[int, int | None]],
) -> None:
    name = _table(catalog, mode, target)
    catalog.sql(
        f"MERGE INTO {name} AS t USING {_source(source, 'key1, value')} src ON {on} {clauses}"
    )
    assert _view(warehouse, name) == sorted(((t, "d", v) for t, v in expected), key=repr)


def test_delta_source_is_a_query(catalog: Catalog, warehouse: Path) -> None:
    """Delta's "Source is a query": the source is a subquery over another table (here a
    catalog table), its extra column ignored."""
    source = _table(catalog, "last", [], "time BIGINT, k STRING, value BIGINT, others STRING")
    catalog.sql(f"INSERT INTO {source} VALUES (1, 'd', 6, 'a'), (0, 'd', 3, 'b')")
    name = _table(catalog, "last", _TARGET)
    catalog.sql(
        f"MERGE INTO {name} trg USING (SELECT time AS key1, value, others FROM {source}) src "
        "ON trg.k = 'd' AND src.key1 = trg.time WHEN MATCHED THEN UPDATE SET value = 20 + "
        "src.value WHEN NOT MATCHED THEN INSERT (time, k, value) VALUES (key1 - 10, 'd', "
        "src.value + 10)"
    )
    assert _view(warehouse, name) == [(-10, "d", 13), (1, "d", 26), (2, "d", 2)]


def test_source_may_be_values_with_column_names(catalog: Catalog, warehouse: Path) -> None:
    """``USING (VALUES ...) AS s(c1, ...)``, which Spark accepts: its rows under the names
    the alias gives them."""
    name = _table(catalog, "last", _TARGET)
    catalog.sql(
        f"MERGE INTO {name} t USING (VALUES (1, 'd', 7), (5, 'd', 50)) AS s(time, k, value) "
        "ON t.k = s.k AND t.time = s.time WHEN MATCHED THEN UPDATE SET * "
        "WHEN NOT MATCHED THEN INSERT *"
    )
    assert _view(warehouse, name) == [(1, "d", 7), (2, "d", 2), (5, "d", 50)]


def test_source_may_be_a_temp_view_over_the_target(catalog: Catalog, warehouse: Path) -> None:
    """A temporary view of the target's own rows (``spark.sql`` over it, as a user builds a
    source): both reads of the view resolve to the same attributes, which Spark took for an
    ambiguous self-join ("Column value#... are ambiguous")."""
    name = _table(catalog, "last", _TARGET)
    catalog.table(name).where("time = 1").selectExpr(
        "time", "k", "value + 10 AS value"
    ).createOrReplaceTempView("own_rows")
    try:
        catalog.sql(
            f"MERGE INTO {name} t USING own_rows s ON t.k = s.k AND t.time = s.time "
            "WHEN MATCHED THEN UPDATE SET *"
        )
    finally:
        catalog.spark.catalog.dropTempView("own_rows")
    assert _view(warehouse, name) == [(1, "d", 14), (2, "d", 2)]


def test_source_may_be_an_older_version_or_a_url(catalog: Catalog, warehouse: Path) -> None:
    source = _table(catalog, "last", [(1, "d", 10), (2, "d", 20)])
    catalog.sql(f"INSERT INTO {source} VALUES (3, 'd', 30)")
    name = _table(catalog, "last", _TARGET)
    catalog.sql(
        f"MERGE INTO {name} t USING {source} VERSION AS OF 1 AS s "
        "ON t.k = s.k AND t.time = s.time WHEN MATCHED THEN UPDATE SET * "
        "WHEN NOT MATCHED THEN INSERT *"
    )
    assert _view(warehouse, name) == [(1, "d", 10), (2, "d", 20)]
    catalog.sql(
        f"MERGE INTO {name} t USING tsfile('{warehouse / source}') s "
        "ON t.k = s.k AND t.time = s.time WHEN NOT MATCHED THEN INSERT *"
    )
    assert _view(warehouse, name) == [(1, "d", 10), (2, "d", 20), (3, "d", 30)]


def test_delta_multiple_source_rows_matched(catalog: Catalog, warehouse: Path) -> None:
    """Delta's "multiple source rows matched" error, and its exception: several source rows
    may match a target row when the only MATCHED clause is an unconditional DELETE."""
    name = _table(catalog, "last", _TARGET)
    source = _source([(1, 1), (1, 2)], "key1, value")
    with pytest.raises(SqlError, match=r"2 source rows match the target row \(k='d', time=1\)"):
        catalog.sql(
            f"MERGE INTO {name} t USING {source} src ON {_ON} "
            "WHEN MATCHED THEN UPDATE SET value = src.value"
        )
    assert open_table(str(catalog.warehouse + "/" + name)).version == 1  # nothing committed
    catalog.sql(f"MERGE INTO {name} t USING {source} src ON {_ON} WHEN MATCHED THEN DELETE")
    assert _view(warehouse, name) == [(2, "d", 2)]


# -- the model: Delta's semantics in pandas -----------------------------------------------------

KEY = st.tuples(st.integers(0, 4), st.sampled_from(["a", "b"]))
ROWS = st.dictionaries(KEY, st.integers(-3, 3), max_size=6)

_CLAUSES = (
    "WHEN MATCHED AND src.value < -1 THEN DELETE "
    "WHEN MATCHED AND src.value > 0 THEN UPDATE SET value = t.value + src.value "
    "WHEN NOT MATCHED AND src.value > -2 THEN INSERT *"
)


def _merge_model(target: list[Row], source: dict[tuple[int, str], int]) -> list[Row]:
    """Delta's MERGE with ``_CLAUSES``: clauses in order, the first whose condition holds
    acts; a matched row no clause acts on stays as it is."""
    out: list[Row] = []
    for time, k, value in target:
        s = source.get((time, k))
        if s is None or -1 <= s <= 0:
            out.append((time, k, value))
        elif s > 0:
            out.append((time, k, value + s))
    keys = {(t, k) for t, k, _ in target}
    out.extend((t, k, v) for (t, k), v in source.items() if (t, k) not in keys and v > -2)
    return sorted(out, key=repr)


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@pytest.mark.slow
@given(mode=st.sampled_from(["last", "keep"]), target=ROWS, resent=ROWS, source=ROWS)
def test_merge_matches_a_pandas_model_of_delta(
    catalog: Catalog,
    warehouse: Path,
    mode: str,
    target: dict[tuple[int, str], int],
    resent: dict[tuple[int, str], int],
    source: dict[tuple[int, str], int],
) -> None:
    name = _table(catalog, mode, [(t, k, v) for (t, k), v in target.items()])
    if resent:
        # A second write: in a keep table a re-sent key has both rows (MERGE matches each);
        # in a last table the re-sent row replaces the first (MERGE sees only it).
        values = ", ".join(f"({t}, '{k}', {v})" for (t, k), v in resent.items())
        catalog.sql(f"INSERT INTO {name} VALUES {values}")
    written = {**target, **resent}.items() if mode == "last" else [*target.items(), *resent.items()]
    current = [(t, k, v) for (t, k), v in written]
    rows = [(t, k, v) for (t, k), v in source.items()]
    catalog.sql(
        f"MERGE INTO {name} t USING {_source(rows, 'time, k, value')} src "
        f"ON t.k = src.k AND t.time = src.time {_CLAUSES}"
    )
    assert _view(warehouse, name) == _merge_model(current, source)


# -- UPDATE ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["last", "keep"])
def test_update_sets_spark_expressions_in_matching_rows(
    catalog: Catalog, warehouse: Path, mode: str, plugin_path: str | None
) -> None:
    name = _table(catalog, mode, [(1, "a", 1), (2, "a", 2), (1, "b", 5)])
    result = catalog.sql(
        f"UPDATE {name} AS x SET value = x.value * 10 + length(k) WHERE x.k = 'a' AND value > 1"
    ).collect()
    assert [tuple(r) for r in result] == [(1,)]
    assert _view(warehouse, name) == [(1, "a", 1), (1, "b", 5), (2, "a", 21)]
    table = open_table(str(warehouse / name))
    info = table.history(limit=1)[0]
    assert info.operation == Operation.UPDATE
    assert info.operation_parameters["numUpdatedRows"] == "1"
    # last: a new write, nothing rewritten; keep: the part holding the key rewritten.
    assert (info.rows_removed == 0) == (mode == "last")
    # Catalog.sql's own UPDATE and Spark's row-level operation (docs/sql.md) record alike.
    assert info.operation_parameters["set"] == "value"
    assert info.operation_parameters["predicate"] == "x.k = 'a' AND value > 1"
    if plugin_path is not None:
        assert "writeId" in info.operation_parameters
    if plugin_path is None or mode == "last":
        # last: the updated row a new write; keep: the part rewritten without the key (its
        # sequence kept), the key's rows in a new part.
        assert {p.key_sequence for p in table.parts()} == {1, 2}


def test_update_of_a_timestamp_table_keeps_times_exact(catalog: Catalog, warehouse: Path) -> None:
    name = next(_names)
    catalog.sql(
        f"CREATE TABLE {name} (time TIMESTAMP, k STRING, at TIMESTAMP, value DOUBLE) USING "
        "tsfile OPTIONS (tagColumns 'k', timestampAs 'timestamp')"
    )
    catalog.sql(
        f"INSERT INTO {name} VALUES (TIMESTAMP '2024-01-01 00:00:00.123', 'a', "
        "TIMESTAMP '2024-01-02 00:00:00', 1.5)"
    )
    catalog.sql(f"UPDATE {name} SET at = at + INTERVAL 1 SECOND, value = -value")
    (row,) = key_view(str(warehouse / name))
    assert row == (1704067200123, "a", 1704153601000, -1.5)  # raw milliseconds


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("UPDATE {t} SET k = 'z'", r"UPDATE t\d+ cannot set 'k': it is a TAG column, part of the"),
        ("UPDATE {t} SET time = time + 1", r"cannot set 'time': it is the time column"),
        ("UPDATE {t} SET nope = 1", r"UPDATE t\d+: no column 'nope'"),
        (
            "MERGE INTO {t} t USING {t} s ON t.time = s.time WHEN MATCHED THEN DELETE",
            r"must equate every key column .*\(t\.k = <source>\.k AND t\.time = <source>\.time\)"
            r"; it does not pin k\. The table key is \(TAG values, time\)",
        ),
        (
            "MERGE INTO {t} t USING {t} s ON t.k = s.k AND t.time > s.time "
            "WHEN MATCHED THEN DELETE",
            r"it does not pin time",
        ),
        (
            "MERGE INTO {t} t USING {t} s ON t.k = s.k AND t.time = s.time "
            "WHEN MATCHED THEN UPDATE SET k = s.k",
            r"MERGE \.\.\. UPDATE t\d+ cannot set 'k'",
        ),
        (
            "MERGE INTO {t} t USING {t} s ON t.k = s.k AND t.time = s.time "
            "WHEN NOT MATCHED THEN INSERT (time, value) VALUES (s.time, 1)",
            r"the time and TAG columns need values; missing k",
        ),
    ],
)
def test_refusals_say_why_and_commit_nothing(
    catalog: Catalog, warehouse: Path, statement: str, message: str
) -> None:
    name = _table(catalog, "last", [(1, "a", 1)])
    with pytest.raises(SqlError, match=message):
        catalog.sql(statement.format(t=name))
    assert open_table(str(warehouse / name)).version == 1


@pytest.mark.parametrize(
    ("on", "pinned"),
    [
        ("t.k = s.k AND t.time = s.time", {"k": "s.k", "time": "s.time"}),
        (
            "s.time = t.time AND t.k <=> upper(s.name) AND s.v > 0",
            {"k": "UPPER(s.name)", "time": "s.time"},
        ),
        ("k = s.k AND time = s.time + 1", {"k": "s.k", "time": "s.time + 1"}),
        ("t.k = 'd' AND t.time = s.key1", {"k": "'d'", "time": "s.key1"}),
    ],
)
def test_on_pins_the_key_with_source_expressions(on: str, pinned: dict[str, str]) -> None:
    condition = sqlglot.parse_one(f"SELECT 1 WHERE {on}", read="spark").args["where"].this
    found = pinned_key(condition, SCHEMA, "t", "s", "tbl")
    assert {c: e.sql(dialect="spark") for c, e in found.items()} == pinned


@pytest.mark.parametrize(
    ("on", "missing"),
    [
        ("t.time = s.time", "k"),
        ("t.k = s.k OR t.time = s.time", "k, time"),
        ("t.k = t.k AND t.time = s.time", "k"),  # reads the target on both sides
        ("t.k = s.k AND NOT t.time = s.time", "time"),
    ],
)
def test_on_not_pinning_the_key_is_refused(on: str, missing: str) -> None:
    condition = sqlglot.parse_one(f"SELECT 1 WHERE {on}", read="spark").args["where"].this
    with pytest.raises(SqlError, match=rf"MERGE INTO tbl: .* it does not pin {missing}\."):
        pinned_key(condition, SCHEMA, "t", "s", "tbl")


# -- one commit ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["last", "keep"])
def test_merge_is_one_commit_and_a_failure_leaves_the_table_unchanged(
    catalog: Catalog, warehouse: Path, mode: str
) -> None:
    name = _table(catalog, mode, [(1, "a", 1), (2, "a", 2), (3, "b", 3)])
    url = warehouse / name
    files = sorted(p for p in url.rglob("*") if p.is_file())
    source = _source([(1, "a", -5), (2, "a", 5), (9, "c", 9), (9, "c", 8)], "time, k, value")
    merge = (
        f"MERGE INTO {name} t USING {source} s ON t.k = s.k AND t.time = s.time "
        "WHEN MATCHED AND s.value < 0 THEN DELETE WHEN MATCHED THEN UPDATE SET * "
        "WHEN NOT MATCHED THEN INSERT *"
    )
    if mode == "last":
        # Two new rows for one key: a last table holds one; the parts the delete rewrote
        # were staged already, and go with the failure.
        # Catalog.sql's own message, or (through the plugin) the commit's.
        with pytest.raises(
            DataError, match=r"more than once|wrote a key \(TAG values, time\) twice"
        ):
            catalog.sql(merge)
        assert sorted(p for p in url.rglob("*") if p.is_file()) == files
        assert open_table(str(url)).version == 1
        merge = merge.replace("(9, 'c', 8)", "(8, 'c', 8)")
    result = catalog.sql(merge).collect()[0]
    assert tuple(result) == (4, 1, 1, 2)
    table = open_table(str(url))
    assert table.version == 2 and table.history(limit=1)[0].operation == Operation.MERGE
    nine = [(9, "c", 9), (9, "c", 8)] if mode == "keep" else [(8, "c", 8), (9, "c", 9)]
    assert _view(warehouse, name) == sorted([(2, "a", 5), (3, "b", 3), *nine], key=repr)


def test_merge_deleting_a_resent_key_removes_every_row_of_it(
    catalog: Catalog, warehouse: Path
) -> None:
    # Key (1, a) is in two writes of a last table; deleting it must take it out of both,
    # or the older row would be what reads show once the newer is gone.
    name = _table(catalog, "last", [(1, "a", 1), (2, "a", 2)])
    url = str(warehouse / name)
    open_table(url).append(pd.DataFrame({"time": [5], "k": ["a"], "value": [5]}))
    catalog.sql(
        f"MERGE INTO {name} t USING {_source([(2, 'a')], 'time, k')} s "
        "ON t.k = s.k AND t.time = s.time WHEN MATCHED THEN DELETE"
    )
    assert _view(warehouse, name) == [(1, "a", 1), (5, "a", 5)]
    table = open_table(url)
    assert table.history(limit=1)[0].operation_parameters["numDeletedRows"] == "1"


@pytest.mark.parametrize("mode", ["last", "keep"])
def test_delete_by_a_predicate_only_spark_evaluates(
    catalog: Catalog, warehouse: Path, spark: Any, mode: str, plugin_path: str | None
) -> None:
    """``DELETE … WHERE time % 2 = 0`` (no statistic can take it): Spark evaluates it over
    the rows reads show, as through ``spark.sql``, and exactly those rows go in one commit;
    in a keep table the rows of a deleted key the predicate leaves stay."""
    rows: list[Row] = [(t, k, t * 10) for t in range(6) for k in ("a", "b")]
    name = _table(catalog, mode, rows)
    if mode == "keep":
        catalog.sql(f"INSERT INTO {name} VALUES (2, 'a', 7)")  # a second row of key (2, a)
        rows.append((2, "a", 7))
    version = open_table(str(warehouse / name)).version
    answer = catalog.sql(f"DELETE FROM {name} WHERE time % 2 = 0 AND value <> 7").first()
    expected = [r for r in rows if not (r[0] % 2 == 0 and r[2] != 7)]
    assert answer["num_affected_rows"] == len(rows) - len(expected)
    assert answer["version"] == version + 1
    assert sorted(catalog.sql(f"SELECT time, k, value FROM {name}").collect()) == sorted(expected)
    history = open_table(str(warehouse / name)).history(limit=1)[0]
    assert history.operation == Operation.DELETE
    # Catalog.sql's own DELETE and Spark's copy-on-write (docs/sql.md, DELETE) record alike.
    assert history.operation_parameters["predicate"] == "time % 2 = 0 AND value <> 7"
    if plugin_path is not None:
        assert "writeId" in history.operation_parameters
    none = catalog.sql(f"DELETE FROM {name} WHERE time % 2 = 1 AND value < 0").first()
    assert (none["version"], none["num_affected_rows"]) == (None, 0)
    assert open_table(str(warehouse / name)).version == version + 1
