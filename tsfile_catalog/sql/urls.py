"""What a URL table reference (``tsfile('<url>', ...)``, ``tsfile.`<url>` ``) stands for in
the catalog: an unregistered :class:`~tsfile_catalog.sql.registry.TableEntry`, so queries read
it through the same scan, pruning and time travel code as a registered name.

Such an entry stores nothing: it lives for one statement, holds only the reference's
non-secret ``fs.*`` settings as options (credentials still come from the process: the
environment, fsspec's config or ``Catalog(storage_options=...)``), and the data source's
defaults for everything else, as ``spark.read.format("tsfile").load(url)`` has. Nothing here
imports pyspark.
"""

from __future__ import annotations

from dataclasses import dataclass

from tsfile_catalog.sql.registry import TableEntry
from tsfile_catalog.sql.statements import TableUrl

__all__ = ["UrlEntry", "url_entry"]


@dataclass(frozen=True, slots=True, kw_only=True)
class UrlEntry(TableEntry):
    """The entry of a URL reference; ``url`` is the reference without its time travel
    (which each reference carries itself)."""

    url: TableUrl

    @property
    def display_name(self) -> str:
        """The reference as SQL (``tsfile('s3://b/t')``): the name DESCRIBE and EXPLAIN show."""
        return self.url.to_sql()

    def scan_options(self) -> dict[str, str]:
        """The read options the reference adds to a scan: the TsFile table it must hold and
        the table UUID, which the source checks again when it opens the location."""
        out: dict[str, str] = {}
        if self.url.table is not None:
            out["table"] = self.url.table
        if self.url.table_uuid is not None:
            out["tableUuid"] = self.url.table_uuid
        return out


def url_entry(url: TableUrl) -> UrlEntry:
    """The entry for ``url`` (its time travel dropped). Two references to one location with
    the same settings get equal entries, so one statement reads them at one version."""
    located = url.located
    return UrlEntry(
        database="", name=located.to_sql(), location=url.url, options=url.settings, url=located
    )
