"""Run by tests/exec/test_key_merge_spark.py in a fresh process: one Spark-free append of
the rows :func:`tests.exec.key_rows.rows` draws for a seed, as a second writer would."""

from __future__ import annotations

import sys

from tests.exec.key_rows import rows
from tsfile_catalog import write_table


def main(url: str, seed: int) -> None:
    write_table(url, rows(seed))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
