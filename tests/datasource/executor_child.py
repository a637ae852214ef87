"""Run by tests/datasource/test_pickling.py in a fresh process, as a Spark executor would be:
unpickle the work (Spark's own serializer), run it, pickle the results.

The input file holds ``(writer, batches, reader, partitions)``; the output gets
``(commit_message, [arrow table per partition])``. The process starts with nothing of the
driver's: no metadata cache, no fsspec clients, no storage credentials in its environment.
"""

from __future__ import annotations

import sys

import pyarrow as pa
from pyspark.serializers import CPickleSerializer


def main(work_file: str, result_file: str) -> None:
    serializer = CPickleSerializer()
    with open(work_file, "rb") as f:
        writer, batches, reader, partitions = serializer.loads(f.read())
    message = writer.write(iter(batches))
    tables = [pa.Table.from_batches(list(reader.read(p))) for p in partitions]
    with open(result_file, "wb") as f:
        f.write(serializer.dumps((message, tables)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
