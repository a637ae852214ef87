"""Tables named by URL in ``catalog.sql``: ``tsfile('<url>', ...)`` and ``tsfile.`<url>` ``.

Parsing and analysis are tested without Spark; the queries run against real tables written by
the catalog, plain TsFiles and a table on the loopback S3 server, and must equal what Spark
computes over ``spark.read.format("tsfile").load(url)``.
"""

from __future__ import annotations

import datetime as dt
import uuid
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from tests.datasource.helpers import write_rows
from tests.factories import table_schema, weather_schema
from tsfile_catalog import Catalog
from tsfile_catalog.exceptions import (
    OptionError,
    SqlError,
    TableNotFoundError,
    VersionNotFoundError,
)
from tsfile_catalog.formats.tsfile import TSFILE
from tsfile_catalog.io import FileIO, join_url
from tsfile_catalog.metadata.schema import DataType, TableSchema
from tsfile_catalog.metadata.spark.dialect import quote_string
from tsfile_catalog.sql import parse_statement
from tsfile_catalog.sql.analysis import table_refs
from tsfile_catalog.sql.ref_rewrite import rewrite_table_refs
from tsfile_catalog.sql.statements import (
    DescribeHistory,
    DescribeTable,
    Select,
    ShowParts,
    TableName,
    TableUrl,
    TimestampAsOf,
    VersionAsOf,
)
from tsfile_catalog.table import append_parts

spark_test = pytest.mark.spark

# -- pure: the reference's syntax ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("DESCRIBE tsfile('/d/T')", DescribeTable(table=TableUrl(url="/d/T"))),
        (
            "DESCRIBE EXTENDED tsfile.`s3://B/t`",
            DescribeTable(table=TableUrl(url="s3://B/t"), extended=True),
        ),
        (
            "DESCRIBE HISTORY TSFILE('/t', VERSION => 3)",
            DescribeHistory(TableUrl(url="/t", time_travel=VersionAsOf(3))),
        ),
        (
            "SHOW PARTS tsfile('/t', timestamp => '2024-01-01 08:00:00', table => 'Weather', "
            "tableUuid => 'ABC', `fs.endpoint_url` => 'http://127.0.0.1:9000', `fs.anon` => true)",
            ShowParts(
                table=TableUrl(
                    url="/t",
                    time_travel=TimestampAsOf("2024-01-01 08:00:00"),
                    table="Weather",
                    table_uuid="ABC",
                    settings={"fs.endpoint_url": "http://127.0.0.1:9000", "fs.anon": "true"},
                )
            ),
        ),
        (
            "SHOW PARTS tsfile('/t', timestamp => 1700000000000)",
            ShowParts(table=TableUrl(url="/t", time_travel=TimestampAsOf("1700000000000"))),
        ),
        (
            "SHOW PARTS tsfile.`/t` VERSION AS OF 2",
            ShowParts(table=TableUrl(url="/t"), time_travel=VersionAsOf(2)),
        ),
        (
            "DESCRIBE tsfile('/it''s \"here\"/../x')",
            DescribeTable(table=TableUrl(url='/it\'s "here"/../x')),
        ),
        # A plain identifier after tsfile. is a table of database tsfile, as before.
        ("DESCRIBE tsfile.weather", DescribeTable(table=TableName("weather", "tsfile"))),
    ],
)
def test_url_references_parse_and_round_trip(sql: str, expected: object) -> None:
    statement = parse_statement(sql)
    assert statement == expected
    assert parse_statement(statement.to_sql()) == statement


SECRET = "S3CR3T-do-not-print"


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        (
            "tsfile('/t', version => 1, timestamp => '2024-01-01')",
            "version and timestamp are mutually exclusive",
        ),
        ("tsfile('/t', version => 1) VERSION AS OF 2", "gives time travel twice"),
        ("tsfile('/t', versionAsOf => 1)", "unknown setting 'versionAsOf'.*version, timestamp"),
        ("tsfile('/t', metadataVersion => 2)", "unknown setting 'metadataVersion'"),
        ("tsfile('/t', 1)", "settings after the URL must be named"),
        ("tsfile('/t', version = 1)", "write name => value"),
        ("tsfile('/t', version => 'one')", "version needs an integer literal"),
        ("tsfile('/t', version => -1)", "non-negative"),
        ("tsfile('/t', table => 1)", "table needs a string literal"),
        ("tsfile('/t', version => 1, VERSION => 2)", "sets 'VERSION' twice"),
        ("tsfile(concat('/', 't'))", "URL as a string literal"),
        ("tsfile()", "needs the table's URL"),
        ("tsfile('  ')", "the URL is empty"),
        (
            f"tsfile('/t', `fs.key` => 'AKIA', `fs.secret` => '{SECRET}')",
            "'fs.key' looks like a credential.*never go into SQL text.*environment",
        ),
        (f"tsfile('/t', `FS.Session_Token` => '{SECRET}')", "'fs.Session_Token' looks like"),
        (
            f"tsfile('/t', `fs.client_kwargs` => '{{\"aws_secret_access_key\": \"{SECRET}\"}}')",
            "'fs.client_kwargs' looks like a credential",
        ),
        (
            f"tsfile('/t', `fs.endpoint_url` => 'https://u:{SECRET}@minio:9000')",
            r"the URL 'https://\*\*\*@minio:9000' at line 1.*carries credentials",
        ),
    ],
)
def test_malformed_references_are_refused_by_name(sql: str, error: str) -> None:
    for statement in (f"SELECT * FROM {sql}", f"DESCRIBE {sql}", f"SHOW PARTS {sql}"):
        if "AS OF" in sql and statement.startswith("DESCRIBE"):
            continue  # DESCRIBE has no AS OF clause at all
        with pytest.raises(SqlError, match=error) as info:
            parsed = parse_statement(statement)
            if isinstance(parsed, Select):  # a query's references are read by the analysis
                table_refs(parsed.query)
        assert SECRET not in str(info.value)


@pytest.mark.parametrize(
    "sql",
    [
        "VACUUM tsfile('/t')",
        "DROP TABLE tsfile.`/t`",
        "ALTER TABLE tsfile.`s3://b/t` SET TBLPROPERTIES ('a' = 'b')",
    ],
)
def test_statements_that_change_a_table_refuse_url_references(sql: str) -> None:
    with pytest.raises(SqlError, match="needs a registered table name, not the URL reference"):
        parse_statement(sql)


def test_analysis_reads_url_references_like_names() -> None:
    query = parse_statement(
        "SELECT a.temp, w.x FROM tsfile('/Data/Mixed''Case', version => 1) AS a "
        "JOIN w ON a.city = w.city WHERE a.time > 3 AND w.x = 1"
    ).query
    url_ref, name_ref = table_refs(query)
    assert url_ref.table == TableUrl(url="/Data/Mixed'Case")
    assert url_ref.time_travel == VersionAsOf(1)
    assert (url_ref.alias, url_ref.columns, url_ref.where) == (
        "a",
        frozenset({"time", "temp", "city"}),
        "time > 3",
    )
    assert name_ref.table == TableName("w") and name_ref.where == "x = 1"
    # The dotted form keeps the path's case (identifiers are otherwise lower-cased), and the
    # rewritten query names only views: the URL's text never reaches Spark's parser.
    hostile = "s3://B/x'; DROP TABLE w; --"
    dotted = parse_statement(
        f"SELECT count(*) FROM tsfile.`{hostile}` TIMESTAMP AS OF '2024-01-01' WHERE city = 'b'"
    ).query
    (ref,) = table_refs(dotted)
    assert ref.table == TableUrl(url=hostile)
    assert ref.time_travel == TimestampAsOf("2024-01-01")
    text = rewrite_table_refs(dotted, lambda r: "view0")
    assert text == "SELECT count(*) FROM `view0` WHERE city = 'b'"
    # CTE bodies and subqueries are looked through as for names.
    nested = parse_statement(
        "WITH x AS (SELECT * FROM tsfile('/a') WHERE city = 'bj') "
        "SELECT * FROM x WHERE x.time IN (SELECT time FROM tsfile.`/b` AS b WHERE b.temp > 1)"
    ).query
    assert [(r.table, r.where) for r in table_refs(nested)] == [
        (TableUrl(url="/a"), "city = 'bj'"),
        (TableUrl(url="/b"), "temp > 1"),
    ]


# -- queries on Spark ---------------------------------------------------------------------------

# weather: version 0 = FIRST, version 1 adds SECOND
FIRST = [(1, "bj", "d1", 1.0), (2, "bj", "d1", 2.0), (3, "sh", "d2", 3.0), (4, "sh", "d2", 4.0)]
SECOND = [(10, "bj", "d1", 5.0), (11, "gz", "d3", 6.0), (12, "gz", "d3", 7.0)]
WEATHER = weather_schema(("temp", DataType.DOUBLE))
CITIES = table_schema("cities", fields=[("country", DataType.STRING)])


def _rows(df: DataFrame) -> list[tuple[Any, ...]]:
    return sorted(tuple(row) for row in df.collect())


def _dicts(schema: TableSchema, rows: list[tuple[Any, ...]]) -> list[dict[str, object]]:
    return [dict(zip(schema.names, row, strict=True)) for row in rows]


def _write_table(
    url: str,
    schema: TableSchema,
    batches: list[list[tuple[Any, ...]]],
    scratch: Path,
    storage: dict[str, Any] | None = None,
) -> None:
    """A table at ``url`` with one TsFile and one commit per batch (version i holds batches
    0..i), written by the project's TsFile writer and committer: no Spark job needed."""
    io = FileIO(url, storage)
    for index, rows in enumerate(batches):
        name = f"part-{index}.tsfile"
        local = scratch / f"{uuid.uuid4().hex}.tsfile"
        write_rows(str(local), schema, _dicts(schema, rows))
        target = join_url(io.normalize(url), name)
        io.put_file(str(local), target)
        found, part = TSFILE.read_part(io, target, path=name, size_bytes=io.size(target))
        append_parts(url, [part], found, storage_options=storage)


@pytest.fixture(scope="module")
def tables(catalog: Catalog, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """``weather`` (registered, two versions), ``cities`` (a table no name points to) and
    ``plain`` (a directory of TsFiles without a manifest, its name holding quotes)."""
    root = tmp_path_factory.mktemp("elsewhere")
    weather, cities = str(root / "weather"), str(root / "cities")
    _write_table(weather, WEATHER, [FIRST, SECOND], root)
    catalog.sql(f"CREATE TABLE weather USING tsfile LOCATION '{weather}'")
    _write_table(cities, CITIES, [[(0, "bj", "cn"), (0, "sh", "cn"), (0, "gz", "xx")]], root)
    plain = root / 'it\'s a "plain" dir'
    plain.mkdir()
    for name, rows in (("a.tsfile", FIRST), ("b.tsfile", SECOND)):
        write_rows(str(plain / name), WEATHER, _dicts(WEATHER, rows))
    return {"weather": weather, "cities": cities, "plain": str(plain)}


@spark_test
def test_a_url_reads_like_its_name_and_like_spark(
    catalog: Catalog, spark: SparkSession, tables: dict[str, str]
) -> None:
    url = tables["weather"]
    query = "SELECT time, temp FROM {} WHERE city = 'bj' AND time < 11"
    expected = _rows(
        spark.read.format("tsfile")
        .load(url)
        .where("city = 'bj' AND time < 11")
        .select("time", "temp")
    )
    assert expected == [(1, 1.0), (2, 2.0), (10, 5.0)]
    assert _rows(catalog.sql(query.format(f"tsfile('{url}')"))) == expected
    assert _rows(catalog.sql(query.format(f"tsfile.`{url}`"))) == expected
    # Pushdown: the scan prunes the first insert's parts and reads two columns.
    explained = catalog.sql(
        f"EXPLAIN PARTS SELECT temp FROM tsfile('{url}') WHERE time >= 10"
    ).collect()
    assert {r.table for r in explained} == {f"tsfile('{url}')"}
    assert {(r.status, r.version) for r in explained} == {("opened", 1), ("pruned", 1)}
    assert {(r.columns, r.pushed_where) for r in explained} == {("time,temp", "time >= 10")}
    # A count answered from the manifest equals a scan's.
    counted = catalog.sql(f"SELECT count(*) AS n FROM tsfile('{url}') WHERE city = 'gz'")
    assert counted.collect()[0].n == 2


@spark_test
def test_time_travel_settings_and_clauses(
    catalog: Catalog, spark: SparkSession, tables: dict[str, str]
) -> None:
    url = tables["weather"]
    assert _rows(catalog.sql(f"SELECT * FROM tsfile.`{url}` VERSION AS OF 0")) == sorted(FIRST)
    old = catalog.sql(
        f"SELECT n.time FROM tsfile('{url}') AS n LEFT JOIN tsfile('{url}', version => 0) AS o "
        "ON n.time = o.time WHERE o.time IS NULL"
    )
    assert _rows(old) == [(10,), (11,), (12,)]
    # A naive timestamp is a wall-clock time in the session time zone, as TIMESTAMP AS OF.
    zone_key = "spark.sql.session.timeZone"
    previous = spark.conf.get(zone_key)
    spark.conf.set(zone_key, "Asia/Shanghai")
    try:
        history = (
            catalog.sql(f"DESCRIBE HISTORY tsfile('{url}')")
            .selectExpr(
                "version", "CAST(timestamp AS STRING) AS shown", "unix_millis(timestamp) AS ms"
            )
            .collect()
        )
        assert [h.version for h in history] == [1, 0]
        first = next(h for h in history if h.version == 0)
        at_first = catalog.sql(f"SELECT * FROM tsfile('{url}', timestamp => '{first.shown}')")
        assert _rows(at_first) == sorted(FIRST)
        by_ms = catalog.sql(f"SELECT count(*) FROM tsfile('{url}', timestamp => {first.ms})")
        assert by_ms.collect()[0][0] == len(FIRST)
    finally:
        spark.conf.set(zone_key, previous)
    with pytest.raises(VersionNotFoundError, match="no version 99"):
        catalog.sql(f"SELECT * FROM tsfile('{url}', version => 99)")
    before = dt.datetime(1999, 1, 1).isoformat(sep=" ")
    with pytest.raises(VersionNotFoundError, match="at or before 1999"):
        catalog.sql(f"SELECT * FROM tsfile('{url}', timestamp => '{before}')")


@spark_test
def test_table_uuid_and_table_name_guard_the_location(
    catalog: Catalog, tables: dict[str, str]
) -> None:
    url = tables["weather"]
    table_uuid = catalog.sql(f"DESCRIBE DETAIL tsfile('{url}')").collect()[0].table_uuid
    guarded = f"tsfile('{url}', tableUuid => '{table_uuid.upper()}', table => 'WEATHER')"
    assert catalog.sql(f"SELECT count(time) FROM {guarded}").collect()[0][0] == 7
    assert len(catalog.sql(f"SHOW PARTS {guarded}").collect()) == len(
        catalog.sql("SHOW PARTS weather").collect()
    )
    other = str(uuid.uuid4())
    for sql in (
        f"SELECT * FROM tsfile('{url}', tableUuid => '{other}')",
        f"DESCRIBE tsfile('{url}', tableUuid => '{other}')",
    ):
        with pytest.raises(TableNotFoundError, match=f"is table {table_uuid}, not '{other}'"):
            catalog.sql(sql)
    with pytest.raises(TableNotFoundError, match="table 'cities' is not at"):
        catalog.sql(f"SELECT * FROM tsfile('{url}', table => 'cities')")


@spark_test
def test_a_url_joins_a_registered_table(
    catalog: Catalog, spark: SparkSession, tables: dict[str, str]
) -> None:
    got = catalog.sql(
        f"SELECT w.time, c.country FROM weather AS w JOIN tsfile('{tables['cities']}') AS c "
        "ON w.city = c.city WHERE c.country = 'cn' AND w.time > 1"
    )
    weather = spark.read.format("tsfile").load(tables["weather"]).alias("w")
    cities = spark.read.format("tsfile").load(tables["cities"]).alias("c")
    expected = weather.join(cities, "city").where("c.country = 'cn' AND w.time > 1")
    assert _rows(got) == _rows(expected.select("w.time", "c.country"))
    assert _rows(got) == [(2, "cn"), (3, "cn"), (4, "cn"), (10, "cn")]


@spark_test
def test_describe_history_and_parts_of_a_url(catalog: Catalog, tables: dict[str, str]) -> None:
    url = tables["weather"]
    assert _rows(catalog.sql(f"DESCRIBE tsfile('{url}')")) == _rows(catalog.sql("DESCRIBE weather"))
    extended = {
        r.col_name: r.data_type for r in catalog.sql(f"DESCRIBE EXTENDED tsfile.`{url}`").collect()
    }
    assert (extended["Name"], extended["Location"]) == (f"tsfile('{url}')", url)
    assert (extended["Current version"], extended["Rows"]) == ("1", "7")
    assert _rows(catalog.sql(f"DESCRIBE HISTORY tsfile('{url}', version => 0)")) == _rows(
        catalog.sql("DESCRIBE HISTORY weather").where("version = 0")
    )
    assert _rows(catalog.sql(f"SHOW PARTS tsfile('{url}')")) == _rows(
        catalog.sql("SHOW PARTS weather")
    )
    old_parts = catalog.sql(f"SHOW PARTS tsfile('{url}') VERSION AS OF 0").collect()
    assert [(p.path, p.rows) for p in old_parts] == [("part-0.tsfile", 4)]
    assert _rows(catalog.sql(f"SHOW PARTS tsfile('{url}', version => 0)")) == _rows(
        catalog.sql("SHOW PARTS weather VERSION AS OF 0")
    )
    detail = catalog.sql(f"DESCRIBE DETAIL tsfile('{url}')").collect()[0]
    assert (detail.name, detail.version, detail.num_rows) == (f"tsfile('{url}')", 1, 7)


@spark_test
def test_a_plain_directory_of_tsfiles(
    catalog: Catalog, spark: SparkSession, tables: dict[str, str]
) -> None:
    directory = tables["plain"]  # its name holds quotes: SQL text and the URL stay apart
    ref = f"tsfile({quote_string(directory)})"
    expected = spark.read.format("tsfile").load(directory).where("temp > 2.5")
    got = catalog.sql(f"SELECT * FROM {ref} WHERE temp > 2.5")
    assert _rows(got) == _rows(expected)
    assert len(_rows(got)) == 5
    assert catalog.sql(f"SELECT count(*) FROM {ref} WHERE city = 'gz'").collect()[0][0] == 2
    assert [r.col_name for r in catalog.sql(f"DESCRIBE {ref}").collect()] == [
        "time",
        "city",
        "device",
        "temp",
    ]
    parts = catalog.sql(f"SHOW PARTS {ref}").collect()
    assert sorted((p.path, p.rows, p.added_version) for p in parts) == [
        ("a.tsfile", 4, None),
        ("b.tsfile", 3, None),
    ]
    with pytest.raises(OptionError, match="time travel .* needs a table with a manifest"):
        catalog.sql(f"SELECT * FROM tsfile({quote_string(directory)}, version => 0)")
    for command in ("DESCRIBE HISTORY", "DESCRIBE DETAIL", "DESCRIBE EXTENDED"):
        with pytest.raises(TableNotFoundError, match="holds TsFiles but no table"):
            catalog.sql(f"{command} {ref}")


@spark_test
def test_hostile_urls(catalog: Catalog, tables: dict[str, str], tmp_path: Path) -> None:
    weather = tables["weather"]
    # ".." resolves as the file system resolves it, as load(path) does.
    dotted = f"{weather}/../{Path(weather).name}"
    assert catalog.sql(f"SELECT count(time) FROM tsfile('{dotted}')").collect()[0][0] == 7
    injected = f"{tmp_path}/x'; DROP TABLE weather; --"
    with pytest.raises(TableNotFoundError, match="does not exist"):
        catalog.sql(f"SELECT * FROM tsfile({quote_string(injected)})")
    with pytest.raises(TableNotFoundError, match="does not exist"):
        catalog.sql(f"DESCRIBE tsfile.`{injected}`")
    assert "weather" in catalog.tables()
    with pytest.raises(OptionError, match="no file system for its scheme 'nosuchfs'"):
        catalog.sql("SELECT * FROM tsfile('nosuchfs://bucket/t')")
    with pytest.raises(SqlError, match="mutually exclusive"):
        catalog.sql(f"SELECT * FROM tsfile('{weather}', version => 1, timestamp => '2024-01-01')")


@spark_test
@pytest.mark.s3
def test_a_table_on_s3_by_url(
    catalog: Catalog,
    spark: SparkSession,
    s3_table: tuple[str, dict[str, Any]],
    tmp_path: Path,
) -> None:
    url, storage = s3_table
    endpoint = storage["endpoint_url"]
    _write_table(url, WEATHER, [FIRST, SECOND], tmp_path, storage)
    # No key or secret in the SQL text: the environment's credentials are used.
    ref = f"tsfile('{url}', `fs.endpoint_url` => '{endpoint}')"
    expected = spark.read.format("tsfile").option("fs.endpoint_url", endpoint).load(url)
    assert _rows(catalog.sql(f"SELECT * FROM {ref} WHERE city = 'bj'")) == _rows(
        expected.where("city = 'bj'")
    )
    assert catalog.sql(
        f"SELECT count(*) FROM tsfile('{url}', version => 0, `fs.endpoint_url` => '{endpoint}')"
    ).collect()[0][0] == len(FIRST)
    assert [r.version for r in catalog.sql(f"DESCRIBE HISTORY {ref}").collect()] == [1, 0]
    with pytest.raises(SqlError, match="'fs.secret' looks like a credential"):
        catalog.sql(f"SELECT * FROM tsfile('{url}', `fs.secret` => '{SECRET}')")
