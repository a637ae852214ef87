"""Parquet files as external parts: the schema and FIELD statistics from the footer, reads
through ``pyarrow.dataset`` so pushed time/TAG filters skip row groups by their statistics."""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
import pyarrow.parquet as pq

from tsfile_catalog.formats.external import FOOTER_TAIL_BYTES, ExternalFormat
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.parts import FieldStats
from tsfile_catalog.metadata.schema import DataType, TableSchema

__all__ = ["ParquetFormat", "PARQUET"]

# Footer min/max are exact for these; float footers skip NaN (which Spark orders above every
# number) and TIMESTAMP/DATE ones need unit conversion, so those are computed from the data.
_FOOTER_TYPES = frozenset({DataType.INT32, DataType.INT64, DataType.STRING, DataType.TEXT})


class ParquetFormat(ExternalFormat):
    name = "parquet"
    digest_tail = FOOTER_TAIL_BYTES  # the footer describes every row
    extensions = (".parquet", ".parq")

    def arrow_schema(
        self, io: FileIO, url: str, options: Mapping[str, str], schema: TableSchema
    ) -> pa.Schema:
        with io.open_input(url) as handle:
            return pq.read_schema(handle)

    def footer(
        self, io: FileIO, url: str, options: Mapping[str, str], schema: TableSchema
    ) -> tuple[pa.Schema, int | None]:
        with io.open_input(url) as handle:
            parquet = pq.ParquetFile(handle)
            return parquet.schema_arrow, parquet.metadata.num_rows

    def footer_stats(
        self, io: FileIO, url: str, sources: Mapping[str, str], schema: TableSchema
    ) -> dict[str, FieldStats]:
        with io.open_input(url) as handle:
            metadata = pq.ParquetFile(handle).metadata
        index = {metadata.schema.column(i).path: i for i in range(metadata.num_columns)}
        out: dict[str, FieldStats] = {}
        for col in schema.fields:
            source = sources.get(col.name)
            if source is None or col.type not in _FOOTER_TYPES or source not in index:
                continue
            stats = [
                metadata.row_group(g).column(index[source]).statistics
                for g in range(metadata.num_row_groups)
            ]
            if not stats or any(s is None or not s.has_null_count for s in stats):
                continue
            nulls = sum(s.null_count for s in stats)
            bounded = [s for s in stats if s.has_min_max]
            if len(bounded) != len(stats) and nulls != metadata.num_rows:
                # A row group without bounds that holds values: the footer cannot say.
                if any(s.num_values for s in stats if not s.has_min_max):
                    continue
            lo = min((s.min for s in bounded), default=None)
            hi = max((s.max for s in bounded), default=None)
            if isinstance(lo, bytes) or isinstance(hi, bytes):
                continue
            out[col.name] = FieldStats(lo, hi, nulls)
        return out


PARQUET = ParquetFormat()
