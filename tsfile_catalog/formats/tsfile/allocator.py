"""Fixed glibc ``malloc`` thresholds for processes that run the native TsFile library.

The 2.5 reader allocates and frees a few buffers of hundreds of KiB per native block (one
block per device of a part), and its chunk readers free their pages at every chunk. Under
glibc's defaults those sizes straddle the *dynamic* mmap threshold (128 KiB at start, raised
only after a large mmapped block is freed) and the trim threshold (128 KiB): a fresh process,
such as every Spark Python worker, then maps, zeroes, unmaps and trims pages for every block,
and page faults, ``brk`` and TLB shootdowns dominate a read. Measured on the benchmark's parts
(1,000 rows per device per part, 3M rows): ``f_double`` alone 0.50 s with the defaults against
0.16 s with the thresholds below, ``f_double`` + ``f_long`` 1.02 s against 0.63 s. Whether a
process was fast depended on what it had allocated before, which is why the same read varied
by 3x between runs.

The thresholds are fixed once, on the first use of the native library: blocks up to
``MMAP_THRESHOLD`` come from the heap, and up to ``TRIM_THRESHOLD`` of free heap is kept for
the next block instead of being returned to the kernel. A user's own ``MALLOC_MMAP_THRESHOLD_``
or ``MALLOC_TRIM_THRESHOLD_`` (glibc's environment tunables) is left alone, and so is any
platform without glibc's ``mallopt``.
"""

from __future__ import annotations

import ctypes
import os
import sys

__all__ = ["MMAP_THRESHOLD", "TRIM_THRESHOLD", "tune_allocator"]

MMAP_THRESHOLD = 4 * 1024 * 1024
TRIM_THRESHOLD = 64 * 1024 * 1024

# glibc's mallopt parameter numbers (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

_USER_TUNABLES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")


def tune_allocator() -> bool:
    """Set the thresholds in this process; whether they were set (see the module docstring)."""
    if not sys.platform.startswith("linux") or any(k in os.environ for k in _USER_TUNABLES):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    # mallopt returns 1 on success; setting the mmap threshold also stops glibc moving it.
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
