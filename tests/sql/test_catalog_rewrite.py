"""OPTIMIZE, DELETE and INSERT ... REPLACE WHERE through ``catalog.sql``, checked against
Spark's own evaluation of the same predicates on the version before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from tests.table.helpers import append_rows
from tsfile_catalog import Catalog, open_table
from tsfile_catalog.exceptions import SqlError

pytestmark = pytest.mark.spark

COLUMNS = "(time TIMESTAMP, city STRING, temp DOUBLE)"


def _rows(catalog: Catalog, sql: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in catalog.sql(sql).collect())


def _create(catalog: Catalog, name: str) -> None:
    catalog.sql(
        f"CREATE TABLE {name} {COLUMNS} USING tsfile "
        "OPTIONS (tagColumns 'city', timestampAs 'timestamp')"
    )
    # One INSERT per day and city: small parts, the shape OPTIMIZE is for.
    for day in (1, 2, 3):
        for city in ("bj", "sh"):
            catalog.sql(
                f"INSERT INTO {name} SELECT TIMESTAMP '2024-01-0{day} 00:00:00' + "
                f"make_interval(0, 0, 0, 0, id, 0, 0), '{city}', "
                f"CASE WHEN id = 3 THEN NULL ELSE id * 1.5 END FROM range(0, 6, 1, 1) AS r(id)"
            )


def test_optimize_keeps_rows_and_reduces_parts(catalog: Catalog, warehouse: Path) -> None:
    _create(catalog, "opt")
    before = _rows(catalog, "SELECT * FROM opt")
    parts_before = len(open_table(str(warehouse / "opt")).parts())

    row = catalog.sql("OPTIMIZE opt").collect()[0]

    table = open_table(str(warehouse / "opt"))
    assert parts_before == 6 and len(table.parts()) == row.num_files_added == 1
    assert row.num_files_removed == 6 and row.version == table.version
    assert row.bytes_removed > 0 and row.bytes_added == table.parts()[0].size_bytes
    assert _rows(catalog, "SELECT * FROM opt") == before
    assert _rows(catalog, f"SELECT * FROM opt VERSION AS OF {table.version - 1}") == before
    history = catalog.sql("DESCRIBE HISTORY opt").collect()[0]
    assert history.operation == "OPTIMIZE" and history.parts_removed == 6
    # A filtered query prunes the compacted part by its device and time statistics.
    explained = catalog.sql("EXPLAIN PARTS SELECT * FROM opt WHERE city = 'zz'").collect()
    assert [r.status for r in explained] == ["pruned"]


def test_optimize_compacts_a_streams_interleaved_parts_and_spark_reads_the_same_rows(
    catalog: Catalog, spark: SparkSession, warehouse: Path
) -> None:
    # Issue 24/25: a streamed table stalled at 19 parts ("nothing to compact"): its
    # micro-batches hold every device at times interleaved with the other batches'.
    # An append-only table (key.duplicates = keep): both rows of a replayed key stay.
    catalog.sql(
        "CREATE TABLE streamed (time BIGINT, city STRING, temp DOUBLE) USING tsfile "
        "OPTIONS (tagColumns 'city') TBLPROPERTIES ('key.duplicates' = 'keep')"
    )
    location = str(warehouse / "streamed")
    schema = open_table(location).schema
    for batch in range(19):
        times = [batch + 19 * k for k in range(6) for _ in range(3)]
        cities = [f"c{d}" for _ in range(6) for d in range(3)]
        temps = [float(t) for t in times]
        append_rows(location, pa.table({"time": times, "city": cities, "temp": temps}), schema)
    # A replayed micro-batch: the same (device, time) again; the table keeps both rows.
    append_rows(location, pa.table({"time": [0], "city": ["c0"], "temp": [-1.0]}), schema)
    spark_before = sorted(tuple(r) for r in spark.read.format("tsfile").load(location).collect())
    before = _rows(catalog, "SELECT * FROM streamed")
    assert len(open_table(location).parts()) == 20 and len(before) == 19 * 18 + 1

    row = catalog.sql("OPTIMIZE streamed").collect()[0]

    table = open_table(location)
    assert (row.num_files_removed, row.num_files_added) == (20, 2) and len(table.parts()) == 2
    assert _rows(catalog, "SELECT * FROM streamed") == before == spark_before
    spark_after = sorted(tuple(r) for r in spark.read.format("tsfile").load(location).collect())
    assert spark_after == spark_before
    assert _rows(catalog, "SELECT temp FROM streamed WHERE city = 'c0' AND time = 0") == [
        (-1.0,),
        (0.0,),
    ]
    catalog.sql("OPTIMIZE streamed")
    assert open_table(location).version == table.version, "nothing left to compact"


def test_optimize_of_a_last_table_keeps_the_replayed_row_and_spark_reads_it(
    catalog: Catalog, spark: SparkSession, warehouse: Path
) -> None:
    # The stream above in a table whose key replaces (the default): OPTIMIZE resolves the
    # replayed (device, time) to its latest row, and every read then needs no merge.
    catalog.sql(
        "CREATE TABLE streamed_last (time BIGINT, city STRING, temp DOUBLE) USING tsfile "
        "OPTIONS (tagColumns 'city')"
    )
    location = str(warehouse / "streamed_last")
    schema = open_table(location).schema
    latest: dict[tuple[str, int], tuple[Any, ...]] = {}
    for batch in range(19):
        times = [batch + 19 * k for k in range(6) for _ in range(3)]
        cities = [f"c{d}" for _ in range(6) for d in range(3)]
        temps = [float(t) for t in times]
        append_rows(location, pa.table({"time": times, "city": cities, "temp": temps}), schema)
        latest.update({(c, t): (t, c, v) for t, c, v in zip(times, cities, temps, strict=True)})
    append_rows(location, pa.table({"time": [0], "city": ["c0"], "temp": [-1.0]}), schema)
    latest[("c0", 0)] = (0, "c0", -1.0)
    # Every batch holds every city at times interleaved with the others': a read merges all
    # 20 parts' slices of all three cities (the replay holds c0 only).
    merging = catalog.sql("DESCRIBE DETAIL streamed_last").collect()[0].merged_slices
    shown = catalog.sql("SHOW PARTS streamed_last").collect()
    assert merging == 19 * 3 + 1 == sum(p.merged_slices for p in shown)

    row = catalog.sql("OPTIMIZE streamed_last").collect()[0]

    detail = catalog.sql("DESCRIBE DETAIL streamed_last").collect()[0]
    assert (row.num_files_removed, row.num_files_added) == (20, 1) and detail.num_parts == 1
    assert detail.merged_slices == 0
    assert [p.merged_slices for p in catalog.sql("SHOW PARTS streamed_last").collect()] == [0]
    expected = sorted(latest.values())
    assert _rows(catalog, "SELECT * FROM streamed_last") == expected
    spark_after = sorted(tuple(r) for r in spark.read.format("tsfile").load(location).collect())
    assert spark_after == expected
    assert _rows(catalog, "SELECT temp FROM streamed_last WHERE city = 'c0' AND time = 0") == [
        (-1.0,)
    ]
    catalog.sql("OPTIMIZE streamed_last")
    assert open_table(location).version == row.version, "nothing left to compact"


def test_optimize_where_compacts_only_the_parts_it_names(catalog: Catalog, warehouse: Path) -> None:
    _create(catalog, "opt_where")
    before = _rows(catalog, "SELECT * FROM opt_where")
    row = catalog.sql("OPTIMIZE opt_where WHERE time < TIMESTAMP '2024-01-03 00:00:00'").collect()[
        0
    ]
    assert (row.num_files_removed, row.num_files_added) == (4, 1)
    assert len(open_table(str(warehouse / "opt_where")).parts()) == 3
    assert _rows(catalog, "SELECT * FROM opt_where") == before


def test_delete_matches_spark_on_metadata_only_and_rewritten_parts(
    catalog: Catalog, warehouse: Path, plugin_path: str | None
) -> None:
    _create(catalog, "del")
    table = open_table(str(warehouse / "del"))
    v0 = table.version
    everything = _rows(catalog, "SELECT * FROM del")

    # Day 1 of bj is one whole part: removed without being read.
    day1 = "city = 'bj' AND time < TIMESTAMP '2024-01-02 00:00:00'"
    row = catalog.sql(f"DELETE FROM del WHERE {day1}").collect()[0]
    assert (row.num_files_dropped, row.num_files_rewritten, row.num_files_added) == (1, 0, 0)
    expected = _rows(
        catalog, f"SELECT * FROM del VERSION AS OF {v0} WHERE NOT coalesce({day1}, false)"
    )
    assert _rows(catalog, "SELECT * FROM del") == expected
    assert row.num_affected_rows == len(everything) - len(expected) == 6

    # temp > 3 straddles every remaining part, and is NULL for id = 3 (those rows stay).
    v1 = row.version
    hot = "temp > 3"
    row = catalog.sql(f"DELETE FROM del WHERE {hot}").collect()[0]
    assert row.num_files_dropped == 0 and row.num_files_rewritten == row.num_files_removed == 5
    expected = _rows(
        catalog, f"SELECT * FROM del VERSION AS OF {v1} WHERE NOT coalesce({hot}, false)"
    )
    assert _rows(catalog, "SELECT * FROM del") == expected
    assert any(r[2] is None for r in expected)

    history = catalog.sql("DESCRIBE HISTORY del").collect()
    assert [h.operation for h in history[:2]] == ["DELETE", "DELETE"]
    # Catalog.sql's own DELETE and spark.sql's (docs/sql.md) record the condition as written.
    assert history[0].operation_parameters["predicate"] == hot
    assert _rows(catalog, f"SELECT * FROM del VERSION AS OF {v0}") == everything
    # Nothing matches: no new version.
    assert catalog.sql("DELETE FROM del WHERE city = 'nowhere'").collect()[0].version is None


def test_insert_replace_where_replaces_one_day(catalog: Catalog, warehouse: Path) -> None:
    _create(catalog, "rw")
    v0 = open_table(str(warehouse / "rw")).version
    day2 = "time >= TIMESTAMP '2024-01-02 00:00:00' AND time < TIMESTAMP '2024-01-03 00:00:00'"
    new_rows = (
        "SELECT TIMESTAMP '2024-01-02 12:00:00' AS time, 'bj' AS city, 99.0 AS temp "
        "UNION ALL SELECT TIMESTAMP '2024-01-02 13:00:00', 'gz', 98.0"
    )
    row = catalog.sql(f"INSERT INTO rw REPLACE WHERE {day2} {new_rows}").collect()[0]
    assert row.num_inserted_rows == 2
    kept = _rows(catalog, f"SELECT * FROM rw VERSION AS OF {v0} WHERE NOT coalesce({day2}, false)")
    assert _rows(catalog, "SELECT * FROM rw") == sorted(kept + _rows(catalog, new_rows))
    info = catalog.sql("DESCRIBE HISTORY rw").collect()[0]
    assert info.version == v0 + 1 and info.operation_parameters["replaceWhere"] == day2

    # A row outside the predicate: refused, nothing committed.
    with pytest.raises(Exception, match="replaceWhere.*does not match"):
        catalog.sql(
            f"INSERT INTO rw REPLACE WHERE {day2} SELECT TIMESTAMP '2024-01-05 00:00:00', 'bj', 1.0"
        )
    assert open_table(str(warehouse / "rw")).version == v0 + 1
    with pytest.raises(SqlError, match="REPLACE WHERE"):
        catalog.sql(f"INSERT OVERWRITE TABLE rw REPLACE WHERE {day2} {new_rows}")


def test_dataframe_replace_where_replaces_one_device(
    catalog: Catalog, warehouse: Path, spark: Any
) -> None:
    _create(catalog, "rwdf")
    location = str(warehouse / "rwdf")
    v0 = open_table(location).version
    before = _rows(catalog, "SELECT * FROM rwdf")
    fresh = spark.sql("SELECT TIMESTAMP '2024-01-09 00:00:00' AS time, 'sh' AS city, 7.0D AS temp")
    writer = fresh.write.format("tsfile").option("tagColumns", "city")
    writer.option("replaceWhere", "city = 'sh'").mode("overwrite").save(location)
    assert _rows(catalog, "SELECT * FROM rwdf") == sorted(
        [r for r in before if r[1] != "sh"] + [tuple(fresh.collect()[0])]
    )
    table = open_table(location)
    # Every sh part held only sh rows: all dropped in metadata only, none rewritten.
    info = table.history(limit=1)[0]
    assert info.operation_parameters["numDeletedRows"] == "18"
    assert info.parts_added == 1 and info.parts_removed == 3

    bad = spark.sql("SELECT TIMESTAMP '2024-01-09 00:00:00' AS time, 'bj' AS city, 1.0D AS temp")
    with pytest.raises(Exception, match="replaceWhere.*does not match"):
        bad.write.format("tsfile").option("replaceWhere", "city = 'sh'").mode("overwrite").save(
            location
        )
    with pytest.raises(Exception, match="replaceWhere.*mode\\('overwrite'\\)"):
        fresh.write.format("tsfile").option("replaceWhere", "city = 'sh'").mode("append").save(
            location
        )
    with pytest.raises(Exception, match="option 'replaceWhere'.*nope"):
        fresh.write.format("tsfile").option("replaceWhere", "nope = 1").mode("overwrite").save(
            location
        )
    assert open_table(location).version == v0 + 1
    assert not list(Path(location).glob("_staging/*"))
