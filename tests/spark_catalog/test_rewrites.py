"""``UPDATE``, ``MERGE INTO`` and ``DELETE FROM`` through plain ``spark.sql`` on catalog
tables: Spark's copy-on-write of the parts they touch, each statement one commit, each result
compared with the same statement through ``Catalog.sql`` on an identical copy of the table
(whose UPDATE/MERGE the tests of :mod:`tsfile_catalog.sql.merge` hold to a model of Delta's
semantics)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.factories import part_file, table_schema
from tests.spark_catalog.conftest import WEATHER_COLUMNS, weather_rows
from tsfile_catalog import Catalog, open_table
from tsfile_catalog.metadata.stats import DeviceStats
from tsfile_catalog.spark_catalog.rewrites import runtime_filter_columns
from tsfile_catalog.sql.write_distribution import CLUSTERED_WRITES

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

MODES = ["keep", "last"]


class _Pair:
    """A plugin table and its copy, written alike; statements run on the table through
    ``spark.sql`` and on the copy through ``Catalog.sql``'s own implementation: the copy is
    in a warehouse beside ``warehouse`` that no plugin catalog serves once it is written
    (``Catalog.sql`` hands a served table's statements to ``spark.sql``)."""

    def __init__(
        self,
        spark: SparkSession,
        ts: str,
        warehouse: Path,
        name: str,
        mode: str,
        *,
        by_device: bool = False,
    ) -> None:
        self.spark = spark
        copies = warehouse.parent / f"{warehouse.name}_copies"
        self.catalog = Catalog(spark, str(copies), register_views=False)
        self.table = f"{ts}.db.{name}"
        self.copy = f"db.{name}_copy"
        self.location = str(warehouse / "db.db" / name)
        self.copy_location = str(copies / "db.db" / f"{name}_copy")
        # The copy is written through a plugin catalog over its warehouse (the table's very
        # writes), which is gone once it is.
        writer = f"{ts}_copies"
        spark.conf.set(f"spark.sql.catalog.{writer}", spark.conf.get(f"spark.sql.catalog.{ts}"))
        spark.conf.set(f"spark.sql.catalog.{writer}.warehouse", str(copies))
        try:
            for table in (self.table, f"{writer}.{self.copy}"):
                self._write(spark, table, mode, by_device=by_device)
        finally:
            spark.conf.unset(f"spark.sql.catalog.{writer}")
            spark.conf.unset(f"spark.sql.catalog.{writer}.warehouse")
        assert self.catalog._tables.plugin() is None  # the copy's statements are Catalog.sql's

    @staticmethod
    def _write(spark: SparkSession, table: str, mode: str, *, by_device: bool) -> None:
        spark.sql(
            f"CREATE TABLE {table} ({WEATHER_COLUMNS}) USING tsfile TBLPROPERTIES "
            f"('tagColumns' = 'city,device', 'key.duplicates' = '{mode}')"
        )
        # Two commits whose rows share no key, then (a ``last`` table) rows re-sent
        # with new values: parts overlapping by key, read merged. ``by_device``: each
        # commit writes one part per device.
        batches = [weather_rows(spark, start=0, count=24), weather_rows(spark, 24, 16)]
        if mode == "last":
            batches.append(
                weather_rows(spark, start=16, count=12).selectExpr(
                    "time", "city", "device", "temp + 0.5 AS temp", "rain"
                )
            )
        for batch in batches:
            if by_device:
                # The input's own partitioning, not the write's clustering (which would
                # put the four small devices in one task).
                spark.conf.set(CLUSTERED_WRITES, "false")
                batch = batch.repartitionByRange(4, "device")
            try:
                batch.writeTo(table).append()
            finally:
                spark.conf.unset(CLUSTERED_WRITES)

    def version(self) -> int:
        return open_table(self.location).version

    def run(self, statement: str, *, commits: int = 1) -> None:
        """``statement`` (``{t}`` naming the table) on both; ``commits`` commits on the
        table."""
        before = self.version()
        self.spark.sql(statement.format(t=self.table))
        self.catalog.sql(statement.format(t=self.copy))
        assert self.version() == before + commits, statement
        self.check()

    def parts(self) -> set[str]:
        return {p.path for p in open_table(self.location).parts()}

    def parts_of(self, device: str) -> set[str]:
        """The table's parts holding ``device``; each of them holds no other."""
        parts = open_table(self.location).parts()
        held = [p for p in parts if any(d.tags[1] == device for d in p.devices or ())]
        assert held and all(len(p.devices or ()) == 1 for p in held), held
        return {p.path for p in held}

    def check(self) -> None:
        from pyspark.testing import assertDataFrameEqual

        assertDataFrameEqual(self.spark.table(self.table), self.catalog.table(self.copy))

    def history(self) -> list[str]:
        return [info.operation for info in open_table(self.location).history()]


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_update_matches_catalog_sql(
    spark: SparkSession, ts: str, warehouse: Path, mode: str
) -> None:
    pair = _Pair(spark, ts, warehouse, f"updated_{mode}", mode)
    pair.check()
    pair.run("UPDATE {t} SET temp = temp + 100 WHERE device = 'd1'")
    pair.run(
        "UPDATE {t} SET rain = 7 WHERE time >= TIMESTAMP '2024-01-01 10:00:00' "
        "AND time < TIMESTAMP '2024-01-01 20:00:00'"
    )
    # FIELDs from expressions of other columns, by a FIELD condition the scan cannot take.
    pair.run(
        "UPDATE {t} SET temp = rain * 2 + hour(time), rain = CAST(temp AS INT) WHERE temp > 20"
    )
    assert pair.history()[:3] == ["UPDATE"] * 3
    assert spark.table(pair.table).where("device = 'd1' AND rain >= 110").count() > 0


@pytest.mark.parametrize("mode", MODES)
def test_merge_matches_catalog_sql(
    spark: SparkSession, ts: str, warehouse: Path, mode: str
) -> None:
    pair = _Pair(spark, ts, warehouse, f"merged_{mode}", mode)
    # Rows 10..29 again, new values, and rows 40..45, new keys.
    source = weather_rows(spark, start=10, count=20).union(weather_rows(spark, 40, 6))
    source.selectExpr("time", "city", "device", "temp * 3 AS temp", "rain").createOrReplaceTempView(
        "merge_src"
    )
    on = "t.time = s.time AND t.city = s.city AND t.device = s.device"
    pair.run(
        f"MERGE INTO {{t}} t USING merge_src s ON {on} "
        "WHEN MATCHED AND s.rain = 0 THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET temp = s.temp, rain = s.rain + 10 "
        "WHEN NOT MATCHED THEN INSERT (time, city, device, temp, rain) "
        "VALUES (s.time, s.city, s.device, s.temp, s.rain)"
    )
    pair.run(
        "MERGE INTO {t} t USING (SELECT time, city, device, temp - 1 AS temp, rain FROM merge_src "
        f"WHERE device = 'd3') s ON {on} "
        "WHEN MATCHED AND s.temp > 30 THEN UPDATE SET temp = s.temp "
        "WHEN NOT MATCHED THEN INSERT (time, city, device, temp, rain) "
        "VALUES (s.time, s.city, s.device, s.temp, -1)"
    )
    assert pair.history()[:2] == ["MERGE", "MERGE"]
    assert spark.table(pair.table).where("rain = -1 OR rain >= 10").count() > 0


@pytest.mark.parametrize("mode", MODES)
def test_merge_with_two_source_rows_for_one_key_commits_nothing(
    spark: SparkSession, ts: str, warehouse: Path, mode: str
) -> None:
    from pyspark.testing import assertDataFrameEqual

    pair = _Pair(spark, ts, warehouse, f"twice_{mode}", mode)
    before = pair.version()
    rows = spark.table(pair.table).collect()
    twice = weather_rows(spark, start=4, count=1).union(weather_rows(spark, start=4, count=1))
    twice.createOrReplaceTempView("twice_src")
    with pytest.raises(Exception, match="MERGE_CARDINALITY_VIOLATION"):
        spark.sql(
            f"MERGE INTO {pair.table} t USING twice_src s ON t.time = s.time "
            "AND t.city = s.city AND t.device = s.device "
            "WHEN MATCHED THEN UPDATE SET temp = s.temp"
        )
    assert pair.version() == before
    assertDataFrameEqual(spark.table(pair.table), spark.createDataFrame(rows, WEATHER_COLUMNS))


@pytest.mark.parametrize("mode", MODES)
def test_delete_the_scan_cannot_take_rewrites_the_parts(
    spark: SparkSession, ts: str, warehouse: Path, mode: str
) -> None:
    """Conditions a metadata delete cannot evaluate exactly (nor ``Catalog.sql``'s DELETE):
    Spark's copy-on-write, compared with Spark keeping the rows the condition is not TRUE
    for; one the scan evaluates exactly stays the metadata delete."""
    from pyspark.testing import assertDataFrameEqual

    pair = _Pair(spark, ts, warehouse, f"deleted_{mode}", mode)
    for condition in (
        "city = 'bj' AND temp + 1 > 20",
        "rain > hour(time) % 2",
        "device = 'd4'",
    ):
        before = spark.createDataFrame(spark.table(pair.table).collect(), WEATHER_COLUMNS)
        version = pair.version()
        spark.sql(f"DELETE FROM {pair.table} WHERE {condition}")
        assert pair.version() == version + 1
        expected = before.where(f"NOT coalesce({condition}, false)")
        assert expected.count() < before.count(), condition  # (one matching none: no commit)
        assertDataFrameEqual(spark.table(pair.table), expected)
    assert pair.history()[:3] == ["DELETE"] * 3


def test_update_prunes_parts_and_keeps_the_others(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    """A ``keep`` table: only the parts the condition may match are rewritten."""
    table = f"{ts}.db.pruned"
    spark.sql(
        f"CREATE TABLE {table} ({WEATHER_COLUMNS}) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city,device', 'key.duplicates' = 'keep')"
    )
    for start in (0, 10, 20, 30):
        weather_rows(spark, start=start, count=10).coalesce(1).writeTo(table).append()
    location = str(warehouse / "db.db" / "pruned")
    before = {p.path for p in open_table(location).parts()}
    plan = spark.sql(
        f"EXPLAIN UPDATE {table} SET rain = 1 WHERE time < TIMESTAMP '2024-01-01 05:00:00'"
    ).collect()[0][0]
    assert "UPDATE: 1 of 4 parts, whole" in plan
    spark.sql(f"UPDATE {table} SET rain = 1 WHERE time < TIMESTAMP '2024-01-01 05:00:00'")
    after = {p.path for p in open_table(location).parts()}
    assert len(before - after) == 1 and len(after - before) == 1
    early = "time < TIMESTAMP '2024-01-01 05:00:00'"
    assert spark.table(table).where(f"rain = 1 AND {early}").count() == 5


def test_an_update_a_concurrent_write_of_its_rows_conflicts_with(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    """A row re-sent by a commit that lands between the version the UPDATE read and its
    commit is a change of a row the UPDATE read: the UPDATE (a ``last`` table's, an append
    of the updated rows) fails with a commit conflict naming that version (Serializable row
    changes, docs/maintenance.md "Isolation"), nothing of it is committed, and the re-sent
    row stays as written."""
    from tsfile_catalog.spark_catalog import rewrites

    table = f"{ts}.db.raced"
    spark.sql(
        f"CREATE TABLE {table} ({WEATHER_COLUMNS}) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city,device', 'key.duplicates' = 'last')"
    )
    weather_rows(spark, start=0, count=8).writeTo(table).append()
    late = weather_rows(spark, start=0, count=1).selectExpr(
        "time", "city", "device", "-5.0 AS temp", "rain"
    )
    planned = rewrites.plan_delta

    def plan_then_race(*args: object, **kwargs: object) -> dict[str, object] | None:
        plan = planned(*args, **kwargs)  # type: ignore[arg-type]
        late.writeTo(table).append()  # lands after the version the statement reads
        return plan

    monkey = pytest.MonkeyPatch()
    monkey.setattr(rewrites, "plan_delta", plan_then_race)
    try:
        with pytest.raises(
            Exception, match=r"CommitConflictError.*version 2 \(WRITE\) added rows of device"
        ):
            spark.sql(f"UPDATE {table} SET temp = 100.0")
    finally:
        monkey.undo()
    assert open_table(str(warehouse / "db.db" / "raced")).version == 2
    temps = {r.device: r.temp for r in spark.table(table).where("hour(time) = 0").collect()}
    assert temps == {"d1": -5.0}
    assert spark.table(table).where("temp = 100.0").count() == 0


def test_a_conflicting_commit_fails_the_statement_and_changes_nothing(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    from tsfile_catalog.spark_catalog import rewrites

    table = f"{ts}.db.conflicted"
    spark.sql(
        f"CREATE TABLE {table} ({WEATHER_COLUMNS}) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city,device', 'key.duplicates' = 'keep')"
    )
    weather_rows(spark, start=0, count=8).writeTo(table).append()
    location = str(warehouse / "db.db" / "conflicted")
    catalog = Catalog(spark, str(warehouse), register_views=False)
    planned = rewrites.plan_rewrite_scan

    def plan_then_delete(*args: object, **kwargs: object) -> dict[str, object]:
        plan = planned(*args, **kwargs)  # type: ignore[arg-type]
        catalog.sql("DELETE FROM db.conflicted WHERE device = 'd1'")  # rewrites every part
        return plan

    monkey = pytest.MonkeyPatch()
    monkey.setattr(rewrites, "plan_rewrite_scan", plan_then_delete)
    try:
        with pytest.raises(Exception, match="(?i)conflict"):
            spark.sql(f"UPDATE {table} SET temp = 100.0 WHERE device = 'd2'")
    finally:
        monkey.undo()
    assert open_table(location).version == 2
    assert spark.table(table).where("temp = 100.0").count() == 0
    assert spark.table(table).count() == 6


@pytest.mark.slow
def test_merge_inserting_a_held_key(spark: SparkSession, ts: str, warehouse: Path) -> None:
    """An ON stricter than the key inserts a key the table holds. An insert-only MERGE is
    Spark's append, so a ``last`` table's new row replaces the old, as through
    ``Catalog.sql``; with a WHEN MATCHED clause it is a copy-on-write, which keeps both rows
    of an append-only table (as ``Catalog.sql`` does) and refuses in a ``last`` table,
    naming the statement, with nothing committed."""
    insert = (
        "WHEN NOT MATCHED THEN INSERT (time, city, device, temp, rain) "
        "VALUES (s.time, s.city, s.device, s.temp, s.rain)"
    )
    on = (
        "MERGE INTO {t} t USING held_src s ON t.time = s.time AND t.city = s.city "
        "AND t.device = s.device AND s.temp > 1000 "
    )
    rewrite = on + "WHEN MATCHED THEN UPDATE SET rain = 5 " + insert
    weather_rows(spark, start=2, count=3).selectExpr(
        "time", "city", "device", "temp * 10 AS temp", "rain"
    ).createOrReplaceTempView("held_src")
    for mode in MODES:
        pair = _Pair(spark, ts, warehouse, f"held_{mode}", mode)
        pair.run(on + insert)
        count = spark.table(pair.table).count()
        if mode == "keep":
            pair.run(rewrite)
            assert spark.table(pair.table).count() == count + 3
            continue
        version = pair.version()
        with pytest.raises(Exception, match=r"MERGE on .*held_last.*key"):
            spark.sql(rewrite.format(t=pair.table))
        assert pair.version() == version


@pytest.mark.parametrize(
    ("assignment", "kind"),
    [("device = 'd9'", "a TAG column"), ("time = time + INTERVAL 1 HOUR", "the time column")],
)
def test_update_refuses_setting_the_key(
    spark: SparkSession, ts: str, warehouse: Path, assignment: str, kind: str
) -> None:
    """As through ``Catalog.sql``: naming the column, before anything is written."""
    table = f"{ts}.db.keyed_{kind.split()[1].lower()}"
    spark.sql(
        f"CREATE TABLE {table} ({WEATHER_COLUMNS}) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city,device')"
    )
    weather_rows(spark, start=0, count=8).writeTo(table).append()
    column = assignment.split()[0]
    with pytest.raises(Exception, match=rf"cannot set '{column}': it is {kind}"):
        spark.sql(f"UPDATE {table} SET temp = 1.0, {assignment} WHERE city = 'bj'")
    assert open_table(str(warehouse / "db.db" / table.rsplit(".", 1)[1])).version == 1
    # Setting a column to itself is no change of key.
    spark.sql(f"UPDATE {table} SET {column} = {column}, temp = 2.0 WHERE city = 'bj'")
    assert spark.table(table).where("temp = 2.0").count() == 4


def test_the_runtime_filter_column_is_the_tag_with_most_values() -> None:
    """One column (Spark hands no filter over several): the TAG column telling most parts
    apart, the later one on a tie; time when every part holds the same one device."""
    schema = table_schema("t", tags=("city", "device", "kind"))
    parts = [
        part_file(
            f"p{i}.tsfile",
            devices=[DeviceStats((city, f"d{i}", "k"), 1, 0, 0) for city in ("bj", "sh")],
        )
        for i in range(3)
    ]
    assert runtime_filter_columns(schema, parts) == ["device"]
    assert runtime_filter_columns(schema, parts[:1]) == ["city"]
    one = [part_file(f"p{i}.tsfile", devices=[DeviceStats(("bj",), 1, i, i)]) for i in range(3)]
    assert runtime_filter_columns(table_schema("t"), one) == ["time"]


def test_runtime_group_filtering_is_on_by_default(spark: SparkSession) -> None:
    """What the tests below rely on: Spark runs a row-level operation's condition first and
    filters its scan of whole parts by the rows that matched."""
    conf = "spark.sql.optimizer.runtime.rowLevelOperationGroupFilter.enabled"
    assert spark.conf.get(conf) == "true"


@pytest.mark.parametrize("mode", MODES)
def test_merge_rewrites_only_the_parts_its_source_touches(
    spark: SparkSession, ts: str, warehouse: Path, mode: str
) -> None:
    """Spark filters the scan at run time by the rows its join with the source matched: a
    source of one device's rows (updates and new keys) rewrites that device's parts alone,
    with the rows ``Catalog.sql`` gives."""
    pair = _Pair(spark, ts, warehouse, f"one_device_{mode}", mode, by_device=True)
    before = pair.parts()
    touched = pair.parts_of("d3")
    assert len(touched) < len(before)
    weather_rows(spark, start=0, count=48).where("device = 'd3'").selectExpr(
        "time", "city", "device", "temp * 3 AS temp", "rain"
    ).createOrReplaceTempView("one_device_src")
    pair.run(
        "MERGE INTO {t} t USING one_device_src s "
        "ON t.time = s.time AND t.city = s.city AND t.device = s.device "
        "WHEN MATCHED AND s.rain = 0 THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET temp = s.temp "
        "WHEN NOT MATCHED THEN INSERT (time, city, device, temp, rain) "
        "VALUES (s.time, s.city, s.device, s.temp, s.rain)"
    )
    after = pair.parts()
    assert before - after == touched
    assert pair.parts_of("d3") == after - before
    # The new keys, hours 42 and 46: inserted beside the parts left as they were.
    assert spark.table(pair.table).where("time >= TIMESTAMP '2024-01-02 16:00:00'").count() == 2


@pytest.mark.parametrize("mode", MODES)
def test_update_by_a_subquery_rewrites_only_the_parts_it_matches(
    spark: SparkSession, ts: str, warehouse: Path, mode: str
) -> None:
    """A condition only Spark evaluates (a subquery): the run-time filter still narrows the
    parts to the device whose rows matched (a ``last`` table's UPDATE rewrites none: it
    appends the updated rows)."""
    pair = _Pair(spark, ts, warehouse, f"subquery_{mode}", mode, by_device=True)
    before = pair.parts()
    touched = pair.parts_of("d2") if mode == "keep" else set()
    weather_rows(spark, start=0, count=40).where("device = 'd2' AND rain = 1").select(
        "time"
    ).createOrReplaceTempView("subquery_src")
    pair.run("UPDATE {t} SET temp = -1 WHERE time IN (SELECT time FROM subquery_src)")
    after = pair.parts()
    assert before - after == touched
    assert spark.table(pair.table).where("temp = -1").count() > 0


@pytest.mark.parametrize("mode", MODES)
def test_a_statement_matching_no_row_commits_nothing(
    spark: SparkSession, ts: str, warehouse: Path, mode: str
) -> None:
    """Conditions the scan cannot take (so it plans every part), matching no row: Spark's
    run-time filter leaves no part to read, nothing is written and nothing committed, as
    ``Catalog.sql`` commits nothing."""
    pair = _Pair(spark, ts, warehouse, f"no_op_{mode}", mode)
    weather_rows(spark, start=100, count=4).createOrReplaceTempView("no_op_src")
    for statement in (
        "UPDATE {t} SET temp = 0 WHERE temp + 1 > 1000",
        "DELETE FROM {t} WHERE rain > hour(time) + 100",
        "MERGE INTO {t} t USING no_op_src s "
        "ON t.time = s.time AND t.city = s.city AND t.device = s.device "
        "WHEN MATCHED THEN UPDATE SET temp = s.temp",
    ):
        if statement.startswith("DELETE"):
            version = pair.version()
            pair.spark.sql(statement.format(t=pair.table))
            assert pair.version() == version
            continue
        pair.run(statement, commits=0)


def test_a_table_of_one_device_is_filtered_by_time(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    """One device: the run-time filter is on time, its 1,100 matched values handed over as
    their range; the MERGE rewrites the one part holding those times."""
    table = f"{ts}.db.untagged"
    spark.sql(
        f"CREATE TABLE {table} (time TIMESTAMP, device STRING, temp DOUBLE) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'device')"
    )

    def rows(lo: int, hi: int) -> DataFrame:
        return spark.range(lo, hi, numPartitions=1).selectExpr(
            "timestamp_seconds(id) AS time", "'d1' AS device", "CAST(id AS DOUBLE) AS temp"
        )

    for lo in (0, 1100, 2200):
        rows(lo, lo + 1100).writeTo(table).append()
    location = str(warehouse / "db.db" / "untagged")
    before = {p.path: p for p in open_table(location).parts()}
    rows(2200, 3400).selectExpr("time", "device", "-temp AS temp").createOrReplaceTempView(
        "untagged_src"
    )
    spark.sql(
        f"MERGE INTO {table} t USING untagged_src s ON t.time = s.time AND t.device = s.device "
        "WHEN MATCHED THEN UPDATE SET temp = s.temp "
        "WHEN NOT MATCHED THEN INSERT (time, device, temp) VALUES (s.time, s.device, s.temp)"
    )
    removed = set(before) - {p.path for p in open_table(location).parts()}
    third = max(before.values(), key=lambda p: p.min_time or 0)
    assert removed == {third.path}
    assert spark.table(table).count() == 3400
    assert spark.table(table).where("temp < 0").count() == 1200


@pytest.mark.parametrize("statement", ["UPDATE", "MERGE"])
def test_a_key_change_the_rule_misses_is_refused_at_commit(
    spark: SparkSession, ts: str, warehouse: Path, statement: str
) -> None:
    """A key change onto a key another row holds, where the session's key check does not
    run (a MERGE's UPDATE SET): the commit refuses it, naming the statement and the key, and
    nothing is written. Before, the rewritten row kept its old part's key sequence and the
    other row hid it: a row was silently lost. The check is the commit's, so no session
    lacks it. A ``last`` table's UPDATE (an append of the updated rows) has the key check
    whatever its condition, a subquery too: refused as ``Catalog.sql`` refuses it."""
    name = f"moved_{statement.lower()}"
    table = f"{ts}.db.{name}"
    spark.sql(
        f"CREATE TABLE {table} (time BIGINT, dev STRING, v BIGINT) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'dev')"
    )
    spark.sql(f"INSERT INTO {table} VALUES (3, 'a', 1)")
    spark.sql(f"INSERT INTO {table} VALUES (3, 'b', 2)")

    def move_to(dev: str) -> str:
        if statement == "UPDATE":
            return f"UPDATE {table} SET dev = '{dev}' WHERE time IN (SELECT 3L) AND dev = 'a'"
        return (
            f"MERGE INTO {table} t USING (SELECT 3L AS time, 'a' AS dev) s "
            f"ON t.time = s.time AND t.dev = s.dev WHEN MATCHED THEN UPDATE SET dev = '{dev}'"
        )

    if statement == "UPDATE":
        for dev in ("b", "c"):
            with pytest.raises(Exception, match=r"cannot set 'dev': it is a TAG column"):
                spark.sql(move_to(dev))
        assert open_table(str(warehouse / "db.db" / name)).version == 2
        return
    with pytest.raises(Exception, match=rf"{statement} on .*writes the key \(dev='b', time=3\)"):
        spark.sql(move_to("b"))
    assert open_table(str(warehouse / "db.db" / name)).version == 2
    assert sorted(spark.table(table).collect()) == [(3, "a", 1), (3, "b", 2)]
    # A key change onto a key no row holds is the row moving, as in Spark's own result.
    spark.sql(move_to("c"))
    assert sorted(spark.table(table).collect()) == [(3, "b", 2), (3, "c", 1)]
    # Both rows in one part: the rewrite itself writes the key twice, and the refusal names
    # the statement.
    spark.sql(f"INSERT INTO {table} VALUES (3, 'a', 3), (4, 'a', 4), (4, 'b', 5)")
    twice = rf"{statement} on .*wrote a key \(TAG values, time\) twice"
    with pytest.raises(Exception, match=twice):
        spark.sql(move_to("b").replace("3L", "4L"))


def test_delete_replaces_an_external_part_and_leaves_its_file(
    spark: SparkSession, ts: str, warehouse: Path, tmp_path: Path
) -> None:
    """``DELETE FROM`` through ``spark.sql`` on a table with an external Parquet part holding
    matching rows: never refused, never modifying the file (Delta's and Iceberg's rule). The
    part's other rows go into a new part of the table's own; both Spark's paths, the
    metadata delete (a condition the scan takes) and the copy-on-write (one it cannot)."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.testing import assertDataFrameEqual

    from tests.spark_catalog.conftest import create_weather
    from tsfile_catalog.table import add_files

    table = f"{ts}.db.ext_delete"
    create_weather(spark, table)
    weather_rows(spark, 0, 8).writeTo(table).append()
    location = str(warehouse / "db.db" / "ext_delete")
    external = tmp_path / "ext.parquet"
    hour = dt.datetime(2024, 2, 1, tzinfo=dt.timezone.utc)
    pq.write_table(
        pa.table(
            {
                "time": pa.array(
                    [hour + dt.timedelta(hours=i) for i in range(3)], pa.timestamp("ms", "UTC")
                ),
                "city": ["bj", "bj", "sh"],
                "device": ["d1", "d1", "d3"],
                "temp": [150.0, 20.0, 120.0],
                "rain": pa.array([1, 2, None], pa.int32()),
            }
        ),
        external,
    )
    data = external.read_bytes()
    for condition in ("temp > 100", "temp + 1 > 130"):
        add_files(location, str(external), format="parquet")
        before = spark.createDataFrame(spark.table(table).collect(), WEATHER_COLUMNS)
        spark.sql(f"DELETE FROM {table} WHERE {condition}")
        assertDataFrameEqual(spark.table(table), before.where(f"NOT coalesce({condition}, false)"))
        parts = open_table(location).parts()
        assert all(not p.external for p in parts), condition
        assert external.read_bytes() == data
    # Catalog.sql's DELETE (Table.delete underneath) does the same.
    add_files(location, str(external), format="parquet")
    catalog = Catalog(spark, str(warehouse), register_views=False)
    deleted = catalog.sql("DELETE FROM db.ext_delete WHERE temp > 100").collect()[0]
    assert deleted.num_affected_rows == 2
    assert all(not p.external for p in open_table(location).parts())
    assert spark.table(table).where("temp > 100").count() == 0
    assert spark.table(table).where("temp = 20").count() == 1
    assert external.read_bytes() == data
