"""The ``tsfile`` PySpark data source: ``spark.read.format("tsfile")`` / ``df.write``.

Spark instantiates the source and calls ``schema()`` when a DataFrame is loaded, then pickles
the instance for planning; resolving the table there pins the version a DataFrame reads to
the one current at ``load()`` (snapshot semantics).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceWriter
from pyspark.sql.types import StructType

from tsfile_catalog.datasource.discovery import resolve
from tsfile_catalog.datasource.options import (
    ReadOptions,
    parse_read_options,
    parse_write_options,
)
from tsfile_catalog.datasource.reader import TsFilePushFiltersReader, TsFileScanReader
from tsfile_catalog.datasource.types import project_user_schema, spark_schema
from tsfile_catalog.datasource.writer import TsFileBatchWriter, plan_write
from tsfile_catalog.discovery import ResolvedScan
from tsfile_catalog.exceptions import SchemaMismatchError
from tsfile_catalog.metadata.expressions import Expr, bind
from tsfile_catalog.metadata.predicate_sql import parse_predicate
from tsfile_catalog.table.scan import resolve_columns

__all__ = ["TsFileDataSource", "SHORT_NAME"]

SHORT_NAME = "tsfile"

class TsFileDataSource(DataSource):
    """Reads and writes TsFile table-model data; see docs/options.md for every option."""

    @classmethod
    def name(cls) -> str:
        return SHORT_NAME

    @cached_property
    def _read_options(self) -> ReadOptions:
        return parse_read_options(self.options)

    @cached_property
    def _scan(self) -> ResolvedScan:
        return resolve(self._read_options)

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

    def schema(self) -> StructType:
        # Resolve everything that can fail now, at load(), so errors surface before any job.
        _ = self._where
        return spark_schema(self._scan.schema, self._columns, self._read_options.timestamp_as)

    def reader(self, schema: StructType) -> DataSourceReader:
        expected = self.schema()
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
        cls = TsFilePushFiltersReader if self._read_options.push_filters else TsFileScanReader
        return cls(self._scan, self._read_options, columns, expected, self._where)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        options = parse_write_options(self.options)
        return TsFileBatchWriter(plan_write(schema, options), options, overwrite)
