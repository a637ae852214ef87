"""The error hierarchy: every error this package raises on purpose derives from
:class:`TsFileCatalogError`, so callers can catch one type and still tell cases apart."""

from __future__ import annotations

__all__ = [
    "TsFileCatalogError",
    "OptionError",
    "SchemaError",
    "SchemaMismatchError",
    "UnsupportedTypeError",
    "PredicateError",
    "DataError",
    "TableNotFoundError",
    "TableExistsError",
    "CommitConflictError",
    "AlreadyCommittedError",
    "InvalidCommitError",
    "CorruptManifestError",
    "VersionNotFoundError",
    "SqlError",
    "SqlParseError",
    "LocationError",
    "MissingExtraError",
    "StorageError",
    "ChangeCommitError",
]


class TsFileCatalogError(Exception):
    """Base class of every error raised by tsfile-catalog.

    ``sql_state`` is the SQLSTATE (the SQL standard's five-character error code, as Spark's
    error states list them) that SQL clients get with the message through the Spark catalog
    plugin: JDBC/ODBC clients of the Thrift server, Spark Connect clients, ``spark-sql``."""

    sql_state = "42000"


class OptionError(TsFileCatalogError, ValueError):
    """A read/write option is unknown, missing or has an invalid value."""

    sql_state = "42616"


class SchemaError(TsFileCatalogError):
    """A schema is invalid on its own (duplicate names, bad categories, ...)."""


class SchemaMismatchError(SchemaError):
    """Two schemas that must agree do not (files of one scan, an append vs the table)."""

    sql_state = "42K09"


class UnsupportedTypeError(SchemaError):
    """A column has a type or category that tsfile-catalog cannot map."""

    sql_state = "0A000"


class PredicateError(TsFileCatalogError, ValueError):
    """A filter predicate (the ``where`` option, a plan request) cannot be understood."""

    sql_state = "42601"


class DataError(TsFileCatalogError, ValueError):
    """Rows that cannot be written (null or non-string TAG, null time, duplicates) or read as
    asked (a raw time that is no Spark timestamp)."""

    sql_state = "22000"


class TableNotFoundError(TsFileCatalogError):
    """No table (or no TsFile data) at the given location or name."""

    sql_state = "42P01"


class TableExistsError(TsFileCatalogError):
    """A table already exists where a new one was to be created."""

    sql_state = "42P07"


class CommitConflictError(TsFileCatalogError):
    """A concurrent commit changed the table in a way this commit cannot be rebased on."""

    sql_state = "40001"


class AlreadyCommittedError(CommitConflictError):
    """A streaming micro-batch (query id, batch id) is already in the table: a replay after
    a restart, or two runs of one batch racing. The sink skips it; nothing is committed."""


class InvalidCommitError(TsFileCatalogError, ValueError):
    """A commit's actions do not fit the table: a part added twice, removing a missing part."""

    sql_state = "55000"


class CorruptManifestError(TsFileCatalogError):
    """A manifest file is truncated, unreadable or violates the format."""

    sql_state = "XX001"


class VersionNotFoundError(TsFileCatalogError):
    """Time travel asked for a version or timestamp the table does not have."""

    sql_state = "22003"


class SqlError(TsFileCatalogError):
    """A SQL statement handed to the catalog cannot be executed."""


class SqlParseError(SqlError):
    """A SQL statement cannot be parsed."""

    sql_state = "42601"


class LocationError(TsFileCatalogError, ValueError):
    """A table location that could make a table share files with something it does not own:
    a file-system root, a folder inside another table or the catalog's registry, the
    warehouse root, or a non-empty folder for a new empty table."""


class MissingExtraError(TsFileCatalogError, ImportError):
    """An optional dependency is not installed (PySpark, DuckDB, polars): the message names the
    extra that installs it (``pip install "tsfile-catalog[spark]"``). An :class:`ImportError`,
    as a missing module would be."""


class StorageError(TsFileCatalogError, OSError):
    """A storage operation failed (a read, list, write, put-if-absent create, move or delete
    the store refused or lost). The message names the operation and the file; the store's
    own error is the ``__cause__``. An :class:`OSError`, so code that tolerates storage
    failures (a checkpoint that could not be written) still does."""

    sql_state = "58030"


class ChangeCommitError(TsFileCatalogError):
    """A stream reached a commit that removed data (overwrite, DELETE, DROP PART, ...), which
    an append-only stream cannot express; ``skipChangeCommits=true`` skips such commits."""

    sql_state = "55000"
