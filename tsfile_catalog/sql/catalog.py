"""``Catalog``: named tsfile tables in a warehouse, queried and changed with SQL on Spark.

``catalog.sql(text)`` parses one statement (:func:`~tsfile_catalog.sql.parse_statement`),
executes the statements it owns against the table layer and hands everything else to
``spark.sql`` unchanged. Queries are rewritten so every reference to a catalog table reads a
*fresh* ``tsfile`` scan of its own, registered as a uniquely named temporary view for the
time it takes Spark to analyse the query: each scan carries the columns the query may read,
the predicates that certainly filter it (part pruning and TsFile pushdown) and its
``VERSION AS OF`` / ``TIMESTAMP AS OF`` clause. Spark never sees the tables as catalog tables
(a ``USING <python source>`` table would hand its scans no options and refuses time travel).

See ``docs/sql.md`` for the statement reference.
"""

from __future__ import annotations

import itertools
import json
import logging
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T
from sqlglot import exp

from tsfile_catalog import inspect
from tsfile_catalog.adopt import adopt_table
from tsfile_catalog.datasource.options import parse_write_options
from tsfile_catalog.datasource.types import local_relation
from tsfile_catalog.discovery import ResolvedScan, open_location
from tsfile_catalog.exceptions import (
    OptionError,
    PredicateError,
    SqlError,
    TableExistsError,
    TableNotFoundError,
    TsFileCatalogError,
)
from tsfile_catalog.inspect import Result
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.aggregates import metadata_count
from tsfile_catalog.metadata.expressions import needs_time_zone
from tsfile_catalog.metadata.literals import parse_zone
from tsfile_catalog.metadata.partial_aggregates import PartialSpec
from tsfile_catalog.metadata.scan import ScanPlan
from tsfile_catalog.metadata.schema import TableSchema
from tsfile_catalog.metadata.spark_types import tsfile_type_of_sql
from tsfile_catalog.session import register
from tsfile_catalog.sql import ddl, dml, small_scan, stats_aggregates, table_options
from tsfile_catalog.sql.analysis import (
    TableRef,
    as_metadata_count,
    as_single_table_scan,
    projection,
    rewrite_table_refs,
    table_refs,
)
from tsfile_catalog.sql.parse import parse_statement
from tsfile_catalog.sql.partial_aggregates import plan_partial_aggregate
from tsfile_catalog.sql.query_errors import in_user_terms, view_names
from tsfile_catalog.sql.registry import DEFAULT_DATABASE, Registry, TableEntry
from tsfile_catalog.sql.registry import parse_table_name as _table_name
from tsfile_catalog.sql.statements import (
    AlterTableAddColumns,
    AlterTableAddPart,
    AlterTableAlterColumn,
    AlterTableDropPart,
    AlterTableRename,
    AlterTableSetProperties,
    AlterTableUnsupported,
    CreateTable,
    Delete,
    DescribeDetail,
    DescribeHistory,
    DescribeTable,
    DropTable,
    ExpireSnapshots,
    ExplainParts,
    Insert,
    Optimize,
    PassThrough,
    RestoreTable,
    Select,
    ShowCreateTable,
    ShowParts,
    ShowTables,
    Statement,
    TableName,
    TableUrl,
    TimestampAsOf,
    TimeTravel,
    Vacuum,
    VersionAsOf,
    create_table_statement,
)
from tsfile_catalog.sql.urls import UrlEntry, url_entry
from tsfile_catalog.storage_options import STORAGE_PREFIX
from tsfile_catalog.table import (
    Table,
    add_columns,
    add_files,
    alter_column_type,
    create_table,
    delete,
    drop_parts,
    expire_snapshots,
    open_table,
    optimize,
    purge,
    restore,
    set_properties,
    vacuum_table,
)
from tsfile_catalog.table.handle import time_travel_ms
from tsfile_catalog.table.ownership import check_empty, check_location
from tsfile_catalog.table.scan import resolve_columns

__all__ = ["Catalog"]

_log = logging.getLogger(__name__)

_VIEW_PREFIX = "__tsfc_"
_SESSION_TIME_ZONE = "spark.sql.session.timeZone"
# Delta's spark.databricks.delta.retentionDurationCheck.enabled: "false" lets VACUUM use a
# retention below a table's deletedFileRetention.
RETENTION_CHECK = "spark.tsfile.retentionDurationCheck.enabled"


class Catalog:
    """Named tsfile tables under one warehouse, with SQL.

    Example::

        spark = tsfile_catalog.local_session()
        catalog = tsfile_catalog.Catalog(spark, warehouse="/data/warehouse")
        catalog.sql("CREATE TABLE weather (time TIMESTAMP, city STRING, temp DOUBLE) "
                    "USING tsfile OPTIONS (tagColumns 'city')")
        catalog.sql("INSERT INTO weather VALUES (TIMESTAMP '2024-01-01', 'bj', 1.5)")
        catalog.sql("SELECT * FROM weather VERSION AS OF 1 WHERE city = 'bj'").show()

    The registry lives under ``<warehouse>/_catalog/``, so every process (and Spark session)
    opening a catalog on the same warehouse sees the same tables. Each table of the default
    database is also registered in the session as a temporary view of its name, for plain
    ``spark.sql``; ``catalog.sql`` does not use those views (see ``docs/sql.md``).

    Args:
        spark: the session that runs queries; the ``tsfile`` source is registered in it.
        warehouse: a directory or fsspec URL holding the registry and new tables' data.
        storage_options: fsspec options for the warehouse and every table, under each
            table's own ``fs.*`` settings. The place for credentials the environment does
            not provide: they are used in this process (and its Spark tasks) only, never
            stored in the registry.
        register_views: register the per-table convenience views for plain ``spark.sql``.
        small_scan_rows: a table reference whose pruned parts hold at most this many rows
            is read in the driver and handed to Spark as a local relation (no Spark job for
            the scan); 0 turns it off. Default: the session's ``spark.tsfile.smallScanRows``,
            else ``sql.small_scan.DEFAULT_SMALL_SCAN_ROWS``.
    """

    def __init__(
        self,
        spark: SparkSession,
        warehouse: str = "./warehouse",
        *,
        storage_options: Mapping[str, Any] | None = None,
        register_views: bool = True,
        small_scan_rows: int | None = None,
    ) -> None:
        if small_scan_rows is not None and small_scan_rows < 0:
            raise OptionError(
                f"small_scan_rows = {small_scan_rows} must be a row count (0 turns the "
                "driver-side read of small scans off)"
            )
        register(spark)
        self._small_scan_rows = small_scan_rows
        self._spark = spark
        self._registry = Registry(warehouse, storage_options)
        self._storage_options = dict(storage_options or {})
        self._register_views = register_views
        self._counter = itertools.count()
        self._session_id = uuid.uuid4().hex[:8]
        if register_views:
            self.refresh_views()

    def __repr__(self) -> str:
        return f"Catalog({self.warehouse!r})"

    # -- public API ---------------------------------------------------------------------------

    @property
    def warehouse(self) -> str:
        """The warehouse root (local paths absolute)."""
        return self._registry.warehouse

    @property
    def spark(self) -> SparkSession:
        return self._spark

    def tables(self, database: str | None = None) -> list[str]:
        """Registered table names, sorted: bare in the default database, ``db.name`` else."""
        return [entry.display_name for entry in self._registry.entries(database)]

    def table(
        self, name: str, *, version: int | None = None, timestamp: str | None = None
    ) -> DataFrame:
        """A fresh scan of table ``name`` (``[db.]name``), optionally at an older version.

        ``timestamp`` is read as ``TIMESTAMP AS OF`` reads it: epoch milliseconds or ISO-8601,
        a time without an offset being in the session time zone.

        Raises:
            TableNotFoundError: no such table in the catalog.
            VersionNotFoundError: no such version.
        """
        entry = self._registry.require(_table_name(name))
        travel: TimeTravel | None = None
        if version is not None and timestamp is not None:
            raise OptionError("pass either version or timestamp, not both")
        if version is not None:
            travel = VersionAsOf(version)
        elif timestamp is not None:
            travel = TimestampAsOf(timestamp)
        return self._scan(entry, time_travel=travel)

    def sql(self, text: str) -> DataFrame:
        """Execute one SQL statement; queries return lazy DataFrames, commands small ones.

        Raises:
            SqlParseError: the text is not one parseable statement.
            SqlError: the statement is invalid for the catalog.
            TableNotFoundError: a statement the catalog owns names an unknown table.
            TsFileCatalogError: any other failure of the table layer (schema mismatch, ...).
        """
        return self.execute(parse_statement(text))

    def execute(self, statement: Statement) -> DataFrame:
        """Execute an already parsed statement (see :meth:`sql`)."""
        match statement:
            case Select(query=query):
                return self._select(query)
            case Insert():
                return self._insert(statement)
            case CreateTable():
                return self._create(statement)
            case DropTable():
                return self._drop(statement)
            case (
                DescribeTable(table=TableUrl())
                | DescribeHistory(table=TableUrl())
                | DescribeDetail(table=TableUrl())
                | ShowParts(table=TableUrl())
            ):
                return self._result(self._url_command(statement))
            case DescribeTable(table=TableName() as name, extended=extended):
                if self._spark_owns(name):
                    return self._spark.sql(statement.to_sql())
                entry = self._registry.require(name)
                return self._result(
                    inspect.describe(
                        self._open(entry),
                        extended=extended,
                        name=entry.display_name,
                        timestamp_as=table_options.timestamp_as(entry),
                        options=entry.options,
                    )
                )
            case DescribeHistory(table=TableName() as name):
                entry = self._registry.require(name)
                return self._result(inspect.describe_history(self._open(entry)))
            case DescribeDetail(table=TableName() as name):
                entry = self._registry.require(name)
                return self._result(
                    inspect.describe_detail(
                        self._open(entry),
                        name=entry.display_name,
                        timestamp_as=table_options.timestamp_as(entry),
                        options=entry.options,
                    )
                )
            case ShowTables(database=database):
                entries = self._registry.entries(database)
                tables = [(e.database, e.name, e.location) for e in entries]
                return self._result(
                    Result("namespace string, tableName string, location string", tables)
                )
            case ShowParts(table=TableName() as name, time_travel=travel):
                entry = self._registry.require(name)
                return self._result(inspect.show_parts(self._open(entry, travel)))
            case ExplainParts(query=query):
                return self._explain_parts(query)
            case AlterTableSetProperties():
                return self._set_properties(statement)
            case AlterTableAddPart() | AlterTableDropPart():
                return self._alter_parts(statement)
            case Vacuum():
                return self._vacuum(statement)
            case ExpireSnapshots():
                return self._expire(statement)
            case RestoreTable():
                return self._restore(statement)
            case (
                AlterTableAddColumns()
                | AlterTableAlterColumn()
                | AlterTableRename()
                | AlterTableUnsupported()
            ):
                return self._alter_table(statement)
            case ShowCreateTable(table=name):
                entry = self._registry.require(name)
                created = create_table_statement(
                    name,
                    self._open(entry).schema,
                    location=entry.location,
                    options=entry.options,
                    properties=self._open(entry).properties,
                )
                return self._result(inspect.show_create_table(created.to_sql()))
            case Optimize(table=name, where=where):
                entry = self._registry.require(name)
                done = optimize(self._open(entry), where=where, **self._rewrite_args(entry))
                self._refresh_view(entry)
                return self._result(inspect.optimize_result(done))
            case Delete(table=name, where=where) if not self._spark_owns(name):
                entry = self._registry.require(name)
                removed = delete(self._open(entry), where, **self._rewrite_args(entry))
                self._refresh_view(entry)
                return self._result(inspect.delete_result(removed))
            case Delete():
                return self._spark.sql(statement.to_sql())
            case PassThrough(sql=text):
                return self._spark.sql(text)
        raise SqlError(f"unsupported statement {type(statement).__name__}")

    def refresh_views(self) -> None:
        """(Re)register the convenience view of every default-database table at its latest
        version, for plain ``spark.sql``. Tables that cannot be opened are skipped (logged)."""
        for entry in self._registry.entries(DEFAULT_DATABASE):
            self._refresh_view(entry)

    def _spark_owns(self, name: TableName) -> bool:
        """Whether ``name`` is not a catalog table but Spark knows it (a Spark table or a
        temporary view): statements on it are Spark's."""
        if self._registry.get(name) is not None:
            return False
        return bool(self._spark.catalog.tableExists(name.qualified))

    def _rewrite_args(self, entry: TableEntry) -> dict[str, Any]:
        """How OPTIMIZE and DELETE write and bind for ``entry``: its stored write options
        (compression, encoding), its scan's time unit and ``timestampAs``, the session time
        zone, its storage options."""
        write = parse_write_options(
            {**table_options.write_options(entry, "-"), "path": entry.location}
        )
        return {
            "settings": write.settings(),
            "unit": table_options.precision(entry),
            "timestamp_as": table_options.timestamp_as(entry),
            "time_zone": self._session_time_zone(),
            "storage_options": self._storage(entry),
        }

    # -- scans --------------------------------------------------------------------------------

    def _storage(self, entry: TableEntry) -> dict[str, Any]:
        """The catalog's storage options, with the table's own ``fs.*`` settings on top: a
        table stores no credentials, so those given to the catalog must still reach it when
        it keeps, say, its own endpoint."""
        return {**self._storage_options, **table_options.storage_options(entry)}

    def _source_options(self, entry: TableEntry, options: Mapping[str, str]) -> dict[str, str]:
        # The storage options travel to Spark's Python workers inside the source options
        # (Spark does not print a Python source's options in plans or the UI).
        out = dict(options)
        for key, value in self._storage(entry).items():
            out[f"{STORAGE_PREFIX}{key}"] = value if isinstance(value, str) else json.dumps(value)
        out["path"] = entry.location
        return out

    def _as_of_ms(self, travel: TimestampAsOf) -> int:
        """The instant of ``TIMESTAMP AS OF``: without an offset, a wall-clock time in the
        session time zone, as Spark and Delta read it — the zone DESCRIBE HISTORY shows
        commit times in, so a time copied from there selects that version."""
        return time_travel_ms(
            travel.timestamp, time_zone=str(self._spark.conf.get(_SESSION_TIME_ZONE))
        )

    def _travel(self, travel: TimeTravel | None) -> tuple[int | None, int | None]:
        """``open_table``'s version and timestamp (epoch ms) for a time travel clause."""
        version = travel.version if isinstance(travel, VersionAsOf) else None
        timestamp = self._as_of_ms(travel) if isinstance(travel, TimestampAsOf) else None
        return version, timestamp

    def _open(self, entry: TableEntry, travel: TimeTravel | None = None) -> Table:
        version, timestamp = self._travel(travel)
        try:
            return open_table(
                entry.location,
                version=version,
                timestamp=timestamp,
                storage_options=self._storage(entry),
            )
        except TableNotFoundError as e:
            raise TableNotFoundError(
                f"table {entry.display_name!r} is registered at {entry.location}, but no table "
                f"is there any more ({e})"
            ) from e

    def _scan(
        self,
        entry: TableEntry,
        *,
        columns: Sequence[str] | None = None,
        where: str | None = None,
        time_travel: TimeTravel | None = None,
        partial: PartialSpec | None = None,
    ) -> DataFrame:
        options = self._source_options(entry, table_options.read_options(entry))
        options.update(self._parallelism())
        if partial is not None:
            options["partialAggregate"] = partial.to_json()
        if columns is not None:
            options["columns"] = ",".join(columns)
        if where is not None:
            options["where"] = where
            # The scan binds the predicate in the zone Spark analyses the query in.
            zone = self._session_time_zone()
            if zone is not None:
                options["timeZone"] = zone
        if isinstance(entry, UrlEntry):
            options.update(entry.scan_options())
        if isinstance(time_travel, VersionAsOf):
            options["versionAsOf"] = str(time_travel.version)
        elif isinstance(time_travel, TimestampAsOf):
            # Resolved here: the source's workers do not know the session time zone.
            options["timestampAsOf"] = str(self._as_of_ms(time_travel))
        return self._spark.read.format("tsfile").options(**options).load()

    def _parallelism(self) -> dict[str, str]:
        """The ``partitions`` option: Spark's ``defaultParallelism``, which only the driver
        knows (the source plans in a worker process); nothing where it is not available."""
        try:
            return {"partitions": str(self._spark.sparkContext.defaultParallelism)}
        except Exception as e:  # noqa: BLE001 - Spark Connect has no SparkContext
            _log.debug("no defaultParallelism: %s", e)
            return {}

    def _session_time_zone(self) -> str | None:
        """``spark.sql.session.timeZone`` when this package can resolve it, else None."""
        zone = str(self._spark.conf.get(_SESSION_TIME_ZONE))
        try:
            parse_zone(zone)
        except PredicateError:
            return None
        return zone

    def _plan(
        self, entry: TableEntry, table: Table | ResolvedScan, where: str | None
    ) -> ScanPlan | None:
        """The plan for ``where``, bound as Spark binds it over the table's scan, or None when
        it cannot be pushed exactly (the query's own WHERE still filters; only the pushdown is
        lost)."""
        try:
            plan = table.plan(
                where,
                unit=table_options.precision(entry),
                timestamp_as=table_options.timestamp_as(entry),
                time_zone=self._session_time_zone(),
            )
        except PredicateError as e:
            _log.debug("not pushing %r into %s: %s", where, entry.display_name, e)
            return None
        if needs_time_zone(plan.filter):
            _log.debug(
                "not pushing %r into %s: the session time zone is unknown",
                where,
                entry.display_name,
            )
            return None
        return plan

    def _ref_scan(
        self,
        entry: TableEntry,
        ref: TableRef,
        pinned: dict[tuple[str, str], Table | ResolvedScan],
        *,
        projected: bool = True,
    ) -> DataFrame:
        """A scan for one reference. References without time travel read the version
        ``pinned`` holds for their table (opened by the first of them), so every reference
        to a table in one statement sees the same snapshot (plain files have no versions)."""
        travel = ref.time_travel
        if travel is None:
            key = (entry.database, entry.name)
            if key not in pinned:
                pinned[key] = self._resolve(entry)
            table = pinned[key]
            travel = VersionAsOf(table.version) if table.version is not None else None
        else:
            table = self._resolve(entry, travel)
        columns = projection(table.schema, ref.columns) if projected else None
        plan = self._plan(entry, table, ref.where)
        local = self._small_scan(entry, table, plan, columns)
        if local is not None:
            return local
        where = ref.where if plan is not None else None
        return self._scan(entry, columns=columns, where=where, time_travel=travel)

    def _small_scan(
        self,
        entry: TableEntry,
        table: Table | ResolvedScan,
        plan: ScanPlan | None,
        columns: Sequence[str] | None,
    ) -> DataFrame | None:
        """The reference read in the driver when its plan reads at most ``smallScanRows``
        rows (see :mod:`~tsfile_catalog.sql.small_scan`), else None (the data source reads
        it). A WHERE that could not be pushed is still applied by Spark to the rows."""
        plan = self._planned_small(entry, table, plan)
        if plan is None:
            return None
        unit, timestamp_as = table_options.precision(entry), table_options.timestamp_as(entry)
        if isinstance(table, Table):
            scan = ResolvedScan.of_table(table)
            io = table.io
        else:
            scan, io = table, FileIO(table.base or entry.location, self._storage(entry))
        wanted = resolve_columns(table.schema, columns, what="the query's columns")
        return small_scan.local_scan(
            self._spark, scan, io, plan, wanted, timestamp_as=timestamp_as, unit=unit
        )

    def _planned_small(
        self, entry: TableEntry, table: Table | ResolvedScan, plan: ScanPlan | None
    ) -> ScanPlan | None:
        """The reference's plan (``plan``, or the whole table's) when it reads at most
        ``smallScanRows`` rows, else None."""
        limit = small_scan.small_scan_rows(self._spark, self._small_scan_rows)
        if limit == 0:
            return None
        if plan is None:
            plan = table.plan(
                None,
                unit=table_options.precision(entry),
                timestamp_as=table_options.timestamp_as(entry),
            )
        return plan if small_scan.planned_rows(plan) <= limit else None

    def _view_name(self) -> str:
        return f"{_VIEW_PREFIX}{next(self._counter)}_{self._session_id}{uuid.uuid4().hex[:8]}"

    def _query(self, query: exp.Expr, *, projected: bool = True) -> DataFrame:
        """``query`` with every catalog table reference read by a fresh scan of its own.

        Spark's analysis error names the user's tables, with suggestions over all their
        columns: see :mod:`~tsfile_catalog.sql.query_errors`."""
        views: dict[int, str] = {}
        pinned: dict[tuple[str, str], Table | ResolvedScan] = {}
        refs = {ref.index: ref for ref in table_refs(query)}
        try:
            for ref in refs.values():
                entry = self._entry(ref.table)
                if entry is None:
                    continue  # not ours: a Spark table or view, left to Spark
                scan = self._ref_scan(entry, ref, pinned, projected=projected)
                name = self._view_name()
                scan.createOrReplaceTempView(name)
                views[ref.index] = name
            text = rewrite_table_refs(query, lambda ref: views.get(ref.index))
            # spark.sql analyses eagerly: the DataFrame holds the resolved scans, so the views
            # are not needed once it returns.
            try:
                return self._spark.sql(text)
            except AnalysisException as e:
                if projected and views:
                    return self._query(query, projected=False)
                raise in_user_terms(e, view_names(refs, views)) from e
        finally:
            for name in views.values():
                self._spark.catalog.dropTempView(name)

    def _select(self, query: exp.Query) -> DataFrame:
        count = self._metadata_count(query)
        if count is not None:
            return count
        answered = self._stats_aggregates(query)
        if answered is not None:
            return answered
        partial = self._partial_aggregate(query)
        if partial is not None:
            return partial
        return self._query(query)

    def _stats_aggregates(self, query: exp.Query) -> DataFrame | None:
        """Aggregates answered from statistics (:mod:`tsfile_catalog.sql.stats_aggregates`)."""
        found = stats_aggregates.recognize(query)
        entry = self._entry(found.ref.table) if found is not None else None
        if found is None or entry is None:
            return None
        scan = self._resolve(entry, found.ref.time_travel)
        plan = self._plan(entry, scan, found.ref.where)
        if plan is None:
            return None
        io = scan.io if isinstance(scan, Table) else FileIO(scan.base, self._storage(entry))
        timestamp_as = table_options.timestamp_as(entry)
        return stats_aggregates.answer(
            self._spark,
            query,
            found,
            scan,
            plan,
            io,
            timestamp_as=timestamp_as,
            unit=table_options.precision(entry),
        )

    def _partial_aggregate(self, query: exp.Query) -> DataFrame | None:
        """``query`` with its aggregation started inside the scan (partial aggregates merged
        by Spark), or None when its shape is not one :mod:`~tsfile_catalog.sql.
        partial_aggregates` rewrites. Spark's analysis of the original query names the
        columns and is the check: a rewrite whose types differ is not used."""
        ref = as_single_table_scan(query)
        entry = self._entry(ref.table) if ref is not None else None
        if ref is None or entry is None:
            return None
        table = self._resolve(entry, ref.time_travel)
        rewrite = plan_partial_aggregate(
            query,
            ref,
            table.schema,
            timestamp_as=table_options.timestamp_as(entry),
            time_zone=self._session_time_zone(),
        )
        if rewrite is None:
            return None
        plan = self._plan(entry, table, ref.where)
        if ref.where is not None and plan is None:
            return None  # a WHERE the scan cannot evaluate exactly: Spark must see it
        if self._planned_small(entry, table, plan) is not None:
            return None  # read in the driver instead (a small scan): no Spark job to feed
        travel = ref.time_travel
        if travel is None and table.version is not None:
            travel = VersionAsOf(table.version)
        original = self._query(query)
        scan = self._scan(entry, where=ref.where, time_travel=travel, partial=rewrite.spec)
        name = self._view_name()
        scan.createOrReplaceTempView(name)
        try:
            result = self._spark.sql(rewrite_table_refs(rewrite.outer, lambda _: name))
        finally:
            self._spark.catalog.dropTempView(name)
        if [f.dataType for f in result.schema] != [f.dataType for f in original.schema]:
            _log.debug("partial aggregates of %s change its types; not used", query.sql())
            return original
        return result.toDF(*original.columns)

    def _metadata_count(self, query: exp.Query) -> DataFrame | None:
        found = as_metadata_count(query)
        if found is None:
            return None
        ref, where = found
        entry = self._entry(ref.table)
        if entry is None:
            return None
        plan = self._plan(entry, self._resolve(entry, ref.time_travel), where)
        rows = metadata_count(plan) if plan is not None else None
        if rows is None:
            return None
        projection = query.expressions[0]
        name = projection.alias if isinstance(projection, exp.Alias) else "count(1)"
        schema = T.StructType([T.StructField(name, T.LongType(), nullable=False)])
        return local_relation(self._spark, [(rows,)], schema)

    def _explain_parts(self, query: exp.Query) -> DataFrame:
        rows: list[tuple[Any, ...]] = []
        for ref in table_refs(query):
            entry = self._entry(ref.table)
            if entry is None:
                continue
            table = self._resolve(entry, ref.time_travel)
            plan = self._plan(entry, table, ref.where)
            pushed = ref.where if plan is not None else None
            if plan is None:
                plan = table.plan(None)
            rows.extend(
                inspect.explain_rows(
                    ref.index,
                    entry.display_name,
                    ref.alias,
                    table,
                    plan,
                    projection(table.schema, ref.columns),
                    pushed,
                )
            )
        return self._result(Result(inspect.EXPLAIN_SCHEMA, rows))

    # -- URL references -----------------------------------------------------------------------

    def _entry(self, table: TableName | TableUrl) -> TableEntry | None:
        """The entry a query's reference reads: a URL's own, a registered table's, or None
        (not a catalog table: Spark's)."""
        if isinstance(table, TableUrl):
            return url_entry(table)
        return self._registry.get(table)

    def _resolve(self, entry: TableEntry, travel: TimeTravel | None = None) -> Table | ResolvedScan:
        """What a reference reads: a registered table (:meth:`_open`), or whatever a URL
        holds, resolved exactly as the ``tsfile`` source resolves it for the scan."""
        if not isinstance(entry, UrlEntry):
            return self._open(entry, travel)
        version, timestamp = self._travel(travel)
        return open_location(
            entry.location,
            version=version,
            timestamp=timestamp,
            table=entry.url.table,
            table_uuid=entry.url.table_uuid,
            storage_options=self._storage(entry),
        )

    def _url_command(
        self, statement: DescribeTable | DescribeHistory | DescribeDetail | ShowParts
    ) -> Result:
        """DESCRIBE [EXTENDED | HISTORY | DETAIL] / SHOW PARTS of a URL reference."""
        url = statement.table
        assert isinstance(url, TableUrl)
        entry = url_entry(url)
        travel = url.time_travel
        if isinstance(statement, ShowParts):
            travel = statement.time_travel or travel
        found = self._resolve(entry, travel)
        if isinstance(found, ResolvedScan):
            if isinstance(statement, ShowParts):
                return inspect.show_file_parts(found)
            if isinstance(statement, DescribeTable) and not statement.extended:
                return inspect.describe_files(found)
            raise TableNotFoundError(
                f"{statement.to_sql()}: {url.url} holds TsFiles but no table (no manifest), so "
                "it has no versions, history or table details; DESCRIBE and SHOW PARTS show "
                "its columns and files (adopt it with CREATE TABLE ... LOCATION for the rest)"
            )
        match statement:
            case DescribeTable(extended=extended):
                return inspect.describe(
                    found, extended=extended, name=entry.display_name, options=entry.options
                )
            case DescribeHistory():
                return inspect.describe_history(found)
            case DescribeDetail():
                return inspect.describe_detail(
                    found, name=entry.display_name, options=entry.options
                )
        return inspect.show_parts(found)

    # -- views --------------------------------------------------------------------------------

    def _refresh_view(self, entry: TableEntry) -> None:
        if not self._register_views or entry.database != DEFAULT_DATABASE:
            return
        try:
            self._scan(entry).createOrReplaceTempView(entry.name)
        except TsFileCatalogError as e:
            _log.warning("no view for table %s: %s", entry.display_name, e)

    def _drop_view(self, entry: TableEntry) -> None:
        if self._register_views and entry.database == DEFAULT_DATABASE:
            self._spark.catalog.dropTempView(entry.name)

    # -- commands -----------------------------------------------------------------------------

    def _result(self, result: Result) -> DataFrame:
        return self._spark.createDataFrame(result.rows, result.schema)

    def _location(self, statement: CreateTable) -> str:
        if statement.location is None:
            return self._registry.default_location(statement.table)
        return ddl.absolute_location(statement.location)

    def _create(self, statement: CreateTable) -> DataFrame:
        existing = self._registry.get(statement.table)
        if existing is not None:
            if statement.if_not_exists:
                return self._result(Result("location string", [(existing.location,)]))
            raise TableExistsError(f"table {existing.display_name!r} already exists")
        options = table_options.check_table_options(statement.options)
        location = self._location(statement)
        # Every form, registering an existing table too: a table inside another (or in the
        # registry, or holding the warehouse) would share files with a second owner.
        self._registry.check_new(statement.table, location)
        storage = self._storage(TableEntry("", "", location, options))
        check_location(FileIO(location, storage), location)
        if statement.columns is not None:
            options = self._create_empty(statement, location, options)
        elif statement.query is not None:
            options = self._create_as_select(statement, location, options)
        else:
            self._adopt(statement, location, options)
        try:
            entry = self._registry.create(statement.table, location, options)
        except TableExistsError:
            if statement.if_not_exists:
                entry = self._registry.require(statement.table)
                return self._result(Result("location string", [(entry.location,)]))
            raise
        self._refresh_view(entry)
        return self._result(Result("location string", [(entry.location,)]))

    def _create_empty(
        self, statement: CreateTable, location: str, options: dict[str, str]
    ) -> dict[str, str]:
        schema = ddl.new_table_schema(statement, options)
        table_options.check_encoding(options, schema)
        storage = self._storage(TableEntry("", "", location, options))
        table = create_table(
            location,
            schema,
            properties=dict(statement.properties),
            storage_options=storage,
            exist_ok=statement.location is not None,
        )
        # A table that was already there (a version-0 one too) must match the columns.
        self._register_existing(statement, table, schema, storage)
        return options

    def _register_existing(
        self, statement: CreateTable, table: Table, schema: TableSchema, storage: dict[str, Any]
    ) -> None:
        """``CREATE TABLE name (columns) LOCATION`` of a table already there (what SHOW
        CREATE TABLE prints): registered as it is when the columns match, as Delta does."""
        if table.schema.columns != schema.columns:
            there = table.schema
            raise TableExistsError(
                f"CREATE TABLE {statement.table}: the table at {table.location} has other "
                f"columns ({', '.join(there.names)}; TAGs {', '.join(there.tag_names)}) than "
                "declared; register it without a column list"
            )
        changed = {k: v for k, v in statement.properties.items() if table.properties.get(k) != v}
        if changed:
            set_properties(table.location, changed, storage_options=storage)

    def _create_as_select(
        self, statement: CreateTable, location: str, options: dict[str, str]
    ) -> dict[str, str]:
        assert statement.query is not None
        name = statement.table.qualified
        storage = self._storage(TableEntry("", "", location, options))
        try:
            open_table(location, storage_options=storage)
        except TableNotFoundError:
            pass
        else:
            raise TableExistsError(
                f"CREATE TABLE {name} AS SELECT: a table already exists at {location}; use "
                f"CREATE TABLE {name} USING tsfile LOCATION '...' to register it"
            )
        check_empty(FileIO(location, storage), location)
        source = self._query(statement.query)
        ddl.as_select_options(name, options, source.schema)
        entry = TableEntry("", statement.table.name, location, options)
        write = self._source_options(
            entry, table_options.write_options(entry, statement.table.name)
        )
        source.write.format("tsfile").options(**write).mode("append").save()
        if statement.properties:
            set_properties(location, statement.properties, storage_options=storage)
        return options

    def _adopt(self, statement: CreateTable, location: str, options: Mapping[str, str]) -> None:
        storage = self._storage(TableEntry("", "", location, options))
        try:
            table = open_table(location, storage_options=storage)
        except TableNotFoundError:
            io = FileIO(location, storage)
            if not io.isdir(location):
                raise TableNotFoundError(
                    f"CREATE TABLE {statement.table.qualified} LOCATION {location!r}: there is "
                    "no table and no directory of TsFiles there"
                ) from None
            table = adopt_table(
                location,
                storage_options=storage,
                check_schema=lambda schema: table_options.check_encoding(options, schema),
            )
        else:
            table_options.check_encoding(options, table.schema)
        if statement.properties:
            set_properties(location, statement.properties, storage_options=storage)

    def _drop(self, statement: DropTable) -> DataFrame:
        entry = self._registry.get(statement.table)
        if entry is None and self._spark_owns(statement.table):
            return self._spark.sql(statement.to_sql())
        if entry is None:
            if statement.if_exists:
                return self._result(Result("location string, purged boolean", []))
            raise TableNotFoundError(
                f"table {statement.table.qualified!r} is not in the catalog at {self.warehouse}"
            )
        if statement.purge:
            # Purge before unregistering: a failed purge leaves the name to retry with.
            others = self._registry.names_at(entry.location, besides=(entry.database, entry.name))
            if others:
                raise SqlError(
                    f"DROP TABLE {entry.display_name} PURGE: its location {entry.location} is "
                    f"also registered as {', '.join(others)}, whose data it is; drop without "
                    "PURGE, or drop the other names first"
                )
            purge(entry.location, storage_options=self._storage(entry))
        self._registry.drop(statement.table)
        self._drop_view(entry)
        return self._result(
            Result("location string, purged boolean", [(entry.location, statement.purge)])
        )

    def _set_properties(self, statement: AlterTableSetProperties) -> DataFrame:
        entry = self._registry.require(statement.table)
        version = set_properties(
            entry.location, statement.properties, storage_options=self._storage(entry)
        )
        self._refresh_view(entry)
        return self._result(Result("version bigint", [(version,)]))

    def _alter_parts(self, statement: AlterTableAddPart | AlterTableDropPart) -> DataFrame:
        """ADD PART / DROP PART: one manifest commit through the table layer; the new
        version is the answer."""
        entry = self._registry.require(statement.table)
        storage = self._storage(entry)
        if isinstance(statement, AlterTableDropPart):
            version = drop_parts(entry.location, statement.pattern, storage_options=storage)
        else:
            options = dict(statement.options)
            keys = {k.lower(): k for k in options}
            if "timestampprecision" not in keys:
                # TIMESTAMP/DATE times become raw values in the unit the table is read with.
                options["timestampPrecision"] = table_options.precision(entry)
            path = options.pop(keys.get("path", "path"), "")
            fmt = options.pop(keys.get("format", "format"), "")
            version = add_files(
                entry.location, path, format=fmt, options=options, storage_options=storage
            )
        self._refresh_view(entry)
        return self._result(Result("version bigint", [(version,)]))

    # -- maintenance ----------------------------------------------------------------------------

    def _vacuum(self, statement: Vacuum) -> DataFrame:
        entry = self._registry.require(statement.table)
        hours = statement.retain_hours
        check = str(self._spark.conf.get(RETENTION_CHECK, "true")).strip().lower() != "false"
        vacuumed = vacuum_table(
            entry.location,
            dry_run=statement.dry_run,
            retention_ms=None if hours is None else round(hours * 3_600_000),
            retention_check=check,
            storage_options=self._storage(entry),
        )
        return self._result(inspect.vacuum_result(vacuumed))

    def _expire(self, statement: ExpireSnapshots) -> DataFrame:
        entry = self._registry.require(statement.table)
        hours = statement.retain_hours
        expired = expire_snapshots(
            entry.location,
            older_than=statement.older_than,
            retention_ms=None if hours is None else round(hours * 3_600_000),
            retain_last=statement.retain_last,
            time_zone=self._session_time_zone(),
            storage_options=self._storage(entry),
        )
        return self._result(inspect.expire_result(expired))

    def _restore(self, statement: RestoreTable) -> DataFrame:
        entry = self._registry.require(statement.table)
        travel = statement.time_travel
        restore(
            entry.location,
            version=travel.version if isinstance(travel, VersionAsOf) else None,
            timestamp=self._as_of_ms(travel) if isinstance(travel, TimestampAsOf) else None,
            storage_options=self._storage(entry),
        )
        self._refresh_view(entry)
        return self._result(inspect.restore_result(self._open(entry)))

    def _alter_table(
        self,
        statement: AlterTableAddColumns
        | AlterTableAlterColumn
        | AlterTableRename
        | AlterTableUnsupported,
    ) -> DataFrame:
        if self._spark_owns(statement.table):
            return self._spark.sql(statement.to_sql())
        entry = self._registry.require(statement.table)
        storage = self._storage(entry)
        if isinstance(statement, AlterTableUnsupported):
            raise SqlError(statement.reason)
        if isinstance(statement, AlterTableRename):
            renamed = self._registry.rename(statement.table, statement.new_name)
            self._drop_view(entry)
            self._refresh_view(renamed)
            return self._result(
                Result("table string, location string", [(renamed.display_name, entry.location)])
            )
        if isinstance(statement, AlterTableAddColumns):
            columns = [(c.name, tsfile_type_of_sql(c.data_type)) for c in statement.columns]
            version = add_columns(entry.location, columns, storage_options=storage)
        else:
            column = statement.column
            version = alter_column_type(
                entry.location,
                column.name,
                tsfile_type_of_sql(column.data_type),
                storage_options=storage,
            )
        self._refresh_view(entry)
        return self._result(Result("version bigint", [(version,)]))

    def _insert(self, statement: Insert) -> DataFrame:
        if self._spark_owns(statement.table):
            return self._insert_into_spark(statement, self._source(statement))
        entry = self._registry.require(statement.table)
        source = self._source(statement)
        table = self._open(entry)
        schema = table.schema
        rows = dml.insert_rows(statement, source, schema, entry)
        write = self._source_options(entry, table_options.write_options(entry, schema.table))
        mode = "overwrite" if statement.overwrite else "append"
        if statement.replace_where is not None:
            mode = "overwrite"
            write["replaceWhere"] = statement.replace_where
            zone = self._session_time_zone()
            if zone is not None:
                write["timeZone"] = zone
        rows.write.format("tsfile").options(**write).mode(mode).save()
        latest = self._open(entry)
        info = latest.history(limit=1)[0]
        inserted = info.rows_added
        if "numDeletedRows" in info.operation_parameters:
            # A replaceWhere commit also re-adds the rows its rewritten parts kept.
            kept = info.rows_removed - int(info.operation_parameters["numDeletedRows"])
            inserted -= kept
        self._refresh_view(entry)
        return self._result(
            Result("version bigint, num_inserted_rows bigint", [(latest.version, inserted)])
        )

    def _source(self, statement: Insert) -> DataFrame:
        if isinstance(statement.query, exp.Query):
            return self._query(statement.query)
        return self._spark.sql(statement.query_sql)

    def _insert_into_spark(self, statement: Insert, source: DataFrame) -> DataFrame:
        """INSERT into a Spark table: the source still reads catalog tables with fresh scans."""
        if statement.replace_where is not None:
            raise SqlError(
                f"INSERT INTO {statement.table} REPLACE WHERE: only catalog tables support "
                "REPLACE WHERE"
            )
        if statement.columns is not None:
            raise SqlError(
                f"INSERT INTO {statement.table} ({', '.join(statement.columns)}): a column list "
                "is only supported for catalog tables; select the columns in table order instead"
            )
        source.write.insertInto(statement.table.qualified, overwrite=statement.overwrite)
        return self._spark.createDataFrame([], T.StructType([]))
