"""Table options: what ``CREATE TABLE ... OPTIONS (...)`` may store with a catalog table, and
which of the stored options reach its scans and its writes.

Values are checked by the data source's own option parsers, so a table is never created
holding options that every later scan or write would refuse. Nothing here imports pyspark.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from tsfile_catalog.exceptions import OptionError, SqlError
from tsfile_catalog.formats.tsfile import WriteSettings, validate_encoding
from tsfile_catalog.metadata.expressions import TimestampAs, TimeUnit
from tsfile_catalog.metadata.schema import TableSchema
from tsfile_catalog.metadata.table_time import TIME_UNIT_PROPERTY
from tsfile_catalog.options import (
    ENCODING_PREFIX,
    parse_read_options,
    parse_write_options,
)
from tsfile_catalog.sql.registry import TableEntry, refuse_credential
from tsfile_catalog.sql.urls import UrlEntry
from tsfile_catalog.storage_options import STORAGE_PREFIX, storage_options_from

if TYPE_CHECKING:
    from tsfile_catalog.table.handle import Table

__all__ = [
    "TABLE_OPTIONS",
    "check_table_options",
    "is_table_option",
    "split_create_properties",
    "check_encoding",
    "read_options",
    "write_options",
    "write_settings",
    "storage_options",
    "timestamp_as",
    "given_timestamp_as",
    "time_read_as",
    "precision",
    "given_precision",
    "check_settable_properties",
    "check_unsettable_properties",
]

_READ_ONLY = ("timestampAs", "mergeSchema", "rowsPerPartition", "useMetadataCache")
_WRITE_ONLY = ("tagColumns", "compression", "encoding", "maxRowsPerFile", "onDuplicate")
_BOTH = ("timestampPrecision",)
TABLE_OPTIONS: tuple[str, ...] = (*_READ_ONLY, *_WRITE_ONLY, *_BOTH)
"""Options ``CREATE TABLE ... OPTIONS (...)`` accepts (case-insensitive), plus ``fs.*``."""
_OPTION_NAMES = frozenset(key.lower() for key in TABLE_OPTIONS)

# Per-query read options and per-write layout the catalog itself decides.
_PER_QUERY = (
    "path",
    "table",
    "columns",
    "where",
    "versionAsOf",
    "timestampAsOf",
    "tableUuid",
    "timeColumn",
    "fieldColumns",
    "model",
    "pushdown",
    "nullTagPolicy",
)


def is_table_option(key: str) -> bool:
    """Whether ``key`` names a table option (:data:`TABLE_OPTIONS`, ``fs.*``, ``encoding.*``),
    any case, whatever its value."""
    lowered = key.lower()
    return lowered in _OPTION_NAMES or lowered.startswith((STORAGE_PREFIX, ENCODING_PREFIX))


def split_create_properties(
    options: Mapping[str, str], properties: Mapping[str, str], *, table: str
) -> tuple[dict[str, str], dict[str, str]]:
    """A CREATE TABLE's table options and table properties: a TBLPROPERTIES entry named as a
    table option (``'tagColumns' = 'city'``, ``fs.*``, ``encoding.*``) is that option, as if
    given in ``OPTIONS``, so Spark's catalog plugin and ``Catalog.sql`` read one statement
    alike (Delta and Iceberg users set a table's configuration in TBLPROPERTIES).

    Raises:
        OptionError: an option given in both with different values (naming it and ``table``).
    """
    out = dict(options)
    given = {key.lower(): key for key in options}
    rest: dict[str, str] = {}
    for key, value in properties.items():
        if not is_table_option(key):
            rest[key] = value
            continue
        twin = given.get(key.lower())
        if twin is not None and options[twin] != value:
            raise OptionError(
                f"CREATE TABLE {table}: option {key!r} is given twice, {options[twin]!r} in "
                f"OPTIONS and {value!r} in TBLPROPERTIES"
            )
        out.setdefault(twin or key, value)
    return out, rest


def check_table_options(options: Mapping[str, str]) -> dict[str, str]:
    """The options with canonical key spelling.

    Raises:
        OptionError: an unknown option, one the catalog sets per query, or an invalid value
            (naming the option). Whether ``encoding`` suits each column's type needs the
            schema: :func:`check_encoding` checks it.
    """
    canonical = {key.lower(): key for key in TABLE_OPTIONS}
    managed = {key.lower() for key in _PER_QUERY}
    out: dict[str, str] = {}
    for key, value in options.items():
        lowered = key.lower()
        if lowered.startswith(STORAGE_PREFIX) and len(lowered) > len(STORAGE_PREFIX):
            refuse_credential(key, value)
            out[STORAGE_PREFIX + key[len(STORAGE_PREFIX) :]] = value
        elif lowered in canonical:
            out[canonical[lowered]] = value
        elif lowered.startswith(ENCODING_PREFIX):
            # A per-column encoding, stored as the write option it is (column lower-cased,
            # as TsFile stores names); checked against the schema by check_encoding.
            out[ENCODING_PREFIX + lowered[len(ENCODING_PREFIX) :].strip()] = value
        elif lowered in managed:
            raise OptionError(
                f"table option {key!r} cannot be stored with a table: it is a per-query option, "
                "which the catalog sets for each query or write (use WHERE, VERSION AS OF, a "
                "column list, ...)"
            )
        else:
            raise OptionError(
                f"unknown table option {key!r}; valid options are: {', '.join(TABLE_OPTIONS)} "
                f"(and '{STORAGE_PREFIX}<name>' for file-system settings, "
                f"'{ENCODING_PREFIX}<column>' for one column's encoding)"
            )
    # Values are checked by the data source's own parsers, as every later scan and write will
    # check them: a table must never be created holding options that fail all its queries.
    # (The parsers want a path; the location is not known yet and not what is checked.)
    parse_read_options({**_select(out, (*_READ_ONLY, *_BOTH)), "path": "-"})
    parse_write_options({**_select(out, (*_WRITE_ONLY, *_BOTH)), "path": "-"})
    return out


def check_encoding(options: Mapping[str, str], schema: TableSchema) -> None:
    """Refuse a stored ``encoding`` that a FIELD column of ``schema`` cannot use (exactly
    the check every write of the table makes).

    Raises:
        OptionError: naming the option, the column and its type.
    """
    write = parse_write_options({**_select(options, (*_WRITE_ONLY, *_BOTH)), "path": "-"})
    validate_encoding(schema, write.settings())


def _select(options: Mapping[str, str], keys: Iterable[str]) -> dict[str, str]:
    wanted = set(keys)
    # ``encoding.<column>`` travels with ``encoding``: both are write options.
    per_column = "encoding" in wanted
    return {
        k: v
        for k, v in options.items()
        if k in wanted
        or k.startswith(STORAGE_PREFIX)
        or (per_column and k.startswith(ENCODING_PREFIX))
    }


def read_options(entry: TableEntry) -> dict[str, str]:
    """The stored options a scan of ``entry`` passes to the data source."""
    return _select(entry.options, (*_READ_ONLY, *_BOTH))


def write_options(entry: TableEntry, tsfile_table: str | None) -> dict[str, str]:
    """The options a write into ``entry`` (TsFile table ``tsfile_table``; None: whichever
    the table at its location holds) passes to the data source."""
    out = _select(entry.options, (*_WRITE_ONLY, *_BOTH))
    if tsfile_table is not None:
        out["table"] = tsfile_table
    return out


def write_settings(options: Mapping[str, str]) -> WriteSettings:
    """The TsFile writer settings (compression, encoding) stored ``options`` give a rewrite
    of the table's parts (OPTIMIZE from the command line)."""
    return parse_write_options({**_select(options, (*_WRITE_ONLY, *_BOTH)), "path": "-"}).settings()


def storage_options(entry: TableEntry) -> dict[str, Any]:
    """``fs.*`` options as fsspec storage options, decoded exactly as the source does."""
    return storage_options_from(entry.options)


def timestamp_as(entry: TableEntry) -> TimestampAs:
    return given_timestamp_as(entry) or "long"


def given_timestamp_as(entry: TableEntry) -> TimestampAs | None:
    """The stored ``timestampAs``, None when none is stored. A URL reference's entry stores
    none (only its ``fs.*`` settings): its table decides, as ``load(url)`` reads it
    (``Table.time_read_as``: ``time TIMESTAMP`` reads as a timestamp)."""
    value = entry.options.get("timestampAs")
    return None if value is None else cast(TimestampAs, value.strip().lower())


def time_read_as(entry: TableEntry, table: Table) -> TimestampAs:
    """How ``time`` of ``entry``'s opened ``table`` reads: the stored ``timestampAs``; none
    stored, ``long`` for a registered table (CREATE TABLE stores it) and the table's own
    time type for a URL reference's (:func:`given_timestamp_as`)."""
    if isinstance(entry, UrlEntry):
        return table.time_read_as(given_timestamp_as(entry))
    return timestamp_as(entry)


def check_settable_properties(entry: TableEntry, properties: Mapping[str, str]) -> None:
    """Refuse a SET TBLPROPERTIES the table cannot take: a key that is one of its options
    (``tagColumns``, ``compression``, …, fixed when it was created: as a property it would
    change nothing), or a ``time.unit`` (declaring the time of a table from before it was
    recorded) other than the unit the catalog reads the table in.

    Raises:
        SqlError: a table option's key.
        OptionError: ``time.unit`` names another unit than the entry's ``timestampPrecision``.
    """
    options = {key.lower() for key in entry.options}
    for key in properties:
        if key.lower() in options:
            raise SqlError(
                f"ALTER TABLE {entry.display_name} SET TBLPROPERTIES: {key!r} is a table "
                "option, stored with the catalog entry when the table was created, not a table "
                "property; table options cannot be changed (a property of that name would "
                "change nothing)"
            )
    declared = properties.get(TIME_UNIT_PROPERTY)
    if declared is not None and declared != precision(entry):
        raise OptionError(
            f"ALTER TABLE {entry.display_name} SET TBLPROPERTIES: '{TIME_UNIT_PROPERTY}' = "
            f"{declared!r}, but the catalog reads the table in '{precision(entry)}' (its "
            "timestampPrecision): the rows were written in that unit"
        )


def check_unsettable_properties(entry: TableEntry, keys: Iterable[str]) -> None:
    """Refuse an UNSET TBLPROPERTIES of a key that is one of the table's options.

    Raises:
        SqlError: naming the key.
    """
    options = {key.lower() for key in entry.options}
    for key in keys:
        if key.lower() in options:
            raise SqlError(
                f"ALTER TABLE {entry.display_name} UNSET TBLPROPERTIES: {key!r} is a table "
                "option, stored with the catalog entry when the table was created, not a table "
                "property; table options cannot be unset"
            )


def precision(entry: TableEntry) -> TimeUnit:
    """The stored ``timestampPrecision`` (``ms`` when none is stored). A table that records
    its own unit has it stored with its entry when registered (``CREATE TABLE``)."""
    return given_precision(entry) or "ms"


def given_precision(entry: TableEntry) -> TimeUnit | None:
    """The stored ``timestampPrecision``, None when none is stored (a table that records
    its unit is then read in it, :func:`~tsfile_catalog.metadata.table_time.table_unit`)."""
    value = entry.options.get("timestampPrecision")
    return None if value is None else cast(TimeUnit, value.strip().lower())
