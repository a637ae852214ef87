"""What the Parquet, ORC and CSV adapters share: Arrow types to table types, the time column
to raw table time, part statistics, and a scan that returns the table's columns.

An external file keeps its own column names, types and time representation; every read maps
it to the table here (case-insensitive names, TIMESTAMP/DATE time to raw values in the part's
recorded precision, Hive partition values as TAG columns), so the rest of the read path
(:mod:`tsfile_catalog.exec.read`) treats it like a TsFile part. The format modules only say
how to read a schema, read columns (with a pushed filter where the format has row-group
statistics) and what their footers know. No Spark here.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.fs as pafs

from tsfile_catalog.exceptions import DataError, SchemaMismatchError, TsFileCatalogError
from tsfile_catalog.formats.base import ScanSlice
from tsfile_catalog.formats.external_types import (
    check_time_type,
    file_bounds,
    file_columns,
    raw_time,
    table_type,
    to_table_column,
)
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.expressions import INT64_MAX, INT64_MIN
from tsfile_catalog.metadata.external import (
    COLUMN_NAMES_OPTION,
    AddPartOptions,
    ColumnMapping,
    map_columns,
)
from tsfile_catalog.metadata.parts import (
    MAX_DEVICES,
    DeviceStats,
    FieldStats,
    PartFile,
    tag_stats_from_devices,
)
from tsfile_catalog.metadata.schema import TIME_COLUMN, DataType, TableSchema
from tsfile_catalog.metadata.schema_merge import widens

__all__ = [
    "ExternalFormat",
    "table_type",
    "file_columns",
    "raw_time",
    "arrow_filesystem",
    "content_stamp",
    "content_digest",
    "FOOTER_TAIL_BYTES",
    "check_unchanged",
]

_NULL_KEY = "\x00null\x00"

# How a recorded ``source_stamp`` carries the content digest taken at ADD PART (parts added
# before digests have none, and keep the strict check).
_DIGEST_SEPARATOR = "|digest="
# The bytes a footer digest covers: a Parquet or ORC footer (schema, row groups or stripes
# with their offsets, sizes, row counts and statistics) sits at the end of the file.
FOOTER_TAIL_BYTES = 64 * 1024


class ExternalFormat:
    """An external (read-only) file format: subclasses read schemas and columns.

    ``scan`` and ``read_part`` are shared; a subclass gives :meth:`arrow_schema`, where its
    footer has them :meth:`footer_stats`, and :meth:`read` when ``pyarrow.dataset`` cannot
    read it by :attr:`name`.
    """

    name = ""
    extensions: tuple[str, ...] = ()

    # The last bytes that identify a file's content (its footer), or None: the whole file
    # (a format without a footer, CSV). See :func:`content_digest`.
    digest_tail: int | None = None

    # -- what a subclass provides ----------------------------------------------------------

    def arrow_schema(
        self, io: FileIO, url: str, options: Mapping[str, str], schema: TableSchema
    ) -> pa.Schema:
        """The file's columns and Arrow types (CSV infers them, the table's types as targets)."""
        raise NotImplementedError

    def read(
        self,
        io: FileIO,
        url: str,
        columns: Sequence[str],
        options: Mapping[str, str],
        schema: TableSchema,
        filter: ds.Expression | None = None,
    ) -> pa.Table:
        """The file's ``columns`` (its own names), rows narrowed by ``filter`` at least
        where the format can (a coarse filter: callers filter exactly).

        By default through ``pyarrow.dataset`` with the format named :attr:`name`, so the
        pushed time/TAG filter skips Parquet row groups and ORC stripes by their statistics.
        """
        filesystem, path = arrow_filesystem(io, url)
        dataset = ds.dataset(path, format=self.name, filesystem=filesystem)
        return dataset.to_table(columns=list(columns), filter=filter)

    def recorded_options(self, arrow: pa.Schema, options: Mapping[str, str]) -> dict[str, str]:
        """Read options ADD PART records with the part beyond the user's, from the file's
        columns as read then (none by default)."""
        return {}

    def footer(
        self, io: FileIO, url: str, options: Mapping[str, str], schema: TableSchema
    ) -> tuple[pa.Schema, int | None]:
        """The file's Arrow schema and, where a footer says it, its row count (None: the
        format has no footer). Reads check the count against the part's."""
        return self.arrow_schema(io, url, options, schema), None

    def footer_stats(
        self, io: FileIO, url: str, sources: Mapping[str, str], schema: TableSchema
    ) -> dict[str, FieldStats]:
        """FIELD statistics the footer gives exactly (table column -> stats); the rest are
        computed from a columnar read."""
        return {}

    # -- shared -------------------------------------------------------------------------------

    def read_part(
        self,
        io: FileIO,
        url: str,
        *,
        table: TableSchema,
        options: AddPartOptions,
        partition_values: Mapping[str, str],
        size_bytes: int,
    ) -> tuple[TableSchema, PartFile]:
        """Validate the file against ``table`` and compute its part statistics.

        Returns the table schema the file needs (``mergeSchema`` may add FIELDs) and the
        part, recorded under the absolute ``url``.
        """
        read_options = options.read_options
        try:
            # Taken first: a file rewritten while it is read here fails its first scan.
            stamp = content_stamp(io, url)
            digest = content_digest(io, url, size_bytes, tail=self.digest_tail)
            arrow = self.arrow_schema(io, url, read_options, table)
            read_options = {**read_options, **self.recorded_options(arrow, read_options)}
        except TsFileCatalogError:
            raise
        except (OSError, pa.ArrowException, ValueError) as e:
            raise TsFileCatalogError(f"cannot read {url} as {self.name}: {e}") from e
        mapping = map_columns(
            url,
            file_columns(arrow),
            table,
            time_column=options.time_column,
            partition=tuple(partition_values),
            merge_schema=options.merge_schema,
        )
        check_time_type(url, mapping.time_source, arrow.field(mapping.time_source).type)
        schema = mapping.schema
        tag_names = schema.tag_names
        footer = self.footer_stats(
            io, url, {k: v for k, v in mapping.sources.items() if v is not None}, schema
        )
        computed = [
            c.name
            for c in schema.fields
            if c.name not in footer and mapping.sources.get(c.name) is not None
        ]
        # One columnar read: time, the TAGs (devices) and the FIELDs the footer left open.
        data = self._read_mapped(
            io, url, arrow, mapping, read_options, schema, [*tag_names, *computed], partition_values
        )
        null_times = data.column(TIME_COLUMN).null_count
        if null_times:
            # As the writer refuses them: a row without a time has no place in a time series.
            raise DataError(
                f"{url}: time column '{mapping.time_source}' holds {null_times} null "
                f"value{'s' if null_times > 1 else ''}; every row needs a time: fill them in "
                "the file, or leave those rows out"
            )
        for tag in tag_names:
            if tag not in partition_values and data.column(tag).null_count:
                raise SchemaMismatchError(
                    f"{url}: TAG column '{mapping.sources[tag]}' holds nulls; every row needs "
                    "its TAG values: fill them in the file, or leave those rows out"
                )
        devices = _devices(data, tag_names)
        # Statistics are keyed by physical name, as the table's own parts' are.
        fields: dict[str, FieldStats] = {}
        for col in schema.fields:
            if col.name in footer:
                fields[col.physical] = footer[col.name]
            elif col.name in computed:
                fields[col.physical] = _field_stats(data.column(col.name), col.type)
            else:  # a FIELD the file lacks: every row reads null
                fields[col.physical] = FieldStats(None, None, data.num_rows)
        # The file's columns were matched by name; a column known by another physical name
        # (renamed, or added back after a drop) is found by its file name from now on.
        mapped = {
            c.physical: source
            for c in schema.columns
            if c.physical != c.name and (source := mapping.sources.get(c.name)) is not None
        }
        if mapped:
            read_options = {**read_options, COLUMN_NAMES_OPTION: json.dumps(mapped, sort_keys=True)}
        part = PartFile(
            path=url,
            format=self.name,
            size_bytes=size_bytes,
            row_count=data.num_rows,
            min_time=min((d.min_time for d in devices), default=None),
            max_time=max((d.max_time for d in devices), default=None),
            devices=tuple(devices) if len(devices) <= MAX_DEVICES else None,
            tags=tag_stats_from_devices(tag_names, (d.tags for d in devices)),
            fields=fields,
            external=True,
            read_options=read_options,
            partition_values=dict(partition_values),
            source_stamp=f"{stamp}{_DIGEST_SEPARATOR}{digest}",
        )
        return schema, part

    def _read_mapped(
        self,
        io: FileIO,
        url: str,
        arrow: pa.Schema,
        mapping: ColumnMapping,
        options: Mapping[str, str],
        schema: TableSchema,
        columns: Sequence[str],
        partition_values: Mapping[str, str],
        *,
        time_min: int = INT64_MIN,
        time_max: int = INT64_MAX,
        tag_values: Mapping[str, frozenset[str]] | None = None,
    ) -> pa.Table:
        """``time`` (raw, in the part's precision) and ``columns`` of ``schema`` (table
        names; TIMESTAMP FIELDs raw) from one read; columns the file lacks are left out."""
        unit = options.get("timestampPrecision", "ms")
        wanted = [c for c in columns if c not in partition_values]
        present = [c for c in wanted if mapping.sources.get(c) is not None]
        file_names = [mapping.time_source] + [
            s for s in (mapping.sources[c] for c in present) if s is not None
        ]
        conditions = []
        lo, hi = file_bounds(arrow.field(mapping.time_source).type, unit, time_min, time_max)
        if lo is not None:
            conditions.append(ds.field(mapping.time_source) >= lo)
        if hi is not None:
            conditions.append(ds.field(mapping.time_source) <= hi)
        for tag, values in (tag_values or {}).items():
            source = mapping.sources.get(tag)
            if source is not None and tag not in partition_values:
                conditions.append(ds.field(source).isin(sorted(values)))
        condition = None
        for term in conditions:
            condition = term if condition is None else condition & term
        raw = self.read(io, url, _unique(file_names), options, schema, condition)
        time = raw.column(mapping.time_source)
        arrays = [raw_time(time, unit, where=url, column=mapping.time_source)]
        names = [TIME_COLUMN]
        for name in columns:
            col = schema.column(name)
            assert col is not None
            if name in partition_values:
                value = pa.array([partition_values[name]] * raw.num_rows, pa.string())
                arrays.append(pa.chunked_array([value]))
                names.append(name)
            elif name in present:
                source = mapping.sources[name]
                assert source is not None
                arrays.append(
                    to_table_column(raw.column(source), col.type, unit, where=url, column=source)
                )
                names.append(name)
        return pa.Table.from_arrays(arrays, names=names)

    def scan(
        self, io: FileIO, part: PartFile, schema: TableSchema, piece: ScanSlice
    ) -> Iterator[pa.Table]:
        """Rows of one external part in ``piece``'s time range, TAG sets and devices, as
        ``time`` plus those of ``piece.columns`` the file holds (table names, raw domain)."""
        values = part.partition_values
        for tag, allowed in piece.tag_values.items():
            if tag in values and values[tag] not in allowed:
                return
        # The TAGs the exact filter below compares (the slice's TAG sets, its device list),
        # read even when the query asks for none of them, then left out again.
        compared = [*piece.tag_values, *(piece.tag_names if piece.devices is not None else ())]
        extra = [t for t in dict.fromkeys(compared) if t not in piece.columns]
        try:
            arrow, rows = self.footer(io, part.path, part.read_options, schema)
            check_unchanged(io, part, rows)
            table = self._read_mapped(
                io,
                part.path,
                arrow,
                _mapping_at_read(part.path, arrow, schema, part.read_options),
                part.read_options,
                schema,
                [*piece.columns, *extra],
                values,
                time_min=piece.time_min,
                time_max=piece.time_max,
                tag_values=_pushed_tags(piece),
            )
        except TsFileCatalogError:
            raise
        except (OSError, pa.ArrowException, ValueError, KeyError) as e:
            raise TsFileCatalogError(
                f"cannot read external part {part.path} ({self.name}): {e}; was the file "
                "changed or removed after ADD PART? DROP PART it, then add it again"
            ) from e
        table = _exact(table, piece, values)
        table = table.drop_columns([t for t in extra if t in table.column_names])
        if table.num_rows:
            yield table


def content_stamp(io: FileIO, url: str) -> str:
    """What identifies the bytes at ``url`` now: its size and modification time (ms)
    locally, the store's stamp (ETag, generation, modification time: one metadata request)
    elsewhere, its size where the store reports none. Recorded by ``ADD PART`` as the
    part's ``source_stamp``."""
    if io.is_local:
        return f"size={io.size(url)};modified_ms={io.modified_ms(url)}"
    return io.stamp(url) or f"size={io.size(url)}"


def content_digest(io: FileIO, url: str, size: int, *, tail: int | None) -> str:
    """A SHA-256 of the file's content: of its last ``tail`` bytes (a footer that describes
    every row) with its size, or of the whole file when ``tail`` is None. Recorded by
    ``ADD PART`` with the stamp; compared only when the stamp moved (a ``touch``, a copy
    without ``-p``, a restore from backup), so the bytes are read then and once per
    process."""
    digest = hashlib.sha256()
    with io.open_input(url) as handle:
        if tail is not None and size > tail:
            handle.seek(size - tail)
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    kind = "sha256" if tail is None else f"sha256-tail{tail}"
    return f"{kind}:{size}:{digest.hexdigest()}"


# (path, recorded stamp, store stamp now) of files whose stamp moved but whose content digest
# is the recorded one: the stamp updated in memory, so each is read once per process.
_SAME_CONTENT: set[tuple[str, str, str]] = set()


def _same_content(io: FileIO, part: PartFile, digest: str | None, now: str) -> bool:
    """Whether the external file of ``part``, whose stamp is ``now`` (not the recorded
    one), still holds the bytes ADD PART digested. Without a recorded ``digest`` (a part
    added before digests) it cannot tell: False, the strict check of then."""
    if digest is None:
        return False
    assert part.source_stamp is not None
    # Remembered by the store's finest stamp (locally inode, size and nanosecond times):
    # two writes within one millisecond have the same ``now``, not the same stamp.
    key = (part.path, part.source_stamp, io.stamp(part.path) or now)
    if key in _SAME_CONTENT:
        return True
    kind, _, _ = digest.partition(":")
    tail = int(kind.removeprefix("sha256-tail")) if kind.startswith("sha256-tail") else None
    try:
        size = io.size(part.path)
        same = size == part.size_bytes and content_digest(io, part.path, size, tail=tail) == digest
    except FileNotFoundError:
        return False
    if same:
        _SAME_CONTENT.add(key)
    return same


def check_unchanged(io: FileIO, part: PartFile, footer_rows: int | None = None) -> None:
    """Refuse to read an external part whose file is no longer the one its statistics
    describe: another row count in its footer, or another content than at ``ADD PART``.

    The stamp (size and modification time, ETag, ...) recorded at ``ADD PART`` is checked
    first: one metadata request (two ``stat`` calls locally). When only it moved, the
    content digest recorded with it decides (:func:`content_digest`): identical bytes read
    on, other bytes fail. Parts recorded without a digest fail on any stamp change; parts
    recorded without a stamp are checked by their footer only. Without ``footer_rows`` (an
    answer from statistics, which opens no file) only the stamp and digest are checked.

    Raises:
        DataError: naming the file and the fix (drop the part and add the file again).
    """
    changed: str | None = None
    if footer_rows is not None and footer_rows != part.row_count:
        changed = f"it holds {footer_rows} rows, {part.row_count} when it was added"
    elif part.source_stamp is not None:
        recorded, _, digest = part.source_stamp.partition(_DIGEST_SEPARATOR)
        try:
            now = content_stamp(io, part.path)
        except FileNotFoundError as e:
            raise DataError(
                f"external part {part.path} ({part.format}) is missing (removed or moved after "
                "ADD PART): put it back, or ALTER TABLE … DROP PART it"
            ) from e
        if now != recorded and not _same_content(io, part, digest or None, now):
            what = "its content differs" if digest else "no content digest to compare"
            changed = f"it is now {now}, {recorded} when it was added; {what}"
    if changed is not None:
        raise DataError(
            f"external part {part.path} ({part.format}) changed after ADD PART ({changed}), so "
            "the table's statistics of it are stale: ALTER TABLE … DROP PART it, then re-add it "
            "with ALTER TABLE … ADD PART"
        )


def arrow_filesystem(io: FileIO, url: str) -> tuple[pafs.FileSystem | None, str]:
    """The Arrow file system and path for ``url``: Arrow's own for local files, the
    FileIO's fsspec file system otherwise (credentials and endpoints included)."""
    if io.is_local:
        return None, io.normalize(url)
    return pafs.PyFileSystem(pafs.FSSpecHandler(io.fs)), io.fs._strip_protocol(url)


def _pushed_tags(piece: ScanSlice) -> dict[str, frozenset[str]]:
    """The slice's TAG sets, narrowed by its device group (each TAG to the values its devices
    have), so a slice of a few devices skips the row groups of the others: a coarse filter,
    the exact device list is applied after the read."""
    pushed = dict(piece.tag_values)
    if piece.devices is None:
        return pushed
    for i, name in enumerate(piece.tag_names):
        values = {d[i] for d in piece.devices if i < len(d)}
        if None in values:
            continue  # a null TAG cannot be written as an IN list
        narrowed = frozenset(v for v in values if v is not None)
        pushed[name] = pushed[name] & narrowed if name in pushed else narrowed
    return pushed


def _unique(names: Sequence[str]) -> list[str]:
    out: list[str] = []
    for name in names:
        if name not in out:
            out.append(name)
    return out


def _mapping_at_read(
    url: str, arrow: pa.Schema, schema: TableSchema, options: Mapping[str, str]
) -> ColumnMapping:
    """The file's columns for the table's, by case-insensitive name (validated at ADD).

    Raises:
        SchemaMismatchError: a column whose type changed since ``ADD PART`` into one the
            table's column cannot be read from, naming the file, column, both types and the
            fix (instead of Arrow's cast error in the middle of a scan).
    """
    by_name = {f.name.lower(): f.name for f in arrow}
    time_column = options.get("timeColumn", TIME_COLUMN)
    if time_column not in by_name:
        raise TsFileCatalogError(f"the file has no time column '{time_column}' any more")
    check_time_type(url, by_name[time_column], arrow.field(by_name[time_column]).type)
    # By physical name (the name when it was added), or the file name ADD PART recorded.
    recorded = json.loads(options.get(COLUMN_NAMES_OPTION, "{}"))
    sources = {
        c.name: by_name.get(str(recorded.get(c.physical, c.physical)).lower())
        for c in schema.columns
    }
    for col in schema.columns:
        source = sources[col.name]
        if source is None:
            continue
        native = arrow.field(source).type
        found = table_type(native)
        if found is None or not (
            found is col.type or widens(found, col.type) or (found.is_string and col.type.is_string)
        ):
            raise SchemaMismatchError(
                f"{url}: column '{source}' is {native} now, but table column '{col.name}' is "
                f"{col.type.value} (the file changed after ADD PART): ALTER TABLE … DROP PART "
                "it, fix the file, then re-add it with ALTER TABLE … ADD PART"
            )
    return ColumnMapping(by_name[time_column], sources, schema)


def _exact(table: pa.Table, piece: ScanSlice, partition_values: Mapping[str, str]) -> pa.Table:
    """The slice's time range, TAG sets and device list, applied exactly."""
    times = table.column(TIME_COLUMN)
    mask = pc.and_(pc.greater_equal(times, piece.time_min), pc.less_equal(times, piece.time_max))
    for tag, allowed in piece.tag_values.items():
        if tag in table.column_names and tag not in partition_values:
            values = pa.array(sorted(allowed), pa.string())
            mask = pc.and_(mask, pc.is_in(table.column(tag), values))
    if piece.devices is not None:
        tags = list(piece.tag_names)
        if tags:
            keys = _device_keys(table, tags)
            wanted = pa.array(
                ["\x1f".join(_NULL_KEY if t is None else t for t in d) for d in piece.devices],
                pa.string(),
            )
            mask = pc.and_(mask, pc.is_in(keys, wanted))
    mask = pc.fill_null(mask, False)
    if pc.all(mask).as_py():
        return table
    return table.filter(mask)


def _device_keys(table: pa.Table, tags: Sequence[str]) -> pa.ChunkedArray:
    columns = [pc.fill_null(table.column(t), _NULL_KEY) for t in tags]
    return pc.binary_join_element_wise(*columns, "\x1f")


def _devices(data: pa.Table, tag_names: Sequence[str]) -> list[DeviceStats]:
    if data.num_rows == 0:
        return []
    if not tag_names:
        times = data.column(TIME_COLUMN)
        bounds = pc.min_max(times).as_py()
        return [DeviceStats((), data.num_rows, int(bounds["min"]), int(bounds["max"]))]
    grouped = data.group_by(list(tag_names)).aggregate(
        [(TIME_COLUMN, "count"), (TIME_COLUMN, "min"), (TIME_COLUMN, "max")]
    )
    out = [
        DeviceStats(
            tuple(row[name] for name in tag_names),
            int(row["time_count"]),
            int(row["time_min"]),
            int(row["time_max"]),
        )
        for row in grouped.to_pylist()
    ]
    out.sort(key=lambda d: tuple("" if t is None else t for t in d.tags))
    return out


def _field_stats(array: pa.ChunkedArray, type_: DataType) -> FieldStats:
    """min/max/null count of one FIELD column, as TsFile parts keep them: no bounds for
    BLOB and BOOLEAN, and none for a float column holding NaN (Spark orders NaN above every
    number, so no finite max bounds such a column)."""
    nulls = array.null_count
    if type_ in (DataType.BLOB, DataType.BOOLEAN) or nulls == len(array):
        return FieldStats(None, None, nulls)
    if type_ in (DataType.FLOAT, DataType.DOUBLE) and pc.any(pc.is_nan(array)).as_py():
        return FieldStats(None, None, nulls)
    bounds = pc.min_max(array).as_py()
    lo, hi = bounds["min"], bounds["max"]
    if type_ in (DataType.FLOAT, DataType.DOUBLE):
        lo, hi = float(lo), float(hi)
        if math.isinf(lo) or math.isinf(hi):
            return FieldStats(lo, hi, nulls)
    return FieldStats(lo, hi, nulls)
