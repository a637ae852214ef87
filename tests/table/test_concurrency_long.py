"""Concurrency at size: 8 writer processes x 25 appends each race for the versions of one
table, on local disk and on S3. Every commit lands exactly once and the versions are
contiguous. Minutes long, so marked ``long`` and left out of the default run
(``--run-long`` or ``-m long`` runs them); the default run keeps the smaller races of
tests/table/test_commits.py (4 x 10 locally, 2 x 6 on S3).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.table.test_commits import check_contiguous, run_writers

WRITERS = 8
COMMITS = 25


@pytest.mark.long
def test_8_writers_x_25_appends_on_local_disk(tmp_path: Path) -> None:
    url = str(tmp_path / "table")
    run_writers(url, WRITERS, COMMITS, {}, timeout=900)
    check_contiguous(url, WRITERS, COMMITS, {})


@pytest.mark.long
@pytest.mark.s3
def test_8_writers_x_25_appends_on_s3(s3_table: tuple[str, dict[str, Any]]) -> None:
    url, options = s3_table
    run_writers(url, WRITERS, COMMITS, options, timeout=900)
    check_contiguous(url, WRITERS, COMMITS, options)
