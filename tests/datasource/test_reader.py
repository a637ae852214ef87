"""The batch reader's row limit (the ``limit`` read option): the first rows, and no read past
them."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pytest

from tsfile_catalog.datasource.reader import _first_rows


@pytest.mark.parametrize(
    ("limit", "expected", "pulled"),
    [(0, [], 0), (3, [0, 1, 2], 1), (5, [0, 1, 2, 3, 4], 2), (9, list(range(8)), 3)],
)
def test_a_limit_returns_the_first_rows_and_reads_no_further(
    limit: int, expected: list[int], pulled: int
) -> None:
    opened: list[int] = []

    def tables() -> Iterator[pa.Table]:
        for start in (0, 4):
            opened.append(start)  # a slice read: what a limit must stop
            yield pa.table({"v": list(range(start, start + 4))})
        opened.append(-1)

    rows = [v for t in _first_rows(tables(), limit) for v in t.column("v").to_pylist()]
    assert rows == expected
    assert len(opened) == pulled
