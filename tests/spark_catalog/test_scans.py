"""Reads of catalog tables through plain ``spark.sql``/``spark.table``, each compared with a
Parquet copy of the same rows in the same session; the pushdown translation without Spark."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tsfile_catalog.spark_catalog.scans import predicate_sql

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

REPO = Path(__file__).resolve().parents[2]


def _ref(name: str) -> dict[str, object]:
    return {"ref": [name]}


def _lit(text: str | None, kind: str) -> dict[str, object]:
    return {"lit": text, "type": f'"{kind}"'}


def test_predicates_become_where_text() -> None:
    assert predicate_sql({"op": "=", "args": [_ref("city"), _lit("b'j", "string")]}) == (
        "`city` = 'b\\'j'"
    )
    # Microseconds since the epoch, written as an instant: no time zone needed to bind it.
    assert predicate_sql(
        {"op": ">=", "args": [_ref("time"), _lit("1704067200000001", "timestamp")]}
    ) == ("`time` >= TIMESTAMP '2024-01-01 00:00:00.000001+00:00'")
    # A literal on the left keeps its side; <> is Spark's !=.
    assert predicate_sql({"op": "<>", "args": [_lit("3", "integer"), _ref("rain")]}) == (
        "3 != `rain`"
    )
    # A FLOAT literal arrives as its exact double.
    assert predicate_sql(
        {"op": "<", "args": [_ref("t"), _lit("0.10000000149011612", "float")]}
    ) == ("`t` < CAST('0.10000000149011612' AS DOUBLE)")
    assert predicate_sql({"op": "=", "args": [_ref("t"), _lit("NaN", "double")]}) == (
        "`t` = CAST('NaN' AS DOUBLE)"
    )
    assert (
        predicate_sql(
            {
                "op": "OR",
                "args": [
                    {"op": "IN", "args": [_ref("city"), _lit("a", "string"), _lit("b", "string")]},
                    {"op": "NOT", "args": [{"op": "IS_NULL", "args": [_ref("temp")]}]},
                ],
            }
        )
        == "(`city` IN ('a', 'b')) OR (NOT (`temp` IS NULL))"
    )


def test_what_the_where_model_cannot_take_stays_with_spark() -> None:
    # A function of a column, a nested field, a NULL literal, a half-translatable AND.
    assert (
        predicate_sql({"op": "=", "args": [{"other": "upper(city)"}, _lit("A", "string")]}) is None
    )
    assert predicate_sql({"op": "=", "args": [{"ref": ["a", "b"]}, _lit("1", "integer")]}) is None
    assert predicate_sql({"op": "=", "args": [_ref("city"), _lit(None, "string")]}) is None
    assert (
        predicate_sql(
            {
                "op": "AND",
                "args": [
                    {"op": "=", "args": [_ref("city"), _lit("a", "string")]},
                    {"op": "STARTS_WITH", "args": [_ref("city"), _lit("a", "string")]},
                ],
            }
        )
        is None
    )


QUERIES = [
    "SELECT * FROM {t}",
    "SELECT device, temp FROM {t}",
    "SELECT count(*) FROM {t}",
    "SELECT count(*) FROM {t} WHERE city = 'bj'",
    "SELECT * FROM {t} WHERE time >= TIMESTAMP '2024-01-01 10:00:00' AND device IN ('d1', 'd3')",
    "SELECT time, temp FROM {t} WHERE temp > 20 OR rain = 0",
    "SELECT * FROM {t} WHERE NOT (city = 'sh') AND temp IS NULL",
    "SELECT * FROM {t} WHERE rain IS NOT NULL AND rain <> 1",
    "SELECT city, avg(temp), max(rain), count(*) FROM {t} GROUP BY city",
    "SELECT * FROM {t} WHERE upper(city) = 'SH' AND temp < 15.5",
    "SELECT device, count(*) FROM {t} WHERE time < '2024-01-02' GROUP BY device",
]


@pytest.mark.spark
@pytest.mark.parametrize("query", QUERIES)
def test_reads_match_parquet(spark: SparkSession, weather: str, query: str) -> None:
    from pyspark.testing import assertDataFrameEqual

    assertDataFrameEqual(
        spark.sql(query.format(t=weather)), spark.sql(query.format(t="pq_weather"))
    )


def _filters(df: DataFrame) -> str:
    """The filters Spark still evaluates above the scan."""
    plan = df._jdf.queryExecution().executedPlan().toString()
    return "\n".join(line for line in plan.splitlines() if re.search(r"\bFilter \(", line))


@pytest.mark.spark
def test_exact_predicates_leave_spark_nothing_to_filter(spark: SparkSession, weather: str) -> None:
    pushed = spark.sql(
        f"SELECT * FROM {weather} WHERE city = 'bj' AND time < TIMESTAMP '2024-01-01 05:00:00' "
        "AND temp >= 10"
    )
    assert _filters(pushed) == ""
    assert pushed.count() == 3
    kept = spark.sql(f"SELECT * FROM {weather} WHERE upper(city) = 'BJ' AND device = 'd1'")
    assert "upper" in _filters(kept) and "d1" not in _filters(kept)
    assert kept.count() == 10


@pytest.mark.spark
def test_a_reused_dataframe_filters_afresh(spark: SparkSession, weather: str) -> None:
    table = spark.table(weather)
    assert table.where("device = 'd1'").count() == 10
    assert table.where("device = 'd2'").count() == 10
    assert table.where("city = 'sh'").count() == 20
    assert table.count() == 40


@pytest.mark.spark
def test_time_travel(spark: SparkSession, weather: str, ts: str) -> None:
    spark.sql(
        f"CREATE TABLE {ts}.db.travel (time TIMESTAMP, city STRING, device STRING, "
        "temp DOUBLE, rain INT) USING tsfile TBLPROPERTIES ('tagColumns' = 'city,device')"
    )
    spark.sql(f"INSERT INTO {ts}.db.travel SELECT * FROM {weather} WHERE city = 'bj'")
    spark.sql(f"INSERT INTO {ts}.db.travel SELECT * FROM {weather} WHERE city = 'sh'")
    assert spark.table(f"{ts}.db.travel").count() == 40
    assert spark.sql(f"SELECT count(*) FROM {ts}.db.travel VERSION AS OF 1").first()[0] == 20
    assert spark.sql(f"SELECT count(*) FROM {ts}.db.travel VERSION AS OF 0").first()[0] == 0
    history = spark.sql(f"SELECT * FROM {ts}.db.travel VERSION AS OF 1").collect()
    assert {r.city for r in history} == {"bj"}
    with pytest.raises(Exception, match="version"):
        spark.sql(f"SELECT * FROM {ts}.db.travel VERSION AS OF 9").collect()
    before_all = "TIMESTAMP AS OF '2000-01-01 00:00:00'"
    with pytest.raises(Exception, match="2000|version|before"):
        spark.sql(f"SELECT * FROM {ts}.db.travel {before_all}").collect()
    now = spark.sql(f"SELECT count(*) FROM {ts}.db.travel TIMESTAMP AS OF '2100-01-01'")
    assert now.first()[0] == 40
    # Time travel as read options (Delta's spark.read.option("versionAsOf", n).table(t)):
    # Spark resolves them into the version it loads, and the scan reads that version.
    reader = spark.read.option("versionAsOf", 1)
    assert {r.city for r in reader.table(f"{ts}.db.travel").collect()} == {"bj"}
    assert reader.table(f"{ts}.db.travel").count() == 20
    later = spark.read.option("timestampAsOf", "2100-01-01").table(f"{ts}.db.travel")
    assert later.where("city = 'sh'").count() == 20
    with pytest.raises(Exception, match="no version 9"):
        spark.read.option("versionAsOf", 9).table(f"{ts}.db.travel").collect()


_CHILD = """
import sys
import pyarrow as pa
from tests.table.helpers import append_rows
from tsfile_catalog import open_table
table = open_table(sys.argv[1])
rows = pa.table({"time": pa.array([10**12, 10**12 + 1], pa.int64()),
                 "city": ["gz", "gz"], "device": ["d9", "d9"],
                 "temp": [1.0, 2.0], "rain": pa.array([1, 2], pa.int32())})
print(append_rows(sys.argv[1], rows, table.schema))
"""


@pytest.mark.spark
def test_the_next_query_sees_another_process_commit(
    spark: SparkSession, weather: str, ts: str, warehouse: Path
) -> None:
    spark.sql(
        f"CREATE TABLE {ts}.db.shared TBLPROPERTIES ('tagColumns' = 'city,device') "
        f"AS SELECT * FROM {weather}"
    )
    query = f"SELECT count(*) FROM {ts}.db.shared WHERE city = 'gz'"
    assert spark.sql(query).first()[0] == 0
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(warehouse / "db.db" / "shared")],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert done.stdout.strip() == "1"  # CTAS committed version 0, with the rows
    # No refresh: the next query loads the latest version.
    assert spark.sql(query).first()[0] == 2
    assert spark.table(f"{ts}.db.shared").count() == 42
