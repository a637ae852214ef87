"""Whether external files are still the bytes their statistics describe.

A plan prunes by a part's statistics and a statistics answer never opens the file, so an
external file rewritten after ``ADD PART`` would be answered for as it was. Every planning and
statistics answer over external parts checks them here first (one metadata request each, several
at once on an object store); a read checks the parts it opens itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor

from tsfile_catalog.formats.external import check_unchanged
from tsfile_catalog.formats.tsfile import TSFILE
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.part_list import parts_not_in_format
from tsfile_catalog.metadata.parts import PartFile

__all__ = ["check_sources", "check_skipped_sources", "io_for"]

_CHECK_THREADS = 16


def io_for(io: FileIO, url: str) -> FileIO:
    """``io`` when ``url`` is on its file system, else one for ``url``'s scheme with the same
    storage options (an external part may live on another store than the table)."""
    other = FileIO(url, io.storage_options)
    return io if other.protocol == io.protocol else other


def check_sources(io: FileIO, parts: Iterable[PartFile]) -> None:
    """Refuse an answer computed from the statistics of ``parts`` (a ``count(*)`` or
    ``min``/``max`` that opens no file) when an external one among them changed after
    ``ADD PART``, with the error a read of it gives
    (:func:`~tsfile_catalog.formats.external.check_unchanged`). One metadata request per
    external part, several at once on an object store; internal parts are not checked here
    (only this table writes them; a read compares their size with the manifest's).

    Raises:
        DataError: naming the first changed or missing file and the fix.
    """
    checks = [(io_for(io, p.path), p) for p in parts if p.external and p.source_stamp is not None]
    if len(checks) <= 1 or all(part_io.is_local for part_io, _ in checks):
        for part_io, part in checks:
            check_unchanged(part_io, part)
        return
    with ThreadPoolExecutor(min(_CHECK_THREADS, len(checks))) as pool:
        # list(): waits for all; the first failure in part order is raised here.
        list(pool.map(lambda pair: check_unchanged(*pair), checks))


def check_skipped_sources(io: FileIO, parts: Sequence[PartFile], kept: Iterable[PartFile]) -> None:
    """Refuse a plan that skips an external part of ``parts`` by statistics that no longer
    describe it (a filter would silently miss the rows a rewrite added): every external part
    not in ``kept`` is checked as :func:`check_sources` checks; the kept ones are checked by
    their read. Internal TsFile parts are never built for this (a checkpoint's stay unbuilt).
    """
    external = parts_not_in_format(parts, TSFILE.name)
    if not external:
        return
    read = {p.path for p in kept}
    check_sources(io, [p for p in external if p.path not in read])
