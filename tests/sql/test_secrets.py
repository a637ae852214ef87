"""Credentials are never stored in the catalog registry and never printed: not by DESCRIBE,
SHOW TBLPROPERTIES or SHOW CREATE TABLE (a password in a property's URL is masked), nor by
Spark's SET (the catalog's ``fs.*`` settings are redacted as Spark redacts its own).

Tables keep only non-secret storage settings (an endpoint); credentials come from the process
at run time: the environment (here the moto fixture's fake AWS credentials, handed to Spark's
workers with ``spark.executorEnv``), fsspec's config, or ``Catalog(storage_options=...)``.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tsfile_catalog import Catalog
from tsfile_catalog.exceptions import OptionError, SqlError
from tsfile_catalog.inspect import describe, describe_detail
from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema
from tsfile_catalog.sql import TableName
from tsfile_catalog.sql.parse import parse_statement
from tsfile_catalog.sql.registry import Registry, TableEntry
from tsfile_catalog.sql.statements import TableUrl
from tsfile_catalog.sql.table_options import check_table_options
from tsfile_catalog.storage_options import (
    REDACTED,
    SPARK_REDACTION_PATTERN,
    check_url,
    is_credential_option,
    spark_redaction_regex,
    url_credentials,
)
from tsfile_catalog.table import create_table, open_table

SECRET = "S3CR3T-do-not-print"


@pytest.mark.parametrize(
    ("name", "value", "credential"),
    [
        ("fs.key", "AKIA", True),
        ("fs.secret", "s", True),
        ("FS.Secret", "s", True),
        ("fs.token", "t", True),
        ("fs.session_token", "t", True),
        ("fs.password", "p", True),
        ("fs.client_secret", "s", True),
        ("fs.account_key", "k", True),
        ("fs.sas_token", "t", True),
        ("fs.connection_string", "DefaultEndpointsProtocol=https;AccountKey=k", True),
        ("fs.client_kwargs", '{"aws_secret_access_key": "s"}', True),
        ("fs.config_kwargs", '{"proxies": {"https": "x"}, "auth": ["u", "p"]}', True),
        ("fs.endpoint_url", "https://user:pass@minio:9000", True),
        ("fs.pw", "p", True),
        ("fs.sas", "sv=2024&sig=s", True),
        ("fs.sig", "s", True),
        ("fs.sasToken", "t", True),
        ("fs.endpoint_url", "https://acct.blob.core.windows.net/?sv=2024&sig=s", True),
        ("fs.endpoint_url", "https://b.s3.amazonaws.com/?X-Amz-Signature=s", True),
        ("fs.passive", "true", False),
        ("fs.default_block_size", "1048576", False),
        ("fs.requester_pays", "true", False),
        ("fs.endpoint_url", "http://127.0.0.1:9000", False),
        ("fs.anon", "true", False),
        ("fs.client_kwargs", '{"region_name": "eu-west-1"}', False),
        ("fs.config_kwargs", '{"signature_version": "s3v4"}', False),
        ("fs.use_ssl", "false", False),
        ("fs.x", "[" * 100_000, False),
    ],
)
def test_credential_like_options_are_recognised(name: str, value: str, credential: bool) -> None:
    assert is_credential_option(name, value) is credential


CREDENTIAL_URLS = [
    f"s3://user:{SECRET}@bucket/t",
    f"https://user:{SECRET}@host/t",
    f"https://acct.blob.core.windows.net/c/t?sv=2024-01-01&sig={SECRET}",
    f"https://b.s3.amazonaws.com/t?X-Amz-Algorithm=AWS4&X-Amz-Signature={SECRET}",
]


@pytest.mark.parametrize("url", CREDENTIAL_URLS)
def test_sql_refuses_urls_with_credentials_without_quoting_them(url: str) -> None:
    """Wherever a URL sits in the SQL text (a location, a URL reference, an external part),
    and even when the statement would not parse, the refusal names the URL redacted."""
    statements = [
        f"CREATE TABLE t USING tsfile LOCATION '{url}'",
        f"SELECT * FROM tsfile('{url}')",
        f"SELECT * FROM tsfile.`{url}` WHERE",
        f"ALTER TABLE t ADD PART '{url}'",
    ]
    for sql in statements:
        with pytest.raises(SqlError, match="carries credentials") as refused:
            parse_statement(sql)
        assert SECRET not in str(refused.value), sql
        assert "***" in str(refused.value)
    with pytest.raises(OptionError, match="carries credentials") as refused:
        TableUrl(url=url)
    assert SECRET not in str(refused.value)


@pytest.mark.parametrize(
    "url",
    [
        "/data/2024-0?-monkey.parquet",
        "/data/x?token=1",
        "s3://bucket/2024-0?-monkey.parquet",
        "s3://bucket/t@v1/part.tsfile",
        "https://host/t?versionId=3",
        "file:///tmp/user@host/t",
    ],
)
def test_globs_and_plain_paths_are_no_credentials(url: str) -> None:
    assert url_credentials(url) is None
    check_url(url)


def test_create_options_and_the_registry_refuse_credentials(tmp_path: Path) -> None:
    for key in ("fs.key", "fs.SECRET", "fs.session_token"):
        with pytest.raises(OptionError, match=f"table option '{key}' looks like a credential"):
            check_table_options({"tagColumns": "c", "fs.endpoint_url": "http://h", key: SECRET})
    assert check_table_options({"tagColumns": "c", "fs.endpoint_url": "http://h"}) == {
        "tagColumns": "c",
        "fs.endpoint_url": "http://h",
    }
    # The registry holds the rule itself, whatever code path tries to store an entry.
    registry = Registry(str(tmp_path))
    with pytest.raises(OptionError, match="'fs.token'"):
        registry.create(TableName("t"), str(tmp_path / "t"), {"fs.token": SECRET})
    assert registry.get(TableName("t")) is None
    assert not list(tmp_path.rglob("*.json"))


def test_describe_redacts_credentials_an_older_entry_holds(tmp_path: Path) -> None:
    location = str(tmp_path / "t")
    create_table(location, TableSchema.of("t", [Column("c", DataType.STRING, Category.TAG)]))
    table = open_table(location)
    entry = TableEntry(
        "default",
        "t",
        location,
        {
            "tagColumns": "c",
            "fs.endpoint_url": "http://h",
            "fs.key": SECRET,
            "fs.client_kwargs": json.dumps({"aws_secret_access_key": SECRET}),
        },
    )
    extended = describe(table, extended=True, name=entry.name, options=entry.options).rows
    assert SECRET not in repr(extended)
    options = {r[0]: r[1] for r in extended}["Options"]
    assert f"fs.key={REDACTED}" in options and "fs.endpoint_url=http://h" in options
    result = describe_detail(table, name=entry.name, options=entry.options)
    detail = dict(zip(result.column_names, result.rows[0], strict=True))
    assert SECRET not in repr(detail)
    assert detail["options"] == {
        "tagColumns": "c",
        "fs.endpoint_url": "http://h",
        "fs.key": REDACTED,
        "fs.client_kwargs": REDACTED,
    }


@pytest.mark.spark
@pytest.mark.s3
def test_tables_store_no_secrets_and_work_with_environment_credentials(
    spark: SparkSession, s3_endpoint: str
) -> None:
    import s3fs

    # No key or secret anywhere below: the driver and the workers find the environment's.
    fs = s3fs.S3FileSystem(endpoint_url=s3_endpoint, skip_instance_cache=True)
    bucket = f"tsfile-{uuid.uuid4().hex[:12]}"
    fs.mkdir(bucket)
    catalog = Catalog(
        spark,
        f"s3://{bucket}/wh",
        storage_options={"endpoint_url": s3_endpoint},
        register_views=False,
    )
    columns = "(time BIGINT, city STRING, temp DOUBLE) USING tsfile"
    with pytest.raises(OptionError, match="'fs.secret' looks like a credential"):
        catalog.sql(
            f"CREATE TABLE t {columns} OPTIONS (tagColumns 'city', "
            f"'fs.endpoint_url' '{s3_endpoint}', 'fs.secret' '{SECRET}')"
        )
    assert catalog.tables() == [] and not fs.exists(f"{bucket}/wh/t")

    catalog.sql(
        f"CREATE TABLE t {columns} OPTIONS (tagColumns 'city', 'fs.endpoint_url' '{s3_endpoint}')"
    )
    catalog.sql("INSERT INTO t VALUES (1, 'bj', 1.5), (2, 'sh', 2.5)")
    assert sorted(tuple(r) for r in catalog.sql("SELECT * FROM t").collect()) == [
        (1, "bj", 1.5),
        (2, "sh", 2.5),
    ]
    entry_path = f"{bucket}/wh/_catalog/tables/default/t.json"
    entry = json.loads(fs.cat_file(entry_path))
    assert entry["options"] == {"tagColumns": "city", "fs.endpoint_url": s3_endpoint}

    # An entry an older version wrote with credentials keeps working, and DESCRIBE hides them.
    entry["options"].update({"fs.key": "x", "fs.secret": SECRET})
    fs.pipe_file(entry_path, json.dumps(entry).encode())
    extended = catalog.sql("DESCRIBE EXTENDED t").collect()
    detail = catalog.sql("DESCRIBE DETAIL t").collect()[0]
    assert SECRET not in repr(extended) and SECRET not in repr(detail)
    assert detail.options["fs.secret"] == REDACTED
    assert detail.options["fs.endpoint_url"] == s3_endpoint
    catalog.sql("INSERT INTO t VALUES (3, 'bj', 3.5)")
    assert catalog.sql("SELECT count(*) FROM t WHERE city = 'bj'").collect()[0][0] == 2


@pytest.mark.spark
@pytest.mark.s3
def test_catalog_credentials_reach_a_table_with_its_own_endpoint(
    spark: SparkSession, s3_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Credentials given to the Catalog apply under a table's own (non-secret) ``fs.*``
    settings: tables can no longer carry their own, so the catalog's must reach them."""
    import s3fs

    bucket = f"tsfile-{uuid.uuid4().hex[:12]}"
    s3fs.S3FileSystem(endpoint_url=s3_endpoint, skip_instance_cache=True).mkdir(bucket)
    # The driver's environment has none now; only the Catalog's storage options do.
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    catalog = Catalog(
        spark,
        f"s3://{bucket}/wh",
        register_views=False,
        storage_options={"endpoint_url": s3_endpoint, "key": "x", "secret": "x"},
    )
    # The same server under another name, as a table on its own endpoint would be.
    own_endpoint = s3_endpoint.replace("127.0.0.1", "localhost")
    catalog.sql(
        "CREATE TABLE t (time BIGINT, city STRING, temp DOUBLE) USING tsfile "
        f"OPTIONS (tagColumns 'city', 'fs.endpoint_url' '{own_endpoint}')"
    )
    catalog.sql("INSERT INTO t VALUES (1, 'bj', 1.5)")
    assert [tuple(r) for r in catalog.sql("SELECT * FROM t").collect()] == [(1, "bj", 1.5)]
    detail = catalog.sql("DESCRIBE DETAIL t").collect()[0]
    assert detail.options == {"tagColumns": "city", "fs.endpoint_url": own_endpoint}


@pytest.mark.spark
def test_spark_entry_points_refuse_urls_with_credentials(spark: SparkSession) -> None:
    """The DataFrame reader and writer and the catalog refuse such a URL before connecting,
    and Spark's wrapped error does not quote it either."""
    url = CREDENTIAL_URLS[0]
    with pytest.raises(Exception, match="carries credentials") as refused:
        spark.read.format("tsfile").load(url).collect()
    assert SECRET not in str(refused.value)
    frame = spark.createDataFrame([(1, "bj", 1.5)], "time bigint, city string, temp double")
    with pytest.raises(Exception, match="carries credentials") as refused:
        frame.write.format("tsfile").option("tagColumns", "city").mode("append").save(url)
    assert SECRET not in str(refused.value)
    with pytest.raises(OptionError, match="carries credentials") as refused:
        Catalog(spark, url, register_views=False)
    assert SECRET not in str(refused.value)


@pytest.mark.spark
def test_set_hides_a_catalogs_fs_credentials(spark: SparkSession, plugin: str) -> None:
    """Spark's own redaction hides ``fs.secret`` but showed ``fs.key`` (an access key id) and
    an ``aws_access_key_id`` in JSON; once the catalog is registered, SET hides them too."""
    prefix = f"spark.sql.catalog.{plugin}_keys"  # settings only: no catalog reads them
    shown = {
        f"{prefix}.fs.key": "AKIA-KEY-ID",
        f"{prefix}.fs.client_kwargs": '{"aws_access_key_id": "AKIA-IN-JSON"}',
        f"{prefix}.fs.endpoint_url": "http://127.0.0.1:9000",
        f"{prefix}.fs.anon": "false",
    }
    for key, value in shown.items():
        spark.conf.set(key, value)
    try:
        listed = {r.key: r.value for r in spark.sql("SET").collect() if r.key.startswith(prefix)}
        one = spark.sql(f"SET {prefix}.fs.key").first()
    finally:
        for key in shown:
            spark.conf.unset(key)
    assert "AKIA" not in repr(listed) and "AKIA" not in repr(one)
    assert listed[f"{prefix}.fs.key"] == listed[f"{prefix}.fs.client_kwargs"] == one.value
    assert one.value.endswith("(redacted)")
    # Spark's default keeps hiding what it hid (a "url" name); settings that hold no
    # credential stay readable.
    assert listed[f"{prefix}.fs.anon"] == "false"


@pytest.mark.parametrize(
    ("text", "hidden"),
    [
        ("spark.sql.catalog.ts.fs.key", True),
        ("spark.hadoop.fs.s3a.access.key", True),
        ('{"aws_access_key_id": "AKIA"}', True),
        ("https://bob:hunter2@example.com/x", True),
        ("spark.sql.catalog.ts.fs.endpoint_url", False),
        ('{"region_name": "eu-west-1"}', False),
        ("https://***@example.com/x", False),
        ("key.duplicates", False),
        ("spark.sql.catalog.ts.warehouse", False),
    ],
)
def test_the_redaction_spark_is_given(text: str, hidden: bool) -> None:
    # Spark matches the pattern with Java's find(); Python's search() reads it the same way.
    assert bool(re.search(SPARK_REDACTION_PATTERN, text)) is hidden
    extended = spark_redaction_regex("(?i)url")
    assert extended.startswith("(?i)url|") and spark_redaction_regex(extended) == extended


PASSWORD_URL = "https://bob:hunter2@example.com/feed"


@pytest.mark.spark
def test_a_password_in_a_property_is_masked_wherever_it_is_shown(
    spark: SparkSession, catalog: Catalog, plugin: str, warehouse: Path
) -> None:
    catalog.sql(
        "CREATE TABLE props (time BIGINT, city STRING, temp DOUBLE) USING tsfile "
        "OPTIONS (tagColumns 'city')"
    )
    # SQL text with a password is refused by Catalog.sql; through Spark it arrives.
    spark.sql(
        f"ALTER TABLE {plugin}.default.props SET TBLPROPERTIES "
        f"('source' = '{PASSWORD_URL}', 'api.password' = 'hunter2')"
    )
    masked = "https://***@example.com/feed"
    through_spark = {
        "SHOW TBLPROPERTIES": spark.sql(f"SHOW TBLPROPERTIES {plugin}.default.props").collect(),
        "DESCRIBE EXTENDED": spark.sql(f"DESCRIBE EXTENDED {plugin}.default.props").collect(),
        "SHOW CREATE TABLE": spark.sql(f"SHOW CREATE TABLE {plugin}.default.props").collect(),
    }
    through_catalog = {
        "DESCRIBE EXTENDED": catalog.sql("DESCRIBE EXTENDED props").collect(),
        "DESCRIBE DETAIL": catalog.sql("DESCRIBE DETAIL props").collect(),
        "DESCRIBE HISTORY": catalog.sql("DESCRIBE HISTORY props").collect(),
        "SHOW CREATE TABLE": catalog.sql("SHOW CREATE TABLE props").collect(),
    }
    for shown in (through_spark, through_catalog):
        for statement, rows in shown.items():
            assert "hunter2" not in repr(rows), statement
            assert masked in repr(rows), statement
    properties = {r.key: r.value for r in through_spark["SHOW TBLPROPERTIES"]}
    # Spark hides a property named like a password itself (its redaction's own mark).
    assert properties["source"] == masked and properties["api.password"].endswith("(redacted)")
    detail = through_catalog["DESCRIBE DETAIL"][0].properties
    assert detail["source"] == masked and detail["api.password"] == REDACTED
    # What is stored is unchanged.
    stored = open_table(str(warehouse / "props")).properties
    assert stored["source"] == PASSWORD_URL and stored["api.password"] == "hunter2"
