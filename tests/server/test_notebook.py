"""A notebook's kernel that calls ``local_session()`` and then ``local_session(warehouse=...)``:
the JVM started without the plugin's jar, which is read only when a JVM starts, so the second
call fails in one line saying why and what to do (before, the first query raised a 256-line
PLUGIN_CLASS_NOT_FOUND). In a process of its own: it needs a JVM started without the jar."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.conftest import child_env

pytestmark = pytest.mark.server

_KERNEL = """
import sys
import tsfile_catalog
from tsfile_catalog.exceptions import TsFileCatalogError

spark = tsfile_catalog.local_session(master="local[1]")
spark.sparkContext.setLogLevel("ERROR")
try:
    tsfile_catalog.local_session(warehouse=sys.argv[1], master="local[1]")
except TsFileCatalogError as e:
    print("REFUSED", str(e).replace(chr(10), " | "))
else:
    print("SERVED", spark.sql("SHOW NAMESPACES IN tsfile").count())
spark.stop()
"""


def test_a_second_local_session_with_a_warehouse_fails_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _KERNEL, str(tmp_path / "wh")],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("REFUSED")]
    assert " | " not in line  # one line
    assert "catalog 'tsfile'" in line
    assert "restart the Python process" in line
