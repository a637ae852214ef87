"""Running a SELECT over catalog tables: fresh scans, statistics answers, small scans, views.

Every reference to a catalog table reads a *fresh* ``tsfile`` scan of its own, registered as a
uniquely named temporary view for the time it takes Spark to analyse the query: each scan
carries the columns the query may read, the predicates that certainly filter it (part pruning
and TsFile pushdown) and its ``VERSION AS OF`` / ``TIMESTAMP AS OF`` clause. Before that,
:func:`select` tries the answers that need no Spark job over the data: a ``count(*)`` from the
manifest, aggregates from statistics (:mod:`~tsfile_catalog.sql.stats_aggregates`), and the
partial aggregation started inside the scan (:mod:`~tsfile_catalog.sql.partial_aggregates`).
A reference whose parts hold few rows is read in the driver
(:mod:`~tsfile_catalog.sql.small_scan`).

:class:`Tables` is how one catalog reaches its tables in one session (registry, storage
options, session time zone, views); the statements of :mod:`~tsfile_catalog.sql.commands`,
:mod:`~tsfile_catalog.sql.describe` and :mod:`~tsfile_catalog.sql.maintenance` use it too.
"""

from __future__ import annotations

import itertools
import json
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pyspark.errors import AnalysisException, IllegalArgumentException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T
from sqlglot import exp

from tsfile_catalog import inspect
from tsfile_catalog.datasource.types import local_relation
from tsfile_catalog.discovery import scan_location
from tsfile_catalog.errors import unwrap
from tsfile_catalog.exceptions import PredicateError, TableNotFoundError, TsFileCatalogError
from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.exec.stamps import check_skipped_sources, check_sources
from tsfile_catalog.exec.table_scan import resolve_columns
from tsfile_catalog.inspect import Result
from tsfile_catalog.metadata.expressions import needs_time_zone
from tsfile_catalog.metadata.partial_aggregates import PartialSpec
from tsfile_catalog.metadata.scan import ScanPlan
from tsfile_catalog.metadata.spark.dialect import quote_identifier
from tsfile_catalog.metadata.spark.literals import parse_zone
from tsfile_catalog.metadata.stats_aggregates import metadata_count
from tsfile_catalog.metadata.time_top import TimeTop, keep_time_top
from tsfile_catalog.options import WRITE_OPTIONS_KEY
from tsfile_catalog.spark_catalog.wiring import serving
from tsfile_catalog.sql import small_scan, stats_aggregates, table_options
from tsfile_catalog.sql.analysis import (
    TableRef,
    as_metadata_count,
    as_single_table_scan,
    projection,
    table_refs,
)
from tsfile_catalog.sql.partial_aggregates import plan_partial_aggregate
from tsfile_catalog.sql.query_errors import in_user_terms, view_names
from tsfile_catalog.sql.ref_rewrite import rewrite_table_refs
from tsfile_catalog.sql.registry import DEFAULT_DATABASE, Registry, TableEntry
from tsfile_catalog.sql.statements import (
    TableName,
    TableUrl,
    TimestampAsOf,
    TimeTravel,
    VersionAsOf,
)
from tsfile_catalog.sql.time_top import as_time_top
from tsfile_catalog.sql.urls import UrlEntry, url_entry
from tsfile_catalog.storage_options import STORAGE_PREFIX
from tsfile_catalog.table.handle import Table, open_table
from tsfile_catalog.table.snapshots import time_travel_ms

__all__ = ["Tables", "select", "run", "explain_parts"]

_log = logging.getLogger(__name__)

_VIEW_PREFIX = "__tsfc_"
_SESSION_TIME_ZONE = "spark.sql.session.timeZone"


class Tables:
    """How one catalog reaches its tables in one Spark session: names through its registry,
    storage with its storage options, times in the session time zone, and fresh scans,
    registered as views where asked.

    Args:
        spark: the session that runs queries.
        registry: the catalog's registry of named tables.
        storage_options: the catalog's fsspec options, under each table's own ``fs.*``.
        register_views: keep a convenience view per default-database table.
        small_scan_rows: the catalog's ``small_scan_rows`` (None: the session's setting).
    """

    def __init__(
        self,
        spark: SparkSession,
        registry: Registry,
        storage_options: Mapping[str, Any],
        *,
        register_views: bool,
        small_scan_rows: int | None,
    ) -> None:
        self.spark = spark
        self.registry = registry
        self.small_scan_rows = small_scan_rows
        self._storage_options = dict(storage_options)
        self._register_views = register_views
        self._counter = itertools.count()
        self._session_id = uuid.uuid4().hex[:8]
        # The plugin catalog the convenience views were last all registered over (None:
        # views of tsfile scans), kept by Catalog.refresh_views.
        self.views_over: str | None = None

    # -- names --------------------------------------------------------------------------------

    def entry(self, table: TableName | TableUrl) -> TableEntry | None:
        """The entry a query's reference reads: a URL's own, a registered table's, or None
        (not a catalog table: Spark's)."""
        if isinstance(table, TableUrl):
            return url_entry(table)
        return self.registry.get(table)

    def plugin(self) -> str | None:
        """The session's catalog plugin serving this warehouse (its catalog name), or None:
        then queries take the rewriting path and views are views of scans."""
        return serving(self.spark, self.registry.warehouse)

    def spark_owns(self, name: TableName) -> bool:
        """Whether ``name`` is not a catalog table but Spark knows it (a Spark table or a
        temporary view): statements on it are Spark's."""
        if self.registry.get(name) is not None:
            return False
        return bool(self.spark.catalog.tableExists(name.qualified))

    # -- storage and time -----------------------------------------------------------------------

    def storage(self, entry: TableEntry) -> dict[str, Any]:
        """The catalog's storage options, with the table's own ``fs.*`` settings on top: a
        table stores no credentials, so those given to the catalog must still reach it when
        it keeps, say, its own endpoint."""
        return {**self._storage_options, **table_options.storage_options(entry)}

    def source_options(self, entry: TableEntry, options: Mapping[str, str]) -> dict[str, str]:
        """``options`` for the ``tsfile`` source on ``entry``: its path and storage options."""
        # The storage options travel to Spark's Python workers inside the source options
        # (Spark does not print a Python source's options in plans or the UI).
        out = dict(options)
        for key, value in self.storage(entry).items():
            out[f"{STORAGE_PREFIX}{key}"] = value if isinstance(value, str) else json.dumps(value)
        out["path"] = entry.location
        return out

    def session_time_zone(self) -> str | None:
        """``spark.sql.session.timeZone`` when this package can resolve it, else None."""
        zone = str(self.spark.conf.get(_SESSION_TIME_ZONE))
        try:
            parse_zone(zone)
        except PredicateError:
            return None
        return zone

    def as_of_ms(self, travel: TimestampAsOf) -> int:
        """The instant of ``TIMESTAMP AS OF``: without an offset, a wall-clock time in the
        session time zone, as Spark and Delta read it — the zone DESCRIBE HISTORY shows
        commit times in, so a time copied from there selects that version."""
        return time_travel_ms(
            travel.timestamp, time_zone=str(self.spark.conf.get(_SESSION_TIME_ZONE))
        )

    def travel(self, travel: TimeTravel | None) -> tuple[int | None, int | None]:
        """``open_table``'s version and timestamp (epoch ms) for a time travel clause."""
        version = travel.version if isinstance(travel, VersionAsOf) else None
        timestamp = self.as_of_ms(travel) if isinstance(travel, TimestampAsOf) else None
        return version, timestamp

    # -- opening --------------------------------------------------------------------------------

    def open(self, entry: TableEntry, travel: TimeTravel | None = None) -> Table:
        """The registered table of ``entry``, at ``travel``'s version."""
        version, timestamp = self.travel(travel)
        return open_entry(entry, self.storage(entry), version=version, timestamp=timestamp)

    def resolve(self, entry: TableEntry, travel: TimeTravel | None = None) -> ResolvedScan:
        """What a reference reads: a registered table (:meth:`open`), or whatever a URL
        holds, resolved exactly as the ``tsfile`` source resolves it for the scan; read
        with the entry's ``timestampAs`` and ``timestampPrecision`` (the table's own unit
        when it records one and the entry stores none; a URL's table's own time type, as
        ``load(url)`` reads it, since a URL reference stores no ``timestampAs``)."""
        unit = table_options.given_precision(entry)
        if not isinstance(entry, UrlEntry):
            table = self.open(entry, travel)
            return ResolvedScan.of_table(
                table, unit=table.time_unit(unit), timestamp_as=table_options.timestamp_as(entry)
            )
        version, timestamp = self.travel(travel)
        return scan_location(
            entry.location,
            unit=unit,
            timestamp_as=table_options.given_timestamp_as(entry),
            version=version,
            timestamp=timestamp,
            table=entry.url.table,
            table_uuid=entry.url.table_uuid,
            storage_options=self.storage(entry),
        )

    # -- scans and views ------------------------------------------------------------------------

    def scan(
        self,
        entry: TableEntry,
        *,
        columns: Sequence[str] | None = None,
        where: str | None = None,
        time_travel: TimeTravel | None = None,
        partial: PartialSpec | None = None,
        time_top: TimeTop | None = None,
        writable: bool = False,
    ) -> DataFrame:
        """A fresh ``tsfile`` scan of ``entry``, lazily read by Spark."""
        options = self.source_options(entry, table_options.read_options(entry))
        options.update(self._parallelism())
        if writable:
            # A write into a view over this scan (INSERT INTO, insertInto, writeTo through
            # plain spark.sql) is handed the scan's options: it writes with these instead,
            # the table's stored write options as Catalog's own INSERT uses them.
            write = table_options.write_options(entry, None)
            options[WRITE_OPTIONS_KEY] = json.dumps(
                {k: v for k, v in write.items() if not k.startswith(STORAGE_PREFIX)}
            )
        if partial is not None:
            options["partialAggregate"] = partial.to_json()
        if columns is not None:
            options["columns"] = ",".join(columns)
        if time_top is not None:
            options[time_top.option] = str(time_top.n)
        if where is not None:
            options["where"] = where
            # The scan binds the predicate in the zone Spark analyses the query in.
            zone = self.session_time_zone()
            if zone is not None:
                options["timeZone"] = zone
        if isinstance(entry, UrlEntry):
            options.update(entry.scan_options())
        if isinstance(time_travel, VersionAsOf):
            options["versionAsOf"] = str(time_travel.version)
        elif isinstance(time_travel, TimestampAsOf):
            # Resolved here: the source's workers do not know the session time zone.
            options["timestampAsOf"] = str(self.as_of_ms(time_travel))
        return self.spark.read.format("tsfile").options(**options).load()

    def _parallelism(self) -> dict[str, str]:
        """The ``partitions`` option: Spark's ``defaultParallelism``, which only the driver
        knows (the source plans in a worker process); nothing where it is not available."""
        try:
            return {"partitions": str(self.spark.sparkContext.defaultParallelism)}
        except Exception as e:  # noqa: BLE001 - Spark Connect has no SparkContext
            _log.debug("no defaultParallelism: %s", e)
            return {}

    def view_name(self) -> str:
        """A temporary view name no other statement, catalog or session uses."""
        return f"{_VIEW_PREFIX}{next(self._counter)}_{self._session_id}{uuid.uuid4().hex[:8]}"

    def refresh_view(self, entry: TableEntry, plugin: str | None = None) -> None:
        """(Re)register ``entry``'s convenience view (default database only; logged and
        skipped when the table cannot be opened). Over the catalog ``plugin`` (default: the
        one serving this warehouse) it is a view of the plugin's table, resolved again at
        every query (the latest version, the plugin's pushdown); without, a view of a
        ``tsfile`` scan at the latest version now."""
        if not self._register_views or entry.database != DEFAULT_DATABASE:
            return
        plugin = plugin if plugin is not None else self.plugin()
        if plugin is not None:
            # A view defined by SQL text is analysed again where it is read (Spark does not
            # store its plan), so it always reads the table's latest version.
            name = quote_identifier(entry.name)
            target = ".".join(quote_identifier(p) for p in (plugin, DEFAULT_DATABASE, entry.name))
            try:
                self.spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {name} AS SELECT * FROM {target}")
            except (AnalysisException, IllegalArgumentException) as e:
                _log.warning("no view for table %s: %s", entry.display_name, e)
            return
        try:
            self.scan(entry, writable=True).createOrReplaceTempView(entry.name)
        except TsFileCatalogError as e:
            _log.warning("no view for table %s: %s", entry.display_name, e)

    def drop_view(self, entry: TableEntry) -> None:
        if self._register_views and entry.database == DEFAULT_DATABASE:
            self.spark.catalog.dropTempView(entry.name)

    def result(self, result: Result) -> DataFrame:
        """A command's answer as a small DataFrame."""
        return self.spark.createDataFrame(result.rows, result.schema)


# -- running a query ----------------------------------------------------------------------------


class _Resolved:
    """The scans one statement resolves, each opened once: every way of answering it, and
    every reference to a table without time travel, sees the same version."""

    def __init__(self, tables: Tables) -> None:
        self._tables = tables
        self._scans: dict[tuple[str, str, TimeTravel | None], ResolvedScan] = {}

    def get(self, entry: TableEntry, travel: TimeTravel | None = None) -> ResolvedScan:
        key = (entry.database, entry.name, travel)
        if key not in self._scans:
            self._scans[key] = self._tables.resolve(entry, travel)
        return self._scans[key]


def open_entry(
    entry: TableEntry,
    storage_options: Mapping[str, Any],
    *,
    version: int | None = None,
    timestamp: int | None = None,
) -> Table:
    """The table registered as ``entry`` (at ``version`` or epoch-ms ``timestamp``), or an
    error naming the registered name when its location holds no table any more."""
    try:
        return open_table(
            entry.location, version=version, timestamp=timestamp, storage_options=storage_options
        )
    except TableNotFoundError as e:
        raise TableNotFoundError(
            f"table {entry.display_name!r} is registered at {entry.location}, but no table "
            f"is there any more ({e})"
        ) from e


def select(tables: Tables, query: exp.Query) -> DataFrame:
    """``query``, answered from the manifest or statistics where that is exact, with its
    aggregation started in the scan where it can be, else by :func:`run`."""
    resolved = _Resolved(tables)
    count = _metadata_count(tables, resolved, query)
    if count is not None:
        return count
    answered = _stats_aggregates(tables, resolved, query)
    if answered is not None:
        return answered
    partial = _partial_aggregate(tables, resolved, query)
    if partial is not None:
        return partial
    return _run(tables, resolved, query)


def run(tables: Tables, query: exp.Expr) -> DataFrame:
    """``query`` with every catalog table reference read by a fresh scan of its own."""
    return _run(tables, _Resolved(tables), query)


def _run(
    tables: Tables, resolved: _Resolved, query: exp.Expr, *, projected: bool = True
) -> DataFrame:
    """Spark's analysis error (its own class and condition) names the user's tables, with
    suggestions over all their columns: see :mod:`~tsfile_catalog.sql.query_errors`."""
    spark = tables.spark
    views: dict[int, str] = {}
    refs = {ref.index: ref for ref in table_refs(query)}
    # The one reference whose scan takes every WHERE conjunct of the query, if any, and the
    # first rows in time order that are all the query needs of it.
    whole = as_single_table_scan(query)
    found_top = as_time_top(query)
    try:
        for ref in refs.values():
            entry = tables.entry(ref.table)
            if entry is None:
                continue  # not ours: a Spark table or view, left to Spark
            filtered = whole is not None and whole.index == ref.index
            top = found_top[1] if found_top is not None and filtered else None
            scan = _ref_scan(
                tables, resolved, entry, ref, projected=projected, whole_where=filtered, top=top
            )
            name = tables.view_name()
            scan.createOrReplaceTempView(name)
            views[ref.index] = name
        text = rewrite_table_refs(query, lambda ref: views.get(ref.index))
        # spark.sql analyses eagerly: the DataFrame holds the resolved scans, so the views
        # are not needed once it returns.
        try:
            return spark.sql(text)
        except AnalysisException as e:
            if projected and views:
                # Analysed again over views of every column, so Spark's suggestions cover
                # the table's real columns rather than the projection.
                return _run(tables, resolved, query, projected=False)
            ours = unwrap(e)  # the source's error, raised by Spark with its class's name
            if isinstance(ours, TsFileCatalogError):
                raise ours from e
            in_user_terms(e, view_names(refs, views))
            raise  # Spark's own error, as spark.sql raises it
    finally:
        for name in views.values():
            spark.catalog.dropTempView(name)


def explain_parts(tables: Tables, query: exp.Query) -> DataFrame:
    """EXPLAIN PARTS: for each catalog table reference, the parts its scan opens and prunes."""
    rows: list[tuple[Any, ...]] = []
    found_top = as_time_top(query)
    for ref in table_refs(query):
        entry = tables.entry(ref.table)
        if entry is None:
            continue
        scan = tables.resolve(entry, ref.time_travel)
        plan = _plan(tables, entry, scan, ref.where)
        pushed = ref.where if plan is not None else None
        if plan is None:
            plan = scan.plan(None)
        exact = ref.where is None or pushed is not None
        if found_top is not None and found_top[0].index == ref.index and exact:
            # The parts the query's first rows in time order cannot be in are not opened.
            kept, dropped = keep_time_top(plan, found_top[1])
            plan = replace(kept, pruned=(*plan.pruned, *dropped))
        rows.extend(
            inspect.explain_rows(
                ref.index,
                entry.display_name,
                ref.alias,
                scan,
                plan,
                projection(scan.schema, ref.columns),
                pushed,
            )
        )
    return tables.result(Result(inspect.EXPLAIN_SCHEMA, rows))


def _plan(
    tables: Tables, entry: TableEntry, scan: ResolvedScan, where: str | None
) -> ScanPlan | None:
    """The plan for ``where``, bound as Spark binds it over the table's scan, or None when
    it cannot be pushed exactly (the query's own WHERE still filters; only the pushdown is
    lost)."""
    try:
        plan = scan.plan(where, time_zone=tables.session_time_zone())
    except PredicateError as e:
        _log.debug("not pushing %r into %s: %s", where, entry.display_name, e)
        return None
    if needs_time_zone(plan.filter):
        _log.debug(
            "not pushing %r into %s: the session time zone is unknown", where, entry.display_name
        )
        return None
    return plan


def _ref_scan(
    tables: Tables,
    resolved: _Resolved,
    entry: TableEntry,
    ref: TableRef,
    *,
    projected: bool = True,
    whole_where: bool = False,
    top: TimeTop | None = None,
) -> DataFrame:
    """A scan for one reference. References without time travel read the version
    ``resolved`` holds for their table (opened by the first of them), so every reference
    to a table in one statement sees the same snapshot (plain files have no versions).
    ``whole_where``: the reference's ``where`` is every filter the query puts on it; ``top``:
    the query needs only those first rows in time order of it (then ``whole_where`` holds)."""
    travel = ref.time_travel
    scan = resolved.get(entry, travel)
    if travel is None and scan.version is not None:
        travel = VersionAsOf(scan.version)
    columns = projection(scan.schema, ref.columns) if projected else None
    plan = _plan(tables, entry, scan, ref.where)
    # A small scan only where it took every filter the query puts on the reference: Spark
    # evaluates a filter over a local relation (or any other leaf) in another order than
    # over the data source, whose pushdown reorders the conjuncts, so a conjunct failing on
    # a row (an ANSI cast of a malformed string) would fail where Spark's query answers, or
    # the reverse. The rows a scan took every filter for satisfy them all: none fails.
    exact = whole_where and (ref.where is None or plan is not None)
    if not exact:
        top = None  # Spark filters the scan's rows: their first rows are not the query's
    elif top is not None:
        # Only the parts that may hold the first rows count towards a small scan.
        plan, dropped = keep_time_top(plan or scan.plan(None), top)
        check_skipped_sources(scan.io, dropped, ())
    local = _small_scan(tables, scan, plan, columns) if exact else None
    if local is not None:
        return local
    where = ref.where if plan is not None else None
    return tables.scan(entry, columns=columns, where=where, time_travel=travel, time_top=top)


def _small_scan(
    tables: Tables, scan: ResolvedScan, plan: ScanPlan | None, columns: Sequence[str] | None
) -> DataFrame | None:
    """The reference read in the driver when its plan reads at most ``smallScanRows``
    rows (see :mod:`~tsfile_catalog.sql.small_scan`), else None (the data source reads
    it). A WHERE that could not be pushed is still applied by Spark to the rows."""
    plan = _planned_small(tables, scan, plan)
    if plan is None:
        return None
    wanted = resolve_columns(scan.schema, columns, what="the query's columns")
    return small_scan.local_scan(tables.spark, scan, plan, wanted)


def _planned_small(tables: Tables, scan: ResolvedScan, plan: ScanPlan | None) -> ScanPlan | None:
    """The reference's plan (``plan``, or the whole table's) when it reads at most
    ``smallScanRows`` rows, else None."""
    limit = small_scan.small_scan_rows(tables.spark, tables.small_scan_rows)
    if limit == 0:
        return None
    if plan is None:
        plan = scan.plan(None)
    return plan if small_scan.planned_rows(plan) <= limit else None


def _metadata_count(tables: Tables, resolved: _Resolved, query: exp.Query) -> DataFrame | None:
    """``SELECT count(*)`` answered from the manifest's row counts, when they are exact."""
    found = as_metadata_count(query)
    if found is None:
        return None
    ref, where = found
    entry = tables.entry(ref.table)
    if entry is None:
        return None
    plan = _plan(tables, entry, resolved.get(entry, ref.time_travel), where)
    rows = metadata_count(plan) if plan is not None else None
    if rows is None:
        return None
    assert plan is not None
    check_sources(resolved.get(entry, ref.time_travel).io, plan.parts)
    item = query.expressions[0]
    name = item.alias if isinstance(item, exp.Alias) else "count(1)"
    schema = T.StructType([T.StructField(name, T.LongType(), nullable=False)])
    return local_relation(tables.spark, [(rows,)], schema)


def _stats_aggregates(tables: Tables, resolved: _Resolved, query: exp.Query) -> DataFrame | None:
    """Aggregates answered from statistics (:mod:`tsfile_catalog.sql.stats_aggregates`)."""
    found = stats_aggregates.recognize(query)
    entry = tables.entry(found.ref.table) if found is not None else None
    if found is None or entry is None:
        return None
    scan = resolved.get(entry, found.ref.time_travel)
    plan = _plan(tables, entry, scan, found.ref.where)
    if plan is None:
        return None
    return stats_aggregates.answer(tables.spark, query, found, scan, plan)


def _partial_aggregate(tables: Tables, resolved: _Resolved, query: exp.Query) -> DataFrame | None:
    """``query`` with its aggregation started inside the scan (partial aggregates merged
    by Spark), or None when its shape is not one :mod:`~tsfile_catalog.sql.
    partial_aggregates` rewrites. Spark's analysis of the original query names the
    columns and is the check: a rewrite whose types differ is not used."""
    spark = tables.spark
    ref = as_single_table_scan(query)
    entry = tables.entry(ref.table) if ref is not None else None
    if ref is None or entry is None:
        return None
    scan = resolved.get(entry, ref.time_travel)
    rewrite = plan_partial_aggregate(
        query,
        ref,
        scan.schema,
        timestamp_as=scan.timestamp_as,
        time_zone=tables.session_time_zone(),
    )
    if rewrite is None:
        return None
    plan = _plan(tables, entry, scan, ref.where)
    if ref.where is not None and plan is None:
        return None  # a WHERE the scan cannot evaluate exactly: Spark must see it
    if _planned_small(tables, scan, plan) is not None:
        return None  # read in the driver instead (a small scan): no Spark job to feed
    travel = ref.time_travel
    if travel is None and scan.version is not None:
        travel = VersionAsOf(scan.version)
    original = _run(tables, resolved, query)
    partial = tables.scan(entry, where=ref.where, time_travel=travel, partial=rewrite.spec)
    name = tables.view_name()
    partial.createOrReplaceTempView(name)
    try:
        result = spark.sql(rewrite_table_refs(rewrite.outer, lambda _: name))
    finally:
        spark.catalog.dropTempView(name)
    if [f.dataType for f in result.schema] != [f.dataType for f in original.schema]:
        _log.debug("partial aggregates of %s change its types; not used", query.sql())
        return original
    return result.toDF(*original.columns)
