"""The SQL helper's pure layer: parse one statement into a typed model, analyse queries.

``catalog.sql(text)`` calls :func:`parse_statement`, executes the statements it owns and hands
:class:`PassThrough` statements to ``spark.sql`` unchanged. Nothing here imports pyspark.
"""

from tsfile_catalog.sql.analysis import (
    TableRef,
    as_metadata_count,
    rewrite_table_refs,
    table_refs,
)
from tsfile_catalog.sql.dialect import TsFileSpark
from tsfile_catalog.sql.parse import (
    parse_statement,
    table_url_from_sqlglot,
    time_travel_from_sqlglot,
)
from tsfile_catalog.sql.statements import (
    PROVIDER,
    AlterTableSetProperties,
    ColumnSpec,
    CreateTable,
    DescribeDetail,
    DescribeHistory,
    DescribeTable,
    DropTable,
    ExplainParts,
    Insert,
    PassThrough,
    Select,
    ShowParts,
    ShowTables,
    SparkType,
    Statement,
    TableName,
    TableUrl,
    TimestampAsOf,
    TimeTravel,
    Vacuum,
    VersionAsOf,
    quote_identifier,
    quote_string,
)

__all__ = [
    "PROVIDER",
    "AlterTableSetProperties",
    "ColumnSpec",
    "CreateTable",
    "DescribeDetail",
    "DescribeHistory",
    "DescribeTable",
    "DropTable",
    "ExplainParts",
    "Insert",
    "PassThrough",
    "Select",
    "ShowParts",
    "ShowTables",
    "SparkType",
    "Statement",
    "TableName",
    "TableRef",
    "TableUrl",
    "TimeTravel",
    "TimestampAsOf",
    "TsFileSpark",
    "Vacuum",
    "VersionAsOf",
    "as_metadata_count",
    "parse_statement",
    "quote_identifier",
    "quote_string",
    "rewrite_table_refs",
    "table_refs",
    "table_url_from_sqlglot",
    "time_travel_from_sqlglot",
]
