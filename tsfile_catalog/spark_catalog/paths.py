"""Path reads with the plugin's scan: ``spark.read.format("tsfile").load(path)`` described as
the plugin's table over the path, for the session extensions' analysis rules (``PathReads``),
which ask before Spark resolves the read: the table's schema is the source's ``schema()``,
so Spark needs no Python worker to ask the source for it.

The read's options are resolved by the ``tsfile`` source itself
(:meth:`~tsfile_catalog.datasource.source.TsFileDataSource.resolved_read`), so a path read
keeps every option's meaning: the version it pins (``versionAsOf``, ``timestampAsOf``), the
time unit and type (``timestampAs`` wins over the table's own), ``columns``, ``table``,
``tableUuid`` and storage settings. The description has the shape of a catalog table's
(:func:`~tsfile_catalog.spark_catalog.tables.describe_table`), so Spark's scan of it is the
catalog table's: pruned columns, pushed filters, statistics answers, limit and top-N.

A read keeps the source's own scan (the answer is None) when the plugin's scan could not mean
the same: plain files (no manifest, no version to pin), a schema the user gave, streaming
options, the options that are themselves a scan's plan (``where``, ``limit``, ``latest``,
``earliest``, ``pushdown``, and the internal ``partialAggregate``, ``onlyParts``,
``writeOptions``), and options the source refuses (its own error reaches the user, one line,
as it did at ``load()``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pyspark.sql.datasource import CaseInsensitiveDict
from pyspark.sql.types import StructType

from tsfile_catalog.datasource.source import TsFileDataSource
from tsfile_catalog.exceptions import TsFileCatalogError
from tsfile_catalog.options import relation_write_options, split_stream_options
from tsfile_catalog.spark_catalog.tables import PROVIDER, PROVIDER_PROPERTY, VERSION_PROPERTY

__all__ = ["KEEPS_SOURCE_SCAN", "describe_path"]

# Options whose read only the source's own scan plans exactly as documented.
KEEPS_SOURCE_SCAN = frozenset(
    key.lower()
    for key in (
        "where",
        "limit",
        "latest",
        "earliest",
        "pushdown",
        "partialAggregate",
        "onlyParts",
        "writeOptions",
    )
)
# Options the description sets from the resolved read (the source's own spelling).
_RESOLVED = frozenset(
    key.lower()
    for key in (
        "path",
        "columns",
        "timestampAs",
        "timestampPrecision",
        "versionAsOf",
        "timestampAsOf",
        "timeZone",
    )
)


def describe_path(
    options: Mapping[str, str], schema_json: str | None = None
) -> dict[str, Any] | None:
    """The plugin's table for a batch read of the ``tsfile`` source with ``options``; None when
    the read keeps the source's scan.

    ``schema_json`` is the schema of the source's relation when Spark resolved the read first
    (the table must have it); None before Spark asked the source, when the table's schema, the
    source's own :meth:`~TsFileDataSource.schema`, is the relation's."""
    if any(key.lower() in KEEPS_SOURCE_SCAN for key in options):
        return None
    source = TsFileDataSource(CaseInsensitiveDict(options))
    try:
        if split_stream_options(options)[1]:
            return None  # a batch read refuses them itself, naming the option
        scan, read = source.resolved_read()
        schema = source.schema()
    except TsFileCatalogError:
        return None  # the source fails the read itself, with its own one-line error
    if scan.version is None:
        return None
    if schema_json is not None and schema != StructType.fromJson(json.loads(schema_json)):
        return None
    given = {k: v for k, v in options.items() if k.lower() not in _RESOLVED}
    scan_options = {
        **given,
        "path": read.path,
        "timestampPrecision": scan.unit,
        "timestampAs": scan.timestamp_as,
        "versionAsOf": str(scan.version),
    }
    name = read.path
    return {
        "name": name,
        # What the adapter's table object holds for a catalog's: no catalog, no warehouse.
        "catalog": {"name": PROVIDER, "options": {}},
        "schema": schema.json(),
        "properties": {
            PROVIDER_PROPERTY: PROVIDER,
            "location": read.path,
            VERSION_PROPERTY: str(scan.version),
        },
        "scan": {
            "table": name,
            "location": read.path,
            "version": scan.version,
            "unit": scan.unit,
            "timestamp_as": scan.timestamp_as,
            "options": scan_options,
        },
        "write_options": relation_write_options({**options, "path": read.path}),
    }
