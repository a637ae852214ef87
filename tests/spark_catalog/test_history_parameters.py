"""``UPDATE``, ``DELETE FROM`` and ``MERGE INTO`` through plain ``spark.sql`` with the plugin's
session extensions record in the history the ``predicate`` (and an UPDATE's ``set``)
``Catalog.sql``'s own statement records, each compared with the same statement through
``Catalog.sql`` on an identical copy of the table, and with the text expected."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.spark_catalog.conftest import weather_rows
from tests.spark_catalog.test_rewrites import MODES, _Pair
from tsfile_catalog import open_table
from tsfile_catalog.spark_catalog.history_parameters import history_parameters

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_RECORDED = ("predicate", "set")


def _recorded(location: str) -> tuple[str, dict[str, str]]:
    info = open_table(location).history(limit=1)[0]
    parameters = {k: v for k, v in info.operation_parameters.items() if k in _RECORDED}
    return info.operation, parameters


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_spark_sql_records_the_parameters_catalog_sql_records(
    spark: SparkSession, ts: str, warehouse: Path, mode: str
) -> None:
    """Each way Spark carries a statement out (the metadata delete, the copy-on-write of a
    DELETE, UPDATE and MERGE, a ``last`` table's UPDATE as a delta, an insert-only MERGE's
    append) records the statement's condition as the user wrote it, in ``Catalog.sql``'s
    form, never Spark's resolved expression."""
    pair = _Pair(spark, ts, warehouse, f"recorded_{mode}", mode)
    source = weather_rows(spark, start=10, count=20).union(weather_rows(spark, 40, 6))
    source.selectExpr("time", "city", "device", "temp * 3 AS temp", "rain").createOrReplaceTempView(
        "recorded_src"
    )
    weather_rows(spark, start=60, count=4).createOrReplaceTempView("recorded_new")
    on = "t.time = s.time AND t.city = s.city AND t.device = s.device"
    for statement, operation, expected in (
        # Answered in metadata: Catalog.sql's DELETE by Spark's predicates.
        (
            "DELETE FROM {t} WHERE device = 'd4' AND (rain IS NULL OR rain < 5)",
            "DELETE",
            {"predicate": "device = 'd4' AND (rain IS NULL OR rain < 5)"},
        ),
        (
            "UPDATE {t} AS x SET x.temp = temp + 100, RAIN = 0 WHERE x.device = 'd1' AND temp > 1",
            "UPDATE",
            {"predicate": "x.device = 'd1' AND temp > 1", "set": "temp, rain"},
        ),
        # A condition the scan cannot take: Spark's copy-on-write.
        (
            "DELETE FROM {t} WHERE rain > hour(time) % 2",
            "DELETE",
            {"predicate": "rain > HOUR(time) % 2"},
        ),
        (
            f"MERGE INTO {{t}} t USING recorded_src s ON {on} "
            "WHEN MATCHED AND s.rain = 0 THEN DELETE "
            "WHEN MATCHED THEN UPDATE SET temp = s.temp "
            "WHEN NOT MATCHED THEN INSERT *",
            "MERGE",
            {"predicate": on},
        ),
        # Every clause inserts: Spark's append.
        (
            f"MERGE INTO {{t}} t USING recorded_new s ON {on} WHEN NOT MATCHED THEN INSERT *",
            "MERGE",
            {"predicate": on},
        ),
        # Parentheses as written (Spark's own record of the condition drops them).
        (
            "UPDATE {t} SET rain = 2 WHERE (temp > 20)",
            "UPDATE",
            {"predicate": "(temp > 20)", "set": "rain"},
        ),
        # No WHERE: every row.
        ("UPDATE {t} SET rain = 1", "UPDATE", {"predicate": "true", "set": "rain"}),
    ):
        pair.run(statement)
        ours, theirs = _recorded(pair.location), _recorded(pair.copy_location)
        assert ours == theirs == (operation, expected), statement


@pytest.mark.spark
def test_a_dataframe_merge_records_its_condition(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    """A MERGE without SQL text (the DataFrame's ``mergeInto``) records its condition as
    Spark writes it before analysis, without Spark's expression ids; its condition may
    qualify the target's columns with the table's name, as without the extensions."""
    from pyspark.sql import functions as F

    pair = _Pair(spark, ts, warehouse, "recorded_frame", "last")
    source = weather_rows(spark, start=60, count=4).alias("s")
    target = "recorded_frame"
    on = (F.col(f"{target}.time") == F.col("s.time")) & (F.col(f"{target}.city") == F.col("s.city"))
    on = on & (F.col(f"{target}.device") == F.col("s.device"))
    source.mergeInto(pair.table, on).whenNotMatched().insertAll().merge()
    operation, parameters = _recorded(pair.location)
    # Spark 4's Column comparisons are calls of the function ``=`` until analysis.
    eq = [f"`=`({target}.{c}, s.{c})" for c in ("time", "city", "device")]
    assert (operation, parameters) == (
        "MERGE",
        {"predicate": f"(({eq[0]} AND {eq[1]}) AND {eq[2]})"},
    )


def test_without_a_text_the_condition_given_is_recorded_in_the_parsers_form() -> None:
    """A statement whose text Spark's parser kept none of (or one the catalog's parser cannot
    read) records the condition and the columns Spark's rule handed over, in the form the
    catalog's parser writes a condition; one sqlglot cannot read, as it is."""
    given = {"operation": "UPDATE", "text": None, "condition": "(v > 1L)", "set": ["V", "w"]}
    assert history_parameters(given) == {"predicate": "(v > CAST(1 AS BIGINT))", "set": "v, w"}
    unreadable = {"operation": "DELETE", "text": "DELETE FROM", "condition": "v >>> ("}
    assert history_parameters(unreadable) == {"predicate": "v >>> ("}
    text = "UPDATE ts.db.t AS x SET x.V = 1 WHERE x.k IN ('a', 'b')"
    read = {"operation": "UPDATE", "text": text, "condition": "ignored", "set": ["ignored"]}
    assert history_parameters(read) == {"predicate": "x.k IN ('a', 'b')", "set": "v"}
