"""The ``tsfile`` library, imported on first use: the one place this package imports it.

Importing it costs about 1.5 s (it loads pandas and the native library), while planning, the
CLI's metadata commands and every pure test import this package without reading or writing
a TsFile; so the import waits for the first call.
"""

from __future__ import annotations

from types import ModuleType

__all__ = ["native"]


def native() -> ModuleType:
    """The ``tsfile`` module (imported by the first call, a dictionary lookup after that)."""
    # Inside the function on purpose: see the module docstring.
    import tsfile

    return tsfile
