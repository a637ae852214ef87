"""The plugin's jar: compiled with the JDK against the installed PySpark, cached per version
and sources, and a one-line answer when there is no JDK."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from tsfile_catalog.exceptions import TsFileCatalogError
from tsfile_catalog.spark_catalog import build


def test_builds_once_into_a_cache_keyed_by_pyspark_and_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(build.CACHE_ENV, str(tmp_path))
    try:
        jar = build.build_jar()
    except TsFileCatalogError as e:
        pytest.skip(f"no JDK here: {e}")
    import pyspark

    assert jar.parent.parent == tmp_path
    assert jar.parent.name.startswith(pyspark.__version__ + "-")
    with zipfile.ZipFile(jar) as archive:
        assert "io/tsfilecatalog/spark/TsFileCatalog.class" in archive.namelist()
    stamp = jar.stat().st_mtime_ns
    assert build.build_jar() == jar
    assert jar.stat().st_mtime_ns == stamp  # cached, not rebuilt


def test_without_a_jdk_one_line_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(build.CACHE_ENV, str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    with pytest.raises(TsFileCatalogError) as caught:
        build.build_jar()
    message = str(caught.value)
    assert "\n" not in message
    assert "javac" in message and "install a JDK 17+" in message
    assert not list(tmp_path.rglob("*.jar"))
