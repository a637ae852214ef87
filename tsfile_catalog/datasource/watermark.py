"""The part watermark on the Spark side: the marker rows' column and
:func:`with_source_watermark`, which turns them into Spark's event-time watermark.

A source cannot set Spark's watermark; ``withWatermark`` derives it from the rows it sees. A
stream read with ``partWatermark=true`` therefore carries one marker row per batch in which
the table's completeness advanced (:mod:`tsfile_catalog.datasource.stream_reader`), its
``time`` the completeness bound. Kept apart from the stream reader so that ``load()`` and this
helper need no Spark 4.2 streaming API.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType

from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.metadata.schema import TIME_COLUMN
from tsfile_catalog.options import StreamOptions

__all__ = ["MARKER_COLUMN", "stream_schema", "with_source_watermark"]

MARKER_COLUMN = "_tsfile_watermark"
"""The hidden column of marker rows (``partWatermark=true``): null in every data row, the
marker's ``time`` in a marker row, so no user row can be taken for a marker."""


def stream_schema(schema: StructType, options: StreamOptions) -> StructType:
    """The streaming DataFrame's schema: the batch one, plus the marker column when
    ``partWatermark`` is on.

    Raises:
        OptionError: the table has a column of the marker column's name.
    """
    if not options.part_watermark:
        return schema
    if MARKER_COLUMN in (f.name for f in schema.fields):
        raise OptionError(
            f"option 'partWatermark': the table has a column named {MARKER_COLUMN!r}, the name "
            "the stream's marker rows need"
        )
    time_type = next(f.dataType for f in schema.fields if f.name == TIME_COLUMN)
    return StructType([*schema.fields, StructField(MARKER_COLUMN, time_type, True)])


def with_source_watermark(df: DataFrame, delay: str = "0 seconds") -> DataFrame:
    """``df`` (a ``readStream`` with ``partWatermark=true``) with Spark's event-time watermark
    on ``time`` driven by the table's completeness, and without the marker rows.

    Args:
        df: the stream, before any other operator (the markers must reach the watermark).
        delay: ``withWatermark``'s delay: the watermark trails the completeness bound by it.

    Raises:
        OptionError: ``df`` has no marker column (it was not loaded with partWatermark=true).
    """
    if MARKER_COLUMN not in df.columns:
        raise OptionError(
            "with_source_watermark needs a stream loaded with option partWatermark=true "
            f"(and timestampAs=timestamp): {MARKER_COLUMN!r} is not among its columns"
        )
    watermarked = df.withWatermark(TIME_COLUMN, delay)
    # The marker rows must reach the watermark operator, so the filter that drops them has to
    # stay above it: Spark pushes a filter below withWatermark unless it references the
    # event-time column (SPARK-21587), and folds a test that is trivially true for a non-null
    # ``time`` (``time IS NOT NULL``) before pushing the rest. A marker's hidden column equals
    # its ``time``; a data row's is null.
    marker: Column = F.col(MARKER_COLUMN)
    return watermarked.where(marker.isNull() | (marker != F.col(TIME_COLUMN))).drop(MARKER_COLUMN)
