"""The ``tsfile`` PySpark data source: ``spark.read.format("tsfile")`` / ``df.write``.

Spark instantiates the source and calls ``schema()`` when a DataFrame is loaded, then pickles
the instance for planning; resolving the table there pins the version a DataFrame reads to
the one current at ``load()`` (snapshot semantics). The pickle carries that version, not the
snapshot: a table's part statistics pickle to megabytes (seconds per query at a hundred parts),
while the planning process reopens the version from its metadata cache in milliseconds.
"""

from __future__ import annotations

import copy
from collections.abc import MutableMapping, Sequence
from dataclasses import replace
from functools import cached_property
from typing import Any

import pyspark
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import StructType

from tsfile_catalog.datasource.change_feed import (
    TsFileChangeFeedReader,
    change_feed_schema,
    check_batch_options,
    check_stream_options,
)
from tsfile_catalog.datasource.compat import check_pyspark_version
from tsfile_catalog.datasource.partial_aggregates import TsFilePartialReader, partial_schema
from tsfile_catalog.datasource.reader import TsFileScanReader
from tsfile_catalog.datasource.types import project_user_schema, spark_schema
from tsfile_catalog.datasource.watermark import stream_schema
from tsfile_catalog.datasource.writer import TsFileBatchWriter, plan_write
from tsfile_catalog.discovery import scan_location
from tsfile_catalog.exceptions import OptionError, SchemaMismatchError, VersionNotFoundError
from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.exec.table_scan import resolve_columns
from tsfile_catalog.metadata.expressions import Expr, bind
from tsfile_catalog.metadata.expressions.parser import parse_predicate
from tsfile_catalog.metadata.partial_aggregates import PartialSpec, parse_partial_spec
from tsfile_catalog.metadata.schema_merge import merged_read_schema
from tsfile_catalog.options import (
    ReadOptions,
    StreamOptions,
    parse_change_feed_options,
    parse_read_options,
    parse_stream_options,
    parse_stream_write_options,
    parse_write_options,
    qualify_local_path,
    reads_change_feed,
    relation_write_options,
    split_change_feed_options,
    split_stream_options,
)

__all__ = ["TsFileDataSource", "SHORT_NAME", "resolve"]

SHORT_NAME = "tsfile"


def resolve(options: ReadOptions) -> ResolvedScan:
    """The read options resolved into a pinned schema and list of parts: a path with a
    manifest is planned from the manifest alone (no listing, no file opened); a plain path
    is listed and each footer read once (:func:`~tsfile_catalog.discovery.resolve_files`)."""
    scan = scan_location(
        options.path,
        # A table that records its unit is read in it (a contradicting option is refused).
        unit=options.precision if options.precision_given else None,
        # A table that records its time type reads as it unless the option says otherwise.
        timestamp_as=options.timestamp_as if options.timestamp_as_given else None,
        version=options.version_as_of,
        timestamp=options.timestamp_as_of,
        time_zone=options.time_zone,
        table=options.table,
        table_uuid=options.table_uuid,
        storage_options=options.storage_options,
        use_cache=options.use_metadata_cache,
        merge_schema=options.merge_schema,
    )
    if options.merged_schema_json is not None:
        scan = replace(scan, schema=merged_read_schema(scan.schema, options.merged_schema_json))
    if options.only_parts is None:
        return scan
    return _only_parts(scan, options.only_parts)


def _only_parts(scan: ResolvedScan, paths: Sequence[str]) -> ResolvedScan:
    """``scan`` reading only the parts ``paths`` names (the catalog plugin's copy-on-write
    scans: they plan the parts themselves, at the version the options pin).

    Raises:
        VersionNotFoundError: a named part is not in the scan's version.
    """
    wanted = set(paths)
    parts = tuple(p for p in scan.parts if p.path in wanted)
    if len(parts) != len(wanted):
        missing = sorted(wanted - {p.path for p in parts})
        raise VersionNotFoundError(
            f"option 'onlyParts' names part '{missing[0]}', which version {scan.version} of "
            f"{scan.base} does not hold"
        )
    # The pre-filter indexes the whole part list: a plan over fewer parts goes without it.
    return replace(scan, parts=parts, candidates=None)


class TsFileDataSource(DataSource):
    """Reads and writes TsFile table-model data; see docs/options.md for every option."""

    @classmethod
    def name(cls) -> str:
        return SHORT_NAME

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        scan: ResolvedScan | None = state.pop("_scan", None)
        if scan is not None and scan.version is None:
            state["_scan"] = scan  # plain files: their statistics come from every footer
        elif scan is not None:
            # Reopened at the same version wherever this is unpickled (see the module doc).
            state["_pinned_version"] = scan.version
        return state

    @cached_property
    def _options(self) -> MutableMapping[str, str]:
        """Spark's options with a relative local ``path`` made absolute as Spark's own file
        sources would (:func:`~tsfile_catalog.options.qualify_local_path`): this
        runs in a Python worker, whose working directory is not the driver's."""
        path = self.options.get("path")
        if not path:
            return self.options
        # A copy of Spark's case-insensitive mapping, of the same kind.
        options = copy.copy(self.options)
        options["path"] = qualify_local_path(str(path))
        return options

    @cached_property
    def _change_feed_options(self) -> tuple[dict[str, str], dict[str, str]]:
        """(every other option, the change feed's own: readChangeFeed, endingVersion, ...)."""
        return split_change_feed_options(self._options)

    @cached_property
    def _reads_change_feed(self) -> bool:
        return reads_change_feed(self._change_feed_options[1])

    @cached_property
    def _split_options(self) -> tuple[dict[str, str], dict[str, str]]:
        return split_stream_options(self._change_feed_options[0])

    @cached_property
    def _given_read_options(self) -> ReadOptions:
        return parse_read_options(self._split_options[0])

    @cached_property
    def _read_options(self) -> ReadOptions:
        """The options with ``timestampPrecision`` and ``timestampAs`` as the scan resolved
        them: the table's own unit when it records one, and its time type unless the
        option gave another, so every conversion of the read uses them."""
        given = self._given_read_options
        unit, timestamp_as = self._scan.unit, self._scan.timestamp_as
        if unit == given.precision and timestamp_as == given.timestamp_as:
            return given
        return replace(given, precision=unit, timestamp_as=timestamp_as)

    @cached_property
    def _stream_options(self) -> StreamOptions:
        return parse_stream_options(self._split_options[1], self._read_options)

    @cached_property
    def _scan(self) -> ResolvedScan:
        pinned: int | None = self.__dict__.get("_pinned_version")
        given = self._given_read_options
        if pinned is None:
            return resolve(given)
        # The version load() resolved (by version, timestamp or as the latest), not the options
        # themselves: a stream's refusal of time travel still sees the user's options.
        return resolve(replace(given, version_as_of=pinned, timestamp_as_of=None))

    @cached_property
    def _columns(self) -> tuple[str, ...]:
        return resolve_columns(
            self._scan.schema, self._read_options.columns, what="option 'columns'"
        )

    @cached_property
    def _where(self) -> Expr | None:
        """The parsed, *unbound* ``where`` predicate: the reader binds it per use, with the
        session time zone once a task knows it. Binding it here too makes every error
        surface at ``load()``."""
        text = self._read_options.where
        if text is None:
            return None
        expr = parse_predicate(text)
        bind(expr, self._scan.schema, self._read_options.bind_context())
        return expr

    @cached_property
    def _partial(self) -> PartialSpec | None:
        text = self._read_options.partial_aggregate
        return None if text is None else parse_partial_spec(text, self._scan.schema)

    def _batch_schema(self) -> StructType:
        if self._partial is not None:
            return partial_schema(self._partial, self._scan.schema, self._read_options.timestamp_as)
        return spark_schema(self._scan.schema, self._columns, self._read_options.timestamp_as)

    def resolved_read(self) -> tuple[ResolvedScan, ReadOptions]:
        """What a batch read of these options reads, resolved as ``load()`` resolves it: the
        pinned scan and the options as it reads them (the catalog plugin's path reads,
        spark_catalog/paths.py, take the same table this source would read).

        Raises:
            TsFileCatalogError: as ``load()`` would for the same options.
        """
        return self._scan, self._read_options

    def schema(self) -> StructType:
        if self._reads_change_feed:
            return change_feed_schema(self._scan, self._read_options)
        # Resolve everything that can fail now, at load(), so errors surface before any job.
        _ = self._where
        # load() does not tell a batch read from a stream: streaming options shape the schema
        # here, and the batch reader refuses them.
        return stream_schema(self._batch_schema(), self._stream_options)

    def reader(self, schema: StructType) -> DataSourceReader:
        if self._reads_change_feed:
            return self._change_feed_reader(schema)
        streaming = sorted(self._split_options[1])
        if streaming:
            raise OptionError(
                f"option '{streaming[0]}' applies to spark.readStream only (see "
                "docs/streaming.md); drop it from this batch read"
            )
        expected = self.schema()
        if self._partial is not None:
            # An internal scan (Catalog.sql's partial aggregation): never a user's schema.
            _check_schema(schema, expected)
            return TsFilePartialReader(
                self._scan, self._read_options, self._partial, expected, self._where
            )
        columns: Sequence[str] = self._columns
        if schema != expected:
            # A user-specified schema (``.schema("time long, city string")``) is a projection.
            # Spark never asks the source at load() when a schema is given (measured on 4.3:
            # neither the constructor nor schema() runs, nor on explain()), so this, when the
            # first query is planned and before any task, is the first chance to check it.
            columns = project_user_schema(
                self._scan.schema, schema, self._read_options.timestamp_as
            )
            outside = [c for c in columns if c not in self._columns]
            if outside:
                raise SchemaMismatchError(
                    f"the read schema names column '{outside[0]}', which option 'columns' "
                    f"leaves out ({', '.join(self._columns)})"
                )
            expected = schema
        return TsFileScanReader(self._scan, self._read_options, columns, expected, self._where)

    def _change_feed_reader(self, schema: StructType) -> DataSourceReader:
        check_batch_options(self._given_read_options, sorted(self._split_options[1]))
        if self._scan.version is None:
            raise OptionError(
                f"option 'readChangeFeed' needs a table with a manifest: {self._read_options.path} "
                "is plain TsFiles without versions"
            )
        _check_schema(schema, self.schema())
        feed = parse_change_feed_options(
            self._change_feed_options[1], self._split_options[1], streaming=False
        )
        return TsFileChangeFeedReader(self._scan, self._read_options, feed, self.schema())

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        # Admission control (latestOffset(start, limit), getDefaultReadLimit) and
        # Trigger.AvailableNow for Python sources arrived in 4.2, the package's floor: checked
        # again here because the source is found by Spark's discovery without register().
        check_pyspark_version(pyspark.__version__)
        # Imported here: the module needs Spark 4.2's streaming API, checked just above.
        from tsfile_catalog.datasource.stream_reader import TsFileStreamReader

        if self._read_options.version_as_of is not None or self._read_options.timestamp_as_of:
            raise OptionError(
                "options 'versionAsOf'/'timestampAsOf' pin one version, which a stream never "
                "does; use 'startingVersion' or 'startingTimestamp'"
            )
        top = self._read_options.time_top
        bound = "limit" if self._read_options.limit is not None else None
        if top is not None:
            bound = top.option
        if bound is not None:
            raise OptionError(f"option '{bound}' bounds a batch read; a stream has no end")
        self._unpin_expired()
        if self._scan.version is None:
            raise OptionError(
                f"spark.readStream needs a table with a manifest: {self._read_options.path} is "
                "plain TsFiles without versions (adopt it with tsfile_catalog.adopt_table)"
            )
        _check_schema(schema, self.schema())
        if self._reads_change_feed:
            check_stream_options(self._given_read_options, self._stream_options)
            parse_change_feed_options(
                self._change_feed_options[1], self._split_options[1], streaming=True
            )
            return TsFileStreamReader(
                self._scan,
                self._read_options,
                self._stream_options,
                self._scan.schema.display_names,
                self.schema(),
                None,
                change_feed=True,
            )
        return TsFileStreamReader(
            self._scan,
            self._read_options,
            self._stream_options,
            self._columns,
            self._batch_schema(),
            self._where,
        )

    def _unpin_expired(self) -> None:
        """A stream plans at the latest version when the one ``load()`` pinned was expired
        since (a DataFrame loaded before ``EXPIRE SNAPSHOTS`` and started after it): its
        offsets, not that version, decide what it reads; the pinned version only gave the
        schema, which the stream's own schema check compares again. Batch reads keep
        refusing an expired version (their rows are that version's)."""
        if self.__dict__.get("_pinned_version") is None or "_scan" in self.__dict__:
            return
        try:
            self._scan  # noqa: B018 - resolves (and caches) the pinned version
        except VersionNotFoundError:
            latest = replace(self._given_read_options, version_as_of=None, timestamp_as_of=None)
            self.__dict__["_scan"] = resolve(latest)

    @cached_property
    def _write_options(self) -> dict[str, str]:
        # A write into a view over a scan gets the scan's options: the write's are inside.
        return relation_write_options(self._options)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        options = parse_write_options(self._write_options)
        return TsFileBatchWriter(plan_write(schema, options), options, overwrite)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        # Heavy and Spark-streaming-only: imported when a stream is written.
        from tsfile_catalog.datasource.stream_writer import (
            COMPLETE_MODE_MESSAGE,
            TsFileStreamWriter,
        )

        if overwrite:  # Spark asks for overwrite exactly in output mode complete
            raise OptionError(COMPLETE_MODE_MESSAGE)
        options = parse_stream_write_options(self._write_options)
        return TsFileStreamWriter(plan_write(schema, options.write), options)


def _check_schema(given: StructType, expected: StructType) -> None:
    """A stream (and the catalog's internal partial scans) read the table's own schema: a
    projection is the ``columns`` option there."""
    names = [(f.name.lower(), f.dataType, f.nullable) for f in given.fields]
    if names != [(f.name, f.dataType, f.nullable) for f in expected.fields]:
        raise OptionError(
            "a user-specified schema (.schema(...)) is not supported by spark.readStream on "
            "the tsfile source: the schema comes from the table; choose columns with the "
            "'columns' option"
        )
