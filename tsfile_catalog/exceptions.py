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
    """Base class of every error raised by tsfile-catalog."""


class OptionError(TsFileCatalogError, ValueError):
    """A read/write option is unknown, missing or has an invalid value."""


class SchemaError(TsFileCatalogError):
    """A schema is invalid on its own (duplicate names, bad categories, ...)."""


class SchemaMismatchError(SchemaError):
    """Two schemas that must agree do not (files of one scan, an append vs the table)."""


class UnsupportedTypeError(SchemaError):
    """A column has a type or category that tsfile-catalog cannot map."""


class PredicateError(TsFileCatalogError, ValueError):
    """A filter predicate (the ``where`` option, a plan request) cannot be understood."""


class DataError(TsFileCatalogError, ValueError):
    """Rows that cannot be written (null or non-string TAG, null time, duplicates) or read as
    asked (a raw time that is no Spark timestamp)."""


class TableNotFoundError(TsFileCatalogError):
    """No table (or no TsFile data) at the given location or name."""


class TableExistsError(TsFileCatalogError):
    """A table already exists where a new one was to be created."""


class CommitConflictError(TsFileCatalogError):
    """A concurrent commit changed the table in a way this commit cannot be rebased on."""


class AlreadyCommittedError(CommitConflictError):
    """A streaming micro-batch (query id, batch id) is already in the table: a replay after
    a restart, or two runs of one batch racing. The sink skips it; nothing is committed."""


class InvalidCommitError(TsFileCatalogError, ValueError):
    """A commit's actions do not fit the table: a part added twice, removing a missing part."""


class CorruptManifestError(TsFileCatalogError):
    """A manifest file is truncated, unreadable or violates the format."""


class VersionNotFoundError(TsFileCatalogError):
    """Time travel asked for a version or timestamp the table does not have."""


class SqlError(TsFileCatalogError):
    """A SQL statement handed to the catalog cannot be executed."""


class SqlParseError(SqlError):
    """A SQL statement cannot be parsed."""


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


class ChangeCommitError(TsFileCatalogError):
    """A stream reached a commit that removed data (overwrite, DELETE, DROP PART, ...), which
    an append-only stream cannot express; ``skipChangeCommits=true`` skips such commits."""
