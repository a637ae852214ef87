"""The one storage boundary: every read, list, write and atomic create goes through FileIO.

FileIO wraps an fsspec file system. It pickles without its live client so it can travel to
Spark executors; the client is rebuilt lazily there.
"""

from __future__ import annotations

import functools
import inspect
import os
import posixpath
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any, Literal, ParamSpec, TypeVar

import fsspec
from fsspec.core import split_protocol

from tsfile_catalog.exceptions import OptionError, StorageError
from tsfile_catalog.storage_options import CREDENTIALS_AT_RUN_TIME, check_url, redact_text

__all__ = ["FileIO", "EntryKind", "GLOB_CHARS", "join_url"]

EntryKind = Literal["file", "dir", "link"]

GLOB_CHARS = frozenset("*?[")
"""The characters that make a path a glob pattern (a listing rule, as fsspec's ``glob``)."""


_P = ParamSpec("_P")
_R = TypeVar("_R")

# Errors callers branch on (a missing file, a lost put-if-absent race, a directory where a
# file was expected): they pass through as they are. Any other OSError becomes a
# StorageError naming the operation and the file, so a failure deep in a commit or a vacuum
# tells the caller what was being done to what, with the store's error as its cause.
_PASS_THROUGH = (FileNotFoundError, FileExistsError, IsADirectoryError, NotADirectoryError)


def _target(args: Sequence[object]) -> str:
    """The file(s) a FileIO call works on, for its error message."""
    names: list[str] = []
    for arg in args:
        if isinstance(arg, str):
            names.append(arg)
        elif isinstance(arg, list | tuple) and arg:  # urls, or (src, dst) pairs
            first = arg[0] if isinstance(arg[0], str) else " -> ".join(map(str, arg[0]))
            names.append(first + (f" (and {len(arg) - 1} more)" if len(arg) > 1 else ""))
    return " -> ".join(names) or "(nothing)"


def _failure(operation: str, args: Sequence[object], error: OSError) -> StorageError:
    # The store's error may quote its endpoint, which may carry a user name and password.
    return StorageError(
        redact_text(
            f"storage {operation} of {_target(args)} failed: {type(error).__name__}: {error}"
        )
    )


# The storage SDKs' "no credentials anywhere" errors (botocore's, google-auth's), by name: the
# SDKs are optional, and their errors are no OSError, so they would surface raw.
_MISSING_CREDENTIALS = frozenset(
    {"NoCredentialsError", "PartialCredentialsError", "DefaultCredentialsError"}
)


def _missing_credentials(operation: str, args: Sequence[object], error: Exception) -> StorageError:
    return StorageError(
        redact_text(
            f"storage {operation} of {_target(args)} failed: no credentials for this store were "
            f"found ({type(error).__name__}: {error}). Supply them {CREDENTIALS_AT_RUN_TIME}; "
            "a public bucket reads without any with the option fs.anon=true"
        )
    )


# The SDKs' "cannot connect" errors (botocore's and aiohttp's), by name as above: an endpoint
# that refuses connections, times out or does not resolve.
_UNREACHABLE = frozenset(
    {
        "EndpointConnectionError",
        "ConnectTimeoutError",
        "ClientConnectorError",
        "ProxyConnectionError",
    }
)


def _translate(operation: str, args: Sequence[object], error: Exception) -> Exception | None:
    """The StorageError an error from the store becomes, or None to let it through."""
    if isinstance(error, (*_PASS_THROUGH, StorageError)):
        return None
    if isinstance(error, OSError):
        return _failure(operation, args, error)
    names = {cls.__name__ for cls in type(error).__mro__}
    if not names.isdisjoint(_MISSING_CREDENTIALS):
        return _missing_credentials(operation, args, error)
    if not names.isdisjoint(_UNREACHABLE):
        return StorageError(
            redact_text(
                f"storage {operation} of {_target(args)} failed: the store cannot be reached "
                f"({type(error).__name__}: {error}); check the endpoint (fs.endpoint_url)"
            )
        )
    return None


def _storage(operation: str) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Wrap a FileIO method's unexpected OSErrors (see _PASS_THROUGH) and missing-credential
    errors in a StorageError; generator methods are wrapped while they are iterated."""

    def wrap(method: Callable[_P, _R]) -> Callable[_P, _R]:
        if inspect.isgeneratorfunction(method):

            @functools.wraps(method)
            def generate(*args: _P.args, **kwargs: _P.kwargs) -> Any:
                try:
                    yield from method(*args, **kwargs)
                except Exception as e:
                    translated = _translate(operation, args[1:], e)
                    if translated is None:
                        raise
                    raise translated from e

            return generate

        @functools.wraps(method)
        def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            try:
                return method(*args, **kwargs)
            except Exception as e:
                translated = _translate(operation, args[1:], e)
                if translated is None:
                    raise
                raise translated from e

        return call

    return wrap


def join_url(base: str, *parts: str) -> str:
    out = base.rstrip("/")
    for part in parts:
        out = f"{out}/{part.strip('/')}"
    return out


class FileIO:
    """File access for one URL scheme (``s3://``, ``memory://``, plain paths, ...).

    Every URL it is given, at construction and per call, must carry no credentials (see
    :func:`~tsfile_catalog.storage_options.check_url`): they are refused before anything
    connects, so no location with a password reaches a listing, an error or a commit.
    """

    def __init__(self, url: str, storage_options: Mapping[str, Any] | None = None) -> None:
        check_url(url)
        protocol, _ = split_protocol(url)
        self.protocol = protocol or "file"
        self.storage_options = dict(storage_options or {})
        self._origin = url  # for errors about the scheme
        self._fs: fsspec.AbstractFileSystem | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_fs"] = None
        return state

    @property
    def fs(self) -> fsspec.AbstractFileSystem:
        if self._fs is None:
            try:
                cls = fsspec.get_filesystem_class(self.protocol)
            except (ValueError, ImportError) as e:
                raise self._unknown_scheme(e) from e
            self._fs = cls(**self.storage_options)
        return self._fs

    def _unknown_scheme(self, error: Exception) -> OptionError:
        if isinstance(error, ImportError):  # fsspec knows the scheme; its package is missing
            return OptionError(
                f"cannot open {redact_text(self._origin)!r}: {error} (the file system for "
                f"'{self.protocol}://' URLs is a separate package; pip install it)"
            )
        return OptionError(
            f"cannot open {redact_text(self._origin)!r}: no file system handles "
            f"'{self.protocol}://' URLs. Check the scheme's spelling (s3://, gs://, abfs://, "
            "hdfs://, file://, or a plain local path); a store fsspec supports through another "
            "package needs that package installed"
        )

    @property
    def is_local(self) -> bool:
        return self.protocol in ("file", "local")

    def normalize(self, url: str) -> str:
        """The URL in the canonical form this FileIO lists and compares by."""
        check_url(url)
        if self.is_local:
            _, path = split_protocol(url)
            return os.path.abspath(os.path.expanduser(path))
        return url.rstrip("/")

    def _path(self, url: str) -> str:
        check_url(url)
        if self.is_local:
            return self.normalize(url)
        return url

    def _url(self, path: str) -> str:
        """Turn a path returned by fsspec listing back into a URL of this scheme."""
        if self.is_local:
            return path
        stripped = self.fs._strip_protocol(path)
        return (
            f"{self.protocol}://{stripped.lstrip('/')}"
            if self.protocol != "memory"
            else f"memory://{stripped if stripped.startswith('/') else '/' + stripped}"
        )

    # -- reading --------------------------------------------------------------------------

    @_storage("stat")
    def exists(self, url: str) -> bool:
        return bool(self.fs.exists(self._path(url)))

    @_storage("stat")
    def isdir(self, url: str) -> bool:
        return bool(self.fs.isdir(self._path(url)))

    @_storage("stat")
    def size(self, url: str) -> int:
        return int(self.fs.size(self._path(url)))

    @_storage("stat")
    def modified_ms(self, url: str) -> int | None:
        """Last-modified time in epoch milliseconds, or None when the store does not say."""
        try:
            when = self.fs.modified(self._path(url))
        except (NotImplementedError, KeyError):
            return None
        return int(when.timestamp() * 1000)

    @_storage("stat")
    def file_in_the_way(self, url: str) -> str | None:
        """The file at ``url`` or above it that keeps ``url`` from being a directory, or None
        (checked locally, where a listing of such a path fails; on object stores a key and a
        prefix of the same name coexist)."""
        if not self.is_local:
            return None
        path = self._path(url)
        while not os.path.lexists(path) and os.path.dirname(path) != path:
            path = os.path.dirname(path)
        return path if os.path.lexists(path) and not os.path.isdir(path) else None

    def bucket_of(self, url: str) -> str | None:
        """The bucket (container) ``url`` lies in, on a store that has them (the fsspec file
        systems with ``split_path``: S3, GCS, Azure); None elsewhere."""
        split = getattr(self.fs, "split_path", None)
        if self.is_local or split is None:
            return None
        return str(split(self._path(url))[0]) or None

    @_storage("stat")
    def bucket_exists(self, url: str) -> bool:
        """Whether the bucket of ``url`` exists (True on a store without buckets). An object
        store lists a missing bucket, or any path at an endpoint that answers 404, as
        missing: only this tells that apart from an empty folder."""
        bucket = self.bucket_of(url)
        if bucket is None:
            return True
        self.fs.invalidate_cache(bucket)
        try:
            self.fs.info(bucket)
        except FileNotFoundError:
            return False
        return True

    @_storage("read")
    def open_input(self, url: str) -> IO[bytes]:
        """A seekable binary file object (TsFileReader accepts one)."""
        if self.is_local:
            return open(self._path(url), "rb")
        return self.fs.open(self._path(url), "rb")

    @_storage("read")
    def read_bytes(self, url: str) -> bytes:
        return bytes(self.fs.cat_file(self._path(url)))

    @_storage("list")
    def walk_files(self, url: str) -> Iterator[tuple[str, int]]:
        """Every file under ``url`` (recursively) with its size, as (url, size)."""
        for path, info in self.fs.find(self._path(url), detail=True, withdirs=False).items():
            yield self._url(path), int(info.get("size") or 0)

    @_storage("list")
    def glob(self, pattern: str) -> list[str]:
        return sorted(self._url(p) for p in self.fs.glob(self._path(pattern)))

    def list_names(self, url: str) -> list[str]:
        """Base names directly inside the directory ``url``; empty when it does not exist."""
        return sorted(self.list_stamped(url))

    @_storage("list")
    def list_stamped(self, url: str) -> dict[str, str | None]:
        """Base names directly inside the directory ``url``, each with its :meth:`stamp` when
        the listing carries one for free (object stores list ETags and modification times;
        local listings carry none: ask :meth:`stamp`). Empty when ``url`` does not exist."""
        path = self._path(url)
        # s3fs caches listings per instance (and fsspec shares instances); the commit
        # protocol must see files other processes wrote since the last listing.
        self.fs.invalidate_cache(path)
        detail = not self.is_local
        try:
            entries = self.fs.ls(path, detail=detail)
        except FileNotFoundError:
            return {}
        if not detail:
            return {posixpath.basename(str(e).rstrip("/")): None for e in entries}
        return {posixpath.basename(str(e["name"]).rstrip("/")): _stamp_of(e) for e in entries}

    @_storage("stat")
    def stamp(self, url: str) -> str | None:
        """What the store says about this version of the file at ``url``: a string that
        changes when the file is replaced by another (inode, size and nanosecond times
        locally; ETag, generation or modification time on object stores). None when the
        file is missing or the store reports nothing that would change."""
        try:
            if self.is_local:
                st = os.stat(self._path(url))
                return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"
            info = self.fs.info(self._path(url))
        except FileNotFoundError:
            return None
        return _stamp_of(info)

    @_storage("list")
    def list_entries(self, url: str) -> list[tuple[str, EntryKind]]:
        """(base name, kind) of each entry directly inside the directory ``url``, sorted;
        empty when it does not exist. Symbolic links are reported as ``"link"`` and never
        followed: whatever a link points to is not under ``url``."""
        path = self._path(url)
        if self.is_local:
            try:
                with os.scandir(path) as found:
                    return sorted((e.name, _local_kind(e)) for e in found)
            except (FileNotFoundError, NotADirectoryError):
                return []
        self.fs.invalidate_cache(path)
        try:
            entries = self.fs.ls(path, detail=True)
        except FileNotFoundError:
            return []
        own = self.fs._strip_protocol(path).rstrip("/")
        out: list[tuple[str, EntryKind]] = []
        for info in entries:
            full = self.fs._strip_protocol(str(info["name"])).rstrip("/")
            if full == own:
                continue  # some stores list a folder's marker object as its own entry
            kind: EntryKind = "dir" if info.get("type") == "directory" else "file"
            out.append((posixpath.basename(full), kind))
        return sorted(out)

    def is_link(self, url: str) -> bool:
        """Whether ``url`` is a symbolic link (only local file systems have them)."""
        return self.is_local and os.path.islink(self._path(url))

    # -- writing --------------------------------------------------------------------------

    @_storage("write")
    def makedirs(self, url: str) -> None:
        if self.is_local:
            _makedirs_local(self._path(url))
            return
        self.fs.makedirs(self._path(url), exist_ok=True)

    @_storage("put-if-absent create")
    def create_exclusive(self, url: str, data: bytes) -> None:
        """Write ``data`` to ``url`` only if nothing is there: the commit primitive.

        Locally the data goes to a private temporary file that is then hard-linked into place
        (``link`` fails if the target exists), so readers never see a half-written file; on
        object stores fsspec's ``"xb"`` mode, which s3fs sends as a conditional PUT
        (``If-None-Match: *``).

        Raises:
            FileExistsError: something already exists at ``url``.
        """
        if self.is_local:
            _create_exclusive_local(self._path(url), data)
            return
        if self.protocol == "memory" and self.fs.exists(url):
            raise FileExistsError(url)
        with self.fs.open(self._path(url), "xb") as f:
            f.write(data)

    @_storage("write")
    def write_bytes(self, url: str, data: bytes) -> None:
        """Overwrite ``url`` (only for hints such as the last-checkpoint pointer)."""
        self.makedirs(posixpath.dirname(self._path(url)))
        with self.fs.open(self._path(url), "wb") as f:
            f.write(data)

    @_storage("upload")
    def put_file(self, local_path: str, url: str) -> None:
        """Copy a local file to ``url`` (a rename when both are local)."""
        if self.is_local:
            target = self._path(url)
            _makedirs_local(os.path.dirname(target))
            os.replace(local_path, target)
            return
        self.fs.put_file(local_path, self._path(url))

    @_storage("move")
    def move(self, src: str, dst: str) -> None:
        if self.is_local:
            target = self._path(dst)
            _makedirs_local(os.path.dirname(target))
            os.rename(self._path(src), target)
            return
        self.fs.mv(self._path(src), self._path(dst))

    @_storage("move")
    def move_all(self, moves: Sequence[tuple[str, str]], *, max_workers: int = 16) -> None:
        """Move every ``(src, dst)`` pair, in parallel (a move on an object store is a copy
        and a delete, about a round trip each), or none: when one fails, every destination
        already written is deleted before the first error is raised.
        """
        if not moves:
            return
        workers = max(1, min(max_workers, len(moves)))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tsfile-move") as pool:
            futures = {pool.submit(self.move, src, dst): dst for src, dst in moves}
            # Leaving the block waits for every move, so none lands after the clean-up.
        failures = [error for f in futures if (error := f.exception()) is not None]
        if failures:
            self.delete_files([dst for f, dst in futures.items() if f.exception() is None])
            raise failures[0]

    @_storage("delete")
    def remove_empty_dir(self, url: str) -> bool:
        """Remove the directory ``url`` only if it is empty (a no-op on object stores).

        Returns:
            Whether a directory was removed.
        """
        if self.is_local:
            try:
                os.rmdir(self._path(url))
            except OSError:
                return False
            return True
        return False

    @_storage("delete")
    def delete_files(self, urls: Sequence[str]) -> None:
        """Delete files (never directories, never recursively); missing ones are skipped.
        Object stores get one batched request per thousand keys instead of one per file."""
        if not urls:
            return
        if self.is_local:
            for url in urls:
                try:
                    os.remove(self._path(url))
                except (FileNotFoundError, IsADirectoryError):
                    pass
            return
        try:
            self.fs.rm([self._path(url) for url in urls])
        except FileNotFoundError:
            pass

    @_storage("delete")
    def delete(self, url: str, *, recursive: bool = False) -> None:
        """Delete a file (or a tree); a missing target is not an error."""
        try:
            self.fs.rm(self._path(url), recursive=recursive)
        except FileNotFoundError:
            pass


# Listing/info keys that change when an object is rewritten, across fsspec stores (s3fs, gcsfs,
# adlfs, memory). Size alone is not among them: a recreated file can have the same size.
_STAMP_KEYS = (
    "ETag",
    "etag",
    "md5Hash",
    "generation",
    "VersionId",
    "version_id",
    "LastModified",
    "last_modified",
    "mtime",
    "created",
)


def _stamp_of(info: Mapping[str, Any]) -> str | None:
    found = [f"{key}={info[key]}" for key in _STAMP_KEYS if info.get(key) is not None]
    return ";".join(found) if found else None


def _local_kind(entry: os.DirEntry[str]) -> EntryKind:
    if entry.is_symlink():
        return "link"
    return "dir" if entry.is_dir(follow_symlinks=False) else "file"


def _makedirs_local(directory: str) -> None:
    """``os.makedirs(directory, exist_ok=True)``, made again when a concurrent writer removes
    an empty parent between its steps: writers share the staging root, and each removes it
    when it is empty (:meth:`FileIO.remove_empty_dir`), which may fall between another's
    check that the root exists and its ``mkdir`` of its own folder below it."""
    for _ in range(_MAKEDIRS_ATTEMPTS - 1):
        try:
            os.makedirs(directory, exist_ok=True)
            return
        except FileNotFoundError:
            continue  # a parent went meanwhile: make it again
    os.makedirs(directory, exist_ok=True)


# A parent can go only when empty, and each attempt makes it: a few suffice.
_MAKEDIRS_ATTEMPTS = 8


def _create_exclusive_local(path: str, data: bytes) -> None:
    directory = os.path.dirname(path)
    _makedirs_local(directory)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    try:
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise
        except OSError:
            # File systems without hard links: O_EXCL still decides the race, but a reader may
            # briefly see the file before its bytes land.
            _create_exclusive_no_link(path, data)
    finally:
        os.unlink(tmp)


def _create_exclusive_no_link(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
