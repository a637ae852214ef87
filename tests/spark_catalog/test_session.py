"""``configure`` + ``register`` in a process of their own, as the README sets a session up."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.children import run_child
from tsfile_catalog.spark_catalog.wiring import CATALOG_CLASS

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.spark
def test_configure_then_register(tmp_path: Path) -> None:
    import shutil

    if shutil.which("javac") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no JDK to build the plugin with")
    done = run_child("tests/spark_catalog/session_child.py", str(tmp_path))
    facts = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    assert done.returncode == 0, done.stderr[-3000:]
    # Without register(), the JVM's catalog process answers (an empty warehouse).
    assert facts["BEFORE_REGISTER"] == "0"
    assert facts["ROWS"] == "1"
    assert facts["DEFAULT"] == "2"


@pytest.mark.slow
@pytest.mark.spark
def test_a_broken_jar_on_the_classpath_is_named_not_missing(tmp_path: Path) -> None:
    """A session started with a cut-short jar cannot load the plugin; register says the jar
    is broken (and what rebuilds it), not that it is missing from the classpath."""
    from tsfile_catalog.exceptions import TsFileCatalogError
    from tsfile_catalog.spark_catalog.build import JAR_NAME, build_jar

    try:
        whole = build_jar().read_bytes()
    except TsFileCatalogError as e:
        pytest.skip(f"no JDK to build the plugin with: {e}")
    jar = tmp_path / JAR_NAME
    jar.write_bytes(whole[: len(whole) // 2])
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        "PYSPARK_PYTHON": sys.executable,
    }
    child = REPO / "tests/spark_catalog/broken_jar_child.py"
    done = subprocess.run(
        [sys.executable, str(child), str(jar), str(tmp_path / "wh")],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    said = next(line for line in done.stdout.splitlines() if line.startswith("REGISTER "))
    assert said.startswith(
        f"REGISTER TsFileCatalogError catalog 'ts' is configured as {CATALOG_CLASS}, but the "
        f"plugin's jar on this session's classpath, {jar}, cannot be loaded: it is not a "
        "readable jar (BadZipFile"
    ), said
    assert said.endswith("rebuilds it; start a new process with it") and "\\n" not in said


def test_configure_extends_sparks_redaction_for_the_ui(tmp_path: Path) -> None:
    """spark.redaction.regex is read when the JVM starts (the UI's environment page, event
    logs): configure extends Spark's default, or the builder's own, with the catalog's."""
    from pyspark.sql import SparkSession

    from tsfile_catalog.exceptions import TsFileCatalogError
    from tsfile_catalog.spark_catalog.session import configure
    from tsfile_catalog.storage_options import SPARK_REDACTION_PATTERN

    try:
        default = configure(SparkSession.Builder(), warehouse=str(tmp_path))
    except TsFileCatalogError as e:
        pytest.skip(f"no JDK to build the plugin with: {e}")
    spark_default = "(?i)secret|password|token|access[.]?key"
    assert default._options["spark.redaction.regex"] == f"{spark_default}|{SPARK_REDACTION_PATTERN}"
    own = SparkSession.Builder().config("spark.redaction.regex", "(?i)mine")
    own = configure(own, warehouse=str(tmp_path))
    assert own._options["spark.redaction.regex"] == f"(?i)mine|{SPARK_REDACTION_PATTERN}"
