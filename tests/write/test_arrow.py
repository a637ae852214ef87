"""Arrow columns in TsFile terms: the stored types, and times in the table's precision."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

from tsfile_catalog import UnsupportedTypeError, write_table
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.write.arrow import arrow_columns, raw_from_arrow_column


def test_arrow_types_map_as_spark_types_do() -> None:
    schema = pa.schema(
        [
            ("a", pa.bool_()),
            ("b", pa.int16()),
            ("c", pa.int64()),
            ("d", pa.float32()),
            ("e", pa.large_string()),
            ("f", pa.dictionary(pa.int32(), pa.string())),
            ("g", pa.binary()),
            ("h", pa.date32()),
            ("i", pa.timestamp("ns", tz="Asia/Shanghai")),
            ("j", pa.decimal128(5, 2)),
        ]
    )
    types = [c.type for c in arrow_columns(schema)]
    assert types == [
        DataType.BOOLEAN,
        DataType.INT32,
        DataType.INT64,
        DataType.FLOAT,
        DataType.STRING,
        DataType.STRING,
        DataType.BLOB,
        DataType.DATE,
        DataType.TIMESTAMP,
        None,
    ]


def test_an_unsupported_column_is_refused_naming_it(tmp_path: Path) -> None:
    data = pa.table({"time": [1], "city": ["a"], "price": pa.array([Decimal("1.5")])})
    with pytest.raises(UnsupportedTypeError, match="column 'price' has Arrow type decimal"):
        write_table(str(tmp_path / "t"), data, table="t", tag_columns=["city"])


@pytest.mark.parametrize(
    ("unit", "expected"),
    [("ms", [-1, 1_500]), ("us", [-1, 1_500_002]), ("ns", [-1, 1_500_002_999])],
)
def test_times_are_floored_to_the_precision(unit: str, expected: list[int]) -> None:
    times = pa.array([-1, 1_500_002_999], pa.timestamp("ns", tz="UTC"))
    raw = raw_from_arrow_column(times, None, unit)  # type: ignore[arg-type]
    assert raw.to_pylist() == expected
    seconds = pa.array([2], pa.timestamp("s"))
    assert raw_from_arrow_column(seconds, None, unit).to_pylist() == [  # type: ignore[arg-type]
        2 * {"ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}[unit]
    ]
