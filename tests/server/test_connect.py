"""A Spark Connect server (``SparkConnectServer``, in PySpark's jars) started with the catalog's
settings alone, and a ``SparkSession.builder.remote`` client: DDL, INSERT and ``writeTo``,
reads with pushdown and statistics answers, UPDATE, MERGE, DELETE, time travel and CALL, a
stream from one catalog table into another, against a warehouse PySpark wrote; answers
compared with PySpark's over the same warehouse and a Parquet copy. The server runs on
127.0.0.1 on a free port and is stopped by its pid."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.server.conftest import free_port, pyspark_home, rows_text, serving

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.server, pytest.mark.spark]

CONNECT_SERVER = "org.apache.spark.sql.connect.service.SparkConnectServer"


@pytest.fixture(scope="module")
def connect_url(
    pyspark_warehouse: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """``sc://127.0.0.1:<port>`` of a Connect server serving catalog ``ts`` over the
    PySpark-written warehouse (the command docs/spark-catalog.md gives, as spark-submit)."""
    from tsfile_catalog import catalog_config
    from tsfile_catalog.spark_catalog.settings import as_arguments

    port = free_port()
    settings = catalog_config(str(pyspark_warehouse["warehouse"]), name="ts")
    command = [
        str(pyspark_home() / "bin" / "spark-submit"),
        "--class",
        CONNECT_SERVER,
        "--master",
        "local[2]",
        *as_arguments(settings).split(),
        "--conf",
        "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf",
        f"spark.connect.grpc.binding.port={port}",
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        "spark.sql.session.timeZone=UTC",
    ]
    with serving(command, port, tmp_path_factory.mktemp("connect")):
        yield f"sc://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def client(connect_url: str) -> Iterator[SparkSession]:
    # Connect's own builder: this test process also holds the shared classic session, which
    # SparkSession.builder.remote() refuses to sit beside (SESSION_ALREADY_EXIST).
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    session = RemoteSparkSession.builder.remote(connect_url).getOrCreate()
    session.conf.set("spark.sql.session.timeZone", "UTC")
    yield session  # type: ignore[misc]
    session.stop()


def _rows(session: Any, query: str) -> list[str]:
    return [
        "\t".join("NULL" if v is None else str(v) for v in row)
        for row in session.sql(query).collect()
    ]


_PUSHDOWN = (
    "SELECT city, device, count(*), CAST(round(sum(temp), 3) AS STRING) FROM {t} "
    "WHERE temp > 12 AND city = 'bj' AND time >= TIMESTAMP '2024-01-01 05:00:00' "
    "GROUP BY city, device ORDER BY city, device"
)
_STATISTICS = "SELECT count(*), CAST(min(time) AS STRING), CAST(max(time) AS STRING) FROM {t}"


def test_reads_answer_as_pyspark_does(
    spark: SparkSession, client: Any, pyspark_warehouse: dict[str, Any]
) -> None:
    view = pyspark_warehouse["view"]
    assert _rows(client, _PUSHDOWN.format(t="ts.db.weather")) == rows_text(
        spark, _PUSHDOWN.format(t=view)
    )
    assert _rows(client, _STATISTICS.format(t="ts.db.weather")) == rows_text(
        spark, _STATISTICS.format(t=view)
    )
    plan = "\n".join(
        r[0] for r in client.sql("EXPLAIN SELECT * FROM ts.db.weather WHERE city = 'bj'").collect()
    )
    assert "city = 'bj'" in plan or "city" in plan and "bj" in plan


def test_writes_time_travel_and_call(
    spark: SparkSession, client: Any, pyspark_warehouse: dict[str, Any]
) -> None:
    name = pyspark_warehouse["catalog"]
    client.sql("CREATE NAMESPACE IF NOT EXISTS ts.remote")
    client.sql(
        "CREATE TABLE ts.remote.t (time TIMESTAMP, city STRING, temp DOUBLE) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city')"
    )
    client.sql(
        "INSERT INTO ts.remote.t VALUES (TIMESTAMP '2024-01-01 00:00:00', 'bj', 1.5), "
        "(TIMESTAMP '2024-01-01 01:00:00', 'sh', 2.5)"
    )
    client.sql(
        "SELECT TIMESTAMP '2024-01-01 02:00:00' AS time, 'gz' AS city, 3.5D AS temp"
    ).writeTo("ts.remote.t").append()
    client.sql("UPDATE ts.remote.t SET temp = temp + 10 WHERE city = 'bj'")
    client.sql("DELETE FROM ts.remote.t WHERE city = 'gz'")
    client.sql(
        "MERGE INTO ts.remote.t AS t USING (SELECT TIMESTAMP '2024-01-01 01:00:00' AS time, "
        "'sh' AS city, 9.0D AS temp UNION ALL SELECT TIMESTAMP '2024-01-01 05:00:00', 'wh', "
        "7.0D) AS s ON t.time = s.time AND t.city = s.city "
        "WHEN MATCHED THEN UPDATE SET temp = s.temp WHEN NOT MATCHED THEN INSERT *"
    )
    rows = "SELECT CAST(time AS STRING), city, temp FROM {t} ORDER BY time, city"
    expected = [
        "2024-01-01 00:00:00\tbj\t11.5",
        "2024-01-01 01:00:00\tsh\t9.0",
        "2024-01-01 05:00:00\twh\t7.0",
    ]
    assert _rows(client, rows.format(t="ts.remote.t")) == expected
    # PySpark reads what the Connect client wrote, version by version.
    assert rows_text(spark, rows.format(t=f"{name}.remote.t")) == expected
    for version in (1, 2):
        query = f"SELECT count(*) FROM {{t}} VERSION AS OF {version}"
        assert _rows(client, query.format(t="ts.remote.t")) == rows_text(
            spark, query.format(t=f"{name}.remote.t")
        )
    assert _rows(client, "SELECT count(*) FROM ts.remote.t VERSION AS OF 2") == ["3"]
    called = client.sql("CALL ts.system.optimize(table => 'remote.t')").collect()
    assert len(called) == 1
    assert _rows(client, rows.format(t="ts.remote.t")) == expected


def test_a_kept_dataframe_sees_the_tables_next_commit(client: Any) -> None:
    # docs/benchmarks.md advises keeping a Connect DataFrame to collect() it again (the eager
    # spark.sql's round trip is spent once): each collect() must still read the latest version.
    client.sql("CREATE NAMESPACE IF NOT EXISTS ts.kept")
    client.sql(
        "CREATE TABLE ts.kept.t (time TIMESTAMP, city STRING, temp DOUBLE) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city')"
    )
    client.sql("INSERT INTO ts.kept.t VALUES (TIMESTAMP '2024-01-01 00:00:00', 'bj', 1.5)")
    kept = client.sql("SELECT count(*), sum(temp) FROM ts.kept.t")
    assert [tuple(r) for r in kept.collect()] == [(1, 1.5)]
    client.sql("INSERT INTO ts.kept.t VALUES (TIMESTAMP '2024-01-01 01:00:00', 'sh', 2.0)")
    assert [tuple(r) for r in kept.collect()] == [(2, 3.5)]


def test_a_commit_by_another_client_shows_in_the_next_query(
    spark: SparkSession, client: Any, pyspark_warehouse: dict[str, Any]
) -> None:
    # The server's catalog process reuses what a loaded version determines (its description,
    # the version its scan calls reopen): a commit, or a drop and a new table at the same
    # location, by another client (this PySpark driver, its own catalog) must show in the
    # Connect client's very next query, through both of Connect's analyses of it.
    # A namespace of its own: other tests list ts.db's tables.
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {pyspark_warehouse['catalog']}.shared")
    mine = f"{pyspark_warehouse['catalog']}.shared.t"
    create = (
        f"CREATE TABLE {mine} (time TIMESTAMP, city STRING, temp DOUBLE) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city')"
    )
    spark.sql(create)
    spark.sql(f"INSERT INTO {mine} VALUES (TIMESTAMP '2024-01-01 00:00:00', 'bj', 1.5)")
    answered = "SELECT count(*), sum(temp) FROM ts.shared.t"  # from statistics
    scanned = "SELECT city, temp FROM ts.shared.t WHERE temp > 1 ORDER BY city"  # a scan
    assert [tuple(r) for r in client.sql(answered).collect()] == [(1, 1.5)]
    assert [tuple(r) for r in client.sql(scanned).collect()] == [("bj", 1.5)]
    spark.sql(f"INSERT INTO {mine} VALUES (TIMESTAMP '2024-01-01 01:00:00', 'sh', 2.0)")
    assert [tuple(r) for r in client.sql(answered).collect()] == [(2, 3.5)]
    assert [tuple(r) for r in client.sql(scanned).collect()] == [("bj", 1.5), ("sh", 2.0)]
    # Dropped and created anew at the same place: versions restart, the rows are others.
    spark.sql(f"DROP TABLE {mine} PURGE")
    spark.sql(create)
    spark.sql(f"INSERT INTO {mine} VALUES (TIMESTAMP '2024-01-02 00:00:00', 'gz', 7.0)")
    spark.sql(f"INSERT INTO {mine} VALUES (TIMESTAMP '2024-01-02 01:00:00', 'wh', 8.0)")
    assert [tuple(r) for r in client.sql(answered).collect()] == [(2, 15.0)]
    assert [tuple(r) for r in client.sql(scanned).collect()] == [("gz", 7.0), ("wh", 8.0)]


def _catalog_process(connect_url: str) -> int:
    """The pid of the catalog process the Connect server at ``connect_url`` started."""
    port = connect_url.rsplit(":", 1)[1]
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
            parent = (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
            server = Path(f"/proc/{parent}/cmdline").read_bytes()
        except OSError:
            continue  # a process that ended meanwhile
        if b"tsfile_catalog.spark_catalog.process" in command and (
            f"spark.connect.grpc.binding.port={port}".encode() in server
        ):
            return int(entry.name)
    raise AssertionError(f"no catalog process of the Connect server on port {port}")


def test_queries_leave_no_connection_behind_in_the_catalog_process(
    client: Any, connect_url: str
) -> None:
    # The server runs each Connect operation on a new thread, and Py4J opens a connection (a
    # socket, a thread at each end) per calling thread: each query left two in the catalog
    # process, which a long-running server would run out of files with.
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("counting a process's open files needs Linux's /proc")
    query = "SELECT count(*) FROM ts.db.weather"
    client.sql(query).collect()
    pid = _catalog_process(connect_url)
    files, threads = Path(f"/proc/{pid}/fd"), Path(f"/proc/{pid}/task")
    before = (len(list(files.iterdir())), len(list(threads.iterdir())))
    for _ in range(20):
        assert [tuple(r) for r in client.sql(query).collect()] == [(40,)]
    after = (len(list(files.iterdir())), len(list(threads.iterdir())))
    assert after[0] <= before[0] + 4, (before, after)
    assert after[1] <= before[1] + 4, (before, after)


def test_a_last_update_and_an_insert_only_merge_answer_their_counts(client: Any) -> None:
    """Through Connect as through ``spark.sql``: a ``key.duplicates = last`` table's UPDATE
    (the updated rows appended, no part rewritten) and a MERGE that only inserts (Spark's
    append) return ``Catalog.sql``'s counts, and the history records them."""
    client.sql("CREATE NAMESPACE IF NOT EXISTS ts.counted")
    client.sql(
        "CREATE TABLE ts.counted.t (time TIMESTAMP, city STRING, temp DOUBLE) USING tsfile "
        "TBLPROPERTIES ('tagColumns' = 'city', 'key.duplicates' = 'last')"
    )
    client.sql(
        "INSERT INTO ts.counted.t VALUES (TIMESTAMP '2024-01-01 00:00:00', 'bj', 1.5), "
        "(TIMESTAMP '2024-01-01 01:00:00', 'bj', 2.5), (TIMESTAMP '2024-01-01 01:00:00', 'sh', 3.5)"
    )
    updated = client.sql("UPDATE ts.counted.t SET temp = temp * 2 WHERE city = 'bj'").collect()
    assert [r.asDict() for r in updated] == [{"num_affected_rows": 2}]
    merged = client.sql(
        "MERGE INTO ts.counted.t AS t USING (SELECT TIMESTAMP '2024-01-01 01:00:00' AS time, "
        "'sh' AS city, 9.0D AS temp UNION ALL SELECT TIMESTAMP '2024-01-01 05:00:00', 'wh', "
        "7.0D) AS s ON t.time = s.time AND t.city = s.city WHEN NOT MATCHED THEN INSERT *"
    ).collect()
    assert [tuple(r) for r in merged] == [(1, 0, 0, 1)]
    history = client.sql("DESCRIBE HISTORY ts.counted.t").collect()
    assert [r.operation for r in history[:2]] == ["MERGE", "UPDATE"]
    assert history[0].operation_parameters["numInsertedRows"] == "1"
    assert history[1].operation_parameters["numUpdatedRows"] == "2"
    assert _rows(client, "SELECT city, temp FROM ts.counted.t ORDER BY time, city") == [
        "bj\t3.0",
        "bj\t5.0",
        "sh\t3.5",
        "wh\t7.0",
    ]


def test_errors_reach_the_client_in_one_line(client: Any) -> None:
    client.sql(
        "CREATE TABLE IF NOT EXISTS ts.remote.e (time TIMESTAMP, city STRING, temp DOUBLE) "
        "USING tsfile TBLPROPERTIES ('tagColumns' = 'city')"
    )
    with pytest.raises(Exception) as caught:
        client.sql("ALTER TABLE ts.remote.e RENAME COLUMN city TO town").collect()
    message = str(caught.value).strip().splitlines()[0]
    assert "cannot rename TAG column 'city'" in message
    assert "Traceback" not in str(caught.value)
    # The extensions install the key check in the client's own session too.
    with pytest.raises(Exception) as caught:
        client.sql("UPDATE ts.remote.e SET city = 'x' WHERE temp > 1").collect()
    message = str(caught.value).strip().splitlines()[0]
    assert "city" in message and "Traceback" not in str(caught.value)
    # A refused option: Spark's AnalysisException, as Spark's own refusals are, with the
    # catalog error's SQLSTATE (a JDBC/ODBC client's too).
    from pyspark.errors import AnalysisException

    with pytest.raises(AnalysisException) as refused:
        client.sql(
            "CREATE TABLE ts.remote.bad (time TIMESTAMP, city STRING) USING tsfile "
            "TBLPROPERTIES ('tagColumns' = 'nope')"
        ).collect()
    message = str(refused.value).strip().splitlines()[0]
    assert "option 'tagColumns' names 'nope'" in message
    assert refused.value.getSqlState() == "42616"


def test_register_on_a_connect_session_says_the_catalog_needs_no_call(
    client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    import tsfile_catalog

    with caplog.at_level("INFO", logger="tsfile_catalog.spark_catalog.session"):
        tsfile_catalog.register(client)
    assert "needs no register() call" in caplog.text and "nothing registered" in caplog.text
    assert [r[1] for r in client.sql("SHOW TABLES IN ts.db").collect()] == ["weather"]


def test_a_stream_from_one_catalog_table_into_another(
    spark: SparkSession, client: Any, pyspark_warehouse: dict[str, Any], tmp_path: Any
) -> None:
    import tsfile_catalog

    name, view = pyspark_warehouse["catalog"], pyspark_warehouse["view"]
    # As a PySpark habit would: a source registered from the client once replaced the
    # server's, to run with the server's default Python (here: one without this package).
    tsfile_catalog.register(client)
    client.sql("CREATE NAMESPACE IF NOT EXISTS ts.streams")
    client.sql(
        "CREATE TABLE ts.streams.bj (time TIMESTAMP, city STRING, device STRING, temp DOUBLE, "
        "rain INT) USING tsfile TBLPROPERTIES ('tagColumns' = 'city,device')"
    )
    checkpoint = str(tmp_path / "checkpoint")

    def run() -> None:
        query = (
            client.readStream.table("ts.db.weather")
            .where("city = 'bj'")
            .writeStream.option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .toTable("ts.streams.bj")
        )
        query.awaitTermination()

    rows = "SELECT CAST(time AS STRING), city, device, temp, rain FROM {t} ORDER BY time, device"
    run()
    expected = rows_text(spark, rows.format(t=f"{view} WHERE city = 'bj'"))
    assert len(expected) == 20
    assert _rows(client, rows.format(t="ts.streams.bj")) == expected
    # A restarted stream reads only the commit written since: no row twice.
    client.sql(
        "INSERT INTO ts.db.weather VALUES (TIMESTAMP '2030-01-01 00:00:00', 'bj', 'd9', 1.5, 1), "
        "(TIMESTAMP '2030-01-01 00:00:00', 'sh', 'd9', 2.5, 2)"
    )
    run()
    got = _rows(client, rows.format(t="ts.streams.bj"))
    assert got == [*expected, "2030-01-01 00:00:00\tbj\td9\t1.5\t1"]
    # PySpark reads what the Connect client's stream wrote.
    assert rows_text(spark, rows.format(t=f"{name}.streams.bj")) == got


def test_url_references_read_as_in_pyspark(
    spark: SparkSession, client: Any, pyspark_warehouse: dict[str, Any]
) -> None:
    """``tsfile('<url>', version => n)`` and ``tsfile.`<url>` `` from a Connect client (the
    server's extensions resolve them), with PySpark's rows and its one-line refusal."""
    location = str(pyspark_warehouse["warehouse"] / "db.db" / "weather")
    for query in (
        "SELECT count(*), CAST(max(time) AS STRING) FROM tsfile('{loc}', version => 1)",
        _PUSHDOWN.replace("{t}", "tsfile.`{loc}`"),
        "SELECT CAST(time AS STRING), device FROM tsfile.`{loc}` VERSION AS OF 1 "
        "ORDER BY time LIMIT 3",
    ):
        text = query.format(loc=location)
        assert _rows(client, text) == rows_text(spark, text)
    # The time type is the table's (time TIMESTAMP), as PySpark reads it.
    text = f"SELECT * FROM tsfile('{location}')"
    assert client.sql(text).schema == spark.sql(text).schema
    refused = f"SELECT * FROM tsfile('{location}', versio => 1)"
    with pytest.raises(Exception) as theirs:
        spark.sql(refused).collect()
    with pytest.raises(Exception) as ours:
        client.sql(refused).collect()
    message = str(ours.value).strip().splitlines()[0]
    assert "unknown setting 'versio'" in message
    assert str(theirs.value).strip().splitlines()[0].split("SqlError: ", 1)[-1] in message
    assert "Traceback" not in str(ours.value)


def test_describe_marks_the_tag_columns(
    spark: SparkSession, client: Any, pyspark_warehouse: dict[str, Any]
) -> None:
    name = pyspark_warehouse["catalog"]
    ours = [tuple(r) for r in client.sql("DESCRIBE ts.db.weather").collect()]
    assert ours == [tuple(r) for r in spark.sql(f"DESCRIBE {name}.db.weather").collect()]
    assert [r[2] for r in ours] == [None, "TAG", "TAG", None, None]
    assert [f.metadata for f in client.table("ts.db.weather").schema.fields] == [{}] * 5
