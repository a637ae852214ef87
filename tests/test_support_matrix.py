"""The versions we claim are the versions CI tests and the code enforces.

The README's support matrix, ``.ci/run`` (which installs the oldest supported PySpark in a
second virtualenv), ``run.sh`` (which checks Java) and :data:`MIN_PYSPARK` (which
``register`` enforces) must agree: a floor raised in one place and not the others would claim
an untested version.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from tsfile_catalog.exceptions import TsFileCatalogError
from tsfile_catalog.session import MIN_PYSPARK, check_pyspark_version

ROOT = Path(__file__).resolve().parent.parent


def _matrix_row(name: str) -> list[str]:
    """The cells of the README support matrix's row for ``name``."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Support matrix", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == name:
            return cells
    raise AssertionError(f"README's support matrix has no row {name!r}")


def _floor(cell: str) -> str:
    found = re.search(r"≥ (\d+(?:\.\d+)*)", cell)
    assert found, f"no '≥ x.y' in {cell!r}"
    return found.group(1)


def test_the_pyspark_floor_is_the_one_ci_installs_and_register_enforces() -> None:
    floor = ".".join(map(str, MIN_PYSPARK))
    ci = re.search(r"^PYSPARK_FLOOR=(\S+)$", (ROOT / ".ci/run").read_text(), re.M)
    assert ci and ci.group(1) == floor
    supported, tested = _matrix_row("PySpark")[1:3]
    assert _floor(supported) == floor
    assert f"{floor} (the floor)" in tested


def test_python_and_java_floors_match_pyproject_and_run_sh() -> None:
    requires = re.search(
        r'^requires-python = ">=(\S+)"$', (ROOT / "pyproject.toml").read_text(), re.M
    )
    assert requires and _floor(_matrix_row("Python")[1]) == requires.group(1)
    java = re.search(r'\[ "\$\{java_major:-0\}" -ge (\d+) \]', (ROOT / "run.sh").read_text())
    assert java and _floor(_matrix_row("Java")[1]) == java.group(1)


def test_an_older_pyspark_is_refused_naming_both_versions() -> None:
    with pytest.raises(TsFileCatalogError, match=r"needs PySpark >= 4\.2.* runs PySpark 4\.1\.3"):
        check_pyspark_version("4.1.3")
    with pytest.raises(TsFileCatalogError, match="3.5.1"):
        check_pyspark_version("3.5.1")
    for supported in ("4.2.0", "4.2.1", "4.3.0", "4.10.0.dev1", "5.0.0"):
        check_pyspark_version(supported)


def _requirements(text: str) -> dict[str, Requirement]:
    """The requirements of a ``[project] dependencies = [...]`` list in pyproject.toml."""
    block = re.search(r"^dependencies = \[\n(.*?)^\]", text, re.M | re.S)
    assert block, "pyproject.toml has no dependencies list"
    found = [Requirement(r) for r in re.findall(r'^\s*"([^"]+)",', block.group(1), re.M)]
    return {r.name: r for r in found}


def test_pandas_and_pyarrow_are_pinned_to_what_pyspark_supports() -> None:
    """``pip install .`` gets the pandas and pyarrow PySpark converts with: its own floors (the
    ``sql`` extra of the installed PySpark), and pandas below 3, under which PySpark 4 warns
    in every session. The versions the tests run are in the pinned range."""
    ours = _requirements((ROOT / "pyproject.toml").read_text())
    spark_sql = [
        Requirement(r) for r in metadata.requires("pyspark") or () if 'extra == "sql"' in r
    ]
    floors = {r.name: r for r in spark_sql if r.name in ("pandas", "pyarrow")}
    assert set(floors) == {"pandas", "pyarrow"}
    for name, theirs in floors.items():
        (floor,) = (s.version for s in theirs.specifier if s.operator == ">=")
        assert name in ours, f"pyproject.toml's runtime dependencies do not pin {name}"
        (ours_floor,) = (s.version for s in ours[name].specifier if s.operator == ">=")
        assert Version(ours_floor) == Version(floor), (name, str(ours[name].specifier))
        assert ours[name].specifier.contains(metadata.version(name)), name
    assert not ours["pandas"].specifier.contains("3.0.0")


def _extra(text: str, name: str) -> dict[str, Requirement]:
    """The requirements of one ``[project.optional-dependencies]`` extra."""
    block = re.search(rf"^{name} = \[(.*?)\]\s*$", text, re.M | re.S)
    assert block, f"pyproject.toml has no {name!r} extra"
    found = [Requirement(r) for r in re.findall(r'"([^"]+)"', block.group(1))]
    return {r.name: r for r in found}


def test_pyspark_is_the_spark_extra_not_a_core_dependency() -> None:
    """``pip install tsfile-catalog`` is the Spark-free core (as pyiceberg and deltalake are);
    the ``spark`` extra adds PySpark at the floor ``register`` enforces, and the test extra
    (the suite runs Spark) asks for the same range."""
    text = (ROOT / "pyproject.toml").read_text()
    assert "pyspark" not in _requirements(text)
    floor = ".".join(map(str, MIN_PYSPARK))
    spark = _extra(text, "spark")["pyspark"]
    assert _extra(text, "test")["pyspark"].specifier == spark.specifier
    (ours,) = (s.version for s in spark.specifier if s.operator == ">=")
    assert ours == floor
    assert _floor(_matrix_row("PySpark")[1]) == floor
