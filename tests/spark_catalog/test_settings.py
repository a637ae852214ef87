"""The settings that serve the catalog with no Python call: ``catalog_config`` (public),
``configure`` on a builder, and ``tsfile-catalog spark-conf`` printing them. No JVM starts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tsfile_catalog
from tsfile_catalog.cli.main import app
from tsfile_catalog.exceptions import OptionError, TsFileCatalogError
from tsfile_catalog.spark_catalog import settings
from tsfile_catalog.storage_options import spark_redaction_regex


@pytest.fixture(scope="module")
def jar() -> str:
    from tsfile_catalog.spark_catalog.build import build_jar

    try:
        return str(build_jar())
    except TsFileCatalogError as e:
        pytest.skip(f"no JDK here: {e}")


def test_catalog_config_holds_every_setting(jar: str, tmp_path: Path) -> None:
    found = tsfile_catalog.catalog_config(
        str(tmp_path / "wh"), name="ts", endpoint_url="http://127.0.0.1:9000"
    )
    assert found == {
        "spark.jars": jar,
        "spark.sql.extensions": "io.tsfilecatalog.spark.TsFileExtensions",
        "spark.sql.catalog.ts": "io.tsfilecatalog.spark.TsFileCatalog",
        "spark.sql.catalog.ts.warehouse": str(tmp_path / "wh"),
        "spark.sql.catalog.ts.fs.endpoint_url": "http://127.0.0.1:9000",
        "spark.pyspark.python": sys.executable,
        "spark.sql.execution.pyspark.udf.hideTraceback.enabled": "true",
        "spark.redaction.regex": spark_redaction_regex("(?i)secret|password|token|access[.]?key"),
    }
    assert Path(found["spark.jars"]).is_file()


def test_a_relative_warehouse_is_made_absolute(
    jar: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    found = tsfile_catalog.catalog_config("wh")
    assert found["spark.sql.catalog.tsfile.warehouse"] == str(tmp_path / "wh")


@pytest.mark.parametrize("name", ["", "a.b", "1ts", "my catalog"])
def test_a_name_spark_refuses_is_refused_by_name(jar: str, name: str) -> None:
    with pytest.raises(OptionError, match=f"catalog name {name!r}"):
        tsfile_catalog.catalog_config("/wh", name=name)


def test_configure_keeps_the_users_jars_extensions_and_python(
    jar: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyspark.sql import SparkSession

    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    builder = (
        SparkSession.builder.config("spark.jars", "/opt/a.jar")
        .config("spark.sql.extensions", "x.Ext")
        .config("spark.pyspark.python", "/opt/python")
        .config("spark.sql.execution.pyspark.udf.hideTraceback.enabled", "false")
    )
    options = tsfile_catalog.configure(builder, warehouse="/wh", name="ts")._options
    assert options["spark.jars"] == f"/opt/a.jar,{jar}"
    assert options["spark.sql.extensions"] == f"x.Ext,{settings.EXTENSIONS_CLASS}"
    assert options["spark.pyspark.python"] == "/opt/python"
    assert options["spark.sql.execution.pyspark.udf.hideTraceback.enabled"] == "false"
    assert options["spark.sql.catalog.ts.warehouse"] == "/wh"
    # Configuring twice adds nothing twice.
    again = tsfile_catalog.configure(builder, warehouse="/wh", name="ts")._options
    assert again["spark.jars"] == options["spark.jars"]


def test_configure_sets_this_python_unless_one_is_chosen(
    jar: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyspark.sql import SparkSession

    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    options = tsfile_catalog.configure(SparkSession.builder, warehouse="/wh")._options
    assert options["spark.pyspark.python"] == sys.executable
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/other-python")
    options = tsfile_catalog.configure(SparkSession.builder, warehouse="/wh")._options
    assert "spark.pyspark.python" not in options


def _spark_conf(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["spark-conf", *args])
    return result.exit_code, result.output


def _as_substituted(out: str, tmp_path: Path) -> list[str]:
    """The arguments a POSIX shell passes for an unquoted ``$(tsfile-catalog spark-conf ...)``,
    as the docs write every client's command: split on whitespace, quotes kept as they are."""
    (tmp_path / "printed").write_text(out)
    shell = subprocess.run(
        ["sh", "-c", 'printf "%s\\0" $(cat printed)'],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    return shell.stdout.split("\0")[:-1]


def test_spark_conf_prints_arguments_for_spark_sql(jar: str, tmp_path: Path) -> None:
    """Taken as ``$(...)``, every setting reaches Spark whole: the redaction regex, which
    holds quote characters, arrived as ``'spark.redaction.regex=...'`` when the words were
    shell-quoted, and Spark ignored it as a non-Spark property."""
    code, out = _spark_conf("-w", str(tmp_path), "--name", "ts", "-o", "fs.anon=true")
    assert code == 0, out
    words = _as_substituted(out, tmp_path)
    expected = tsfile_catalog.catalog_config(str(tmp_path), name="ts", anon="true")
    assert words[:2] == ["--jars", jar]
    pairs = words[2:]
    assert pairs[::2] == ["--conf"] * (len(expected) - 1)
    assert dict(p.split("=", 1) for p in pairs[1::2]) == {
        k: v for k, v in expected.items() if k != "spark.jars"
    }


def test_spark_conf_prints_spark_defaults_lines_and_json(jar: str, tmp_path: Path) -> None:
    expected = tsfile_catalog.catalog_config(str(tmp_path))
    code, out = _spark_conf("-w", str(tmp_path), "--format", "defaults")
    assert code == 0, out
    assert dict(line.split(None, 1) for line in out.splitlines()) == expected
    code, out = _spark_conf("-w", str(tmp_path), "--json")
    assert code == 0 and json.loads(out) == expected


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "spark-conf needs --warehouse"),
        (("-w", "/wh", "-o", "timestampAs=long"), "--option 'timestampAs=long'"),
        (("-w", "/wh", "--name", "a.b"), "catalog name 'a.b'"),
        # $(...) would split it into two arguments; --format defaults keeps it whole.
        (("-w", "/my wh", "--name", "ts"), "spark.sql.catalog.ts.warehouse '/my wh'"),
    ],
)
def test_spark_conf_errors_are_one_line(jar: str, args: tuple[str, ...], message: str) -> None:
    code, out = _spark_conf(*args)
    assert code == 1
    assert message in out and len(out.strip().splitlines()) == 1


def test_spark_catalog_is_served_by_the_session_catalog_class(jar: str, tmp_path: Path) -> None:
    """As ``spark_catalog`` the plugin is the session catalog (Spark hands it its built-in
    catalog for every table that is not tsfile's), from configure and spark-conf alike."""
    found = tsfile_catalog.catalog_config(str(tmp_path / "wh"), name="spark_catalog")
    assert found["spark.sql.catalog.spark_catalog"] == "io.tsfilecatalog.spark.TsFileSessionCatalog"
    assert found["spark.sql.catalog.spark_catalog.warehouse"] == str(tmp_path / "wh")
    code, out = _spark_conf("-w", str(tmp_path / "wh"), "--name", "spark_catalog")
    assert code == 0, out
    words = _as_substituted(out, tmp_path)
    assert "spark.sql.catalog.spark_catalog=io.tsfilecatalog.spark.TsFileSessionCatalog" in words
