"""Aggregates Spark pushes into a catalog table's scan: answered from statistics, without a
scan job, exactly as Spark computes them over a Parquet copy."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

ANSWERED = [
    "SELECT count(*) FROM {t}",
    "SELECT count(*) FROM {t} WHERE city = 'bj'",
    "SELECT city, count(*), sum(rain), min(temp), max(temp), count(temp) FROM {t} GROUP BY city",
    "SELECT device, max(rain), min(time), max(time) FROM {t} GROUP BY device",
    "SELECT min(time), max(time), count(*) FROM {t} WHERE time >= TIMESTAMP '2024-01-01 10:30:00'",
    "SELECT count(*) FROM {t} WHERE city = 'nowhere'",
]
LEFT_TO_SPARK = [
    "SELECT rain, count(*) FROM {t} GROUP BY rain",  # a FIELD in GROUP BY
    "SELECT count(DISTINCT device) FROM {t}",
    "SELECT count(*) FROM {t} WHERE upper(city) = 'BJ'",  # a filter the scan cannot take
    "SELECT city, avg(temp) FROM {t} GROUP BY city",
]


def _plan(df: DataFrame) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


@pytest.mark.parametrize("query", ANSWERED)
def test_answered_from_statistics(spark: SparkSession, weather: str, query: str) -> None:
    from pyspark.testing import assertDataFrameEqual

    df = spark.sql(query.format(t=weather))
    assert "LocalTableScan" in _plan(df) and "BatchScan" not in _plan(df)
    assertDataFrameEqual(df, spark.sql(query.format(t="pq_weather")))


@pytest.mark.parametrize("query", LEFT_TO_SPARK)
def test_the_rest_is_aggregated_by_spark(spark: SparkSession, weather: str, query: str) -> None:
    from pyspark.testing import assertDataFrameEqual

    df = spark.sql(query.format(t=weather))
    assertDataFrameEqual(df, spark.sql(query.format(t="pq_weather")))
