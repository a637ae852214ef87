"""Another JVM data source registering the short name ``tsfile`` (apache/tsfile's Java
connector does) on the session's classpath: Spark 4.3 answers ``format("tsfile")`` with it,
ahead of this package's Python source, so registering fails with one line naming both and
the way out. The other source is a stand-in compiled here with ``javac`` against PySpark's
jars."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.children import run_child

REPO = Path(__file__).resolve().parents[2]

_STAND_IN = """
package upstream;

import java.util.Map;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

public class TsFileSource implements DataSourceRegister, TableProvider {
  @Override public String shortName() { return "tsfile"; }
  @Override public StructType inferSchema(CaseInsensitiveStringMap options) {
    return new StructType();
  }
  @Override public Table getTable(
      StructType schema, Transform[] partitioning, Map<String, String> properties) {
    throw new UnsupportedOperationException("the stand-in reads nothing");
  }
}
"""


def _stand_in_jar(tmp_path: Path) -> Path:
    import pyspark

    javac, jar = shutil.which("javac"), shutil.which("jar")
    if javac is None or jar is None:
        pytest.skip("no JDK's javac here to compile the stand-in data source")
    source = tmp_path / "src" / "upstream" / "TsFileSource.java"
    source.parent.mkdir(parents=True)
    source.write_text(_STAND_IN)
    classes = tmp_path / "classes"
    services = classes / "META-INF" / "services"
    services.mkdir(parents=True)
    (services / "org.apache.spark.sql.sources.DataSourceRegister").write_text(
        "upstream.TsFileSource\n"
    )
    jars = str(Path(pyspark.__file__).parent / "jars" / "*")
    subprocess.run([javac, "-cp", jars, "-d", str(classes), str(source)], check=True)
    out = tmp_path / "upstream.jar"
    subprocess.run([jar, "--create", "--file", str(out), "-C", str(classes), "."], check=True)
    return out


@pytest.mark.slow
def test_another_tsfile_format_on_the_classpath_fails_register_in_one_line(
    tmp_path: Path,
) -> None:
    jar = _stand_in_jar(tmp_path)
    done = run_child("tests/datasource/name_clash_child.py", str(jar))
    assert done.returncode == 0, done.stderr[-3000:]
    said = next(line for line in done.stdout.splitlines() if line.startswith("REGISTER "))
    assert said == (
        "REGISTER TsFileCatalogError format('tsfile') is taken on this session's classpath by "
        f"another data source, upstream.TsFileSource (in file:{jar}), which Spark picks before "
        "tsfile_catalog's Python source (tsfile_catalog.datasource.source.TsFileDataSource): a "
        "session has one 'tsfile' format, so remove that jar from spark.jars/--jars/--packages "
        "(or start another Spark application for it)"
    ), said
