"""The catalog's own storage, tried hostilely, through both front ends (``Catalog.sql`` and
``spark.sql`` through the plugin): one unreadable registry entry, a warehouse that is a file,
an S3 warehouse whose bucket is missing or whose endpoint answers 404. Each is one clear line
naming what is wrong, never an empty answer, a blocked catalog or a Python traceback."""

from __future__ import annotations

import http.server
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tsfile_catalog import Catalog, open_table
from tsfile_catalog.errors import unwrap
from tsfile_catalog.exceptions import (
    CorruptManifestError,
    LocationError,
    SqlError,
    StorageError,
    TsFileCatalogError,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

COLUMNS = "(time BIGINT, city STRING, temp DOUBLE) USING tsfile"


@contextmanager
def plugin_over(spark: SparkSession, ts: str, warehouse: str, **options: str) -> Iterator[str]:
    """Another plugin catalog (``ts`` registered the delegate) over ``warehouse``."""
    from tsfile_catalog.spark_catalog.wiring import CATALOG_CLASS

    name = f"{ts}_{uuid.uuid4().hex[:6]}"
    settings = {"": CATALOG_CLASS, ".warehouse": warehouse}
    settings.update({f".{k}": v for k, v in options.items()})
    for key, value in settings.items():
        spark.conf.set(f"spark.sql.catalog.{name}{key}", value)
    try:
        yield name
    finally:
        for key in settings:
            spark.conf.unset(f"spark.sql.catalog.{name}{key}")


def ours(call: object, expected: type[TsFileCatalogError]) -> str:
    """The one-line message of the ``expected`` error ``call()`` raises, through Spark too."""
    with pytest.raises(Exception) as caught:  # noqa: PT011 - Spark's class, ours inside
        call()  # type: ignore[operator]
    error = unwrap(caught.value)
    assert isinstance(error, expected), caught.value
    message = str(error)
    assert "\n" not in message and "Traceback" not in message
    return message


def test_an_unreadable_entry_is_listed_blocks_nothing_and_drops_alone(
    spark: SparkSession, ts: str, warehouse: Path
) -> None:
    import pyarrow as pa

    catalog = Catalog(spark, str(warehouse), register_views=False)
    for name in ("good", "bad1", "bad2"):
        catalog.sql(f"CREATE TABLE hostile.{name} {COLUMNS} OPTIONS (tagColumns 'city')")
        rows = pa.table({"time": [1], "city": ["bj"], "temp": [1.5]})
        open_table(str(warehouse / "hostile.db" / name)).append(rows)
    entries = warehouse / "_catalog" / "tables" / "hostile"
    for name in ("bad1", "bad2"):  # cut short, as a write interrupted half-way leaves it
        data = (entries / f"{name}.json").read_bytes()
        (entries / f"{name}.json").write_bytes(data[: len(data) // 2])
    data_files = sorted((warehouse / "hostile.db").rglob("*.tsfile"))
    assert len(data_files) == 3

    shown = spark.sql(f"SHOW TABLES IN {ts}.hostile").collect()
    assert [r.tableName for r in shown] == ["bad1", "bad2", "good"]
    rows = [tuple(r) for r in catalog.sql("SHOW TABLES IN hostile").collect()]
    good = str(warehouse / "hostile.db" / "good")
    assert rows == [("hostile", "bad1", None), ("hostile", "bad2", None), ("hostile", "good", good)]
    assert catalog.tables("hostile") == ["hostile.bad1", "hostile.bad2", "hostile.good"]

    entry = str(entries / "bad1.json")
    for call in (
        lambda: spark.sql(f"SELECT * FROM {ts}.hostile.bad1").collect(),
        lambda: catalog.sql("SELECT * FROM hostile.bad1").collect(),
        lambda: catalog.sql("DESCRIBE TABLE hostile.bad1").collect(),
    ):
        message = ours(call, CorruptManifestError)
        assert message.startswith(f"catalog entry {entry} is not valid JSON")
        assert "DROP TABLE hostile.bad1 removes this entry" in message

    # The good table and new names are untouched by it, in both front ends.
    assert spark.sql(f"SELECT count(*) FROM {ts}.hostile.good").first()[0] == 1
    spark.sql(f"CREATE TABLE {ts}.hostile.new1 {COLUMNS} TBLPROPERTIES ('tagColumns'='city')")
    catalog.sql(f"CREATE TABLE hostile.new2 {COLUMNS} OPTIONS (tagColumns 'city')")

    # PURGE cannot know which files the table owned: refused, nothing deleted.
    message = ours(lambda: catalog.sql("DROP TABLE hostile.bad2 PURGE"), SqlError)
    assert "PURGE deletes nothing: drop without PURGE" in message
    # DROP removes the entry only, in both front ends; the data stays where it was.
    spark.sql(f"DROP TABLE {ts}.hostile.bad1")
    assert [tuple(r) for r in catalog.sql("DROP TABLE hostile.bad2").collect()] == [(None, False)]
    assert sorted((warehouse / "hostile.db").rglob("*.tsfile")) == data_files
    assert catalog.tables("hostile") == ["hostile.good", "hostile.new1", "hostile.new2"]
    assert [r.tableName for r in spark.sql(f"SHOW TABLES IN {ts}.hostile").collect()] == [
        "good",
        "new1",
        "new2",
    ]


def test_a_warehouse_that_is_a_file_is_one_line_in_both(
    spark: SparkSession, ts: str, tmp_path: Path
) -> None:
    file = tmp_path / "warehouse"
    file.write_text("a file, not a folder")
    expected = f"the warehouse {file} is a file, not a directory"
    assert ours(lambda: Catalog(spark, str(file)), LocationError).startswith(expected)
    catalog = Catalog(spark, str(file), register_views=False)
    for call in (
        lambda: catalog.sql("SHOW TABLES").collect(),
        lambda: catalog.sql(f"CREATE TABLE t {COLUMNS} OPTIONS (tagColumns 'city')"),
        lambda: catalog.sql("SELECT * FROM t").collect(),
    ):
        assert ours(call, LocationError).startswith(expected)
    with plugin_over(spark, ts, str(file)) as name:
        for call in (
            lambda: spark.sql(f"SHOW TABLES IN {name}.default").collect(),
            lambda: spark.sql(f"SHOW NAMESPACES IN {name}").collect(),
            lambda: spark.sql(f"SELECT * FROM {name}.default.t").collect(),
        ):
            assert ours(call, LocationError).startswith(expected)
    assert file.read_text() == "a file, not a folder"


class _NotFound(http.server.BaseHTTPRequestHandler):
    """An endpoint that answers 404 to every request (a wrong URL, a proxy's error page)."""

    def _answer(self) -> None:
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _answer

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        pass


@pytest.fixture(scope="module")
def not_found_endpoint() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.s3
@pytest.mark.parametrize("case", ["missing bucket", "404 endpoint"])
def test_an_s3_warehouse_that_is_not_there_is_an_error_not_empty(
    spark: SparkSession, ts: str, s3_endpoint: str, not_found_endpoint: str, case: str
) -> None:
    import s3fs

    bucket = f"tsfile-{uuid.uuid4().hex[:12]}"
    if case == "missing bucket":
        endpoint = s3_endpoint
    else:  # the bucket exists, but the endpoint given is not the store's
        s3fs.S3FileSystem(endpoint_url=s3_endpoint, skip_instance_cache=True).mkdir(bucket)
        endpoint = not_found_endpoint
    url = f"s3://{bucket}/wh"
    expected = f"the warehouse {url} cannot be reached: the store at {endpoint} answers"
    options = {"endpoint_url": endpoint}
    catalog = Catalog(spark, url, storage_options=options, register_views=False)
    for call in (
        catalog.tables,
        lambda: catalog.sql("SHOW TABLES").collect(),
        lambda: catalog.sql("DESCRIBE TABLE t").collect(),
        lambda: catalog.sql("DROP TABLE IF EXISTS t").collect(),
        lambda: catalog.sql(f"CREATE TABLE t {COLUMNS} OPTIONS (tagColumns 'city')"),
    ):
        message = ours(call, StorageError)
        assert message.startswith(expected) and f"bucket '{bucket}' does not exist" in message
    with plugin_over(spark, ts, url, **{"fs.endpoint_url": endpoint}) as name:
        for call in (
            lambda: spark.sql(f"SHOW TABLES IN {name}.default").collect(),
            lambda: spark.sql(f"SELECT * FROM {name}.default.t").collect(),
            lambda: spark.sql(f"DROP TABLE IF EXISTS {name}.default.t").collect(),
        ):
            assert ours(call, StorageError).startswith(expected)


@pytest.mark.s3
def test_an_empty_s3_warehouse_lists_nothing(
    spark: SparkSession, ts: str, s3_endpoint: str
) -> None:
    import s3fs

    bucket = f"tsfile-{uuid.uuid4().hex[:12]}"
    s3fs.S3FileSystem(endpoint_url=s3_endpoint, skip_instance_cache=True).mkdir(bucket)
    url = f"s3://{bucket}/wh"
    catalog = Catalog(spark, url, storage_options={"endpoint_url": s3_endpoint})
    assert catalog.tables() == [] and catalog.sql("SHOW TABLES").collect() == []
    with plugin_over(spark, ts, url, **{"fs.endpoint_url": s3_endpoint}) as name:
        assert spark.sql(f"SHOW TABLES IN {name}.default").collect() == []
