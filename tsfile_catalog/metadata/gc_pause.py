"""Pausing the cyclic garbage collector while metadata is decoded or planned.

Decoding a manifest and planning over it allocate many small, acyclic objects (parts, their
statistics, parsed JSON). Each burst of allocations triggers collections that scan the whole
heap of the process (a Spark driver's is large) and find nothing to free: measured at 100,000
parts, they doubled the CPU time of a cold open + plan. Reference counting still frees
everything as usual; only the cycle search waits until the block ends.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collection inside the block (nesting and threads: the outermost enabler
    re-enables it; a collection another thread needs merely comes later)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
