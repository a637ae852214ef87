"""Spark's own ``DESCRIBE [TABLE] [EXTENDED] <catalog>.<db>.<t>`` with the TAG columns marked.

Spark prints a column's comment in DESCRIBE's ``comment`` column, but it also takes a DSv2
table's columns, comments included, as the schema of every read of the table: a comment in
the table's schema would reach ``spark.table(t).schema`` and every table written from it.
So the table's schema carries none, and the session extensions' planner strategy
(``DescribeTables``) hands Spark's ``DescribeTableExec`` a copy of the table whose schema is
this module's answer, for that one statement: Spark's rows, each TAG column commented
``TAG``. ``Catalog.sql``'s own DESCRIBE says the same in its ``category`` column.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pyspark.sql.types import StructField, StructType

from tsfile_catalog.metadata.schema import Category
from tsfile_catalog.spark_catalog.scan_request import ScanRequest

__all__ = ["TAG_COMMENT", "described_schema"]

TAG_COMMENT = Category.TAG.value
"""What DESCRIBE's ``comment`` column says of a TAG column."""


def described_schema(scan: Mapping[str, Any], schema_json: str) -> str:
    """``schema_json`` (a loaded table's Spark schema) with each TAG column of the table
    version ``scan`` describes commented ``TAG`` (a comment already there is kept after it:
    ``TAG: <comment>``), as JSON; other columns unchanged."""
    tags = set(ScanRequest.parse(scan).schema.tag_names)
    schema = StructType.fromJson(json.loads(schema_json))
    return StructType([_marked(f) if f.name.lower() in tags else f for f in schema.fields]).json()


def _marked(field: StructField) -> StructField:
    given = field.metadata.get("comment")
    comment = f"{TAG_COMMENT}: {given}" if given else TAG_COMMENT
    return StructField(
        field.name, field.dataType, field.nullable, {**field.metadata, "comment": comment}
    )
