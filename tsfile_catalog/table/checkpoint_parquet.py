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

This module turns bytes into a snapshot and back, nothing else: naming, reading and writing
the files is :mod:`tsfile_catalog.table.log`'s.

One job: the Parquet checkpoint codec, both ways; its column readers (:class:`_LazyColumn`,
:class:`_Cells`, :class:`_TagColumn`) exist only for its decoder and share its layout and
error rules, so they live with it.
"""

from __future__ import annotations

import io as _io
import json
import operator
from bisect import bisect_right
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import partial
from itertools import accumulate
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from tsfile_catalog.exceptions import CorruptManifestError, TsFileCatalogError
from tsfile_catalog.metadata.lazy_stats import DeviceList, FieldStatsMap
from tsfile_catalog.metadata.manifest import Snapshot, decode_snapshot, written_format_version
from tsfile_catalog.metadata.part_list import PartList
from tsfile_catalog.metadata.parts import (
    PLAIN_PATH,
    PartFile,
    TagStats,
    built_part,
    validate_external_url,
    validate_relative_path,
)
from tsfile_catalog.metadata.schema import DataType

__all__ = [
    "SNAPSHOT_KEY",
    "decode_parquet_snapshot",
    "encode_parquet_snapshot",
    "part_row",
]

SNAPSHOT_KEY = b"tsfile_catalog.snapshot"
# Parts per row group: the unit in which device lists and FIELD statistics are read (see
# _LazyColumn).
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
# The JSON text columns compress well with zstd; the rest is small, and read whole on every
# cold open, where zstd's cost per page (a column of a row group) made reading the columns
# twice as slow as LZ4 (measured at 10,000 parts: 12 ms against 6 ms).
_COMPRESSION = {
    name: "zstd" if name in ("devices", "fields", "extra") else "lz4" for name in SCHEMA.names
}
# Read by row group when first needed, not on open: the device lists, the FIELD statistics
# (a quarter of a million-part checkpoint's columns in memory, read only to build the parts a
# plan keeps), and the TAG statistics: at a million parts x 10 devices they were 165 MiB of
# Arrow and nine tenths of reading the checkpoint, while a plan bounded in time tests the
# TAG value sets of the few row groups its time range keeps (table/part_index.py).
_LAZY = ("devices", "fields", "tags")
_EAGER = [name for name in SCHEMA.names if name not in _LAZY]
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
# Keys of PartFile.to_json() stored as columns; any other key goes to ``extra``.
_MODELLED = frozenset((*_SCALARS, "tags", "fields", "devices"))
# Columns every row fills (min/max time, extra and devices may be null).
_REQUIRED = (*(c for c in _SCALARS if c not in ("min_time", "max_time")), "has_devices")
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
    """The Parquet checkpoint of ``snapshot``, written one row group at a time (the rows of a
    million parts never are in memory at once)."""
    types = snapshot.schema.stats_types()
    parts = snapshot.parts
    head = replace(snapshot, parts=()).to_json()
    # format_version follows the parts (external parts need version 2), as for JSON.
    head["format_version"] = written_format_version(parts, snapshot.schema)
    head.pop("parts")
    schema = SCHEMA.with_metadata({SNAPSHOT_KEY: _compact(head)})
    out = _io.BytesIO()
    with pq.ParquetWriter(out, schema, compression=_COMPRESSION) as writer:
        for group in _row_groups(parts, types):
            writer.write_table(group, row_group_size=ROW_GROUP_PARTS)
    return out.getvalue()


def _row_groups(parts: Sequence[PartFile], types: Mapping[str, DataType]) -> Iterator[pa.Table]:
    """The checkpoint rows of ``parts``, :data:`ROW_GROUP_PARTS` at a time."""
    tail: Iterable[PartFile] = parts
    if isinstance(parts, PartList) and isinstance(parts.stored, _CheckpointParts):
        # Parts still in an earlier checkpoint are copied as its rows (what part_row would
        # write for them: their statistics are kept as read), the rest encoded.
        rows = parts.rows
        for start in range(0, len(rows), ROW_GROUP_PARTS):
            yield parts.stored.rows_table(rows[start : start + ROW_GROUP_PARTS])
        tail = (built_part(p) for p in parts.tail)
    batch: list[PartFile] = []
    for part in tail:
        batch.append(part)
        if len(batch) == ROW_GROUP_PARTS:
            yield _rows_table(batch, types)
            batch = []
    if batch:
        yield _rows_table(batch, types)


def _rows_table(parts: Iterable[PartFile], types: Mapping[str, DataType]) -> pa.Table:
    rows = [part_row(p, types) for p in parts]
    return pa.table({name: [r[name] for r in rows] for name in SCHEMA.names}, schema=SCHEMA)


def decode_parquet_snapshot(
    data: bytes, *, source: str, legacy_table_uuid: Callable[[], str] | None = None
) -> Snapshot:
    """Parse a Parquet checkpoint; ``source`` names it in errors.

    Raises:
        CorruptManifestError: not a Parquet checkpoint, or content violating the format.
    """
    try:
        # Every column but the device lists and FIELD statistics, which _LazyColumn reads on
        # first use.
        # One thread: decoding a few MiB is not worth a pool's hand-offs, which on a busy
        # driver cost more CPU than they save (measured: about half the read at 100k parts).
        file = pq.ParquetFile(pa.BufferReader(data))
        table = file.read(columns=_EAGER, use_threads=False)
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
    types = empty.schema.stats_types()
    try:
        stored = _CheckpointParts(table, types, file, source)
    except CorruptManifestError as e:
        raise CorruptManifestError(f"checkpoint file {source} is corrupt: {e}") from e
    except _DECODE_ERRORS as e:
        raise CorruptManifestError(f"checkpoint file {source} is corrupt or truncated: {e}") from e
    # Parts are built when first used: a plan builds the few its time range keeps.
    return replace(empty, parts=PartList.of(stored))


class _LazyColumn:
    """The column ``name`` (``devices``, ``fields``, ``tags``) of one checkpoint, read from its
    bytes when a plan first asks for a part's value (most plans ask for few parts, many for
    none), one row group at a time: a time range keeps neighbouring parts, so it reads a
    group or two of :data:`ROW_GROUP_PARTS` parts, not every part's value (a checkpoint
    written as one group is read whole, as before)."""

    def __init__(self, file: pq.ParquetFile, name: str, what: str, source: str, rows: int) -> None:
        # The file as opened to read the other columns: parsing its footer again cost a
        # quarter of a cold plan at 10,000 parts.
        self._file = file
        self._name = name
        self._what = what
        self._source = source
        self._rows = rows
        self._type = SCHEMA.field(name).type
        self._starts: list[int] | None = None
        self._groups: dict[int, pa.ChunkedArray] = {}

    def _row_starts(self) -> list[int]:
        """The first row of each row group."""
        starts = self._starts
        if starts is None:
            file = self._file
            counts = [file.metadata.row_group(g).num_rows for g in range(file.num_row_groups)]
            if sum(counts) != self._rows:
                raise ValueError("the row groups do not match the parts")
            starts = self._starts = [0, *accumulate(counts)][:-1]
        return starts

    def _group_of(self, row: int) -> tuple[int, pa.ChunkedArray]:
        """(first row, column) of the row group holding ``row``."""
        return self.group(bisect_right(self._row_starts(), row) - 1)

    def group(self, group: int) -> tuple[int, pa.ChunkedArray]:
        """(first row, column) of row group ``group``, read once and kept."""
        column = self._groups.get(group)
        if column is None:
            read = self._file.read_row_group(group, columns=[self._name], use_threads=False)
            column = read.column(self._name)
            if column.type != self._type:
                raise ValueError(f"the {self._name} column does not match the parts")
            self._groups[group] = column
        return self._row_starts()[group], column

    def take(self, rows: Sequence[int]) -> pa.Array:
        """The values of ascending ``rows`` (what copying rows into a new checkpoint needs),
        reading their row groups only and keeping none: a checkpoint write copies every row
        once, and keeping every group would hold the whole column at once."""
        if not rows:
            return pa.array([], self._type)
        try:
            starts = self._row_starts()
            first = bisect_right(starts, rows[0]) - 1
            last = bisect_right(starts, rows[-1]) - 1
            read = self._file.read_row_groups(
                list(range(first, last + 1)), columns=[self._name], use_threads=False
            )
            column = read.column(self._name)
            if column.type != self._type:
                raise ValueError(f"the {self._name} column does not match the parts")
            return column.take(pa.array([r - starts[first] for r in rows], pa.int64()))
        except _DECODE_ERRORS as e:
            raise CorruptManifestError(
                f"checkpoint file {self._source} is corrupt or truncated: {e}"
            ) from e

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
                f"checkpoint file {self._source} is corrupt: part {row} lost its {self._what}"
            )
        return value


class _CheckpointParts:
    """The parts of one checkpoint (a :class:`~tsfile_catalog.metadata.part_list.StoredParts`):
    its columns, checked as a whole when read, and each part built the first time something
    asks for it from its row of the columns (read in place, see :class:`_Cells`; only the
    paths become one Python list, since replaying commits indexes every path)."""

    def __init__(
        self,
        table: pa.Table,
        types: Mapping[str, DataType],
        file: pq.ParquetFile,
        source: str,
    ) -> None:
        if table.schema.remove_metadata() != _EAGER_SCHEMA:
            raise ValueError(f"columns {table.schema.names} are not a checkpoint's")
        for name in _REQUIRED:
            if table.column(name).null_count:
                raise ValueError(f"the {name} column has nulls")
        # One chunk per column (a read gives one per row group): the columns are then used
        # in place, by the part index and the per-row cells, instead of each copying them.
        self._table = table.combine_chunks()
        self._types = types
        rows = table.num_rows
        self._devices = _LazyColumn(file, "devices", "device list", source, rows)
        self._fields = _LazyColumn(file, "fields", "FIELD statistics", source, rows)
        self._tags = _LazyColumn(file, "tags", "TAG statistics", source, rows)
        # Per row group (by its first row): the TAG statistics of its parts, and the value
        # sets the part index tests, each made from the group's column when first needed.
        self._tag_rows: dict[int, _TagColumn] = {}
        self._tag_sets: dict[int, _StoredTagSets] = {}
        self._source = source
        self._size = table.num_rows
        self._built: dict[int, PartFile] = {}
        self._cells: dict[str, _Cells] = {}
        self._cell_getters: tuple[Callable[[int], Any], ...] | None = None
        self._paths: list[str] | None = None
        paths = table.column("path")
        # Paths validate_relative_path is sure to accept, found in one vectorised pass; only
        # the others (rare: a segment starting with a dot, unusual characters) and external
        # URLs are checked one by one, here, so a bad path fails the read as before.
        odd = pc.invert(pc.match_substring_regex(paths, PLAIN_PATH))
        external = table.column("external")
        check = pc.or_(odd, external).to_numpy(zero_copy_only=False)
        if check.any():
            outside = external.to_numpy(zero_copy_only=False)
            for row in check.nonzero()[0].tolist():
                path = paths[row].as_py()
                if outside[row]:
                    validate_external_url(path)
                else:
                    validate_relative_path(path)

    def __len__(self) -> int:
        return self._size

    def column(self, name: str) -> pa.Array:
        """One scalar column, as Arrow (what the part index is built from)."""
        return _whole(self._table.column(name))

    def values(self, name: str) -> Sequence[Any]:
        if name == "path":  # every path is needed (replay indexes them): one list
            if self._paths is None:
                self._paths = self._table.column("path").to_pylist()
            return self._paths
        return self._cell(name)

    def rows_table(self, rows: Sequence[int]) -> pa.Table:
        """The checkpoint rows at ``rows``, every column (devices included), as written."""
        taken = self._table.take(pa.array(rows, pa.int64()))
        columns = {name: taken.column(name) for name in _EAGER}
        columns["devices"] = self._devices.take(rows)
        columns["fields"] = self._fields.take(rows)
        columns["tags"] = self._tags.take(rows)
        return pa.table([columns[name] for name in SCHEMA.names], schema=SCHEMA)

    def _cell(self, name: str) -> _Cells:
        cells = self._cells.get(name)
        if cells is None:
            column = _whole(self._table.column(name))
            cells = self._cells[name] = _Cells(column, repeats=name in _REPEATING)
        return cells

    def tags_hold_one_of(self, column: str, values: frozenset[str], rows: np.ndarray) -> np.ndarray:
        """Per row of ascending ``rows``, False only when that part's exact value set of TAG
        ``column`` misses all of ``values`` (as the part built from the row answers): only
        the row groups holding ``rows`` are read.

        Raises:
            CorruptManifestError: a row group's TAG statistics cannot be read.
        """
        out = np.ones(len(rows), dtype=bool)
        if not len(rows):
            return out
        try:
            starts = self._tags._row_starts()
            groups = np.searchsorted(np.asarray(starts), rows, side="right") - 1
            # rows ascend, so each group's rows are one run of them.
            found, firsts = np.unique(groups, return_index=True)
            ends = [*firsts[1:].tolist(), len(rows)]
            for group, first, end in zip(found.tolist(), firsts.tolist(), ends, strict=True):
                start, tags = self._tags.group(group)
                sets = self._tag_sets.get(start)
                if sets is None:
                    sets = self._tag_sets[start] = _StoredTagSets(_whole(tags))
                out[first:end] = sets.holds_one_of(column, values)[rows[first:end] - start]
        except _DECODE_ERRORS as e:
            raise CorruptManifestError(
                f"checkpoint file {self._source} is corrupt or truncated: {e}"
            ) from e
        return out

    def _tag_stats(self, row: int) -> list[tuple[str, TagStats]]:
        """The (TAG name, statistics) pairs of the part at ``row``."""
        start, tags = self._tags._group_of(row)
        reader = self._tag_rows.get(start)
        if reader is None:
            reader = self._tag_rows[start] = _TagColumn(_whole(tags))
        return reader.row(row - start)

    def rows_of(self, paths: Collection[str]) -> dict[str, int]:
        column = self._table.column("path")
        hits = pc.is_in(column, value_set=pa.array(list(paths), pa.string()))
        rows = np.flatnonzero(hits.to_numpy(zero_copy_only=False)).tolist()
        found = pc.take(column, pa.array(rows, pa.int64())).to_pylist()
        # Ascending rows: a path stored twice maps to its last row, as a dict of them would.
        return dict(zip(found, rows, strict=True))

    def part(self, row: int) -> PartFile:
        found = self._built.get(row)
        if found is None:
            try:
                found = self._build(row)
            except CorruptManifestError:
                raise
            except _DECODE_ERRORS as e:
                raise CorruptManifestError(
                    f"checkpoint file {self._source} is corrupt or truncated: {e}"
                ) from e
            # A benign race: two threads may build the same part; either object serves.
            self._built[row] = found
        return found

    def _getters(self) -> tuple[Callable[[int], Any], ...]:
        """Per column of :data:`_BUILT`, the function of a row giving its cell."""
        getters = self._cell_getters
        if getters is None:
            getters = self._cell_getters = tuple(self._cell(name).get for name in _BUILT)
        return getters

    def _build(self, row: int) -> PartFile:
        types, source = self._types, self._source
        cell = self._cell
        (
            has_devices,
            extra,
            format,
            external,
            size_bytes,
            row_count,
            min_time,
            max_time,
            schema_id,
            added_version,
        ) = [get(row) for get in self._getters()]
        part_devices = (
            DeviceList(partial(self._devices.text, row), source=source, field_types=types)
            if has_devices
            else None
        )
        tags = self._tag_stats(row)
        if extra is not None:
            obj = json.loads(extra)
            fields = self._fields.text(row)
            return _part_from_json(cell, row, tags, fields, obj, part_devices, types)
        # One path, not the list of every path (a million strings, 80 MiB) that replaying
        # commits may have made already.
        paths = self._paths
        return PartFile(
            path=paths[row] if paths is not None else self._cell("path").get(row),
            format=str(format),
            external=bool(external),
            size_bytes=int(size_bytes),
            row_count=int(row_count),
            min_time=min_time,
            max_time=max_time,
            devices=part_devices,
            tags=dict(tags),
            # The column is read when a predicate or an aggregate first needs a FIELD (as the
            # devices are): most plans never do.
            fields=FieldStatsMap(partial(self._fields.text, row), types, source=source),
            schema_id=int(schema_id),
            added_version=int(added_version),
        )


# The columns a part is built from, in the order _build reads them.
_BUILT = (
    "has_devices",
    "extra",
    "format",
    "external",
    "size_bytes",
    "row_count",
    "min_time",
    "max_time",
    "schema_id",
    "added_version",
)


# String columns whose values repeat across parts (decoded through a dictionary).
_REPEATING = frozenset(("format",))


def _whole(column: pa.ChunkedArray) -> pa.Array:
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


class _Cells(Sequence[Any]):
    """One column's values by row, without a Python object per row up front (converting
    every column of 100,000 parts to lists held ~60 MB for the few parts a plan builds):
    numbers as a NumPy array, strings that ``repeats`` (formats, TAG names) from a dictionary
    when they do, else from the Arrow array one at a time."""

    def __init__(self, array: pa.Array, *, repeats: bool) -> None:
        self._size = len(array)
        self._valid = array.is_valid().to_numpy(zero_copy_only=False) if array.null_count else None
        kind = array.type
        self._numbers = None
        self._array: pa.Array | None = None
        self._dictionary: list[Any] | None = None
        # The value at a row (what indexing gives), as fast as the column allows.
        self.get: Callable[[int], Any] = self.__getitem__
        if pa.types.is_integer(kind) or pa.types.is_boolean(kind):
            self._numbers = array.fill_null(False if pa.types.is_boolean(kind) else 0).to_numpy(
                zero_copy_only=False
            )
            self._convert: Callable[[Any], Any] = bool if pa.types.is_boolean(kind) else int
            if self._valid is None:
                # NumPy's item() gives the Python int or bool itself: building a part reads
                # ten cells, and this was a third of building it.
                self.get = self._numbers.item
            return
        encoded = pc.dictionary_encode(array) if repeats else None
        if encoded is not None and 4 * len(encoded.dictionary) <= len(array):
            self._dictionary = encoded.dictionary.to_pylist()
            self._numbers = encoded.indices.fill_null(0).to_numpy(zero_copy_only=False)
            self._convert = self._dictionary.__getitem__
        else:
            self._array = array

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, row: Any) -> Any:
        row = operator.index(row)  # one row at a time (no slices)
        if self._valid is not None and not self._valid[row]:
            return None
        if self._numbers is not None:
            return self._convert(self._numbers[row])
        assert self._array is not None
        return self._array[row].as_py()


class _TagColumn:
    """The ``tags`` column, decoded one row at a time into (TAG name, stats) pairs.

    Value sets are decoded through a dictionary of the distinct values, and equal statistics
    are one shared (immutable) object: parts of one table mostly hold the same devices, so
    10,000 parts x 100 values decode as a few hundred strings, not a million.
    """

    def __init__(self, column: pa.ListArray) -> None:
        entries = column.values
        self._offsets = column.offsets.to_numpy()
        self._names = _Cells(entries.field("name"), repeats=True)
        self._mins = _Cells(entries.field("min"), repeats=True)
        self._maxs = _Cells(entries.field("max"), repeats=True)
        self._has_null = _Cells(entries.field("has_null"), repeats=False)
        values = entries.field("values")
        self._absent = values.is_null().to_numpy(zero_copy_only=False)
        encoded = pc.dictionary_encode(values.values)
        self._dictionary = encoded.dictionary.to_pylist()
        self._indices = encoded.indices.to_numpy(zero_copy_only=False)
        self._value_offsets = values.offsets.to_numpy()
        self._memo: dict[tuple[Any, ...], TagStats] = {}

    def row(self, row: int) -> list[tuple[str, TagStats]]:
        return [
            (self._names.get(e), self._stats(e))
            for e in range(int(self._offsets[row]), int(self._offsets[row + 1]))
        ]

    def _stats(self, e: int) -> TagStats:
        absent = self._absent[e]
        ids = None
        if not absent:
            ids = self._indices[self._value_offsets[e] : self._value_offsets[e + 1]]
        low, high, has_null = self._mins.get(e), self._maxs.get(e), self._has_null.get(e)
        key = (None if ids is None else ids.tobytes(), low, high, has_null)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = TagStats(
                None if ids is None else frozenset(self._dictionary[j] for j in ids.tolist()),
                low,
                high,
                bool(has_null),
            )
        return found


class _StoredTagSets:
    """A checkpoint's ``tags`` column (per row a list of {name, min, max, has_null,
    values}; one row group's) answering "does the row's value set of TAG c miss all of S?"
    for every row at once (the part index's TAG pre-filter)."""

    def __init__(self, column: pa.Array) -> None:
        # Offset-aware compute functions throughout (a column may be a slice).
        entries = pc.list_flatten(column)
        self._rows = len(column)
        self._row_of_entry = pc.list_parent_indices(column).to_numpy()
        self._names = pc.struct_field(entries, "name")
        sets = pc.struct_field(entries, "values")
        self._has_set = sets.is_valid().to_numpy(zero_copy_only=False)
        self._entry_of_value = pc.list_parent_indices(sets).to_numpy()
        self._values = pc.list_flatten(sets)

    def holds_one_of(self, column: str, values: frozenset[str]) -> np.ndarray:
        named = pc.fill_null(pc.equal(self._names, column), False).to_numpy(zero_copy_only=False)
        # A row listing the TAG twice (no writer does; a hand-made file might) counts its last
        # entry, as the part built from it does (a dict keeps the last).
        entries = np.flatnonzero(named)
        rows = self._row_of_entry[entries]
        last = np.ones(len(rows), dtype=bool)
        last[:-1] = rows[1:] != rows[:-1]
        entries = entries[last]
        wanted = pa.array(sorted(values), pa.string())
        found = pc.is_in(self._values, value_set=wanted)
        found = pc.fill_null(found, False).to_numpy(zero_copy_only=False)
        meets = np.zeros(len(named), dtype=bool)
        meets[self._entry_of_value[found]] = True
        # The row's entry of this TAG has an exact set that meets none of the values.
        misses = entries[self._has_set[entries] & ~meets[entries]]
        out = np.ones(self._rows, dtype=bool)
        out[self._row_of_entry[misses]] = False
        return out


def _part_from_json(
    cell: Callable[[str], Sequence[Any]],
    i: int,
    tags: list[tuple[str, TagStats]],
    fields: str,
    extra: Mapping[str, Any],
    devices: DeviceList | None,
    types: Mapping[str, DataType],
) -> PartFile:
    """A part with keys beyond the columns: rebuilt as its JSON and decoded by PartFile."""
    obj: dict[str, Any] = {k: cell(k)[i] for k in _SCALARS}
    obj["tags"] = {name: stats.to_json() for name, stats in tags}
    obj["fields"] = json.loads(fields)
    obj["devices"] = None
    obj.update(extra)
    part = PartFile.from_json(obj, types)
    return part if devices is None else replace(part, devices=devices)
