"""Parquet checkpoints: a snapshot as one row per part (``<version>.checkpoint.parquet``).

A JSON checkpoint of 10,000 parts x 100 devices is hundreds of megabytes and seconds to
decode, because every device of every part becomes Python objects before anything is
planned. Here the columns a plan reads (path, counts, time range, schema id, version, format,
TAG value sets) are real Parquet columns, and the rest is kept as the JSON the commit files
carry, per part:

* ``devices``: the part's device list as JSON text, decoded only when a plan looks at that
  part's devices (:class:`~tsfile_catalog.metadata.lazy_stats.DeviceList`): a time range or
  TAG set usually keeps a few parts, so only their devices are ever built;
* ``fields``: the FIELD statistics (a few per part, typed by the snapshot schema);
* ``extra``: every key of ``PartFile.to_json()`` this mapping does not model as a column
  (an external part's ``read_options``/``partition_values``, and any key a later release
  adds), so the mapping is lossless whatever the part JSON grows; parts with extra keys are
  decoded by ``PartFile.from_json`` itself.

Snapshot-level data (schema, properties, table UUID, format version, and any key a later
release adds to ``Snapshot.to_json()``) is the snapshot's JSON without ``parts``, stored in
the file's key-value metadata under :data:`SNAPSHOT_KEY` and decoded by ``decode_snapshot``.
``docs/manifest-format.md`` has the layout and the versioning rules.
"""

from __future__ import annotations

import io as _io
import json
from bisect import bisect_right
from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import partial
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from tsfile_catalog.exceptions import CorruptManifestError, TsFileCatalogError
from tsfile_catalog.io import FileIO, join_url
from tsfile_catalog.metadata.lazy_stats import DeviceList, FieldStatsMap
from tsfile_catalog.metadata.manifest import Snapshot, decode_snapshot, written_format_version
from tsfile_catalog.metadata.ownership import MANIFEST_DIR
from tsfile_catalog.metadata.parts import (
    PartFile,
    TagStats,
    validate_external_url,
    validate_relative_path,
)
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.table.log import LAST_CHECKPOINT, parquet_checkpoint_url

__all__ = [
    "SNAPSHOT_KEY",
    "decode_parquet_snapshot",
    "encode_parquet_snapshot",
    "part_row",
    "write_checkpoint",
]

SNAPSHOT_KEY = b"tsfile_catalog.snapshot"
# Parts per row group: the unit in which device lists are read (see _DeviceColumn).
ROW_GROUP_PARTS = 1024

_TAG = pa.struct(
    [
        ("name", pa.string()),
        ("min", pa.string()),
        ("max", pa.string()),
        ("has_null", pa.bool_()),
        ("values", pa.list_(pa.string())),
    ]
)
SCHEMA = pa.schema(
    [
        ("path", pa.string()),
        ("format", pa.string()),
        ("external", pa.bool_()),
        ("size_bytes", pa.int64()),
        ("row_count", pa.int64()),
        ("min_time", pa.int64()),
        ("max_time", pa.int64()),
        ("schema_id", pa.int64()),
        ("added_version", pa.int64()),
        ("tags", pa.list_(_TAG)),
        ("fields", pa.string()),
        ("has_devices", pa.bool_()),
        ("devices", pa.string()),
        ("extra", pa.string()),
    ]
)
_EAGER = [name for name in SCHEMA.names if name != "devices"]
_EAGER_SCHEMA = pa.schema([SCHEMA.field(name) for name in _EAGER])
_SCALARS = (
    "path",
    "format",
    "external",
    "size_bytes",
    "row_count",
    "min_time",
    "max_time",
    "schema_id",
    "added_version",
)
# A relative path of segments that neither start with a dot nor hold ':' or '\\' nor are
# empty: one that validate_relative_path accepts as it is (normal, inside the table root).
_SEG = r"[A-Za-z0-9_=+-][A-Za-z0-9_.=+-]*"
_PLAIN_PATH = f"^{_SEG}(/{_SEG})*$"
# Keys of PartFile.to_json() stored as columns; any other key goes to ``extra``.
_MODELLED = frozenset((*_SCALARS, "tags", "fields", "devices"))
_TAG_KEYS = frozenset(("min", "max", "has_null", "values"))

# What decoding a damaged file can raise besides the project's own errors (MemoryError: a
# hostile footer can declare sizes no reader could allocate).
_DECODE_ERRORS = (
    pa.ArrowException,
    MemoryError,
    OSError,
    ValueError,
    KeyError,
    TypeError,
    AttributeError,
    IndexError,
    OverflowError,
    RecursionError,
    TsFileCatalogError,
)


def _compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


def part_row(part: PartFile, types: Mapping[str, DataType]) -> dict[str, Any]:
    """The checkpoint row of ``part`` (column name -> value), lossless for its JSON."""
    # Lazy statistics still undecoded (read from a checkpoint) are copied as their text.
    lazy_fields = part.fields.raw_json if isinstance(part.fields, FieldStatsMap) else None
    if lazy_fields is not None:
        body = replace(part, devices=None, fields={}).to_json(types)
    else:
        body = (part if part.devices is None else replace(part, devices=None)).to_json(types)
    row = {k: body[k] for k in _SCALARS}
    extra = {k: v for k, v in body.items() if k not in _MODELLED}
    tags = body["tags"]
    if all(_TAG_KEYS.issuperset(t) for t in tags.values()):
        row["tags"] = [
            {
                "name": name,
                "min": t["min"],
                "max": t["max"],
                "has_null": t["has_null"],
                "values": t.get("values"),
            }
            for name, t in tags.items()
        ]
    else:  # a TAG statistic this mapping does not model: keep the JSON as is
        row["tags"], extra["tags"] = [], tags
    row["fields"] = lazy_fields if lazy_fields is not None else _compact(body["fields"])
    row["has_devices"] = part.devices is not None
    row["devices"] = None if part.devices is None else DeviceList.encode(part.devices, types)
    row["extra"] = _compact(extra) if extra else None
    return row


def encode_parquet_snapshot(snapshot: Snapshot) -> bytes:
    """The Parquet checkpoint of ``snapshot``."""
    types = {c.name: c.type for c in snapshot.schema.fields}
    rows = [part_row(p, types) for p in snapshot.parts]
    columns = {name: [r[name] for r in rows] for name in SCHEMA.names}
    head = replace(snapshot, parts=()).to_json()
    # format_version follows the parts (external parts need version 2), as for JSON.
    head["format_version"] = written_format_version(snapshot.parts)
    head.pop("parts")
    table = pa.table(columns, schema=SCHEMA.with_metadata({SNAPSHOT_KEY: _compact(head)}))
    out = _io.BytesIO()
    pq.write_table(table, out, compression="zstd", row_group_size=ROW_GROUP_PARTS)
    return out.getvalue()


def write_checkpoint(io: FileIO, location: str, snapshot: Snapshot, *, hint: bool = True) -> None:
    """Create the Parquet checkpoint of ``snapshot`` (only if absent) and, with ``hint``,
    point the ``_last_checkpoint`` hint at it (expiry checkpoints an older version: no hint).

    Raises:
        FileExistsError: the checkpoint exists (a concurrent writer made the same one).
        OSError: storage failed (checkpoints are derived data: callers log and go on).
    """
    io.create_exclusive(
        parquet_checkpoint_url(location, snapshot.version), encode_parquet_snapshot(snapshot)
    )
    if hint:
        latest = {
            "version": snapshot.version,
            "format_version": written_format_version(snapshot.parts),
            "format": "parquet",
        }
        io.write_bytes(join_url(location, MANIFEST_DIR, LAST_CHECKPOINT), _compact(latest).encode())


def decode_parquet_snapshot(
    data: bytes, *, source: str, legacy_table_uuid: Callable[[], str] | None = None
) -> Snapshot:
    """Parse a Parquet checkpoint; ``source`` names it in errors.

    Raises:
        CorruptManifestError: not a Parquet checkpoint, or content violating the format.
    """
    try:
        # Every column but the device lists, which _DeviceColumn reads on first use.
        # One thread: decoding a few MiB is not worth a pool's hand-offs, which on a busy
        # driver cost more CPU than they save (measured: about half the read at 100k parts).
        table = pq.ParquetFile(pa.BufferReader(data)).read(columns=_EAGER, use_threads=False)
        meta = (table.schema.metadata or {}).get(SNAPSHOT_KEY)
        if meta is None:
            raise CorruptManifestError(f"checkpoint file {source} holds no snapshot metadata")
        head = json.loads(meta)
        if not isinstance(head, dict):
            raise ValueError("the snapshot metadata is not a JSON object")
        head["parts"] = []
    except CorruptManifestError:
        raise
    except _DECODE_ERRORS as e:
        raise CorruptManifestError(f"checkpoint file {source} is corrupt or truncated: {e}") from e
    # Snapshot-level keys, format_version and table_uuid are checked as for JSON checkpoints.
    empty = decode_snapshot(
        _compact(head).encode(), source=source, legacy_table_uuid=legacy_table_uuid
    )
    types = {c.name: c.type for c in empty.schema.fields}
    try:
        parts = _parts(table, types, _DeviceColumn(data, source, table.num_rows), source)
    except _DECODE_ERRORS as e:
        raise CorruptManifestError(f"checkpoint file {source} is corrupt or truncated: {e}") from e
    return replace(empty, parts=parts)


class _DeviceColumn:
    """The ``devices`` column of one checkpoint, read from its bytes when a plan first asks
    for a part's device list (most plans ask for few parts, many for none), one row group at
    a time: a time range keeps neighbouring parts, so it reads a group or two of
    :data:`ROW_GROUP_PARTS` parts, not every part's devices (a checkpoint written as one
    group is read whole, as before)."""

    def __init__(self, data: bytes, source: str, rows: int) -> None:
        self._data = data
        self._source = source
        self._rows = rows
        self._file: pq.ParquetFile | None = None
        self._starts: list[int] = []
        self._groups: dict[int, pa.ChunkedArray] = {}

    def _group_of(self, row: int) -> tuple[int, pa.ChunkedArray]:
        """(first row, devices column) of the row group holding ``row``."""
        file = self._file
        if file is None:
            file = pq.ParquetFile(pa.BufferReader(self._data))
            counts = [file.metadata.row_group(g).num_rows for g in range(file.num_row_groups)]
            if sum(counts) != self._rows:
                raise ValueError("the row groups do not match the parts")
            self._starts = [sum(counts[:g]) for g in range(len(counts))]
            self._file = file
        group = bisect_right(self._starts, row) - 1
        column = self._groups.get(group)
        if column is None:
            read = file.read_row_group(group, columns=["devices"], use_threads=False)
            column = read.column("devices")
            if column.type != pa.string():
                raise ValueError("the devices column does not match the parts")
            self._groups[group] = column
        return self._starts[group], column

    def text(self, row: int) -> str:
        try:
            start, column = self._group_of(row)
            value = column[row - start].as_py()
        except _DECODE_ERRORS as e:
            raise CorruptManifestError(
                f"checkpoint file {self._source} is corrupt or truncated: {e}"
            ) from e
        if not isinstance(value, str):
            raise CorruptManifestError(
                f"checkpoint file {self._source} is corrupt: part {row} lost its device list"
            )
        return value


def _parts(
    table: pa.Table, types: Mapping[str, DataType], devices: _DeviceColumn, source: str
) -> tuple[PartFile, ...]:
    if table.schema.remove_metadata() != _EAGER_SCHEMA:
        raise ValueError(f"columns {table.schema.names} are not a checkpoint's")
    cols = {name: table.column(name).to_pylist() for name in _EAGER if name != "tags"}
    has_devices = table.column("has_devices").to_pylist()
    # Paths validate_relative_path is sure to accept, found in one vectorised pass; only the
    # others (rare: a segment starting with a dot, unusual characters) are checked one by one.
    plain = pc.match_substring_regex(table.column("path"), _PLAIN_PATH).to_pylist()
    tags = _tag_stats(table.column("tags").combine_chunks())
    cols["tags"] = tags  # for parts decoded through PartFile.from_json
    out = []
    for i in range(table.num_rows):
        part_devices = (
            DeviceList(partial(devices.text, i), source=source, field_types=types)
            if has_devices[i]
            else None
        )
        extra = cols["extra"][i]
        if extra is not None:
            out.append(_part_from_json(cols, i, json.loads(extra), part_devices, types))
            continue
        external = bool(cols["external"][i])
        path = cols["path"][i]
        out.append(
            PartFile(
                path=(
                    validate_external_url(path)
                    if external
                    else path
                    if plain[i]
                    else validate_relative_path(path)
                ),
                format=str(cols["format"][i]),
                external=external,
                size_bytes=int(cols["size_bytes"][i]),
                row_count=int(cols["row_count"][i]),
                min_time=cols["min_time"][i],
                max_time=cols["max_time"][i],
                devices=part_devices,
                tags=dict(tags[i]),
                fields=FieldStatsMap(cols["fields"][i], types, source=source),
                schema_id=int(cols["schema_id"][i]),
                added_version=int(cols["added_version"][i]),
            )
        )
    return tuple(out)


def _tag_stats(column: pa.ListArray) -> list[list[tuple[str, TagStats]]]:
    """Per row, its (TAG name, stats) pairs.

    Value sets are decoded through a dictionary of the distinct values, and equal statistics
    are one shared (immutable) object: parts of one table mostly hold the same devices, so
    10,000 parts x 100 values decode as a few hundred strings, not a million.
    """
    entries = column.values
    names = entries.field("name").to_pylist()
    mins = entries.field("min").to_pylist()
    maxs = entries.field("max").to_pylist()
    has_null = entries.field("has_null").to_pylist()
    values = entries.field("values")
    absent = values.is_null().to_pylist()
    encoded = pc.dictionary_encode(values.values)
    dictionary = encoded.dictionary.to_pylist()
    indices = encoded.indices.to_numpy(zero_copy_only=False)
    value_offsets = values.offsets.to_numpy()
    memo: dict[tuple[Any, ...], TagStats] = {}
    stats = []
    for e in range(len(entries)):
        ids = None if absent[e] else indices[value_offsets[e] : value_offsets[e + 1]].tobytes()
        key = (ids, mins[e], maxs[e], has_null[e])
        found = memo.get(key)
        if found is None:
            found = memo[key] = TagStats(
                None
                if absent[e]
                else frozenset(
                    dictionary[j] for j in indices[value_offsets[e] : value_offsets[e + 1]].tolist()
                ),
                mins[e],
                maxs[e],
                bool(has_null[e]),
            )
        stats.append((names[e], found))
    offsets = column.offsets.to_numpy().tolist()
    return [stats[offsets[i] : offsets[i + 1]] for i in range(len(column))]


def _part_from_json(
    cols: Mapping[str, list[Any]],
    i: int,
    extra: Mapping[str, Any],
    devices: DeviceList | None,
    types: Mapping[str, DataType],
) -> PartFile:
    """A part with keys beyond the columns: rebuilt as its JSON and decoded by PartFile."""
    obj: dict[str, Any] = {k: cols[k][i] for k in _SCALARS}
    obj["tags"] = {name: stats.to_json() for name, stats in cols["tags"][i]}
    obj["fields"] = json.loads(cols["fields"][i])
    obj["devices"] = None
    obj.update(extra)
    part = PartFile.from_json(obj, types)
    return part if devices is None else replace(part, devices=devices)
