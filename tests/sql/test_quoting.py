"""``catalog.sql`` never changes what a literal or a quoted name means.

The catalog parses every statement and hands Spark a query generated from the parsed tree, so
each spelling below is compared with what ``spark.sql`` makes of the very same text: the
output column names (Spark names a column after the literal it holds) and the values.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlglot
from pyspark.sql import SparkSession
from sqlglot import exp

from tsfile_catalog import Catalog
from tsfile_catalog.metadata.expressions import Compare
from tsfile_catalog.metadata.expressions.parser import parse_predicate
from tsfile_catalog.sql import CreateTable, parse_statement
from tsfile_catalog.sql.dialect import TsFileSpark

# Spellings whose meaning differs between Spark and a naive reading, with what Spark 4 reads.
LITERALS = [
    ("'it''s'", "it's"),
    ("'a''''b'", "a''b"),
    ("''''", "'"),
    ("'a'''", "a'"),
    ("'''a'", "'a"),
    ('"a""b"', 'a"b'),
    ("\"it''s\"", "it''s"),
    ("'a\"\"b'", 'a""b'),
    ("'it\\'s'", "it's"),
    ('"a\\"b"', 'a"b'),
    ("'\\\\'''", "\\'"),
    ("'a\\\\b'", "a\\b"),
    ("'a\\nb'", "a\nb"),
    ("'a\\%b'", "a\\%b"),
    ("'a\\zb'", "azb"),
    ("'\\u0041\\U0001F600\\101'", "A\U0001f600A"),
    ("'é☃😀'", "é☃😀"),
    ("'a' 'b'", "ab"),
    ("'a' \"b\" 'c'", "abc"),
    ("'it''s' 'x''y'", "it'sx'y"),
    ("R'a\\nb'", "a\\nb"),
    ("R'a''b'", "ab"),
    ("r'a\\n' 'b'", "a\\nb"),
]


@pytest.mark.parametrize(("spelling", "value"), LITERALS)
def test_the_dialect_reads_literals_as_spark_does(spelling: str, value: str) -> None:
    tree = sqlglot.parse_one(f"SELECT {spelling}", read=TsFileSpark)
    literal = tree.expressions[0]
    assert isinstance(literal, (exp.Literal, exp.RawString))
    assert literal.this == value
    again = sqlglot.parse_one(tree.sql(dialect=TsFileSpark), read=TsFileSpark)
    assert again.expressions[0].this == value


def test_doubled_quotes_in_statement_values_and_the_where_option() -> None:
    statement = parse_statement(
        "CREATE TABLE t (time BIGINT, c STRING) USING tsfile OPTIONS (tagColumns 'c') "
        "TBLPROPERTIES ('owner' = 'o''neil', 'q' = \"say \"\"hi\"\"\")"
    )
    assert isinstance(statement, CreateTable)
    assert dict(statement.properties) == {"owner": "o'neil", "q": 'say "hi"'}
    assert parse_predicate("c = 'it''s'") == Compare("c", "=", "it's")
    assert parse_predicate("c = 'a' 'b'") == Compare("c", "=", "ab")


# -- against Spark ------------------------------------------------------------------------------

spark_test = pytest.mark.spark

TAGS = ["it's", "its", "it''s", 'a"b', "a\\b", "a\\%b", "é☃😀", "'"]


@pytest.fixture(scope="module")
def quoting_catalog(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Catalog]:
    catalog = Catalog(spark, str(tmp_path_factory.mktemp("quoting")), register_views=False)
    catalog.sql(
        "CREATE TABLE q (time BIGINT, tag STRING, v DOUBLE) USING tsfile OPTIONS (tagColumns 'tag')"
    )
    rows = spark.createDataFrame(
        [(i, tag, float(i)) for i, tag in enumerate(TAGS)], "time bigint, tag string, v double"
    )
    rows.createOrReplaceTempView("quoting_source")
    catalog.sql("INSERT INTO q SELECT * FROM quoting_source")
    location = catalog.sql("DESCRIBE DETAIL q").collect()[0].location
    # The same data as a plain load: Spark alone reads the text of every query below.
    spark.read.format("tsfile").load(location).createOrReplaceTempView("quoting_plain")
    yield catalog
    spark.catalog.dropTempView("quoting_source")
    spark.catalog.dropTempView("quoting_plain")


@spark_test
def test_select_literals_match_spark(spark: SparkSession, quoting_catalog: Catalog) -> None:
    """One query holding every spelling: Spark names an unaliased column after its literal,
    so the column names check the decoded text as well as the values do."""
    query = "SELECT " + ", ".join(
        f"{spelling}, {spelling} AS c{i}" for i, (spelling, _) in enumerate(LITERALS)
    )
    ours, theirs = quoting_catalog.sql(query), spark.sql(query)
    assert ours.columns == theirs.columns
    assert ours.collect() == theirs.collect()
    assert list(theirs.collect()[0])[1::2] == [value for _, value in LITERALS]


@spark_test
def test_pushed_tag_filters_match_spark(spark: SparkSession, quoting_catalog: Catalog) -> None:
    """The catalog pushes ``tag IN (...)`` into the scan and answers ``count(*) ... WHERE
    tag = ...`` from metadata: both must find exactly the rows Spark's own filter finds."""
    spellings = [
        r"'it''s'",
        r'"a""b"',
        r"''''",
        r"'it' '''s'",
        r"'it''''s'",
        r"'a\\b'",
        r"'a\%b'",
        r"'\u00e9☃😀'",
    ]
    rows = f"SELECT time, tag FROM {{}} WHERE tag IN ({', '.join(spellings)}) ORDER BY time"
    count = "SELECT count(*) AS n FROM {} WHERE tag = 'it''s'"
    for query in (rows, count):
        expected = spark.sql(query.format("quoting_plain")).collect()
        assert quoting_catalog.sql(query.format("q")).collect() == expected
    found = {row.tag for row in spark.sql(rows.format("quoting_plain")).collect()}
    assert found == {"it's", 'a"b', "'", "it''s", "a\\b", "a\\%b", "é☃😀"}
    assert spark.sql(count.format("quoting_plain")).collect()[0].n == 1


@spark_test
def test_backticked_names_with_quotes_match_spark(
    spark: SparkSession, quoting_catalog: Catalog
) -> None:
    spark.createDataFrame(
        [(1, 2, 3, "x")], "`it's` int, `a\"b` int, `a``b` int, tag string"
    ).createOrReplaceTempView("quoting_names")
    try:
        for query in (
            "SELECT `it's`, `a\"b`, `a``b` FROM quoting_names WHERE `it's` = 1",
            "SELECT `it's` AS `o''neil`, 'x''y' AS `x'y` FROM quoting_names",
            "SELECT n.`a``b`, q.tag FROM quoting_names n JOIN q ON q.tag <> n.tag "
            "WHERE q.tag = 'it''s'",
        ):
            ours, theirs = (
                quoting_catalog.sql(query),
                spark.sql(query.replace("JOIN q ", "JOIN quoting_plain q ")),
            )
            assert ours.columns == theirs.columns
            assert ours.collect() == theirs.collect()
            assert ours.count() == 1
    finally:
        spark.catalog.dropTempView("quoting_names")
