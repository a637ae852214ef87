"""What a write refuses before any file is written (no Spark session needed)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import types as T

from tsfile_catalog.datasource.writer import plan_write
from tsfile_catalog.exceptions import DataError, SchemaError
from tsfile_catalog.metadata.schema import Category, Column, DataType
from tsfile_catalog.options import parse_write_options
from tsfile_catalog.write.arrow import raw_from_arrow_column


def test_column_names_with_a_comma_are_refused(tmp_path: Path) -> None:
    # 'columns' and 'tagColumns' are comma lists: such a column could never be selected.
    schema = T.StructType(
        [
            T.StructField("time", T.LongType()),
            T.StructField("city", T.StringType()),
            T.StructField("a,b", T.DoubleType()),
        ]
    )
    options = parse_write_options({"path": str(tmp_path / "t"), "table": "t", "tagColumns": "city"})
    with pytest.raises(SchemaError, match="column 'a,b' contains a comma"):
        plan_write(schema, options)


def test_tag_values_with_nul_are_refused_naming_the_column() -> None:
    # The TsFile device index cuts TAG values at NUL: 'a\x00b' would be indexed as 'a'.
    tag = Column("city", DataType.STRING, Category.TAG)
    assert raw_from_arrow_column(pa.array(["a", "b"]), tag, "ms").to_pylist() == ["a", "b"]
    values = pa.chunked_array([["ok"], ["fine", "a\x00b"]])
    with pytest.raises(DataError, match=r"TAG column 'city' has a value containing a NUL"):
        raw_from_arrow_column(values, tag, "ms")
    # FIELD strings are stored as data, not in the device index.
    field = Column("note", DataType.STRING, Category.FIELD)
    assert raw_from_arrow_column(pa.array(["a\x00b"]), field, "ms").to_pylist() == ["a\x00b"]
