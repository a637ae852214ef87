"""The Spark-free install: ``pip install tsfile-catalog`` has no PySpark (it is the ``spark``
extra), and everything that does not run Spark works without it.

Each check runs in a subprocess whose PySpark and py4j are made absent: a ``sitecustomize``
puts a finder first on ``sys.meta_path`` that refuses to import them, and hides their package
metadata, so the process sees what an install without the ``spark`` extra sees. There,
``import tsfile_catalog``, ``write_table``, ``open_table``, a scan, ``Table`` verbs and the
CLI work; what needs Spark fails with one line naming the extra.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

_BLOCKER = """
import importlib.abc
import importlib.metadata
import sys

_ABSENT = ("pyspark", "py4j")


class _Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in _ABSENT:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _Absent())
_from_name = importlib.metadata.Distribution.from_name.__func__


def _hidden(cls, name):
    if name.lower().replace("_", "-") in _ABSENT:
        raise importlib.metadata.PackageNotFoundError(name)
    return _from_name(cls, name)


importlib.metadata.Distribution.from_name = classmethod(_hidden)
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    site = tmp_path_factory.mktemp("no_pyspark")
    (site / "sitecustomize.py").write_text(_BLOCKER)
    path = [str(site), str(ROOT), os.environ.get("PYTHONPATH", "")]
    # No SPARK_HOME either: a PySpark found there would be Spark all the same.
    out = {k: v for k, v in os.environ.items() if k != "SPARK_HOME"}
    return {**out, "PYTHONPATH": os.pathsep.join(filter(None, path))}


def _python(env: dict[str, str], code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _cli(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tsfile_catalog", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_blocker_makes_pyspark_absent(env: dict[str, str], tmp_path: Path) -> None:
    done = _python(
        env,
        """
        import importlib.metadata
        try:
            import pyspark
        except ModuleNotFoundError as e:
            print("import:", e.name)
        try:
            importlib.metadata.version("pyspark")
        except importlib.metadata.PackageNotFoundError:
            print("metadata: none")
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["import: pyspark", "metadata: none"]


def test_the_library_writes_and_reads_without_pyspark(env: dict[str, str], tmp_path: Path) -> None:
    done = _python(
        env,
        """
        import json, sys
        import pyarrow as pa
        import tsfile_catalog

        url = "weather"
        rows = pa.table({"time": pa.array([1, 2, 3], pa.int64()), "city": ["a", "a", "b"],
                         "temp": [1.5, 2.5, 3.5]})
        tsfile_catalog.write_table(url, rows, table="weather", tag_columns=["city"])
        table = tsfile_catalog.open_table(url)
        table.append(pa.table({"time": pa.array([4], pa.int64()), "city": ["b"],
                               "temp": [4.5]}))
        table.delete("city = 'a' AND time = 1")
        table = tsfile_catalog.open_table(url)
        scan = table.scan(where="city = 'b'", columns=["time", "temp"])
        print(json.dumps({
            "version": table.version,
            "rows": scan.to_arrow().sort_by("time").to_pydict(),
            "count": table.scan().count(),
            "spark": sorted(m for m in sys.modules if m.split(".")[0] in ("pyspark", "py4j")),
        }))
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "version": 2,
        "rows": {"time": [3, 4], "temp": [3.5, 4.5]},
        "count": 3,
        "spark": [],
    }


def test_the_cli_works_without_pyspark(env: dict[str, str], tmp_path: Path) -> None:
    made = _python(
        env,
        """
        import pyarrow as pa
        import tsfile_catalog

        rows = pa.table({"time": pa.array([1, 2], pa.int64()), "city": ["a", "b"]})
        tsfile_catalog.write_table("t", rows, table="t", tag_columns=["city"])
        """,
        tmp_path,
    )
    assert made.returncode == 0, made.stderr
    history = _cli(env, tmp_path, "history", "t", "--json")
    assert history.returncode == 0, history.stderr
    assert [entry["operation"] for entry in json.loads(history.stdout)] == ["WRITE"]
    parts = _cli(env, tmp_path, "parts", "t", "--where", "city = 'b'", "--json")
    assert parts.returncode == 0, parts.stderr
    assert len(json.loads(parts.stdout)) == 1


def test_what_needs_spark_names_the_extra(env: dict[str, str], tmp_path: Path) -> None:
    done = _python(
        env,
        """
        import tsfile_catalog
        from tsfile_catalog.exceptions import MissingExtraError

        for call in (tsfile_catalog.local_session,
                     lambda: tsfile_catalog.local_session(warehouse="wh"),
                     lambda: tsfile_catalog.catalog_config("wh")):
            try:
                call()
            except MissingExtraError as e:
                assert isinstance(e, ImportError)
                print(e)
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 3, done.stdout
    assert all('pip install "tsfile-catalog[spark]"' in line for line in lines), lines
    assert lines[0].startswith("tsfile_catalog.local_session() needs pyspark, which is not")

    conf = _cli(env, tmp_path, "spark-conf", "--warehouse", "wh")
    assert conf.returncode != 0
    assert "Traceback" not in conf.stderr
    assert 'pip install "tsfile-catalog[spark]"' in conf.stderr
