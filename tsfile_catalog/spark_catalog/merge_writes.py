"""The catalog plugin's ``mergeSchema`` appends (``writeTo(t).option("mergeSchema", "true")
.append()``, ``df.write.option("mergeSchema", "true").mode("append").saveAsTable(t)`` or
``.insertInto(t)``, and ``INSERT WITH SCHEMA EVOLUTION INTO t …``, which the extensions make
one), and ``MERGE WITH SCHEMA EVOLUTION INTO t …`` (:func:`merge_evolution`). A by-position
write's schema arrives with the table's names on its first columns.

Spark checks a write's columns against the table's before the write reaches the catalog, so
a new FIELD column of the data would be refused there. The extensions' rule
(``io.tsfilecatalog.spark.MergeSchemaWrites``) asks :func:`merged_schema` for the table as the
write will leave it, and writes into that: Spark matches and casts the existing columns by
name as for any write, and the ``tsfile`` writer, given ``mergeSchema``, commits the new schema
with the rows (one commit). The rules are the writer's own
(:func:`~tsfile_catalog.metadata.schema_merge.merge_schema`), so a refusal happens here, before
any row is written, with the writer's message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tsfile_catalog.datasource.types import spark_schema
from tsfile_catalog.datasource.writer import plan_write
from tsfile_catalog.exceptions import SchemaError, SchemaMismatchError
from tsfile_catalog.exec.table_scan import resolve_columns
from tsfile_catalog.metadata.schema import TableSchema
from tsfile_catalog.metadata.schema_merge import merge_schema
from tsfile_catalog.options import parse_write_options
from tsfile_catalog.spark_catalog.scan_request import ScanRequest
from tsfile_catalog.write.api import existing_table

if TYPE_CHECKING:
    from pyspark.sql.types import DataType

__all__ = ["merge_evolution", "merged_schema"]


def merged_schema(request: Mapping[str, Any]) -> str | None:
    """The Spark schema (JSON) of the table after a ``mergeSchema`` append of rows of
    ``request["schema"]``, or None when the append leaves the table's schema as it is.

    ``request``: ``write_options`` (the table's), ``options`` (the write's), ``schema`` (the
    written rows' Spark schema, JSON) and ``timestamp_as`` (how the table reads its times).

    Raises:
        SchemaMismatchError: a new TAG column, or a type the merge does not widen to, naming
            the column.
    """
    from pyspark.sql.types import StructType  # the driver's PySpark: always there here

    table_options: Mapping[str, str] = request["write_options"]
    given = {k.lower(): v for k, v in request["options"].items()}
    # As the write builder merges them: the table's options win over the write's.
    options = {
        k: v for k, v in request["options"].items() if k.lower() not in _lowered(table_options)
    }
    options.update(table_options)
    options["mergeSchema"] = "true"
    write = parse_write_options(options)
    table = existing_table(write)
    if table is None:
        return None
    _check_tags(table.schema, given.get("tagcolumns"))
    plan = plan_write(StructType.fromJson(json.loads(request["schema"])), write)
    merged = merge_schema(
        table.schema, TableSchema(table.schema.table, plan.schema.columns), merge=True
    )
    if merged is table.schema:
        return None
    columns = resolve_columns(merged, None, what="the table")
    return str(spark_schema(merged, columns, request["timestamp_as"]).json())


def merge_evolution(request: Mapping[str, Any]) -> dict[str, str] | None:
    """The table as a ``MERGE WITH SCHEMA EVOLUTION`` leaves it, for the extensions' rule to
    make the MERGE's target (one commit: its copy-on-write write merges the schema with the
    rows, as a ``mergeSchema`` append does), or None when it leaves the schema as it is.

    ``request``: ``changes`` (Spark's pending ``TableChange`` of the MERGE, as ``Changes.java``
    hands them over, with ``type_json``: the source's new columns and its other types),
    ``scan`` (the loaded version's scan description), ``write_options`` (the table's) and
    ``timestamp_as``. The changes are merged as an append of the table's columns with them
    would be (:func:`~tsfile_catalog.metadata.schema_merge.merge_schema`, the writer's rules),
    into the version the MERGE reads.

    Returns:
        ``schema``: the Spark schema (JSON) of the target; ``read_schema``: the table schema
        (manifest JSON) its copy-on-write scan reads that version under (the read option
        ``mergedSchema``: new columns NULL, widened ones cast).

    Raises:
        SchemaMismatchError: a change the table refuses (a TAG's or time's type, a type the
            merge does not widen to, a nested column), naming the column.
    """
    from pyspark.sql.types import StructField, StructType

    scan = ScanRequest.parse(request["scan"])
    base = scan.opened.schema
    fields = list(spark_schema(base, base.names, request["timestamp_as"]).fields)
    for change in request["changes"]:
        column = [str(c) for c in change.get("column") or ()]
        kind = change["kind"]
        if len(column) != 1 or kind not in ("AddColumn", "UpdateColumnType"):
            raise SchemaMismatchError(
                f"MERGE WITH SCHEMA EVOLUTION INTO {scan.table}: {kind} of column "
                f"'{'.'.join(column)}' is not supported on tsfile tables (they add FIELD "
                "columns and widen INT to BIGINT, FLOAT to DOUBLE)"
            )
        data_type = _spark_type(change["type_json"])
        at = [i for i, f in enumerate(fields) if f.name.lower() == column[0].lower()]
        if at:
            fields[at[0]] = StructField(fields[at[0]].name, data_type, True)
        else:
            fields.append(StructField(column[0], data_type, True))
    options = {**request["write_options"], "mergeSchema": "true"}
    try:
        plan = plan_write(StructType(fields), parse_write_options(options))
        merged = merge_schema(base, TableSchema(base.table, plan.schema.columns), merge=True)
    except SchemaError as e:
        # The writer's message, saying which statement it refuses.
        raise type(e)(f"MERGE WITH SCHEMA EVOLUTION INTO {scan.table}: {e}") from None
    if merged is base:
        return None
    columns = resolve_columns(merged, None, what="the table")
    return {
        "schema": str(spark_schema(merged, columns, request["timestamp_as"]).json()),
        "read_schema": json.dumps(merged.to_json()),
    }


def _spark_type(text: str) -> DataType:
    """The Spark type of ``text`` (a ``DataType``'s JSON), through PySpark's public parser."""
    from pyspark.sql.types import StructType

    field = {"name": "c", "type": json.loads(text), "nullable": True, "metadata": {}}
    return StructType.fromJson({"type": "struct", "fields": [field]}).fields[0].dataType


def _lowered(options: Mapping[str, str]) -> set[str]:
    return {k.lower() for k in options}


def _check_tags(schema: TableSchema, given: str | None) -> None:
    """A write naming TAG columns the table lacks is refused: the TAGs are every part's device
    identity (the table's own ``tagColumns`` would silently make the column a FIELD)."""
    if given is None:
        return
    for name in (n.strip() for n in given.split(",")):
        if name and name.lower() not in schema.tag_names:
            raise SchemaMismatchError(
                f"column '{name}' is not a TAG column of table '{schema.table}' (its TAGs are "
                f"{', '.join(schema.tag_names)}); TAG columns are the device identity and can "
                "never be added, even with mergeSchema"
            )
