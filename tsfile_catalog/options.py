"""Read and write options: parsed once into frozen objects whose errors name the option.

Option names are case-insensitive (Spark convention). Unknown options fail with the list of
valid ones, because a misspelt option silently ignored is a wrong result waiting to happen.

One job: every option the ``tsfile`` source takes (batch and stream, read and write), each
parsed and checked in one place, so the lists of valid names and their errors stay together.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from fsspec.core import split_protocol

from tsfile_catalog.exceptions import OptionError, PredicateError
from tsfile_catalog.formats.tsfile import (
    COMPRESSIONS,
    DEFAULT_COMPRESSION,
    ENCODINGS,
    WriteSettings,
)
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.completeness import check_table_properties, parse_complete_until
from tsfile_catalog.metadata.expressions import BindContext, TimestampAs, TimeUnit
from tsfile_catalog.metadata.ownership import is_job_id
from tsfile_catalog.metadata.schema import TIME_COLUMN
from tsfile_catalog.metadata.spark.literals import parse_interval_ns, parse_zone
from tsfile_catalog.metadata.time_top import TimeTop
from tsfile_catalog.storage_options import STORAGE_PREFIX, storage_options_from

__all__ = [
    "ReadOptions",
    "WriteOptions",
    "parse_read_options",
    "parse_write_options",
    "ENCODING_PREFIX",
    "check_tag_columns",
    "StreamWriteOptions",
    "parse_stream_write_options",
    "StreamOptions",
    "split_stream_options",
    "WRITE_OPTIONS_KEY",
    "relation_write_options",
    "parse_stream_options",
    "DRIVER_CWD_ENV",
    "qualify_local_path",
]


_READ_KEYS = (
    "path",
    "model",
    "table",
    "timestampAs",
    "timestampPrecision",
    "mergeSchema",
    "columns",
    "where",
    "timeZone",
    "pushdown",
    "versionAsOf",
    "timestampAsOf",
    "tableUuid",
    "rowsPerPartition",
    "useMetadataCache",
    "partitions",
    "partialAggregate",
    "limit",
    "latest",
    "earliest",
    "writeOptions",
    "onlyParts",
    "mergedSchema",
)
# A read option that carries the options a write through the same relation uses: a
# temporary view over a scan (Catalog registers one per table) hands a write into it the
# scan's options, none of which (``partitions``, ``timestampAs``, ...) the writer takes.
WRITE_OPTIONS_KEY = "writeOptions"
_WRITE_KEYS = (
    "path",
    "model",
    "table",
    "timeColumn",
    "tagColumns",
    "fieldColumns",
    "timestampPrecision",
    "compression",
    "encoding",
    "nullTagPolicy",
    "maxRowsPerFile",
    "onDuplicate",
    "mergeSchema",
    "replaceWhere",
    "timeZone",
    "completeUntil",
    "rewriteParts",
    "rewriteVersion",
    "rewriteOperation",
    "rewriteDuplicates",
    "rewriteParameters",
    "replaceStaged",
    "tableProperties",
)


# A table in Spark's own catalog (plain ``spark.sql("CREATE TABLE t USING tsfile LOCATION
# ...")``) cannot work with a Python data source (measured on Spark 4.3): CREATE without
# columns hands the source Spark's table properties below, and every later read or write of
# the table no options at all (``SELECT ... FROM t WITH (...)`` only what WITH gives).
_SPARK_CATALOG_PROPERTIES = frozenset(
    {"owner", "provider", "location", "external", "is_managed_location", "comment"}
)
CATALOG_TABLE_HINT = (
    "a table defined in Spark's own catalog (spark.sql(\"CREATE TABLE ... USING tsfile "
    'LOCATION ...")) reaches the tsfile source without its LOCATION or OPTIONS; use '
    "tsfile_catalog.Catalog(spark, warehouse).sql(...) for SQL tables (docs/sql.md), or "
    'spark.read.format("tsfile").load(path)'
)


def _normalize(options: Mapping[str, str], valid: tuple[str, ...], what: str) -> dict[str, str]:
    canonical = {k.lower(): k for k in valid}
    out: dict[str, str] = {}
    for key, value in options.items():
        lowered = key.lower()
        if lowered.startswith(STORAGE_PREFIX):
            out[lowered] = value
            continue
        if lowered in _SPARK_CATALOG_PROPERTIES:
            raise OptionError(
                f"the tsfile source was given Spark's table property '{key}': {CATALOG_TABLE_HINT}"
            )
        if lowered not in canonical:
            raise OptionError(
                f"unknown {what} option '{key}'; valid options are: {', '.join(valid)} "
                f"(and '{STORAGE_PREFIX}<name>' for file-system settings)"
            )
        out[canonical[lowered]] = value
    model = out.get("model", "table")
    if model.lower() != "table":
        raise OptionError(f"option 'model' = {model!r}: only the table model is supported")
    return out


def _bool(opts: Mapping[str, str], key: str, default: bool) -> bool:
    if key not in opts:
        return default
    value = str(opts[key]).strip().lower()
    if value in ("true", "1", "yes"):
        return True
    if value in ("false", "0", "no"):
        return False
    raise OptionError(f"option '{key}' = {opts[key]!r} is not a boolean (true/false)")


def _int(opts: Mapping[str, str], key: str, default: int | None, minimum: int) -> int | None:
    if key not in opts:
        return default
    try:
        value = int(str(opts[key]).strip())
    except ValueError:
        raise OptionError(f"option '{key}' = {opts[key]!r} is not an integer") from None
    if value < minimum:
        raise OptionError(f"option '{key}' = {value} must be at least {minimum}")
    return value


def _time_top(opts: Mapping[str, str]) -> TimeTop | None:
    latest, earliest = _int(opts, "latest", None, 1), _int(opts, "earliest", None, 1)
    if latest is not None and earliest is not None:
        raise OptionError("options 'latest' and 'earliest' are mutually exclusive")
    if latest is not None:
        return TimeTop(latest, descending=True)
    return None if earliest is None else TimeTop(earliest, descending=False)


def _choice(opts: Mapping[str, str], key: str, default: str, choices: tuple[str, ...]) -> str:
    value = str(opts.get(key, default)).strip().lower()
    if value not in choices:
        raise OptionError(
            f"option '{key}' = {opts[key]!r} is not valid; use one of {', '.join(choices)}"
        )
    return value


def _names(opts: Mapping[str, str], key: str) -> tuple[str, ...] | None:
    if key not in opts:
        return None
    names = tuple(n.strip() for n in str(opts[key]).split(","))
    if any(not n for n in names):
        raise OptionError(f"option '{key}' = {opts[key]!r} has an empty column name")
    return names


def check_tag_columns(
    tags: Sequence[str] | None, *, time_column: str = TIME_COLUMN, where: str = ""
) -> tuple[str, ...]:
    """The TAG columns a new table is created with (blanks stripped): the one ``tagColumns``
    rule of the data source's writer and ``CREATE TABLE``.

    ``where`` prefixes every message with the caller's context (``"CREATE TABLE t: "``).

    Raises:
        OptionError: no TAG column, an empty name, a name given twice (TsFile names are
            case-insensitive) or the time column named as a TAG.
    """
    if not tags:
        raise OptionError(
            f"{where}option 'tagColumns' is required to create a table: the comma-separated "
            "TAG columns that identify a device, in order, e.g. tagColumns 'city,device'"
        )
    names = tuple(tag.strip() for tag in tags)
    if any(not name for name in names):
        raise OptionError(
            f"{where}option 'tagColumns' = {','.join(tags)!r} has an empty column name"
        )
    lowered = {name.lower() for name in names}
    if len(lowered) != len(names):
        raise OptionError(f"{where}option 'tagColumns' names a column twice")
    if time_column.strip().lower() in lowered:
        raise OptionError(f"{where}'{time_column}' cannot be a TAG column: it is the time column")
    return names


def _path(opts: Mapping[str, str]) -> str:
    path = opts.get("path")
    if not path and not opts:
        raise OptionError(f"no path given, and no options at all: {CATALOG_TABLE_HINT}")
    if not path:
        raise OptionError(
            "no path given: use load(path) / save(path) or the 'path' option (note: "
            f"{CATALOG_TABLE_HINT})"
        )
    return str(path)


DRIVER_CWD_ENV = "TSFILE_CATALOG_DRIVER_CWD"
"""The environment variable :func:`tsfile_catalog.register` hands Spark's Python workers: the
driver JVM's working directory, which relative local paths are relative to."""


def qualify_local_path(path: str) -> str:
    """``path`` with a relative local path made absolute against the driver's working
    directory, as Spark's own file sources qualify one (``df.write.parquet("rel")`` writes
    under the driver JVM's ``user.dir``). This code runs in Python workers, whose working
    directory is their own (on a cluster, an executor's), so the driver's comes from
    :data:`DRIVER_CWD_ENV`; URLs and absolute paths are returned unchanged.

    Raises:
        OptionError: the path is relative and the driver's working directory is unknown
            (the source was not registered with :func:`tsfile_catalog.register`).
    """
    if not FileIO(path).is_local:
        return path
    local = os.path.expanduser(split_protocol(path)[1])
    if os.path.isabs(local):
        return path
    base = os.environ.get(DRIVER_CWD_ENV)
    if not base:
        raise OptionError(
            f"path {path!r} is relative, and the tsfile data source cannot tell to what: it "
            "runs in Spark's Python workers, whose working directory is not the driver's. "
            "Give an absolute path or a URL, or register the source with "
            "tsfile_catalog.register(spark) (tsfile_catalog.local_session() does), which "
            "makes relative paths relative to the driver's working directory like Spark's "
            "own file sources"
        )
    return os.path.normpath(os.path.join(base, local))


@dataclass(frozen=True)
class ReadOptions:
    path: str
    table: str | None = None
    timestamp_as: TimestampAs = "long"
    # Whether ``timestampAs`` was given: a table that records its time type is read as it
    # unless the option says otherwise (the option wins).
    timestamp_as_given: bool = False
    precision: TimeUnit = "ms"
    # Whether ``timestampPrecision`` was given: a table that records its own unit
    # (metadata/table_time.py) is read in it, and a contradicting option is refused.
    precision_given: bool = False
    merge_schema: bool = False
    columns: tuple[str, ...] | None = None
    where: str | None = None
    time_zone: str | None = None
    pushdown: bool = True
    version_as_of: int | None = None
    timestamp_as_of: str | None = None
    table_uuid: str | None = None
    rows_per_partition: int | None = None
    use_metadata_cache: bool = True
    storage_options: Mapping[str, Any] = field(default_factory=dict)
    # About how many partitions a scan plans (one per core); rowsPerPartition overrides it.
    partitions: int | None = None
    # JSON of a metadata.partial_aggregates.PartialSpec: the scan returns partial aggregates.
    partial_aggregate: str | None = None
    # At most this many rows per partition (the catalog plugin's pushed LIMIT; Spark still
    # applies the query's own limit over them).
    limit: int | None = None
    # ``latest``/``earliest`` = n: the scan returns at least the first n rows in time order
    # (every row tied with the n-th too), reading only the parts that may hold them; the
    # caller still sorts and limits (the catalog plugin's pushed ORDER BY time ... LIMIT n).
    time_top: TimeTop | None = None
    # Only these parts (paths as the manifest has them), every row of each: the catalog
    # plugin's copy-on-write scans (UPDATE, MERGE, DELETE through spark.sql).
    only_parts: tuple[str, ...] | None = None
    # The table schema (manifest JSON) a mergeSchema write will commit, which the scan reads
    # the pinned version under: the catalog plugin's MERGE WITH SCHEMA EVOLUTION.
    merged_schema_json: str | None = None

    def bind_context(self, session_time_zone: str | None = None) -> BindContext:
        """How the ``where`` predicate binds: the ``timeZone`` option, else the session time
        zone when the caller knows it (None: not known yet)."""
        return BindContext(
            unit=self.precision,
            timestamp_as=self.timestamp_as,
            time_zone=self.time_zone or session_time_zone,
        )


def _time_zone(opts: Mapping[str, str]) -> str | None:
    value = str(opts.get("timeZone", "")).strip()
    if not value:
        return None
    try:
        parse_zone(value)
    except PredicateError as e:
        raise OptionError(f"option 'timeZone' = {opts['timeZone']!r}: {e}") from None
    return value


def relation_write_options(options: Mapping[str, str]) -> dict[str, str]:
    """The options a write into a relation loaded with ``options`` uses: when they carry
    ``writeOptions`` (a JSON object of write options, which Catalog sets on the views it
    registers), those, with the relation's ``path`` and ``fs.*`` settings; else ``options``
    themselves, every one of them checked as a write option.

    Raises:
        OptionError: ``writeOptions`` is not a JSON object of strings.
    """
    found = {k.lower(): k for k in options}
    key = found.get(WRITE_OPTIONS_KEY.lower())
    if key is None:
        return dict(options)
    text = options[key]
    try:
        given = json.loads(text)
    except ValueError as e:
        raise OptionError(f"option '{WRITE_OPTIONS_KEY}' is not JSON: {e}") from e
    if not isinstance(given, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in given.items()
    ):
        raise OptionError(
            f"option '{WRITE_OPTIONS_KEY}' must be a JSON object of string options, got {text!r}"
        )
    kept = {
        k: v
        for k, v in options.items()
        if k.lower() == "path" or k.lower().startswith(STORAGE_PREFIX)
    }
    return {**kept, **given}


# Spark keeps a Python reader's pushed filters on the loaded relation (PythonDataSourceV2's
# read info, Spark 4.2 and 4.3), so a later query on the same DataFrame or view read with an
# earlier one's filters: no reader can tell, so the option that implemented pushFilters is gone.
_REMOVED_PUSH_FILTERS = (
    "option 'pushFilters' was removed: Spark reuses one query's pushed filters for later "
    "queries on the same DataFrame or view, which read wrong rows; filter with the 'where' "
    "option (pruned and pushed into the TsFile reads), or .where(), which Spark applies"
)


def parse_read_options(options: Mapping[str, str]) -> ReadOptions:
    if any(key.lower() == "pushfilters" for key in options):
        raise OptionError(_REMOVED_PUSH_FILTERS)
    opts = _normalize(options, _READ_KEYS, "read")
    version = _int(opts, "versionAsOf", None, 0)
    timestamp = opts.get("timestampAsOf")
    if version is not None and timestamp is not None:
        raise OptionError("options 'versionAsOf' and 'timestampAsOf' are mutually exclusive")
    where = opts.get("where")
    return ReadOptions(
        path=_path(opts),
        table=opts.get("table") or None,
        timestamp_as=cast(TimestampAs, _choice(opts, "timestampAs", "long", ("long", "timestamp"))),
        timestamp_as_given="timestampAs" in opts,
        precision=cast(TimeUnit, _choice(opts, "timestampPrecision", "ms", ("ms", "us", "ns"))),
        precision_given="timestampPrecision" in opts,
        merge_schema=_bool(opts, "mergeSchema", False),
        columns=_names(opts, "columns"),
        where=where if where and where.strip() else None,
        time_zone=_time_zone(opts),
        pushdown=_bool(opts, "pushdown", True),
        version_as_of=version,
        timestamp_as_of=timestamp,
        table_uuid=(opts.get("tableUuid") or "").strip() or None,
        rows_per_partition=_int(opts, "rowsPerPartition", None, 1),
        use_metadata_cache=_bool(opts, "useMetadataCache", True),
        storage_options=storage_options_from(opts),
        partitions=_int(opts, "partitions", None, 1),
        partial_aggregate=(opts.get("partialAggregate") or "").strip() or None,
        limit=_int(opts, "limit", None, 0),
        time_top=_time_top(opts),
        only_parts=_json_names(opts, "onlyParts"),
        merged_schema_json=(opts.get("mergedSchema") or "").strip() or None,
    )


@dataclass(frozen=True)
class WriteOptions:
    path: str
    table: str | None = None
    time_column: str = "time"
    tag_columns: tuple[str, ...] | None = None
    field_columns: tuple[str, ...] | None = None
    precision: TimeUnit = "ms"
    # Whether ``timestampPrecision`` was given: a table that records its own unit
    # (metadata/table_time.py) is written in it, and a contradicting option is refused.
    precision_given: bool = False
    compression: str = DEFAULT_COMPRESSION
    encoding: str | None = None
    # ``encoding.<column>`` overrides: sorted (column, ENCODING) pairs.
    column_encodings: tuple[tuple[str, str], ...] = ()
    max_rows_per_file: int = 5_000_000
    on_duplicate: Literal["error", "last"] = "error"
    merge_schema: bool = False
    storage_options: Mapping[str, Any] = field(default_factory=dict)
    # Delta's replaceWhere (mode overwrite): replace only the rows matching this predicate.
    replace_where: str | None = None
    # The zone ``replaceWhere`` binds in when Spark does not pass the session's to the commit.
    time_zone: str | None = None
    # The writer declares every row with time < this committed (docs/streaming.md): raw time
    # or ISO-8601, resolved at commit time, when the session time zone is known.
    complete_until: str | None = None
    # A copy-on-write (the catalog plugin's UPDATE, MERGE, DELETE): the written rows replace
    # exactly these parts of version ``rewrite_version``, in one ``rewrite_operation`` commit.
    rewrite_parts: tuple[str, ...] | None = None
    rewrite_version: int | None = None
    rewrite_operation: str | None = None
    # "keep": rows sharing a (device, time) all stay, the repeats in further parts (the
    # rewrite of an append-only table); "error": they are refused, as onDuplicate=error does;
    # "replace": refused within the write, whose rows replace the table's rows of their keys
    # (a ``key.duplicates = last`` table's UPDATE written as its updated rows only, no part
    # replaced: ``rewriteParts`` is empty).
    rewrite_duplicates: Literal["keep", "error", "replace"] = "error"
    # What the copy-on-write's commit records in the history besides its counts (the
    # statement's ``predicate``, an UPDATE's ``set``: the catalog plugin's session extensions
    # set it, tsfile_catalog.spark_catalog.history_parameters).
    rewrite_parameters: Mapping[str, str] = field(default_factory=dict)
    # The staging job whose folder records a replaceWhere's straddling parts, already
    # rewritten in Spark tasks (internal: Catalog.sql and the catalog plugin set it;
    # tsfile_catalog.write.replace_staging).
    replace_staged: str | None = None
    # Table properties the write's commit sets with its rows (internal: a CREATE or REPLACE
    # TABLE ... AS SELECT's TBLPROPERTIES, which Catalog.sql and the catalog plugin pass so
    # that the statement is one commit).
    table_properties: Mapping[str, str] = field(default_factory=dict)

    def settings(self) -> WriteSettings:
        """What the TsFile writer needs of these options."""
        return WriteSettings(
            compression=self.compression,
            encoding=self.encoding,
            on_duplicate=self.on_duplicate,
            column_encodings=self.column_encodings,
        )


ENCODING_PREFIX = "encoding."


def _column_encodings(options: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The ``encoding.<column>`` options as sorted (lower-case column, ENCODING) pairs; names
    no type accepts are refused here, the column and its type by ``validate_encoding``."""
    known = sorted({name for names in ENCODINGS.values() for name in names})
    out: dict[str, str] = {}
    for key, value in options.items():
        if not key.lower().startswith(ENCODING_PREFIX):
            continue
        column = key[len(ENCODING_PREFIX) :].strip().lower()
        if not column:
            raise OptionError(f"option '{key}' names no column; use 'encoding.<column>'")
        encoding = str(value).strip().upper()
        if encoding not in known:
            raise OptionError(
                f"option '{key}' = {value!r} is not a TsFile encoding; use one of "
                f"{', '.join(known)}"
            )
        if column in out and out[column] != encoding:
            raise OptionError(f"option 'encoding.{column}' is given twice, differently")
        out[column] = encoding
    return tuple(sorted(out.items()))


def parse_write_options(options: Mapping[str, str]) -> WriteOptions:
    column_encodings = _column_encodings(options)
    opts = _normalize(
        {k: v for k, v in options.items() if not k.lower().startswith(ENCODING_PREFIX)},
        _WRITE_KEYS,
        "write",
    )
    _choice(opts, "nullTagPolicy", "error", ("error",))
    compression = str(opts.get("compression", DEFAULT_COMPRESSION)).strip().upper()
    if compression not in COMPRESSIONS:
        raise OptionError(
            f"option 'compression' = {opts['compression']!r} is not supported; use one of "
            f"{', '.join(COMPRESSIONS)}"
        )
    encoding = opts.get("encoding")
    # Whether the encoding suits each column's type is checked against the schema
    # (validate_encoding); a name no type accepts is wrong whatever the schema.
    known = sorted({name for names in ENCODINGS.values() for name in names})
    if encoding and encoding.strip().upper() not in known:
        raise OptionError(
            f"option 'encoding' = {encoding!r} is not a TsFile encoding; use one of "
            f"{', '.join(known)}"
        )
    time_column = str(opts.get("timeColumn", "time")).strip()
    if not time_column:
        raise OptionError("option 'timeColumn' must not be empty")
    return WriteOptions(
        path=_path(opts),
        table=(opts.get("table") or "").strip() or None,
        time_column=time_column,
        tag_columns=_names(opts, "tagColumns"),
        field_columns=_names(opts, "fieldColumns"),
        precision=cast(TimeUnit, _choice(opts, "timestampPrecision", "ms", ("ms", "us", "ns"))),
        precision_given="timestampPrecision" in opts,
        compression=compression,
        encoding=encoding.strip().upper() if encoding else None,
        column_encodings=column_encodings,
        max_rows_per_file=cast(int, _int(opts, "maxRowsPerFile", 5_000_000, 1)),
        on_duplicate=cast(
            Literal["error", "last"], _choice(opts, "onDuplicate", "error", ("error", "last"))
        ),
        merge_schema=_bool(opts, "mergeSchema", False),
        storage_options=storage_options_from(opts),
        replace_where=(opts.get("replaceWhere") or "").strip() or None,
        time_zone=_time_zone(opts),
        complete_until=_complete_until(opts),
        replace_staged=_replace_staged(opts),
        rewrite_parameters=_json_strings(opts, "rewriteParameters"),
        table_properties=_table_properties(opts),
        **_rewrite(opts),
    )


def _json_strings(opts: Mapping[str, str], key: str) -> dict[str, str]:
    """Option ``key``: a JSON object of strings (absent: empty)."""
    if key not in opts:
        return {}
    try:
        value = json.loads(opts[key])
    except ValueError as e:
        raise OptionError(f"option '{key}' is not JSON: {e}") from e
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise OptionError(f"option '{key}' must be a JSON object of strings, got {opts[key]!r}")
    return value


def with_table_properties(
    options: Mapping[str, str], properties: Mapping[str, str]
) -> dict[str, str]:
    """Write ``options`` whose commit also sets ``properties`` (a CREATE or REPLACE TABLE ...
    AS SELECT's TBLPROPERTIES), as the ``tableProperties`` option this module parses."""
    out = dict(options)
    if properties:
        out["tableProperties"] = json.dumps(dict(properties), sort_keys=True)
    return out


def _table_properties(opts: Mapping[str, str]) -> dict[str, str]:
    """``tableProperties``, each checked as SET TBLPROPERTIES checks it."""
    properties = _json_strings(opts, "tableProperties")
    check_table_properties(properties)
    return properties


def _replace_staged(opts: Mapping[str, str]) -> str | None:
    value = opts.get("replaceStaged")
    if value is None:
        return None
    if not (opts.get("replaceWhere") or "").strip():
        raise OptionError(
            "option 'replaceStaged' is internal to a replaceWhere overwrite (Catalog.sql and "
            "the catalog plugin set it) and needs option 'replaceWhere'"
        )
    if not is_job_id(value.strip()):
        raise OptionError(
            f"option 'replaceStaged' = {value!r} is internal (Catalog.sql and the catalog "
            "plugin set it) and names a staging job: 12 lower-case hex digits"
        )
    return value.strip()


_REWRITE_OPERATIONS = ("UPDATE", "MERGE", "DELETE")


def _rewrite(opts: Mapping[str, str]) -> dict[str, Any]:
    """The copy-on-write options, all three or none."""
    names = ("rewriteParts", "rewriteVersion", "rewriteOperation", "rewriteDuplicates")
    given = [k for k in names if k in opts]
    if not given:
        return {}
    if len(given) != len(names):
        raise OptionError(
            f"options {', '.join(repr(n) for n in names)} go together "
            f"(the catalog plugin's copy-on-write sets them); got only {', '.join(given)}"
        )
    operation = str(opts["rewriteOperation"]).strip().upper()
    if operation not in _REWRITE_OPERATIONS:
        raise OptionError(
            f"option 'rewriteOperation' = {opts['rewriteOperation']!r}: use one of "
            f"{', '.join(_REWRITE_OPERATIONS)}"
        )
    return {
        "rewrite_parts": _json_names(opts, "rewriteParts"),
        "rewrite_version": _int(opts, "rewriteVersion", None, 0),
        "rewrite_operation": operation,
        "rewrite_duplicates": _choice(
            opts, "rewriteDuplicates", "error", ("keep", "error", "replace")
        ),
    }


def _json_names(opts: Mapping[str, str], key: str) -> tuple[str, ...] | None:
    """A JSON list of strings (part paths may hold commas)."""
    if key not in opts:
        return None
    try:
        value = json.loads(opts[key])
    except ValueError as e:
        raise OptionError(f"option '{key}' is not JSON: {e}") from e
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise OptionError(f"option '{key}' must be a JSON list of strings, got {opts[key]!r}")
    return tuple(value)


def _complete_until(opts: Mapping[str, str]) -> str | None:
    """The ``completeUntil`` text, its syntax checked now (the zone only matters later)."""
    text = (opts.get("completeUntil") or "").strip()
    if not text:
        return None
    parse_complete_until(text, "ms", "UTC")
    return text


# -- streaming reads (spark.readStream) -------------------------------------------------------

_STREAM_KEYS = (
    "startingVersion",
    "startingTimestamp",
    "maxPartsPerTrigger",
    "maxRowsPerTrigger",
    "skipChangeCommits",
    "partWatermark",
)


@dataclass(frozen=True)
class StreamOptions:
    """The options only ``spark.readStream`` takes (docs/streaming.md); the batch options
    it shares with ``spark.read`` stay in :class:`ReadOptions`."""

    starting_version: int | Literal["latest"] | None = None
    starting_timestamp: str | None = None
    max_parts: int | None = None
    max_rows: int | None = None
    skip_change_commits: bool = False
    part_watermark: bool = False

    @property
    def limited(self) -> bool:
        return self.max_parts is not None or self.max_rows is not None


def split_stream_options(options: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(the batch read options, the streaming-only ones), names matched case-insensitively."""
    canonical = {k.lower(): k for k in _STREAM_KEYS}
    batch: dict[str, str] = {}
    stream: dict[str, str] = {}
    for key, value in options.items():
        if key.lower() in canonical:
            stream[canonical[key.lower()]] = value
        else:
            batch[key] = value
    return batch, stream


def parse_stream_options(stream: Mapping[str, str], read: ReadOptions) -> StreamOptions:
    """The streaming-only options (as :func:`split_stream_options` splits them), checked
    against the batch ones they must agree with.

    Raises:
        OptionError: naming the option at fault.
    """
    starting: int | Literal["latest"] | None = None
    text = str(stream.get("startingVersion", "")).strip()
    if text.lower() == "latest":
        starting = "latest"
    elif text:
        starting = _int(stream, "startingVersion", None, 0)
    timestamp = str(stream.get("startingTimestamp", "")).strip() or None
    if starting is not None and timestamp is not None:
        raise OptionError(
            "options 'startingVersion' and 'startingTimestamp' are mutually exclusive"
        )
    part_watermark = _bool(stream, "partWatermark", False)
    if part_watermark and read.timestamp_as != "timestamp":
        raise OptionError(
            "option 'partWatermark' needs timestampAs=timestamp: Spark's event-time watermark "
            "(withWatermark) works on timestamp columns only"
        )
    return StreamOptions(
        starting_version=starting,
        starting_timestamp=timestamp,
        max_parts=_int(stream, "maxPartsPerTrigger", None, 1),
        max_rows=_int(stream, "maxRowsPerTrigger", None, 1),
        skip_change_commits=_bool(stream, "skipChangeCommits", False),
        part_watermark=part_watermark,
    )


# -- the change data feed (readChangeFeed, docs/sql.md) ----------------------------------------

_CHANGE_FEED_KEYS = ("readChangeFeed", "endingVersion", "endingTimestamp", "deduplicationMode")
_DEDUPLICATION_MODES = {"none": False, "dropcarryovers": False, "netchanges": True}


@dataclass(frozen=True)
class ChangeFeedOptions:
    """A change feed's range (Delta's option names; both ends included) and whether it is
    the range's net changes (Spark's ``deduplicationMode = netChanges``). The start comes
    from ``startingVersion``/``startingTimestamp``, which a stream reads too."""

    starting_version: int | None = None
    starting_timestamp: str | None = None
    ending_version: int | None = None
    ending_timestamp: str | None = None
    net: bool = False


def split_change_feed_options(
    options: Mapping[str, str],
) -> tuple[dict[str, str], dict[str, str]]:
    """(every other option, the change feed's own), names matched case-insensitively."""
    canonical = {k.lower(): k for k in _CHANGE_FEED_KEYS}
    rest: dict[str, str] = {}
    own: dict[str, str] = {}
    for key, value in options.items():
        if key.lower() in canonical:
            own[canonical[key.lower()]] = value
        else:
            rest[key] = value
    return rest, own


def reads_change_feed(own: Mapping[str, str]) -> bool:
    """Whether ``readChangeFeed`` is on (``own`` as :func:`split_change_feed_options` splits).

    Raises:
        OptionError: its value is no boolean, or an ending option without it.
    """
    enabled = _bool(own, "readChangeFeed", False)
    if not enabled:
        extra = sorted(k for k in own if k != "readChangeFeed")
        if extra:
            raise OptionError(
                f"option '{extra[0]}' applies to a change feed only: set readChangeFeed=true"
            )
    return enabled


def parse_change_feed_options(
    own: Mapping[str, str], stream: Mapping[str, str], *, streaming: bool
) -> ChangeFeedOptions:
    """The range of a change feed: ``own`` and ``stream`` as the split functions return them.

    Raises:
        OptionError: naming the option at fault.
    """
    starting: int | None = None
    text = str(stream.get("startingVersion", "")).strip()
    if text.lower() == "latest" and not streaming:
        raise OptionError(
            "option 'startingVersion' = 'latest' applies to a stream; a batch change feed "
            "needs a version number"
        )
    if text and text.lower() != "latest":
        starting = _int(stream, "startingVersion", None, 0)
    mode = str(own.get("deduplicationMode", "dropCarryovers")).strip()
    if mode.lower() not in _DEDUPLICATION_MODES:
        raise OptionError(
            f"option 'deduplicationMode' = {mode!r}: use 'none', 'dropCarryovers' or 'netChanges'"
        )
    if streaming:
        extra = sorted(k for k in own if k in ("endingVersion", "endingTimestamp"))
        if extra:
            raise OptionError(
                f"option '{extra[0]}' bounds a batch change feed; a stream has no end"
            )
    return ChangeFeedOptions(
        starting_version=starting,
        starting_timestamp=str(stream.get("startingTimestamp", "")).strip() or None,
        ending_version=_int(own, "endingVersion", None, 0),
        ending_timestamp=str(own.get("endingTimestamp", "")).strip() or None,
        net=_DEDUPLICATION_MODES[mode.lower()],
    )


# -- the streaming sink (issue 11) ----------------------------------------------------------

# What ``df.writeStream.format("tsfile")`` accepts beyond the batch write options. Spark hands
# the sink its own ``checkpointLocation`` among the options (measured on 4.3); it is Spark's.
_STREAM_WRITE_KEYS = ("checkpointLocation", "completeUntilDelay")
_NANOS_PER_UNIT = {"ms": 1_000_000, "us": 1_000, "ns": 1}


@dataclass(frozen=True)
class StreamWriteOptions:
    write: WriteOptions
    # ``completeUntilDelay`` in nanoseconds; None: the sink declares no completeness.
    complete_until_delay_ns: int | None = None

    def complete_until_delay(self, unit: TimeUnit) -> int | None:
        """``completeUntilDelay`` in raw ``unit``s, the table's (rounded up, so the
        declaration never claims more than asked); None: none declared."""
        if self.complete_until_delay_ns is None:
            return None
        return -(-self.complete_until_delay_ns // _NANOS_PER_UNIT[unit])


def parse_stream_write_options(options: Mapping[str, str]) -> StreamWriteOptions:
    """The streaming sink's options: the batch writer's (same names, same checks) plus
    ``completeUntilDelay``; ``replaceWhere`` is refused (the sink only appends)."""
    # Unknown names fail listing every valid one, the stream's included.
    own = _normalize(options, (*_WRITE_KEYS, *_STREAM_WRITE_KEYS), "streaming write")
    lowered = {k.lower() for k in _STREAM_WRITE_KEYS}
    write = parse_write_options({k: v for k, v in options.items() if k.lower() not in lowered})
    if write.replace_where is not None:
        raise OptionError(
            f"option 'replaceWhere' = {write.replace_where!r} is not supported by the streaming "
            "sink, which only appends (output mode append)"
        )
    delay = None
    text = own.get("completeUntilDelay")
    if text is not None:
        try:
            nanos = parse_interval_ns(str(text))
        except PredicateError as e:
            raise OptionError(f"option 'completeUntilDelay' = {text!r}: {e}") from None
        delay = nanos
    return StreamWriteOptions(write, delay)
