"""The session extensions leave Spark's own statements alone: a broad set of them gives the
same columns, rows and errors in a session with the extensions (and a tsfile catalog, so the
parser and the URL rule are live) as in a fresh session with none."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tests.spark_catalog.differential_child import STATEMENTS, run

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]


def test_sparks_statements_answer_the_same_with_and_without_the_extensions(
    spark: SparkSession, ts: str
) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "PYSPARK_PYTHON": sys.executable,
    }
    done = subprocess.run(
        [sys.executable, str(REPO / "tests/spark_catalog/differential_child.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    without = json.loads(done.stdout.strip().splitlines()[-1])
    session = spark.newSession()  # its own temporary views; the extensions apply to it too
    session.conf.set("spark.sql.shuffle.partitions", "2")
    # A tsfile catalog in the session: without one the extensions step aside at once.
    for key in (f"spark.sql.catalog.{ts}", f"spark.sql.catalog.{ts}.warehouse"):
        session.conf.set(key, spark.conf.get(key))
    with_extensions = run(session)
    for statement, ours, theirs in zip(STATEMENTS, with_extensions, without, strict=True):
        assert ours == theirs, statement
