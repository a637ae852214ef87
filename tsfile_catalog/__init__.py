"""tsfile-catalog: a lakehouse-style table layer for Apache TsFile on Spark.

The public API::

    import tsfile_catalog
    spark = tsfile_catalog.local_session()          # local Spark, tsfile registered
    spark = tsfile_catalog.local_session(warehouse="/data/wh")  # + the catalog "tsfile"
    table = tsfile_catalog.open_table("/data/weather")
    table.version, table.schema, table.parts(), table.history(), table.plan(where="...")
    tsfile_catalog.write_table("/data/weather", arrow_table)   # no Spark: pyarrow or pandas
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tsfile_catalog import errors
from tsfile_catalog.exceptions import (
    AlreadyCommittedError,
    ChangeCommitError,
    CommitConflictError,
    CorruptManifestError,
    DataError,
    InvalidCommitError,
    LocationError,
    OptionError,
    PredicateError,
    SchemaError,
    SchemaMismatchError,
    SqlError,
    SqlParseError,
    StorageError,
    TableExistsError,
    TableNotFoundError,
    TsFileCatalogError,
    UnsupportedTypeError,
    VersionNotFoundError,
)
from tsfile_catalog.spark_catalog.session import (
    catalog_config,
    configure,
    local_session,
    register,
)
from tsfile_catalog.table import Table, create_table, open_table, purge, vacuum

if TYPE_CHECKING:
    from tsfile_catalog.adopt import adopt_table
    from tsfile_catalog.datasource.watermark import with_source_watermark
    from tsfile_catalog.sql.catalog import Catalog
    from tsfile_catalog.write.api import write_table

__all__ = [
    "Catalog",
    "Table",
    "adopt_table",
    "catalog_config",
    "configure",
    "create_table",
    "errors",
    "local_session",
    "open_table",
    "purge",
    "register",
    "vacuum",
    "write_table",
    "AlreadyCommittedError",
    "with_source_watermark",
    "ChangeCommitError",
    "CommitConflictError",
    "CorruptManifestError",
    "DataError",
    "InvalidCommitError",
    "LocationError",
    "OptionError",
    "PredicateError",
    "SchemaError",
    "SchemaMismatchError",
    "SqlError",
    "SqlParseError",
    "StorageError",
    "TableExistsError",
    "TableNotFoundError",
    "TsFileCatalogError",
    "UnsupportedTypeError",
    "VersionNotFoundError",
]


def __getattr__(name: str) -> Any:
    # adopt_table reads TsFile metadata and Catalog needs Spark: import them only on use, so
    # the pure API stays importable without the native library or a JVM.
    if name == "adopt_table":
        from tsfile_catalog.adopt import adopt_table

        return adopt_table
    if name == "Catalog":
        from tsfile_catalog.sql.catalog import Catalog

        return Catalog
    if name == "with_source_watermark":
        from tsfile_catalog.datasource.watermark import with_source_watermark

        return with_source_watermark
    if name == "write_table":
        # Writing imports pyarrow and the TsFile writer: only on use.
        from tsfile_catalog.write.api import write_table

        return write_table
    raise AttributeError(f"module 'tsfile_catalog' has no attribute {name!r}")
