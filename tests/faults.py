"""Fault injection for storage, in the style of Paimon's ``FailingFileIO``.

:class:`FailingFileSystem` is an fsspec file system registered under the ``failing://``
protocol. It wraps another file system below a root folder (a local temporary directory, or
an S3 bucket on the moto server) and, while its :class:`FaultPlan` is armed, fails each
operation with a seeded probability per kind: ``read``, ``list``, ``write``, ``rename``,
``create`` (put-if-absent) and ``delete``. The production :class:`~tsfile_catalog.io.FileIO`
runs unchanged on top: a table at ``failing://t/table`` with ``storage_options`` from
:meth:`FaultPlan.storage_options` is a table whose storage misbehaves.

A fault strikes either before the operation (nothing happened) or, for the kinds that change
the store, with probability ``lost_response`` after it (it happened, the caller is told it
failed: a response lost on the way back). Writes are never half done: like an object store's
PUT, a file is there whole or not at all.
"""

from __future__ import annotations

import itertools
import random
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import fsspec
from fsspec.implementations.dirfs import DirFileSystem
from fsspec.implementations.local import LocalFileSystem

__all__ = ["FaultKind", "FaultPlan", "FailingFileSystem", "InjectedFault", "KINDS"]

FaultKind = Literal["read", "list", "write", "rename", "create", "delete"]
KINDS: tuple[FaultKind, ...] = ("read", "list", "write", "rename", "create", "delete")
# Kinds whose effect may land before the fault is raised (a lost response).
_CHANGES: frozenset[FaultKind] = frozenset({"write", "rename", "create", "delete"})

_T = TypeVar("_T")


class InjectedFault(OSError):
    """The storage failure a :class:`FaultPlan` injected (a plain OSError, as a real store
    raises one)."""


_PLANS: dict[str, FaultPlan] = {}
_names = itertools.count()


@dataclass
class FaultPlan:
    """Which operations fail: each of ``kind`` with probability ``rates[kind]`` (seeded), only
    while :meth:`armed`. ``injected`` records every fault as (kind, path, lost response)."""

    seed: int
    rates: Mapping[FaultKind, float]
    root: str
    target_protocol: str = "file"
    target_options: Mapping[str, Any] = field(default_factory=dict)
    lost_response: float = 0.3
    # Only paths containing this fail (a focused test's one file); every path when empty.
    only: str = ""
    injected: list[tuple[FaultKind, str, bool]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.name = f"plan-{next(_names)}"
        self._rng = random.Random(self.seed)
        self._armed = False
        self._lock = threading.Lock()
        _PLANS[self.name] = self

    @property
    def storage_options(self) -> dict[str, Any]:
        """What a table on ``failing://`` needs to reach this plan's store."""
        return {
            "plan": self.name,
            "path": self.root,
            "target_protocol": self.target_protocol,
            "target_options": dict(self.target_options),
        }

    @contextmanager
    def armed(self) -> Iterator[FaultPlan]:
        """Inject faults inside the block (only then)."""
        self._armed = True
        try:
            yield self
        finally:
            self._armed = False

    def run(self, kind: FaultKind, path: str, operation: Callable[[], _T]) -> _T:
        """``operation()`` on ``path``, or an :class:`InjectedFault` before or after it."""
        with self._lock:
            strike = (
                self._armed and self.only in path and self._rng.random() < self.rates.get(kind, 0.0)
            )
            late = strike and kind in _CHANGES and self._rng.random() < self.lost_response
        if not strike:
            return operation()
        self.injected.append((kind, path, late))
        if late:
            operation()
        raise InjectedFault(f"injected {kind} failure on {path}" + (" (lost response)" * late))


class FailingFileSystem(DirFileSystem):
    """A file system below ``path`` on another one whose operations fail as ``plan`` says."""

    protocol = "failing"

    def __init__(self, *, plan: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plan = _PLANS[plan]

    def _run(self, kind: FaultKind, path: Any, operation: Callable[[], _T]) -> _T:
        return self.plan.run(kind, str(path), operation)

    def _with_parent(self, path: str, operation: Callable[[], _T]) -> Callable[[], _T]:
        """``operation``, creating ``path``'s folder first on a local store: an object
        store has no folders, and FileIO writes as to one on any non-local protocol."""

        def run() -> _T:
            if isinstance(self.fs, LocalFileSystem):
                self.makedirs(path.rstrip("/").rsplit("/", 1)[0], exist_ok=True)
            return operation()

        return run

    # -- read ------------------------------------------------------------------------------

    def cat_file(self, path: str, *args: Any, **kwargs: Any) -> Any:
        return self._run(
            "read", path, lambda: super(FailingFileSystem, self).cat_file(path, *args, **kwargs)
        )

    def info(self, path: str, **kwargs: Any) -> Any:
        return self._run("read", path, lambda: super(FailingFileSystem, self).info(path, **kwargs))

    def exists(self, path: str) -> Any:
        return self._run("read", path, lambda: super(FailingFileSystem, self).exists(path))

    def isdir(self, path: str) -> Any:
        return self._run("read", path, lambda: super(FailingFileSystem, self).isdir(path))

    def size(self, path: str) -> Any:
        return self._run("read", path, lambda: super(FailingFileSystem, self).size(path))

    def modified(self, path: str) -> Any:
        return self._run("read", path, lambda: super(FailingFileSystem, self).modified(path))

    def open(self, path: str, mode: str = "rb", *args: Any, **kwargs: Any) -> Any:
        def opened() -> Any:
            return super(FailingFileSystem, self).open(path, mode, *args, **kwargs)

        if "r" in mode:
            return self._run("read", path, opened)
        kind: FaultKind = "create" if "x" in mode else "write"
        return _WrittenOnClose(
            self._with_parent(path, opened), lambda commit: self._run(kind, path, commit)
        )

    # -- list ------------------------------------------------------------------------------

    def ls(self, path: str, detail: bool = True, **kwargs: Any) -> Any:
        return self._run(
            "list", path, lambda: super(FailingFileSystem, self).ls(path, detail=detail, **kwargs)
        )

    def find(self, path: str, *args: Any, **kwargs: Any) -> Any:
        return self._run(
            "list", path, lambda: super(FailingFileSystem, self).find(path, *args, **kwargs)
        )

    def glob(self, path: str, **kwargs: Any) -> Any:
        return self._run("list", path, lambda: super(FailingFileSystem, self).glob(path, **kwargs))

    # -- change ----------------------------------------------------------------------------

    def put_file(self, lpath: str, rpath: str, **kwargs: Any) -> Any:
        return self._run(
            "write",
            rpath,
            self._with_parent(
                rpath, lambda: super(FailingFileSystem, self).put_file(lpath, rpath, **kwargs)
            ),
        )

    def mv(self, path1: str, path2: str, **kwargs: Any) -> Any:
        return self._run(
            "rename",
            path2,
            self._with_parent(
                path2, lambda: super(FailingFileSystem, self).mv(path1, path2, **kwargs)
            ),
        )

    def rm(self, path: Any, *args: Any, **kwargs: Any) -> Any:
        return self._run(
            "delete", path, lambda: super(FailingFileSystem, self).rm(path, *args, **kwargs)
        )


class _WrittenOnClose:
    """A file opened for writing whose bytes reach the store on close, whole, or not at all
    (the target is opened only then, so a fault before it leaves nothing behind)."""

    def __init__(self, opened: Callable[[], Any], guard: Callable[[Callable[[], None]], None]):
        self._opened = opened
        self._guard = guard
        self._buffer = bytearray()

    def write(self, data: bytes) -> int:
        self._buffer += data
        return len(data)

    def close(self) -> None:
        def commit() -> None:
            with self._opened() as f:
                f.write(bytes(self._buffer))

        self._guard(commit)

    def __enter__(self) -> _WrittenOnClose:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.close()


fsspec.register_implementation("failing", FailingFileSystem, clobber=True)
