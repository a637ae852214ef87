"""One ``TableCatalog.alterTable`` call is one commit, or none: Spark hands the catalog
plugin several changes at once (``ALTER TABLE … REPLACE COLUMNS``, ``ADD COLUMNS (a, b)``,
its own schema evolution when the session extensions are not configured, a JVM or Connect
user's call), and a change refused anywhere in the call commits none of them. Each refusal is
one line naming the column; the table's version, history and schema stay as they were.

The calls Spark's schema evolution makes without the extensions (``ResolveSchemaEvolution``
altering the target before it writes) are made here as Spark makes them, through the
catalog's ``alterTable`` with Spark's own ``TableChange`` objects: the shared session has the
extensions, which make such writes one commit without calling ``alterTable`` at all; and, once,
as the statements themselves in a process of their own without the extensions
(no_extensions_child.py).

``REPLACE TABLE … AS SELECT`` commits its rows and its properties together: a property
refused is refused before the rows are written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.spark_catalog.conftest import create_weather, weather_rows
from tsfile_catalog import open_table

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]


def _table(spark: SparkSession, ts: str, warehouse: Path, name: str) -> tuple[str, str]:
    table = f"{ts}.db.{name}"
    create_weather(spark, table)
    weather_rows(spark, count=8).writeTo(table).append()
    return table, str(warehouse / "db.db" / name)


def _state(spark: SparkSession, table: str, location: str) -> tuple[Any, ...]:
    """What a refused ALTER must leave as it was: the version, the history, the schema."""
    opened = open_table(location)
    history = [(h.version, h.operation) for h in opened.history()]
    return opened.version, history, spark.table(table).schema.json()


def _refused(call: Any, pattern: str) -> str:
    """The one-line message of the error ``call`` raises, which must match ``pattern``."""
    with pytest.raises(Exception) as raised:
        call()
    error = raised.value
    java = getattr(error, "java_exception", None)
    if java is not None:  # the catalog's own exception, as a JVM caller gets it
        message = str(java.getMessage()).strip()
        assert "\n" not in message, message
    else:  # Spark's AnalysisException of the statement (a plan may follow the first line)
        message = str(error).strip().splitlines()[0]
    assert re.search(pattern, message), message
    return message


def _alter(spark: SparkSession, catalog: str, table: str, *changes: Any) -> None:
    """``alterTable`` of the plugin catalog with Spark's ``TableChange`` objects, in one call."""
    jvm = spark.sparkContext._jvm
    gateway = spark.sparkContext._gateway
    assert jvm is not None and gateway is not None
    plugin = spark._jsparkSession.sessionState().catalogManager().catalog(catalog)
    namespace = gateway.new_array(jvm.java.lang.String, 1)
    namespace[0] = "db"
    ident = jvm.org.apache.spark.sql.connector.catalog.Identifier.of(namespace, table)
    array = gateway.new_array(jvm.org.apache.spark.sql.connector.catalog.TableChange, len(changes))
    for i, change in enumerate(changes):
        array[i] = change
    plugin.alterTable(ident, array)


class _Changes:
    """Spark's ``TableChange`` factories, as Spark's own rules call them."""

    def __init__(self, spark: SparkSession) -> None:
        jvm = spark.sparkContext._jvm
        gateway = spark.sparkContext._gateway
        assert jvm is not None and gateway is not None
        self._jvm = jvm
        self._gateway = gateway
        self._change = jvm.org.apache.spark.sql.connector.catalog.TableChange

    def _names(self, name: str) -> Any:
        out = self._gateway.new_array(self._jvm.java.lang.String, 1)
        out[0] = name
        return out

    def _type(self, name: str) -> Any:
        return self._jvm.org.apache.spark.sql.types.DataType.fromDDL(name)

    def add(self, name: str, type_name: str, *, after: str | None = None) -> Any:
        names = self._names(name)
        if after is None:
            return self._change.addColumn(names, self._type(type_name))
        position = self._change.ColumnPosition.after(after)
        return self._change.addColumn(names, self._type(type_name), True, None, position)

    def retype(self, name: str, type_name: str) -> Any:
        return self._change.updateColumnType(self._names(name), self._type(type_name))

    def rename(self, name: str, new_name: str) -> Any:
        return self._change.renameColumn(self._names(name), new_name)

    def drop(self, name: str) -> Any:
        return self._change.deleteColumn(self._names(name), False)

    def move(self, name: str, after: str) -> Any:
        position = self._change.ColumnPosition.after(after)
        return self._change.updateColumnPosition(self._names(name), position)

    def set(self, key: str, value: str) -> Any:
        return self._change.setProperty(key, value)


def test_replace_columns_that_would_drop_a_tag_or_time_commits_nothing(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    table, location = _table(spark, ts, warehouse, "replace_refused")
    before = _state(spark, table, location)
    # Spark hands REPLACE COLUMNS over as a drop of every column, then an add of each listed.
    _refused(
        lambda: spark.sql(
            f"ALTER TABLE {table} REPLACE COLUMNS (time TIMESTAMP, city STRING, temp DOUBLE, "
            "rain INT, wind DOUBLE)"
        ),
        r"TAG column 'device'",
    )
    assert _state(spark, table, location) == before
    _refused(
        lambda: spark.sql(f"ALTER TABLE {table} REPLACE COLUMNS (wind DOUBLE)"),
        r"column 'time'",
    )
    assert _state(spark, table, location) == before
    _refused(
        lambda: spark.sql(
            f"ALTER TABLE {table} REPLACE COLUMNS (time TIMESTAMP, city STRING, device STRING, "
            "temp FLOAT, rain INT)"
        ),
        r"column 'temp' .*from DOUBLE to FLOAT",
    )
    assert _state(spark, table, location) == before


def test_replace_columns_keeping_time_and_the_tags_is_one_commit(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    from pyspark.sql import functions as F
    from pyspark.testing import assertDataFrameEqual

    table, location = _table(spark, ts, warehouse, "replace_kept")
    rows = spark.table(table).collect()
    version = open_table(location).version
    # temp dropped, rain widened (its values kept, as a same-named column is on Parquet or
    # Delta), wind new, in the listed order.
    spark.sql(
        f"ALTER TABLE {table} REPLACE COLUMNS (time TIMESTAMP, wind DOUBLE, city STRING, "
        "device STRING, rain BIGINT)"
    )
    opened = open_table(location)
    assert opened.version == version + 1
    entry = opened.history(limit=1)[0]
    assert entry.operation == "REPLACE COLUMNS"
    assert json.loads(entry.operation_parameters["columns"]) == [
        ["time", "TIMESTAMP"],
        ["wind", "DOUBLE"],
        ["city", "STRING"],
        ["device", "STRING"],
        ["rain", "INT64"],
    ]
    assert spark.table(table).columns == ["time", "wind", "city", "device", "rain"]
    assert spark.table(table).schema["rain"].dataType.simpleString() == "bigint"
    expected = spark.createDataFrame(rows).select(
        "time",
        F.lit(None).cast("double").alias("wind"),
        "city",
        "device",
        F.col("rain").cast("bigint").alias("rain"),
    )
    assertDataFrameEqual(spark.table(table), expected)


def test_add_columns_then_a_refused_change_in_one_call_commits_nothing(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    table, location = _table(spark, ts, warehouse, "mixed_refused")
    before = _state(spark, table, location)
    change = _Changes(spark)
    # A rename of a TAG column after an added one.
    _refused(
        lambda: _alter(
            spark, ts, "mixed_refused", change.add("wind", "double"), change.rename("city", "town")
        ),
        r"TAG column 'city'",
    )
    assert _state(spark, table, location) == before
    # Adds, then a rename onto a name the first add took.
    _refused(
        lambda: _alter(
            spark,
            ts,
            "mixed_refused",
            change.add("wind", "double"),
            change.add("gust", "int"),
            change.rename("temp", "wind"),
        ),
        r"column 'temp' .* to 'wind'",
    )
    assert _state(spark, table, location) == before
    # A drop, then a move after the column the drop took away.
    _refused(
        lambda: _alter(
            spark,
            ts,
            "mixed_refused",
            change.drop("rain"),
            change.move("temp", "rain"),
        ),
        r"'rain'",
    )
    assert _state(spark, table, location) == before
    # Properties with a narrowing: neither is committed.
    _refused(
        lambda: _alter(
            spark,
            ts,
            "mixed_refused",
            change.set("owner.team", "ops"),
            change.retype("temp", "float"),
        ),
        r"column 'temp' .*from DOUBLE to FLOAT",
    )
    assert _state(spark, table, location) == before
    assert "owner.team" not in open_table(location).properties


def test_sparks_schema_evolution_with_a_refused_change_commits_nothing(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    table, location = _table(spark, ts, warehouse, "evolution_refused")
    before = _state(spark, table, location)
    change = _Changes(spark)
    # What ResolveSchemaEvolution hands over for a source with rain as BIGINT (a widening),
    # a new wind, and device as BIGINT (a TAG: refused), in one call.
    _refused(
        lambda: _alter(
            spark,
            ts,
            "evolution_refused",
            change.retype("rain", "bigint"),
            change.add("wind", "double"),
            change.retype("device", "bigint"),
        ),
        r"TAG column 'device'",
    )
    assert _state(spark, table, location) == before


def test_a_call_of_several_changes_is_one_commit_listing_each_in_order(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    table, location = _table(spark, ts, warehouse, "mixed_applied")
    version = open_table(location).version
    change = _Changes(spark)
    # Each change sees the schema the ones before it left: rain moves after the added wind.
    _alter(
        spark,
        ts,
        "mixed_applied",
        change.retype("rain", "bigint"),
        change.add("wind", "double"),
        change.move("rain", "wind"),
        change.rename("temp", "temperature"),
        change.set("owner.team", "ops"),
    )
    opened = open_table(location)
    assert opened.version == version + 1
    assert opened.properties["owner.team"] == "ops"
    assert spark.table(table).columns == ["time", "city", "device", "temperature", "wind", "rain"]
    assert spark.table(table).schema["rain"].dataType.simpleString() == "bigint"
    assert spark.table(table).where("temperature IS NOT NULL").count() > 0, "values kept"
    entry = opened.history(limit=1)[0]
    assert entry.operation == "ALTER TABLE"
    assert json.loads(entry.operation_parameters["changes"]) == [
        "ALTER COLUMN `rain` TYPE INT64",
        "ADD COLUMNS (`wind` DOUBLE)",
        "ALTER COLUMN `rain` AFTER `wind`",
        "RENAME COLUMN `temp` TO `temperature`",
        "SET TBLPROPERTIES ('owner.team' = 'ops')",
    ]
    history = spark.sql(f"DESCRIBE HISTORY {table}").orderBy("version").collect()
    assert [r.operation for r in history] == ["CREATE", "WRITE", "ALTER TABLE"]


def test_add_columns_of_several_is_one_add_columns_commit(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    table, location = _table(spark, ts, warehouse, "added_two")
    version = open_table(location).version
    spark.sql(f"ALTER TABLE {table} ADD COLUMNS (wind DOUBLE, gust INT AFTER city)")
    opened = open_table(location)
    assert opened.version == version + 1
    entry = opened.history(limit=1)[0]
    assert entry.operation == "ADD COLUMNS"
    assert json.loads(entry.operation_parameters["columns"]) == [
        ["wind", "DOUBLE"],
        ["gust", "INT32"],
    ]
    assert json.loads(entry.operation_parameters["positions"]) == {"gust": "AFTER city"}
    # A repeated name in the same call: refused by name, nothing committed.
    before = _state(spark, table, location)
    _refused(
        lambda: spark.sql(f"ALTER TABLE {table} ADD COLUMNS (snow INT, rain DOUBLE)"),
        r"\brain\b",
    )
    assert _state(spark, table, location) == before


def test_replace_table_as_select_with_a_refused_property_commits_nothing(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    # REPLACE TABLE … AS SELECT: its properties commit with its rows; a property the table
    # refuses is refused before the rows are written, not after they replaced the table's.
    table, location = _table(spark, ts, warehouse, "replaced_refused")
    weather_rows(spark, start=20, count=4).createOrReplaceTempView("replacing_rows")
    before = _state(spark, table, location)
    rows = sorted(spark.table(table).collect())
    _refused(
        lambda: spark.sql(
            f"CREATE OR REPLACE TABLE {table} USING tsfile "
            "TBLPROPERTIES ('watermark.interval' = '-1 hour') AS SELECT * FROM replacing_rows"
        ),
        r"'watermark.interval' = '-1 hour'",
    )
    assert _state(spark, table, location) == before
    assert sorted(spark.table(table).collect()) == rows
    # Accepted, the rows and the properties are one commit (docs/spark-catalog.md).
    spark.sql(
        f"CREATE OR REPLACE TABLE {table} USING tsfile TBLPROPERTIES ('team' = 'ops') "
        "AS SELECT * FROM replacing_rows"
    )
    opened = open_table(location)
    assert [h.operation for h in opened.history(limit=2)][0] == "OVERWRITE"
    assert opened.version == before[0] + 1
    assert opened.properties["team"] == "ops"
    assert spark.table(table).count() == 4


@pytest.mark.slow
def test_sparks_own_schema_evolution_without_the_extensions_commits_a_refused_call_nowhere(
    spark: SparkSession, tmp_path: Path
) -> None:
    # The shared session (the jar built) is the fixture's only use: the child has its own JVM.
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable}
    child = subprocess.run(
        [sys.executable, str(REPO / "tests/spark_catalog/no_extensions_child.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert child.returncode == 0, child.stderr[-3000:]
    widened, tag, accepted = json.loads(child.stdout.strip().splitlines()[-1])
    assert widened["extensions"] is None
    initial = [[1, "WRITE"], [0, "CREATE"]]
    # Refused in one line naming the column; rain's widening, asked in the same call, is not
    # committed either.
    assert re.search(r"column 'gust' .*from INT32 to DOUBLE", widened["error"])
    assert (widened["version"], widened["history"]) == (1, initial)
    assert re.search(r"TAG column 'city'", tag["error"])
    assert (tag["version"], tag["history"]) == (1, initial)
    assert tag["columns"] == ["time", "city", "temp", "rain", "gust"]
    # Accepted: Spark's one alterTable call is one commit, then the append its own.
    assert accepted["error"] is None
    assert accepted["history"][:2] == [[3, "WRITE"], [2, "ALTER TABLE"]]
    assert accepted["columns"] == ["time", "city", "temp", "rain", "gust", "wind"]
