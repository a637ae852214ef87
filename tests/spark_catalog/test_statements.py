"""The catalog's own statements in plain ``spark.sql``, through the session extensions'
parser: the same columns, rows and messages as through ``Catalog.sql`` on the same warehouse,
and Spark's own statements untouched."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from tsfile_catalog import Catalog, open_table
from tsfile_catalog.spark_catalog.session import CATALOG_CLASS

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def table(spark: SparkSession, ts: str) -> str:
    name = f"{ts}.db.stmts"
    spark.sql(
        f"CREATE TABLE {name} (time BIGINT, dev STRING, v DOUBLE) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'dev')"
    )
    for i in range(3):
        spark.sql(f"INSERT INTO {name} VALUES ({i}, 'a', {i}.5), ({i}, 'b', {i}.25)")
    return name


@pytest.fixture(scope="module")
def catalog(spark: SparkSession, warehouse: Path) -> Catalog:
    return Catalog(spark, str(warehouse), register_views=False)


@pytest.mark.parametrize(
    "statement",
    [
        "DESCRIBE HISTORY {}",
        "DESC HISTORY {}",
        "DESCRIBE DETAIL {}",
        "SHOW PARTS {}",
        "SHOW PARTS {} VERSION AS OF 2",
        "EXPLAIN PARTS SELECT * FROM {} WHERE dev = 'a' AND time >= 1",
        "VACUUM {} RETAIN 1000 HOURS DRY RUN",
    ],
)
def test_a_read_only_statement_answers_as_catalog_sql(
    spark: SparkSession, catalog: Catalog, table: str, ts: str, statement: str
) -> None:
    ours = spark.sql(statement.format(table))
    theirs = catalog.sql(statement.format("db.stmts"))
    assert ours.columns == theirs.columns
    assert ours.collect() == theirs.collect()


def test_maintenance_statements_run_once_when_executed(
    spark: SparkSession, catalog: Catalog, table: str, warehouse: Path
) -> None:
    location = str(warehouse / "db.db" / "stmts")
    before = open_table(location).version
    optimized = spark.sql(f"OPTIMIZE {table}")  # a command: Spark runs it here, once
    assert open_table(location).version == before + 1
    assert optimized.collect() == optimized.collect()
    assert open_table(location).version == before + 1
    assert optimized.first()["num_files_removed"] == 3
    assert len(open_table(location).parts()) == 1
    assert optimized.columns == catalog.sql("OPTIMIZE db.stmts").columns  # nothing left to do
    spark.sql(f"RESTORE TABLE {table} TO VERSION AS OF {before}")
    assert len(open_table(location).parts()) == 3
    assert spark.table(table).count() == 6
    spark.sql(f"EXPIRE SNAPSHOTS {table} RETAIN LAST 1")
    # Iceberg's rule: nothing made minutes ago is old enough to expire.
    assert open_table(location).history()[-1].version == 0


def test_external_parts_are_added_and_dropped(
    spark: SparkSession, ts: str, tmp_path: Path, warehouse: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = f"{ts}.db.stmts_ext"
    spark.sql(
        f"CREATE TABLE {name} (time BIGINT, dev STRING, v DOUBLE) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'dev')"
    )
    external = tmp_path / "ext.parquet"
    pq.write_table(pa.table({"time": [1, 2], "dev": ["x", "x"], "v": [1.0, 2.0]}), external)
    spark.sql(
        f"ALTER TABLE {name} ADD PART OPTIONS (path '{external}', format 'parquet')"
    ).collect()
    assert spark.table(name).count() == 2
    spark.sql(f"ALTER TABLE {name} DROP PART '{external}'").collect()
    assert spark.table(name).count() == 0
    assert external.exists()  # an external file is never deleted


def test_errors_are_the_catalogs_own(
    spark: SparkSession, catalog: Catalog, ts: str, table: str
) -> None:
    with pytest.raises(Exception) as ours:
        spark.sql(f"DESCRIBE HISTORY {ts}.db.nope").collect()
    with pytest.raises(Exception) as theirs:
        catalog.sql("DESCRIBE HISTORY db.nope")
    assert str(theirs.value) in str(ours.value)
    # Refused as it is parsed: still Spark's AnalysisException, its message one line (the
    # parser is a Java proxy, which wraps a checked exception it does not declare).
    with pytest.raises(AnalysisException, match=r"syntax error") as malformed:
        spark.sql(f"OPTIMIZE {table} WHERE").collect()
    with pytest.raises(
        AnalysisException, match=r"current catalog 'spark_catalog' is not a tsfile"
    ) as uncatalogued:
        spark.sql("SHOW PARTS db.stmts").collect()
    other = f"{ts}_other"  # a second catalog of the plugin, known to the parser by its conf
    spark.conf.set(f"spark.sql.catalog.{other}", CATALOG_CLASS)
    try:
        with pytest.raises(AnalysisException, match=r"names tables of several catalogs") as two:
            spark.sql(f"EXPLAIN PARTS SELECT * FROM {table} JOIN {other}.db.t USING (time)")
    finally:
        spark.conf.unset(f"spark.sql.catalog.{other}")
    for refused in (malformed, uncatalogued, two):
        assert len(str(refused.value).strip().splitlines()) == 1, refused.value


def test_sparks_own_statements_are_untouched(spark: SparkSession, ts: str, table: str) -> None:
    assert spark.sql(f"DESCRIBE TABLE {table}").columns == ["col_name", "data_type", "comment"]
    assert spark.sql(f"SELECT count(*) FROM {table} WHERE dev = 'a'").first()[0] == 3
    assert "stmts" in [r.tableName for r in spark.sql(f"SHOW TABLES IN {ts}.db").collect()]
    # A table whose name starts like a statement's word is Spark's.
    spark.sql("CREATE OR REPLACE TEMP VIEW optimize_me AS SELECT 1 AS x")
    assert spark.sql("SELECT x FROM optimize_me").first()[0] == 1


def test_describe_of_a_column_of_a_relation_named_history_or_detail_is_sparks(
    spark: SparkSession, ts: str, table: str
) -> None:
    """Spark reads ``DESCRIBE history detail`` as DESCRIBE of column ``detail`` of the table
    or view ``history``: with a relation of that name in the session the text is Spark's,
    without one it is the catalog's DESCRIBE HISTORY (of table ``detail``)."""
    session = spark.newSession()  # temporary views of its own
    for key in (f"spark.sql.catalog.{ts}", f"spark.sql.catalog.{ts}.warehouse"):
        session.conf.set(key, spark.conf.get(key))
    session.sql("CREATE TEMPORARY VIEW history AS SELECT 1 AS detail")
    session.sql("CREATE TEMPORARY VIEW detail AS SELECT 'x' AS history")
    described = [tuple(r) for r in session.sql("DESCRIBE history detail").collect()]
    assert described == [("col_name", "detail"), ("data_type", "int"), ("comment", "NULL")]
    assert tuple(session.sql("DESC DETAIL history").first()) == ("col_name", "history")
    session.sql("DROP VIEW history")
    theirs = spark.sql(f"DESCRIBE HISTORY {table}").collect()
    assert session.sql(f"DESCRIBE HISTORY {table}").collect() == theirs
