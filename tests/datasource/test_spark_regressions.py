"""Regression tests for Spark's shared-relation pushdown cache (4.1.1 and 4.3.0).

Spark keeps a Python reader's pushed filters and planned partitions on the relation shared by
every scan of one loaded DataFrame or temp view. With pushFilters these flows returned wrong
rows (the option is refused now); every one of them must be right, with Spark's Python filter
pushdown conf off (its default) and on.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from tests.datasource.helpers import write_rows
from tests.factories import weather_schema
from tsfile_catalog.errors import unwrap
from tsfile_catalog.metadata.schema import DataType

pytestmark = pytest.mark.spark

CONF = "spark.sql.python.filterPushdown.enabled"


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("regress")
    schema = weather_schema(("x", DataType.INT64))
    for i, city in enumerate(("bj", "sh", "gz")):
        write_rows(
            str(root / f"p{i}.tsfile"),
            schema,
            [{"time": t, "city": city, "device": "d", "x": t % 4} for t in range(20)],
        )
    return str(root)


@pytest.fixture(params=["false", "true"], ids=["pushdown-conf-off", "pushdown-conf-on"])
def conf(request: pytest.FixtureRequest, spark: SparkSession) -> Iterator[None]:
    before = spark.conf.get(CONF, "false")
    spark.conf.set(CONF, request.param)
    yield
    spark.conf.set(CONF, before)


def test_filtered_then_unfiltered_dataframe(spark: SparkSession, table: str, conf: None) -> None:
    df = spark.read.format("tsfile").load(table)
    assert df.where("x = 1").count() == 15
    assert df.where("city = 'bj' AND time < 5").count() == 5
    assert df.count() == 60
    assert len(df.collect()) == 60


def test_view_filtered_then_unfiltered(spark: SparkSession, table: str, conf: None) -> None:
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW regress USING tsfile OPTIONS (path '{table}')")
    assert spark.sql("SELECT * FROM regress WHERE city = 'sh' AND time >= 10").count() == 10
    assert spark.sql("SELECT * FROM regress").count() == 60


def test_union_of_two_filters_on_one_view(spark: SparkSession, table: str, conf: None) -> None:
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW regress USING tsfile OPTIONS (path '{table}')")
    rows = spark.sql(
        "SELECT city, x FROM regress WHERE x = 0 UNION ALL SELECT city, x FROM regress WHERE x = 3"
    ).collect()
    assert sorted(r.x for r in rows) == [0] * 15 + [3] * 15
    tags = spark.sql(
        "SELECT city FROM regress WHERE city = 'bj' UNION ALL "
        "SELECT city FROM regress WHERE city = 'gz'"
    ).collect()
    assert sorted(r.city for r in tags) == ["bj"] * 20 + ["gz"] * 20


def test_self_join_with_different_filters(spark: SparkSession, table: str, conf: None) -> None:
    df = spark.read.format("tsfile").load(table)
    left = df.where("city = 'bj'").select("time", "x")
    right = df.where("city = 'sh'").selectExpr("time", "x AS y")
    assert left.join(right, "time").count() == 20


def test_the_push_filters_option_is_refused_naming_the_where_option(
    spark: SparkSession, table: str
) -> None:
    """Spark 4.2/4.3 keep a Python reader's pushed filters on the loaded relation, and a
    later query on the same DataFrame read with the first one's filters (a filtered count,
    then the full count, gave the filtered count twice); no reader can tell, so the option
    is gone, and naming it says what to use instead."""
    spark.conf.set(CONF, "true")
    try:
        with pytest.raises(Exception, match="option 'pushFilters'.*'where'") as raised:
            df = spark.read.format("tsfile").option("pushFilters", "true").load(table)
            assert df.where("city = 'gz'").count() == 20
            assert df.count() == 60  # with the option accepted, this read 20
        assert "\n" not in str(unwrap(raised.value))
    finally:
        spark.conf.set(CONF, "false")
