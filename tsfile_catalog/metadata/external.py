"""External parts, the pure rules: ADD PART options, Hive partitions, and how a file's columns
become the table's.

``ALTER TABLE t ADD PART OPTIONS (path '…', format 'parquet' …)`` adds Parquet, ORC or CSV files
in place, as CarbonData's "add segment" and Iceberg's ``add_files`` do. Everything here is
decided from names and types alone (the file's columns as :class:`FileColumn`), so each error
is testable without a file: the format adapters (:mod:`tsfile_catalog.formats.external`) read
footers and hand the columns in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tsfile_catalog.exceptions import DataError, OptionError, SchemaError, SchemaMismatchError
from tsfile_catalog.metadata.schema import TIME_COLUMN, Category, Column, DataType, TableSchema
from tsfile_catalog.metadata.schema_merge import merge_schema as _merge_schema

__all__ = [
    "EXTERNAL_FORMATS",
    "COLUMN_NAMES_OPTION",
    "TIME_UNITS",
    "CSV_OPTIONS",
    "AddPartOptions",
    "FileColumn",
    "ColumnMapping",
    "parse_add_part_options",
    "parse_partition_spec",
    "partition_keys",
    "partition_values",
    "unescape_path_name",
    "HIVE_DEFAULT_PARTITION",
    "map_columns",
]

EXTERNAL_FORMATS = ("parquet", "orc", "csv")
# The read option an external part records when a table column is known by another physical
# name than the file's column matched at ADD: a JSON object, physical name -> file column.
COLUMN_NAMES_OPTION = "columnNames"
TIME_UNITS = ("ms", "us", "ns")
CSV_OPTIONS = ("header", "delimiter", "quote", "nullValue")

# Options a part records for its reader; the rest (path, format, partition, mergeSchema)
# only steer the ADD.
_KNOWN = {
    "path",
    "format",
    "partition",
    "timecolumn",
    "timestampprecision",
    "mergeschema",
    *(k.lower() for k in CSV_OPTIONS),
}
_SPELLING = {
    "timecolumn": "timeColumn",
    "timestampprecision": "timestampPrecision",
    "mergeschema": "mergeSchema",
    "nullvalue": "nullValue",
}
_PARTITION_SPEC = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([A-Za-z]+)\s*")
_STRING_TYPES = ("string", "varchar", "char")
_HIVE_DIR = re.compile(r"([^=/]+)=([^/]*)")
_JAVA_HEX = re.compile(r"[+-]?[0-9A-Fa-f]+")
# The folder value Hive and Spark write for a null (or empty) partition value.
HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"


@dataclass(frozen=True, slots=True)
class AddPartOptions:
    """The options of one ``ADD PART``, validated; keys are case-insensitive on input.

    ``read_options`` is what each part records for its reader (the time column, its unit,
    the CSV dialect), with canonical key spellings.
    """

    path: str
    format: str
    partition: tuple[str, ...] | None = None
    time_column: str = TIME_COLUMN
    precision: str = "ms"
    merge_schema: bool = False
    csv: Mapping[str, str] = field(default_factory=dict)

    @property
    def read_options(self) -> dict[str, str]:
        out = {"timeColumn": self.time_column, "timestampPrecision": self.precision}
        out.update(self.csv)
        return out


def _bool(key: str, value: str) -> bool:
    lowered = value.strip().lower()
    if lowered not in ("true", "false"):
        raise OptionError(f"ADD PART option {key!r} must be 'true' or 'false', got {value!r}")
    return lowered == "true"


def parse_add_part_options(
    options: Mapping[str, str], *, default_precision: str = "ms"
) -> AddPartOptions:
    """Validate ``ADD PART`` options (keys case-insensitive).

    Raises:
        OptionError: a missing ``path``/``format``, an unknown key or format, a bad value;
            the message names the option.
    """
    lowered: dict[str, str] = {}
    for key, value in options.items():
        low = key.lower()
        if low not in _KNOWN:
            raise OptionError(
                f"unknown ADD PART option {key!r}; the options are path, format, partition, "
                f"timeColumn, timestampPrecision, mergeSchema and for CSV {', '.join(CSV_OPTIONS)}"
            )
        if low in lowered:
            raise OptionError(f"ADD PART option {key!r} is given twice")
        lowered[low] = value
    for required in ("path", "format"):
        if not lowered.get(required, "").strip():
            raise OptionError(
                f"ADD PART needs the option {required!r} (path 'file, directory or glob', "
                f"format '{'|'.join(EXTERNAL_FORMATS)}')"
            )
    fmt = lowered["format"].strip().lower()
    if fmt not in EXTERNAL_FORMATS:
        raise OptionError(
            f"ADD PART option 'format' = {lowered['format']!r} is not supported; use one of "
            f"{', '.join(EXTERNAL_FORMATS)} (TsFiles are added by writing or adopting them)"
        )
    precision = lowered.get("timestampprecision", default_precision).strip().lower()
    if precision not in TIME_UNITS:
        raise OptionError(
            f"ADD PART option 'timestampPrecision' = {precision!r} must be one of "
            f"{', '.join(TIME_UNITS)}"
        )
    csv_keys = {k.lower() for k in CSV_OPTIONS}
    csv = {_SPELLING.get(k, k): v for k, v in lowered.items() if k in csv_keys}
    if csv and fmt != "csv":
        raise OptionError(
            f"ADD PART options {', '.join(sorted(csv))} are CSV options, but format is {fmt!r}"
        )
    if "header" in csv:
        csv["header"] = "true" if _bool("header", csv["header"]) else "false"
    for key in ("delimiter", "quote"):
        if key in csv and len(csv[key]) != 1:
            raise OptionError(f"ADD PART option {key!r} must be one character, got {csv[key]!r}")
    partition = lowered.get("partition")
    return AddPartOptions(
        path=lowered["path"].strip(),
        format=fmt,
        partition=None if partition is None else parse_partition_spec(partition, options),
        time_column=lowered.get("timecolumn", TIME_COLUMN).strip().lower(),
        precision=precision,
        merge_schema=_bool("mergeSchema", lowered.get("mergeschema", "false")),
        csv=csv,
    )


def parse_partition_spec(value: str, options: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The directory keys of ``partition 'city:string,device:string'``, lower-cased.

    Raises:
        OptionError: "invalid partition option" for anything but ``name:type`` pairs (the
            ``day=20211123 and hour=12`` and ``day=20211123,hour=12`` forms among them), or a
            non-string type (partition values become TAG values, which are strings).
    """
    shown = dict(options) if options is not None else {"partition": value}
    keys: list[str] = []
    for item in value.split(","):
        match = _PARTITION_SPEC.fullmatch(item)
        if match is None:
            raise OptionError(
                f"invalid partition option: {shown}: partition takes 'key:string, …' pairs "
                "naming the directory keys of key=value folders (e.g. 'city:string,device:string')"
            )
        name, type_ = match.group(1).lower(), match.group(2).lower()
        if type_ not in _STRING_TYPES:
            raise OptionError(
                f"invalid partition option: {shown}: key {name!r} is declared {type_}, but "
                "partition values become TAG values, which are strings: declare it "
                f"'{name}:string'"
            )
        if name in keys:
            raise OptionError(f"invalid partition option: {shown}: key {name!r} is named twice")
        keys.append(name)
    return tuple(keys)


def unescape_path_name(text: str) -> str:
    """A Hive partition folder's key or value as written: ``%XX`` escapes decoded exactly as
    Spark's ``ExternalCatalogUtils.unescapePathName`` does (``a%2Fb`` is ``a/b``, ``50%25``
    is ``50%``; a ``%`` not followed by two characters Java parses as hex stays)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        pair = text[i + 1 : i + 3]
        # Java's Integer.parseInt(pair, 16) accepts a sign: "+F" is 15, "-0" is 0.
        if text[i] == "%" and i + 2 < len(text) and _JAVA_HEX.fullmatch(pair):
            code = int(pair, 16)
            if code >= 0:
                out.append(chr(code))
                i += 3
                continue
        out.append(text[i])
        i += 1
    return "".join(out)


def _hive_folder(component: str) -> tuple[str, str] | None:
    """(key lower-cased, raw value) of a ``key=value`` folder name, unescaped; None for
    another folder."""
    match = _HIVE_DIR.fullmatch(component)
    if match is None:
        return None
    return unescape_path_name(match.group(1)).lower(), unescape_path_name(match.group(2))


def partition_keys(relative_paths: Sequence[str]) -> tuple[str, ...]:
    """The ``key=value`` folder keys found below the added path, in first-seen order."""
    out: list[str] = []
    for relative in relative_paths:
        for component in relative.split("/")[:-1]:
            folder = _hive_folder(component)
            if folder is not None and folder[0] not in out:
                out.append(folder[0])
    return tuple(out)


def partition_values(url: str, keys: Sequence[str]) -> dict[str, str]:
    """The values of ``keys`` from the ``key=value`` folders of a file's ``url`` (the
    deepest folder wins; a file may sit in a leaf partition folder given as the path),
    unescaped as Spark's partition discovery does.

    Raises:
        SchemaError: a key has no folder on the file's path.
        DataError: a key's folder holds a null (``__HIVE_DEFAULT_PARTITION__``, what Spark
            writes for a null or empty value) or is empty: partition values are TAG values,
            which cannot be null.
    """
    found: dict[str, str] = {}
    for component in url.split("/")[:-1]:
        folder = _hive_folder(component)
        if folder is not None:
            found[folder[0]] = folder[1]
    missing = [k for k in keys if k not in found]
    if missing:
        raise SchemaError(
            f"{url}: the partition option names {', '.join(missing)}, but the file is not in a "
            f"{missing[0]}=… folder; add the file's partition folders or drop the key"
        )
    for key in keys:
        if found[key] in ("", HIVE_DEFAULT_PARTITION):
            raise DataError(
                f"{url}: its {key}={found[key]} folder holds a null {key} (Spark writes a null "
                f"or empty value as {HIVE_DEFAULT_PARTITION}), but {key} is a TAG and every row "
                "needs its TAG values: leave that folder out of the path (a glob), or give its "
                "rows a value"
            )
    return {k: found[k] for k in keys}


@dataclass(frozen=True, slots=True)
class FileColumn:
    """A file's column as the adapter read it: ``type`` None means TsFile cannot hold it
    (``native`` says what it is: decimal, list, map, …)."""

    name: str
    type: DataType | None
    native: str


@dataclass(frozen=True, slots=True)
class ColumnMapping:
    """Where each table column comes from in one file: ``sources`` maps a table column to
    the file's column name (None: the file lacks that FIELD, read as null); TAGs given by
    ``partition`` folders are in neither (their values are per file). ``schema`` is the table
    schema the file needs (with ``mergeSchema`` FIELDs added)."""

    time_source: str
    sources: Mapping[str, str | None]
    schema: TableSchema


def map_columns(
    where: str,
    columns: Sequence[FileColumn],
    table: TableSchema,
    *,
    time_column: str = TIME_COLUMN,
    partition: Sequence[str] = (),
    merge_schema: bool = False,
) -> ColumnMapping:
    """Match a file's columns to the table by name, case-insensitively.

    Rules (``docs/external-parts.md``): the time column must be there; every TAG must come
    from the file (as strings) or from ``partition``; FIELDs must have the table's type or a
    widening an append allows (:func:`~tsfile_catalog.metadata.schema_merge.merge_schema`),
    a FIELD the file lacks reads as null, a column the table lacks is an error unless
    ``merge_schema`` adds it. A type TsFile cannot hold (decimal, list, struct, …) is an
    error for any column, used by the table or not: one rule, so no column of a file is
    left unread at ADD to surface under a later ADD COLUMNS.

    Raises:
        SchemaMismatchError / UnsupportedTypeError (both :class:`SchemaError`): naming
            ``where``, the column and the fix.
    """
    by_name: dict[str, FileColumn] = {}
    for col in columns:
        low = col.name.lower()
        if low in by_name:
            raise SchemaMismatchError(
                f"{where}: columns '{by_name[low].name}' and '{col.name}' differ only in case; "
                "table columns are matched case-insensitively, so rename one"
            )
        by_name[low] = col
    time_source = by_name.get(time_column)
    if time_source is None:
        raise SchemaMismatchError(
            f"{where}: no time column '{time_column}' (the file has "
            f"{', '.join(c.name for c in columns)}); name the file's time column with the "
            "timeColumn option"
        )
    sources: dict[str, str | None] = {}
    for tag in table.tags:
        if tag.name in partition:
            if tag.name in by_name:
                raise SchemaMismatchError(
                    f"{where}: TAG '{tag.name}' is both a file column and a partition key; "
                    "drop it from the partition option"
                )
            continue
        found = by_name.get(tag.name)
        if found is None:
            raise SchemaMismatchError(
                f"{where}: TAG column '{tag.name}' of table '{table.table}' is missing; every "
                "TAG must be a file column or a partition key (partition option)"
            )
        if found.type is None or not found.type.is_string:
            shown = found.native if found.type is None else found.type.value
            raise SchemaMismatchError(
                f"{where}: TAG column '{found.name}' has type {shown}; TAG columns must be "
                "strings: cast it to string in the file, or add the file with another table"
            )
        sources[tag.name] = found.name
    for key in partition:
        column = table.column(key)
        if column is None or column.category is not Category.TAG:
            raise SchemaMismatchError(
                f"{where}: partition key '{key}' is not a TAG column of table '{table.table}' "
                f"(its TAGs are {', '.join(table.tag_names) or 'none'}); partition folders "
                "give TAG values"
            )
    incoming: list[Column] = list(table.tags)
    for low, col in by_name.items():
        if low == time_column or low in sources:
            continue
        existing = table.column(low)
        if col.type is None:
            # Refused even when the table has no such column, as an extra column of a type
            # TsFile holds is: a column left unread at ADD would surface later under a column
            # of that name added with ADD COLUMNS, read from a type it cannot hold.
            raise SchemaMismatchError(
                f"{where}: column '{col.name}' has type {col.native}, which TsFile cannot hold; "
                "drop the column from the file or cast it to a supported type"
            )
        if existing is None and not merge_schema:
            raise SchemaMismatchError(
                f"{where}: column '{col.name}' is not in table '{table.table}'; add it with "
                "mergeSchema 'true', or drop it from the file"
            )
        incoming.append(Column(low, col.type, Category.FIELD))
        sources[low] = col.name
    try:
        schema = _merge_schema(table, TableSchema(table.table, tuple(incoming)), merge=merge_schema)
    except SchemaMismatchError as e:
        raise SchemaMismatchError(f"{where}: {e}") from e
    for field_column in schema.fields:
        sources.setdefault(field_column.name, None)
    return ColumnMapping(time_source.name, sources, schema)
