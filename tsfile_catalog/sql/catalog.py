"""``Catalog``: named tsfile tables in a warehouse, queried and changed with SQL on Spark.

``catalog.sql(text)`` parses one statement (:func:`~tsfile_catalog.sql.parse_statement`) and
dispatches it. When the session's catalog plugin serves the warehouse, a query (a SELECT, the
query of an INSERT or CREATE TABLE ... AS) runs as written through ``spark.sql``, the plugin
resolving the names, and so does an UPDATE, MERGE or DELETE of a catalog table, Spark's
copy-on-write then being its one implementation (:mod:`~tsfile_catalog.sql.verbatim` says
when each can). Otherwise a
SELECT runs in :mod:`~tsfile_catalog.sql.query` (every reference to a catalog table reads a
*fresh* ``tsfile`` scan of its own, registered as a view the rewritten query names). The
statements the catalog owns run in :mod:`~tsfile_catalog.sql.commands` (CREATE, DROP, ALTER,
INSERT), :mod:`~tsfile_catalog.sql.describe` (DESCRIBE, SHOW) and
:mod:`~tsfile_catalog.sql.maintenance`, and everything else goes to ``spark.sql`` unchanged.
A new statement costs a parser entry, a model class and one branch in
:meth:`Catalog.execute`.

See ``docs/sql.md`` for the statement reference.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import sqlglot
from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from sqlglot import exp

from tsfile_catalog.errors import unwrap
from tsfile_catalog.exceptions import OptionError, SqlError, SqlParseError, TsFileCatalogError
from tsfile_catalog.metadata.spark.dialect import quote_identifier
from tsfile_catalog.session import register
from tsfile_catalog.sql import commands, describe, maintenance, merge, merge_checks, verbatim
from tsfile_catalog.sql.maintenance import RETENTION_CHECK
from tsfile_catalog.sql.parse import parse_statement, query_source, starts_a_query
from tsfile_catalog.sql.query import Tables, explain_parts, select
from tsfile_catalog.sql.registry import DEFAULT_DATABASE, Registry
from tsfile_catalog.sql.registry import parse_table_name as _table_name
from tsfile_catalog.sql.statements import (
    AlterTableAddColumns,
    AlterTableAddPart,
    AlterTableAlterColumn,
    AlterTableChangeColumn,
    AlterTableDropColumns,
    AlterTableDropPart,
    AlterTableRename,
    AlterTableRenameColumn,
    AlterTableSetProperties,
    AlterTableUnsetProperties,
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
    Merge,
    Optimize,
    PassThrough,
    RestoreTable,
    Select,
    ShowCreateTable,
    ShowParts,
    ShowTables,
    Statement,
    TableUrl,
    TimestampAsOf,
    TimeTravel,
    Update,
    Vacuum,
    VersionAsOf,
)

__all__ = ["Catalog", "RETENTION_CHECK"]

_log = logging.getLogger(__name__)


# Spark's error condition for a MERGE whose several source rows match one target row.
_CARDINALITY = "MERGE_CARDINALITY_VIOLATION"


def _error_condition(error: BaseException) -> str | None:
    """The error condition (class) of a PySpark error, None for any other error."""
    for getter in ("getCondition", "getErrorClass"):
        method = getattr(error, getter, None)
        if callable(method):
            try:
                condition = method()
            except Exception:  # noqa: BLE001 - an error without the JVM's details
                continue
            if condition:
                return str(condition)
    return None


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
    ``spark.sql``: over the plugin's table when the session's catalog plugin serves the
    warehouse (``catalog.sql`` then runs queries as written, and reads a table through its
    view), else over a scan (``catalog.sql`` does not use those; see ``docs/sql.md``).

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
        self._spark = spark
        self._register_views = register_views
        self._registry = Registry(warehouse, storage_options)
        self._tables = Tables(
            spark,
            self._registry,
            storage_options or {},
            register_views=register_views,
            small_scan_rows=small_scan_rows,
        )
        self._names = verbatim.Names(
            is_table=lambda name: self._registry.get(name) is not None,
            is_temp_view=self._is_temp_view,
        )
        if register_views:
            self.refresh_views()

    def _is_temp_view(self, name: str) -> bool:
        try:
            return bool(self._spark.catalog.getTable(quote_identifier(name)).isTemporary)
        except AnalysisException:
            return False  # no such table or view

    def __repr__(self) -> str:
        return f"Catalog({self.warehouse!r})"

    @property
    def warehouse(self) -> str:
        """The warehouse root (local paths absolute)."""
        return self._registry.warehouse

    @property
    def spark(self) -> SparkSession:
        return self._spark

    def tables(self, database: str | None = None) -> list[str]:
        """Registered table names, sorted: bare in the default database, ``db.name`` else
        (those whose entry cannot be read too: DROP TABLE removes such an entry)."""
        return [entry.display_name for entry in self._registry.listing(database)]

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
        return self._tables.scan(entry, time_travel=travel)

    def sql(self, text: str) -> DataFrame:
        """Execute one SQL statement; queries return lazy DataFrames, commands small ones.

        Raises:
            SqlParseError: the text is not one parseable statement (a query only Spark's
                parser reads runs through the catalog plugin; without it, this).
            SqlError: the statement is invalid for the catalog.
            AnalysisException: Spark's own error about a query (``ParseException`` for its
                syntax), its class and error condition as ``spark.sql`` raises it.
            TableNotFoundError: a statement the catalog owns names an unknown table.
            TsFileCatalogError: any other failure of the table layer (schema mismatch, ...).
        """
        plugin = self._tables.plugin()
        if self._tables.views_over != plugin:
            self.refresh_views()  # the plugin came or went since the views were registered
        evolution = verbatim.schema_evolution_clause(text)
        if evolution is not None:
            return self._with_schema_evolution(plugin, text, evolution)
        unparsed: SqlParseError | None = None
        try:
            statement = parse_statement(text)
        except SqlParseError as e:
            unparsed = e
        if unparsed is not None:
            # Outside the handler: Spark's error must not carry ours as its context.
            return self._unparsed(plugin, text, unparsed)
        if plugin is not None:
            answer = self._through_plugin(plugin, text, statement)
            if answer is not None:
                return answer
        return self.execute(statement)

    def _unparsed(self, plugin: str | None, text: str, error: SqlParseError) -> DataFrame:
        """A query the catalog's parser cannot read (sqlglot does not know every form of
        Spark's grammar): through the ``plugin`` it runs as written, as ``spark.sql`` runs it.
        Without the plugin the catalog cannot find its tables in it: Spark's own syntax error
        where Spark's parser rejects it too, else ``error``, a refusal, never another answer.
        Not a query: ``error``."""
        if not starts_a_query(text):
            raise error
        if plugin is not None:
            _log.debug("%s: run as written, unparsed here (%s)", text, error)
            return verbatim.run(self._spark, plugin, text)
        spark_error = verbatim.spark_syntax_error(self._spark, text)
        if spark_error is not None:
            raise spark_error
        raise SqlParseError(
            f"{error}. Spark reads this query, but the catalog cannot find its tables in it "
            "without the catalog plugin (docs/sql.md, SELECT): run it through a session the "
            "plugin serves, or rewrite it"
        ) from error

    def _with_schema_evolution(
        self, plugin: str | None, text: str, clause: tuple[int, int]
    ) -> DataFrame:
        """``MERGE|INSERT WITH SCHEMA EVOLUTION INTO t …``: Spark's grammar, not the catalog
        parser's, so it runs as written through ``spark.sql`` and the ``plugin``, which adds
        and widens the columns in the statement's own commit (docs/spark-catalog.md, "Schema
        evolution"); on a table of Spark's own, as written too. ``clause``: where ``WITH
        SCHEMA EVOLUTION`` is in ``text``.

        Raises:
            SqlError: the target is a catalog table and no plugin serves the warehouse (the
                catalog's own MERGE and INSERT evolve no schema: never run without it).
        """
        start, end = clause
        # The statement without the clause, for the catalog's parser; positions kept, so the
        # target's place in this text is its place in ``text``.
        # Read by sqlglot, not the catalog's parser: only the target matters here, and Spark
        # reads the rest (``BY NAME``, which the catalog's INSERT lacks, too).
        plain = f"{text[:start]}{' ' * (end - start)}{text[end:]}"
        try:
            tree = verbatim.row_level_tree(plain)
        except sqlglot.errors.ParseError as e:
            raise SqlParseError(f"cannot parse {text.strip()[:80]!r}: {e}") from e
        name = verbatim.row_level_target(tree)
        if self._tables.spark_owns(name):
            return self._spark.sql(text)
        entry = self._registry.require(name)
        if plugin is None:
            verb = "MERGE" if isinstance(tree, exp.Merge) else "INSERT"
            raise SqlError(
                f"{verb} WITH SCHEMA EVOLUTION INTO {entry.display_name} needs the catalog "
                "plugin serving this warehouse (docs/spark-catalog.md, Schema evolution); "
                "without it, append with the write option mergeSchema"
            )
        written = verbatim.row_level_text(text, tree, plugin, name)
        return self._run_written(plugin, written, tree)

    def _run_written(self, plugin: str, written: str, tree: exp.Expr) -> DataFrame:
        """``spark.sql(written)`` through the ``plugin``; the table layer's error from Spark's
        tasks raised as itself (one line), Spark's own as Spark raises it."""
        try:
            return verbatim.run(self._spark, plugin, written, verbatim.user_names(tree, plugin))
        except Exception as e:  # noqa: BLE001 - Spark's error of any class, or ours inside it
            ours = unwrap(e)
            if isinstance(ours, TsFileCatalogError) and ours is not e:
                raise ours from e
            raise

    def _through_plugin(self, plugin: str, text: str, statement: Statement) -> DataFrame | None:
        """``statement`` with its query run as written by ``spark.sql`` through the catalog
        ``plugin``: a SELECT whole, the query of an INSERT or CREATE TABLE ... AS with the
        statement's head carried out by the catalog; None when the statement has no query
        or :func:`~tsfile_catalog.sql.verbatim.refusal` refuses it (the caller executes it)."""
        query: exp.Expr | None = None
        match statement:
            case Update() | Merge() | Delete():
                return self._row_level_through_plugin(plugin, text, statement)
            case Select(query=query):
                query_text: str | None = text
            case Insert(query=query) | CreateTable(query=query) if query is not None:
                source = query_source(query)
                query_text = source[0][source[1] : source[2]] if source is not None else None
            case _:
                return None
        if query is None or query_text is None:
            return None
        why = verbatim.refusal(query, self._names)
        if why is not None:
            _log.debug("%s: the rewriting path, as %s", text, why)
            return None
        rows = verbatim.run(self._spark, plugin, query_text, verbatim.user_names(query, plugin))
        if isinstance(statement, Insert):
            return commands.insert(self._tables, statement, rows)
        if isinstance(statement, CreateTable):
            return commands.create(self._tables, statement, rows)
        return rows

    def _row_level_through_plugin(
        self, plugin: str, text: str, statement: Update | Merge | Delete
    ) -> DataFrame | None:
        """An UPDATE, MERGE or DELETE of a catalog table run as written by ``spark.sql``
        through the catalog ``plugin`` (Spark's copy-on-write, its answer and messages), the
        target named with the plugin's catalog; None when
        :func:`~tsfile_catalog.sql.verbatim.row_level_refusal` keeps it here, or the target is
        not a catalog table (the caller executes it)."""
        entry = self._registry.get(statement.table)
        if entry is None:
            return None
        tree = verbatim.row_level_tree(text)
        table = self._tables.open(entry)
        why = verbatim.row_level_refusal(self._spark, statement, entry, tree, self._names)
        if why is not None:
            _log.debug("%s: Catalog.sql's own, as %s", text, why)
            return None
        written = verbatim.row_level_text(text, tree, plugin, statement.table)
        if verbatim.spark_syntax_error(self._spark, written) is not None:
            # A form only the catalog's grammar has (a MERGE source's column names or time
            # travel): Catalog.sql reads it, so it is not refused for Spark's grammar.
            _log.debug("%s: Catalog.sql's own, as Spark's parser does not read it", text)
            return None
        if not isinstance(statement, Delete):
            merge_checks.check(statement, table.schema, entry.display_name)
        try:
            return self._run_written(plugin, written, tree)
        except Exception as e:  # noqa: BLE001 - Spark's error of any class
            if not (isinstance(statement, Merge) and _error_condition(e) == _CARDINALITY):
                raise
        # Several source rows match a target row: Spark's message names no row, Catalog.sql's
        # names its key (Delta's rule either way). Its MERGE finds the row and raises it.
        _log.debug("%s: Spark refused several matches; Catalog.sql names the row", text)
        return merge.merge(self._tables, statement)

    def execute(self, statement: Statement) -> DataFrame:
        """Execute an already parsed statement (see :meth:`sql`)."""
        tables = self._tables
        match statement:
            case Select(query=query):
                return select(tables, query)
            case ExplainParts(query=query):
                return explain_parts(tables, query)
            case Insert():
                return commands.insert(tables, statement)
            case CreateTable():
                return commands.create(tables, statement)
            case DropTable():
                return commands.drop(tables, statement)
            case (
                DescribeTable(table=TableUrl())
                | DescribeHistory(table=TableUrl())
                | DescribeDetail(table=TableUrl())
                | ShowParts(table=TableUrl())
            ):
                return describe.describe_url(tables, statement)
            case DescribeTable():
                return describe.describe(tables, statement)
            case DescribeHistory():
                return describe.describe_history(tables, statement)
            case DescribeDetail():
                return describe.describe_detail(tables, statement)
            case ShowTables():
                return describe.show_tables(tables, statement)
            case ShowParts():
                return describe.show_parts(tables, statement)
            case ShowCreateTable():
                return describe.show_create_table(tables, statement)
            case AlterTableSetProperties():
                return commands.set_table_properties(tables, statement)
            case AlterTableUnsetProperties():
                return commands.unset_table_properties(tables, statement)
            case AlterTableAddPart() | AlterTableDropPart():
                return commands.alter_parts(tables, statement)
            case (
                AlterTableAddColumns()
                | AlterTableAlterColumn()
                | AlterTableRename()
                | AlterTableRenameColumn()
                | AlterTableDropColumns()
                | AlterTableChangeColumn()
                | AlterTableUnsupported()
            ):
                return commands.alter_table(tables, statement)
            case Vacuum():
                return maintenance.vacuum(tables, statement)
            case ExpireSnapshots():
                return maintenance.expire(tables, statement)
            case RestoreTable():
                return maintenance.restore_table(tables, statement)
            case Optimize():
                return maintenance.optimize_table(tables, statement)
            case Delete():
                return merge.delete(tables, statement)
            case Update():
                return merge.update(tables, statement)
            case Merge():
                return merge.merge(tables, statement)
            case PassThrough(sql=text):
                return self._spark.sql(text)
        raise SqlError(f"unsupported statement {type(statement).__name__}")

    def refresh_views(self) -> None:
        """(Re)register the convenience view of every default-database table at its latest
        version, for plain ``spark.sql``. Tables that cannot be opened are skipped (logged)."""
        plugin = self._tables.plugin()
        self._tables.views_over = plugin
        if not self._register_views:
            return
        for entry in self._registry.entries(DEFAULT_DATABASE):
            self._tables.refresh_view(entry, plugin)
