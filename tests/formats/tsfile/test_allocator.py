"""The allocator thresholds the native library's first use fixes (see formats/tsfile/allocator.py).

Each case runs in a fresh interpreter: the thresholds are process-wide, and whether they are
set depends on the environment that process starts with.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_PROBE = """
import sys
from tsfile_catalog.formats.tsfile import allocator, native
native.native()
print(native._tuned, allocator.tune_allocator())
"""


def _probe(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_TUN"))}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt is Linux-only")
def test_first_native_use_fixes_the_thresholds() -> None:
    assert _probe() == "True True"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt is Linux-only")
@pytest.mark.parametrize("tunable", ["MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"])
def test_a_users_own_malloc_tunable_is_left_alone(tunable: str) -> None:
    # The first use still happens; it just sets nothing over the user's choice.
    assert _probe(**{tunable: "131072"}) == "True False"
