"""Build the catalog plugin's jar from its Java sources, once per PySpark version.

The Java adapter (``jvm/src``) is compiled with the JDK's ``javac`` against the installed
PySpark's own jars: no build tool, no network, and a jar that matches the Spark it runs in
(the Python data source classes it wraps are internal and may change between versions). The
jar is cached under a directory named by the PySpark version and a digest of the sources, so
upgrading either rebuilds it on first use; so does a cached jar that is not a readable zip
holding a class for every source (a copy cut short, a disk error). Nothing here imports
pyspark.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import tempfile
import zipfile
import zlib
from pathlib import Path

from tsfile_catalog.exceptions import TsFileCatalogError
from tsfile_catalog.extras import require

__all__ = [
    "CACHE_ENV",
    "JAR_NAME",
    "SOURCES",
    "build_jar",
    "jar_path",
    "jdk_available",
    "jar_problem",
    "pyspark_jars_dir",
]

JAR_NAME = "tsfile-catalog-spark.jar"
CACHE_ENV = "TSFILE_CATALOG_JAR_CACHE"
"""A directory to cache built jars in, instead of ``~/.cache/tsfile-catalog/jars``."""

SOURCES = Path(__file__).parent / "jvm" / "src"

_JDK_HINT = (
    "the tsfile Spark catalog plugin is built on first use with the JDK's javac, which was not "
    "found: install a JDK 17+ (e.g. 'apt-get install openjdk-17-jdk-headless') or set "
    "JAVA_HOME to one; everything else in tsfile-catalog works without it"
)


def _sources() -> list[Path]:
    return sorted(SOURCES.rglob("*.java"))


def _digest(files: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(SOURCES)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def _pyspark_version() -> str:
    try:
        return importlib.metadata.version("pyspark")
    except importlib.metadata.PackageNotFoundError:
        # A PySpark on sys.path without package metadata (SPARK_HOME/python): ask it.
        version = require("pyspark.version", what="the Spark catalog plugin's jar")
        return str(version.__version__)


def pyspark_jars_dir() -> Path:
    """The jars Spark runs with: PySpark's bundled ``jars`` directory, else ``$SPARK_HOME/jars``.

    Raises:
        TsFileCatalogError: neither exists.
    """
    spec = importlib.util.find_spec("pyspark")
    candidates = []
    if spec is not None and spec.origin is not None:
        candidates.append(Path(spec.origin).parent / "jars")
    if os.environ.get("SPARK_HOME"):
        candidates.append(Path(os.environ["SPARK_HOME"]) / "jars")
    for path in candidates:
        if path.is_dir():
            return path
    raise TsFileCatalogError(
        "cannot build the tsfile Spark catalog plugin: found no Spark jars to compile against "
        f"(looked in {', '.join(map(str, candidates)) or 'no PySpark installation'})"
    )


def _jdk_tool(name: str) -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        tool = Path(java_home) / "bin" / name
        if tool.exists():
            return str(tool)
    found = shutil.which(name)
    if found is None:
        raise TsFileCatalogError(_JDK_HINT)
    return found


def jdk_available() -> bool:
    """Whether a JDK's ``javac`` is here to build the jar (``JAVA_HOME`` or the ``PATH``)."""
    try:
        _jdk_tool("javac")
    except TsFileCatalogError:
        return False
    return True


def _cache_root() -> Path:
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tsfile-catalog" / "jars"


def jar_path() -> Path:
    """Where the jar for the installed PySpark and these sources lives (built or not)."""
    files = _sources()
    return _cache_root() / f"{_pyspark_version()}-{_digest(files)}" / JAR_NAME


def jar_problem(jar: Path) -> str | None:
    """What is wrong with the plugin's jar at ``jar``, in words, or None when it is a zip
    whose entries all pass their checksums and which holds a class for every source file
    (the top-level class each ``.java`` file declares)."""
    try:
        with zipfile.ZipFile(jar) as archive:
            names = set(archive.namelist())
            broken = archive.testzip()
    except (OSError, zipfile.BadZipFile, EOFError, zlib.error) as e:
        return f"it is not a readable jar ({type(e).__name__}: {e})"
    if broken is not None:
        return f"its entry {broken} fails its checksum"
    expected = [p.relative_to(SOURCES).with_suffix(".class").as_posix() for p in _sources()]
    missing = [name for name in expected if name not in names]
    if missing:
        return f"it lacks {missing[0]}" + (f" and {len(missing) - 1} more" if missing[1:] else "")
    return None


def build_jar(*, force: bool = False) -> Path:
    """The plugin's jar, compiled now unless the cache already holds it.

    Safe to call from concurrent processes: each compiles in a directory of its own and the
    finished jar is moved into place atomically. A cached jar that :func:`jar_problem`
    finds broken is rebuilt the same way.

    Raises:
        TsFileCatalogError: no JDK, no Spark jars, or a compilation failure (with javac's
            output).
    """
    target = jar_path()
    if not force and target.exists() and jar_problem(target) is None:
        return target
    javac, jar = _jdk_tool("javac"), _jdk_tool("jar")
    classpath = str(pyspark_jars_dir() / "*")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as work:
        classes = Path(work) / "classes"
        classes.mkdir()
        _run(
            [javac, "--release", "17", "-nowarn", "-d", str(classes), "-cp", classpath]
            + [str(p) for p in _sources()],
            "javac",
        )
        built = Path(work) / JAR_NAME
        _run([jar, "--create", "--file", str(built), "-C", str(classes), "."], "jar")
        os.replace(built, target)
    return target


def _run(command: list[str], what: str) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as e:
        raise TsFileCatalogError(f"{_JDK_HINT} ({what}: {e})") from e
    if done.returncode != 0:
        raise TsFileCatalogError(
            f"building the tsfile Spark catalog plugin failed ({what} exited with "
            f"{done.returncode}):\n{done.stderr.strip() or done.stdout.strip()}"
        )
