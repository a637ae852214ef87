"""The session extensions leave Spark's own statements alone: the statements of
differential_statements.sql and every example of Spark's built-in functions (see
differential_child.py) give the same columns, types, rows and error conditions in a session
with the plugin's extensions and a tsfile catalog, as ``configure`` sets them (so the parser,
the URL and path-read rules and the statistics rules are live), as in a fresh session with
none. All of them (about 1,650, minutes on two cores) are the long test's (``--run-long``);
the default test runs the sections of the file whose plans and texts the extensions' parser
and rules look at (about 200 statements)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tests.spark_catalog.differential_child import function_examples, run, written_statements

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]
# What both sessions start with: the shared session's, which changes answers (time zone) or
# their order (parallelism).
SETTINGS = (
    "spark.master",
    "spark.sql.session.timeZone",
    "spark.sql.shuffle.partitions",
    "spark.default.parallelism",
    "spark.ui.enabled",
)
# EXPLAIN's and DESCRIBE's paths whole, not cut at 100 characters where the two runs'
# directories differ in length.
WHOLE_PATHS = {"spark.sql.maxMetadataStringLength": "1000"}


@pytest.mark.slow
def test_sparks_statements_answer_the_same_with_and_without_the_extensions(
    spark: SparkSession, ts: str, tmp_path: Path
) -> None:
    session = _session_with_extensions(spark, ts)
    _assert_same(spark, session, written_statements(every=False), tmp_path)


@pytest.mark.long
def test_every_statement_and_function_example_answers_the_same_with_the_extensions(
    spark: SparkSession, ts: str, tmp_path: Path
) -> None:
    session = _session_with_extensions(spark, ts)
    statements = written_statements(every=True) + function_examples(session)
    _assert_same(spark, session, statements, tmp_path)


def _session_with_extensions(spark: SparkSession, ts: str) -> SparkSession:
    """A session of its own (temporary views, settings) of the shared one, whose extensions
    apply to it too, with a tsfile catalog as ``configure`` sets one (without one the
    extensions step aside at once) and path reads on, as ``configure`` leaves them (the shared
    session turns them off)."""
    session = spark.newSession()
    for key in (f"spark.sql.catalog.{ts}", f"spark.sql.catalog.{ts}.warehouse"):
        session.conf.set(key, spark.conf.get(key))
    session.conf.set("spark.tsfile.pathReads.enabled", "true")
    return session


def _assert_same(
    spark: SparkSession, session: SparkSession, statements: list[str], tmp_path: Path
) -> None:
    """``statements`` answer alike in ``session`` and in a fresh process's session with no
    extensions, which runs them meanwhile."""
    settings = {key: spark.sparkContext.getConf().get(key) for key in SETTINGS} | WHOLE_PATHS
    for key in ("spark.sql.session.timeZone", "spark.sql.shuffle.partitions", *WHOLE_PATHS):
        session.conf.set(key, settings[key])
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"statements": statements, "settings": settings}))
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable}
    child = subprocess.Popen(
        [sys.executable, str(REPO / "tests/spark_catalog/differential_child.py"), str(request)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        directory = tmp_path / "run"
        directory.mkdir()
        with_extensions = run(session, statements, str(directory))
    finally:
        out, err = child.communicate(timeout=900)
    assert child.returncode == 0, err[-3000:]
    without = json.loads(out.strip().splitlines()[-1])
    # A broken harness (every statement failing alike) must not pass as agreement.
    answered = sum("rows" in answer for answer in without)
    assert answered > len(statements) * 0.7, f"only {answered} of {len(statements)} answered"
    differences = [
        f"{statement}\n  with the extensions: {ours}\n  without: {theirs}"
        for statement, ours, theirs in zip(statements, with_extensions, without, strict=True)
        if ours != theirs
    ]
    assert not differences, f"{len(differences)} of {len(statements)} differ:\n" + "\n".join(
        differences
    )
