"""The ``tsfile`` library, imported on first use: the one place this package imports it.

Importing it costs about 1.5 s (it loads pandas and the native library), while planning, the
CLI's metadata commands and every pure test import this package without reading or writing
a TsFile; so the import waits for the first call. That first call also fixes the allocator's
thresholds the native library needs (see :mod:`.allocator`).
"""

from __future__ import annotations

from types import ModuleType

from tsfile_catalog.formats.tsfile.allocator import tune_allocator

__all__ = ["native"]


def native() -> ModuleType:
    """The ``tsfile`` module (imported by the first call, a dictionary lookup after that)."""
    global _tuned
    if not _tuned:
        tune_allocator()
        _tuned = True
    # Inside the function on purpose: see the module docstring.
    import tsfile

    return tsfile


# Whether this process has fixed the allocator's thresholds (once, before the first native call).
_tuned = False
