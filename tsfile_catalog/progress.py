"""Progress reporting for long table operations, without tying the table layer to a UI.

A table-level function that works through many items (files to read, parts to draw, files to
delete) accepts ``progress: Progress | None`` and calls it as ``progress(done, total)`` after
each step; the CLI passes a terminal progress bar, Python callers nothing or a callback of
their own. Steps may be batched (object-store deletes go a thousand at a time), ``done`` never
decreases and the last call has ``done == total``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol, TypeVar

__all__ = ["Progress", "batches", "tracked"]

T = TypeVar("T")


class Progress(Protocol):
    """Told how far an operation is: ``done`` of ``total`` steps."""

    def __call__(self, done: int, total: int) -> None: ...


def tracked(items: Sequence[T], progress: Progress | None) -> Iterator[T]:
    """``items`` one by one, reporting each as done after the caller has handled it (a
    zero-step operation reports ``(0, 0)`` once, so a bar can finish)."""
    total = len(items)
    if progress is None:
        yield from items
        return
    if not total:
        progress(0, 0)
    for done, item in enumerate(items, start=1):
        yield item
        progress(done, total)


def batches(items: Sequence[T], size: int) -> Iterable[Sequence[T]]:
    """``items`` in consecutive slices of at most ``size``."""
    return [items[start : start + size] for start in range(0, len(items), size)]
