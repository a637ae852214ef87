"""The versions we claim are the versions CI tests and the code enforces.

The README's support matrix, ``.ci/run`` (which installs the oldest supported PySpark in a
second virtualenv), ``run.sh`` (which checks Java) and :data:`MIN_PYSPARK` (which
``register`` enforces) must agree: a floor raised in one place and not the others would claim
an untested version.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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
