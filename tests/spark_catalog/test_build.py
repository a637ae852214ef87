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


def _cached_jar() -> Path:
    try:
        return build.build_jar()  # the default cache's: the shared session built it already
    except TsFileCatalogError as e:
        pytest.skip(f"no JDK here: {e}")


def test_a_broken_jar_is_told_apart(tmp_path: Path) -> None:
    whole = _cached_jar().read_bytes()
    truncated = tmp_path / "truncated.jar"
    truncated.write_bytes(whole[: len(whole) // 2])
    assert "it is not a readable jar (BadZipFile" in (build.jar_problem(truncated) or "")
    # A flipped byte inside an entry: the zip opens, its checksum fails.
    damaged = tmp_path / "damaged.jar"
    with zipfile.ZipFile(_cached_jar()) as archive:
        first = archive.infolist()[-1]
    data = bytearray(whole)
    at = first.header_offset + 30 + len(first.filename) + len(first.extra) + 2
    data[at] ^= 0xFF
    damaged.write_bytes(bytes(data))
    # Which check trips depends on where the byte lands in the deflated stream.
    problem = build.jar_problem(damaged) or ""
    assert problem == f"its entry {first.filename} fails its checksum" or problem.startswith(
        "it is not a readable jar (error: Error -3 while decompressing"
    )
    # A jar of other classes (an older build's, say).
    other = tmp_path / "other.jar"
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("io/tsfilecatalog/spark/Client.class", b"\xca\xfe\xba\xbe")
    assert (build.jar_problem(other) or "").startswith("it lacks io/tsfilecatalog/spark/")
    assert build.jar_problem(_cached_jar()) is None


def test_a_cut_short_cached_jar_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = _cached_jar().read_bytes()
    monkeypatch.setenv(build.CACHE_ENV, str(tmp_path))
    cached = build.jar_path()
    cached.parent.mkdir(parents=True)
    cached.write_bytes(whole[:1000])  # a copy or a build cut short
    assert build.build_jar() == cached
    assert build.jar_problem(cached) is None
    with zipfile.ZipFile(cached) as archive:
        assert "io/tsfilecatalog/spark/TsFileCatalog.class" in archive.namelist()
    assert [p.name for p in cached.parent.iterdir()] == [build.JAR_NAME]  # no leftovers
