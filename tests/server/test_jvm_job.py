"""A JVM job with no Python of its own: a small Java class, compiled here with ``javac``
against PySpark's jars, ``spark-submit``-ed with the catalog's settings alone. It creates,
writes and reads catalog tables (the catalog process answering) and its JVM exits when its
``main`` returns (the process's gateway keeps no JVM alive)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.server.conftest import child_env, pyspark_home, rows_text

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.server, pytest.mark.spark]

_JOB = """
import org.apache.spark.sql.SparkSession;

public class CatalogJob {
  public static void main(String[] args) {
    SparkSession spark = SparkSession.builder().appName("catalog-job").getOrCreate();
    spark.sql("CREATE NAMESPACE IF NOT EXISTS ts.job");
    spark.sql("CREATE TABLE ts.job.t (time TIMESTAMP, city STRING, temp DOUBLE) USING tsfile "
        + "TBLPROPERTIES ('tagColumns' = 'city')");
    spark.sql("INSERT INTO ts.job.t SELECT time, city, temp FROM ts.db.weather WHERE city = 'bj'");
    System.out.println("ROWS " + spark.sql("SELECT count(*) FROM ts.job.t").first().getLong(0));
    spark.stop();
  }
}
"""


def test_a_java_job_uses_the_catalog_and_exits(
    spark: SparkSession, pyspark_warehouse: dict[str, Any], tmp_path: Path
) -> None:
    from tsfile_catalog import catalog_config
    from tsfile_catalog.spark_catalog.settings import as_arguments

    javac, jar = shutil.which("javac"), shutil.which("jar")
    if javac is None or jar is None:
        pytest.skip("no JDK's javac here")
    source = tmp_path / "CatalogJob.java"
    source.write_text(_JOB)
    classes = tmp_path / "classes"
    jars = str(pyspark_home() / "jars" / "*")
    subprocess.run([javac, "-cp", jars, "-d", str(classes), str(source)], check=True)
    job = tmp_path / "job.jar"
    subprocess.run([jar, "--create", "--file", str(job), "-C", str(classes), "."], check=True)

    settings = catalog_config(str(pyspark_warehouse["warehouse"]), name="ts")
    done = subprocess.run(
        [
            str(pyspark_home() / "bin" / "spark-submit"),
            "--class",
            "CatalogJob",
            "--master",
            "local[1]",
            *as_arguments(settings).split(),
            "--conf",
            "spark.ui.enabled=false",
            str(job),
        ],
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=tmp_path,
        timeout=600,  # a JVM kept alive by a non-daemon thread would run into this
    )
    assert done.returncode == 0, done.stderr[-3000:]
    name = pyspark_warehouse["catalog"]
    expected = rows_text(spark, f"SELECT count(*) FROM {name}.db.weather WHERE city = 'bj'")
    assert [line[5:] for line in done.stdout.splitlines() if line.startswith("ROWS ")] == expected
    assert rows_text(spark, f"SELECT count(*) FROM {name}.job.t") == expected
