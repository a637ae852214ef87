"""The writer's driver and task sides called directly (no SparkSession): what a job commits."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

from tests.factories import part_file, weather_schema
from tsfile_catalog.datasource.writer import TsFileBatchWriter, plan_write
from tsfile_catalog.exceptions import CommitConflictError
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.options import parse_write_options
from tsfile_catalog.table import append_parts, open_table

SPARK_SCHEMA = StructType(
    [
        StructField("time", LongType()),
        StructField("city", StringType()),
        StructField("device", StringType()),
        StructField("temp", DoubleType()),
    ]
)
SCHEMA = weather_schema(("temp", DataType.DOUBLE))


def test_a_write_never_lands_in_a_table_recreated_while_it_ran(tmp_path: Path) -> None:
    root = tmp_path / "t"
    append_parts(str(root), [part_file("old.tsfile")], SCHEMA)
    options = parse_write_options({"path": str(root), "tagColumns": "city,device"})
    plan = plan_write(SPARK_SCHEMA, options)
    # after planning, the table is dropped and another created at the same location
    shutil.rmtree(root)
    append_parts(str(root), [part_file("new.tsfile")], SCHEMA)
    recreated = open_table(str(root))
    # then the tasks run and the driver commits
    writer = TsFileBatchWriter(plan, options, overwrite=True)
    batch = pa.RecordBatch.from_pydict(
        {"time": [1, 2], "city": ["bj", "bj"], "device": ["d1", "d1"], "temp": [1.0, 2.0]}
    )
    message = writer.write(iter([batch]))

    with pytest.raises(CommitConflictError, match="prepared against table .*dropped and recreated"):
        writer.commit([message])
    after = open_table(str(root), use_cache=False)
    assert (after.version, [p.path for p in after.parts()]) == (0, ["new.tsfile"])
    assert after.table_uuid == recreated.table_uuid
    assert not list(root.glob("part-*.tsfile")), "published files are removed again"
    assert not (root / "_staging").exists()
    assert plan.table_uuid not in (None, recreated.table_uuid)
