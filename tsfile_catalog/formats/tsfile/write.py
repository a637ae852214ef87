"""Writing a TsFile: encodings and compression, the native configuration, the writer.

The native writer's configuration is process-global and keyed by physical type, and its
first use in a process resets it; both are handled here, once, under one lock. Rows reach
the writer sorted and deduplicated (:mod:`~tsfile_catalog.formats.tsfile.sort`).
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from tsfile_catalog.exceptions import DataError, OptionError
from tsfile_catalog.formats.tsfile.native import native
from tsfile_catalog.formats.tsfile.sort import sort_and_dedupe
from tsfile_catalog.metadata.schema import (
    TIME_COLUMN,
    Category,
    Column,
    DataType,
    TableSchema,
)

__all__ = [
    "ENCODINGS",
    "COMPRESSIONS",
    "DEFAULT_ENCODINGS",
    "DEFAULT_COMPRESSION",
    "WriteSettings",
    "native_encodings",
    "validate_encoding",
    "write_file",
]

# Encodings the native writer accepts and round-trips losslessly, per TsFile type (measured on
# tsfile 2.5: TS_2DIFF/SPRINTZ/CAMEL lose precision on DOUBLE, ZIGZAG/SPRINTZ fail on DATE and
# TIMESTAMP, RLE is refused for BOOLEAN, DICTIONARY for BLOB).
_INT_ENCODINGS = ("PLAIN", "RLE", "TS_2DIFF", "GORILLA", "ZIGZAG", "CHIMP", "SPRINTZ", "RLBE")


ENCODINGS: Mapping[DataType, tuple[str, ...]] = {
    DataType.BOOLEAN: ("PLAIN",),
    DataType.INT32: _INT_ENCODINGS,
    DataType.INT64: _INT_ENCODINGS,
    DataType.DATE: ("PLAIN", "RLE", "TS_2DIFF", "GORILLA", "CHIMP", "RLBE"),
    DataType.TIMESTAMP: ("PLAIN", "RLE", "TS_2DIFF", "GORILLA", "CHIMP", "RLBE"),
    DataType.FLOAT: ("PLAIN", "GORILLA", "CHIMP", "RLBE"),
    DataType.DOUBLE: ("PLAIN", "GORILLA", "CHIMP", "RLBE"),
    DataType.TEXT: ("PLAIN", "DICTIONARY"),
    DataType.STRING: ("PLAIN", "DICTIONARY"),
    DataType.BLOB: ("PLAIN",),
}


# Per-type defaults and the ZSTD default are the smallest lossless choices measured on the
# realistic sensor data set (``python -m bench.encodings`` -> docs/benchmarks-encodings.md):
# PLAIN beats GORILLA on random-walk FLOAT/DOUBLE once ZSTD compresses the bytes; TS_2DIFF is
# smallest for counters and times; DICTIONARY for low-cardinality strings. TEXT/STRING share
# one native setting with BLOB, which cannot use DICTIONARY (see native_encodings).
DEFAULT_ENCODINGS: Mapping[DataType, str] = {
    DataType.BOOLEAN: "PLAIN",
    DataType.INT32: "TS_2DIFF",
    DataType.INT64: "TS_2DIFF",
    DataType.DATE: "TS_2DIFF",
    DataType.TIMESTAMP: "TS_2DIFF",
    DataType.FLOAT: "PLAIN",
    DataType.DOUBLE: "PLAIN",
    DataType.TEXT: "DICTIONARY",
    DataType.STRING: "DICTIONARY",
    DataType.BLOB: "PLAIN",
}


DEFAULT_COMPRESSION = "ZSTD"


COMPRESSIONS = ("UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "LZ4", "ZSTD", "LZMA2")


# The native config is keyed by physical type, so DATE shares INT32's encoding and TIMESTAMP
# INT64's; a DATE column therefore constrains what INT32 columns may use and vice versa.
_CONFIG_KEY: Mapping[DataType, str] = {
    DataType.BOOLEAN: "boolean_encoding_type_",
    DataType.INT32: "int32_encoding_type_",
    DataType.DATE: "int32_encoding_type_",
    DataType.INT64: "int64_encoding_type_",
    DataType.TIMESTAMP: "int64_encoding_type_",
    DataType.FLOAT: "float_encoding_type_",
    DataType.DOUBLE: "double_encoding_type_",
    DataType.TEXT: "string_encoding_type_",
    DataType.STRING: "string_encoding_type_",
    DataType.BLOB: "string_encoding_type_",
}


# set_tsfile_config is process-global; one writer configures and writes at a time.
_CONFIG_LOCK = threading.Lock()


# Whether this process has run the native library's one-time init (see _init_native).
_native_ready = False


@dataclass(frozen=True)
class WriteSettings:
    compression: str = DEFAULT_COMPRESSION
    encoding: str | None = None
    on_duplicate: str = "error"
    # ``encoding.<column>`` overrides as sorted (column, ENCODING) pairs: hashable, and in
    # the same order however the options were spelled.
    column_encodings: tuple[tuple[str, str], ...] = ()

    def encoding_for(self, type_: DataType) -> str:
        return self.encoding or DEFAULT_ENCODINGS[type_]


def validate_encoding(schema: TableSchema, settings: WriteSettings) -> None:
    """Refuse encodings a column's type cannot use, or would store lossily, and per-column
    overrides the native writer cannot honour.

    Unknown compression and encoding names are refused earlier, by ``parse_write_options``.
    """
    native_encodings(schema, settings)


def native_encodings(schema: TableSchema, settings: WriteSettings) -> dict[str, str]:
    """The encoding per native config key (``double_encoding_type_``, ...) for ``schema``'s
    FIELD columns under ``settings``.

    TsFile 2.5 takes encodings per *physical type*, not per column, so an ``encoding.<c>``
    override sets the encoding of every FIELD column sharing ``c``'s physical type (DATE
    shares INT32's, TIMESTAMP INT64's, the string types one): two overrides that disagree on
    one physical type, or an override another column of that physical type cannot use, are
    refused rather than silently ignored.

    Raises:
        OptionError: naming the option, the column(s) and their types.
    """
    overrides = dict(settings.column_encodings)
    fields = {col.name: col for col in schema.fields}
    for name in overrides:
        if name not in fields:
            kind = "a TAG column" if schema.column(name) is not None else "no column"
            raise OptionError(
                f"option 'encoding.{name}' names {kind} of table '{schema.table}'; per-column "
                f"encodings apply to FIELD columns: {', '.join(fields) or '(none)'}"
            )
    # The explicit choice per config key, and the column that made it.
    chosen: dict[str, tuple[str, str]] = {}
    for name, encoding in overrides.items():
        col = fields[name]
        _check_allowed(col, encoding, f"encoding.{name}")
        key = _CONFIG_KEY[col.type]
        if key in chosen and chosen[key][1] != encoding:
            other = chosen[key][0]
            raise OptionError(
                f"option 'encoding.{name}' = {encoding!r} conflicts with 'encoding.{other}' = "
                f"{chosen[key][1]!r}: TsFile 2.5 sets one encoding per physical type, and "
                f"columns '{name}' ({col.type.value}) and '{other}' ({fields[other].type.value}) "
                "share one; give them the same encoding"
            )
        chosen[key] = (name, encoding)
    out: dict[str, str] = {}
    for col in schema.fields:
        key = _CONFIG_KEY[col.type]
        if key in chosen:
            source, encoding = chosen[key]
            if source != col.name:
                _check_allowed(
                    col,
                    encoding,
                    f"encoding.{source}",
                    why=f" (it also applies to '{col.name}', which shares the physical type of "
                    f"'{source}' in TsFile 2.5)",
                )
        elif settings.encoding is not None:
            encoding = settings.encoding
            _check_allowed(col, encoding, "encoding")
        else:
            # Per-type defaults of types sharing a key may differ (DICTIONARY for strings,
            # which BLOB cannot use): then every column of that key gets PLAIN, which all allow.
            encoding = DEFAULT_ENCODINGS[col.type]
            if out.get(key, encoding) != encoding:
                encoding = "PLAIN"
        out[key] = encoding
    return out


def _check_allowed(col: Column, encoding: str, option: str, why: str = "") -> None:
    allowed = ENCODINGS[col.type]
    if encoding not in allowed:
        raise OptionError(
            f"option '{option}' = {encoding!r} cannot be used for column '{col.name}' of type "
            f"{col.type.value} (it is unsupported or lossy there){why}; {col.type.value} allows "
            f"{', '.join(allowed)}"
        )


def _init_native() -> None:
    """Run the native library's one-time init before anyone configures it.

    The 2.5 library initialises lazily, inside the first writer (or reader) a process
    creates, and that init overwrites the whole configuration with its defaults. Left alone,
    the first part every fresh process (each Spark Python worker) writes would silently use
    the native compression and encodings instead of the ones ``_configure`` just set. A
    throwaway writer forces the init once, so later ``set_tsfile_config`` calls stick. Call
    with ``_CONFIG_LOCK`` held.
    """
    global _native_ready
    if _native_ready:
        return
    tsfile = native()
    with tempfile.TemporaryDirectory(prefix="tsfile-catalog-init-") as scratch:
        tsfile.TsFileWriter(os.path.join(scratch, "init.tsfile")).close()
    _native_ready = True


def _configure(schema: TableSchema, settings: WriteSettings) -> None:
    tsfile = native()
    config: dict[str, Any] = {"default_compression_type_": tsfile.Compressor[settings.compression]}
    # Reset every key so a previous task's choice never leaks into this file.
    for type_, key in _CONFIG_KEY.items():
        config.setdefault(key, tsfile.TSEncoding[DEFAULT_ENCODINGS[type_]])
    for key, encoding in native_encodings(schema, settings).items():
        config[key] = tsfile.TSEncoding[encoding]
    tsfile.set_tsfile_config(config)


def _native_schema(schema: TableSchema) -> Any:
    tsfile = native()
    columns = [
        tsfile.ColumnSchema(
            c.name,
            # TEXT-typed TAGs lose values in the 2.5 writer; STRING is the safe TAG type.
            tsfile.TSDataType.STRING
            if c.category is Category.TAG
            else tsfile.TSDataType[c.type.value],
            tsfile.ColumnCategory[c.category.value],
        )
        for c in schema.columns
    ]
    return tsfile.TableSchema(schema.table, columns)


def write_file(
    local_path: str,
    data: pa.Table,
    schema: TableSchema,
    settings: WriteSettings,
    *,
    chunk_rows: int = 65_536,
) -> None:
    """Write sorted, deduplicated ``data`` (raw TsFile Arrow types) to a new local TsFile.

    The native writer refuses an existing path and leaves a corrupt file when it fails, so
    a failure here removes whatever was written.
    """
    tsfile = native()
    ordered = sort_and_dedupe(data, schema, settings.on_duplicate)
    time_index = ordered.schema.get_field_index(TIME_COLUMN)
    with _CONFIG_LOCK:
        _init_native()
        _configure(schema, settings)
        if os.path.exists(local_path):
            # The native writer refuses it too, but only after its own state is set up.
            raise DataError(f"{local_path} already exists; TsFile parts are never rewritten")
        writer = tsfile.TsFileTableWriter(local_path, _native_schema(schema))
        try:
            for batch in ordered.to_batches(max_chunksize=chunk_rows):
                writer.writer.write_arrow_batch(schema.table, batch, time_index)
            writer.close()
        except Exception as e:
            try:
                writer.close()
            except Exception:  # the native writer is already poisoned; the file goes anyway
                pass
            if os.path.exists(local_path):
                os.remove(local_path)
            raise DataError(f"the TsFile writer rejected the data for {local_path}: {e}") from e
