"""Run by tests/table/test_purge.py in a fresh process: a writer appending to a table
again and again, as another application would while the table is dropped with PURGE. It
stops at the first failed write (the table is gone) and prints how many writes succeeded."""

from __future__ import annotations

import sys
import time

from tests.table.test_purge import rows
from tsfile_catalog.table import open_table


def main(url: str) -> None:
    table = open_table(url)
    done = 0
    # Bounded: a writer the purge failed to stop must not hang the test.
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            table.append(rows(done))
            done += 1
        print(done, "still writing after 30 s")
    except Exception as e:  # any failed write ends the run; the test reads why
        print(done, type(e).__name__, str(e).splitlines()[0])


if __name__ == "__main__":
    main(sys.argv[1])
