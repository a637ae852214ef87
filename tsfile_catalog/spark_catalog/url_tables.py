"""URL references in plain ``spark.sql``: ``tsfile('<url>', version => …)`` and
``tsfile.`<url>` `` read through the plugin's own table, as a catalog table is read.

Spark knows neither: ``tsfile(...)`` is no table function of its, and ``tsfile.`<path>` `` is
its "SQL on files", which refuses a Python data source. The session extensions' rule
(``UrlReferences``, run before Spark resolves relations) hands each such reference's text
here (:func:`url_reference`); one this grammar reads as a URL reference
(:func:`~tsfile_catalog.sql.parse.parse_table_reference`, the one Catalog.sql reads queries
with) becomes a relation of a tsfile catalog of the session named by the reference's
canonical text, with no namespace (no registered table has none). Spark then loads it from
that catalog (:func:`load_url`) and reads it through the same scan as a registered table:
pruning, pushdown and statistics answers.

A URL reference is for reading, as in ``Catalog.sql``: the table's writes are refused with
the same message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tsfile_catalog.discovery import open_location
from tsfile_catalog.exceptions import SqlError, TableNotFoundError
from tsfile_catalog.exec.source import ResolvedScan
from tsfile_catalog.sql.parse import parse_table_reference, url_reference_refused
from tsfile_catalog.sql.statements import TableUrl, TimestampAsOf, VersionAsOf
from tsfile_catalog.sql.urls import url_entry
from tsfile_catalog.table.snapshots import time_travel_ms

if TYPE_CHECKING:
    from tsfile_catalog.spark_catalog.tables import Warehouse

__all__ = ["load_url", "url_catalog", "url_reference"]


def url_catalog(catalogs: Sequence[str], current: str) -> str:
    """The catalog a URL reference is read through: the current one when it is a tsfile
    catalog, else the first of the session's (by name). A URL names its table itself; the
    catalog only lends its storage settings and its scans.

    Raises:
        SqlError: the session has no tsfile catalog.
    """
    known = {c.lower(): c for c in catalogs}
    if current.lower() in known:
        return known[current.lower()]
    if not catalogs:
        raise SqlError(
            "tsfile('<url>') needs a tsfile catalog in the session "
            "(spark.sql.catalog.<name> = io.tsfilecatalog.spark.TsFileCatalog)"
        )
    return sorted(catalogs)[0]


def url_reference(
    text: str,
    catalogs: Sequence[str],
    current: str,
    *,
    write: bool = False,
    sessions_function: bool = False,
) -> dict[str, Any] | None:
    """The relation a table reference's ``text`` stands for: ``{"catalog", "name"}`` when it
    is a URL reference, None when it is not (``tsfile.t``: table ``t`` of database ``tsfile``,
    which stays Spark's). ``write``: the reference is an INSERT's target.
    ``sessions_function``: ``text`` is a call ``tsfile(…)`` and the session has a function of
    its own of that name (a SQL table function), which Spark calls: not a URL reference.

    Raises:
        SqlError: a malformed reference (Catalog.sql's messages); a URL reference written to.
    """
    url = None if sessions_function else parse_table_reference(text)
    if url is None:
        return None
    if write:
        raise SqlError(url_reference_refused("INSERT", url.to_sql()))
    return {"catalog": url_catalog(catalogs, current), "name": url.to_sql()}


def load_url(
    warehouse: Warehouse,
    name: str,
    *,
    version: str | None,
    timestamp_us: int | None,
    time_zone: str | None,
) -> dict[str, Any]:
    """The description of the table a URL reference's canonical text ``name`` reads, at its
    own time travel or Spark's ``VERSION AS OF`` / ``TIMESTAMP AS OF`` (not both).

    Raises:
        TableNotFoundError: ``name`` is no URL reference, or nothing readable is there.
        SqlError: time travel given twice; a location holding plain TsFiles (no manifest).
    """
    url = parse_table_reference(name)
    if url is None:
        raise TableNotFoundError(f"no table {name!r} in catalog {warehouse.name!r}")
    number, timestamp = _travel(url, version, timestamp_us, time_zone)
    entry = url_entry(url)
    found = open_location(
        entry.location,
        version=number,
        timestamp=timestamp,
        table=entry.url.table,
        table_uuid=entry.url.table_uuid,
        storage_options=warehouse.storage(entry),
    )
    if isinstance(found, ResolvedScan):
        raise SqlError(
            f"{entry.display_name}: {url.url} holds TsFiles but no table (no manifest), and "
            "spark.sql reads URL references of tables; read the files with "
            "spark.read.format('tsfile').load(url) or Catalog.sql, or adopt them with "
            "CREATE TABLE ... USING tsfile LOCATION '<url>'"
        )
    # Imported here: tables.py imports this module's callers.
    from tsfile_catalog.spark_catalog.tables import describe_table

    described = describe_table(warehouse, entry, found)
    described["scan"]["options"].update(entry.scan_options())
    described["read_only"] = url_reference_refused("A write", entry.display_name)
    return described


def _travel(
    url: TableUrl, version: str | None, timestamp_us: int | None, time_zone: str | None
) -> tuple[int | None, int | None]:
    """The version number and commit-time bound (epoch ms) to open ``url`` at."""
    travel = url.time_travel
    if travel is not None and (version is not None or timestamp_us is not None):
        raise SqlError(
            f"{url.to_sql()!r} gives time travel twice; use either the version/timestamp "
            "setting or VERSION AS OF / TIMESTAMP AS OF, not both"
        )
    if isinstance(travel, VersionAsOf):
        return travel.version, None
    if isinstance(travel, TimestampAsOf):
        # A wall-clock time in the session time zone, as Catalog.sql and Spark read it.
        return None, time_travel_ms(travel.timestamp, time_zone=time_zone)
    if version is not None:
        try:
            return int(version), None
        except ValueError:
            raise SqlError(
                f"VERSION AS OF {version!r} on {url.to_sql()}: a version is a commit number "
                "(DESCRIBE HISTORY lists them)"
            ) from None
    if timestamp_us is not None:
        # Spark resolved TIMESTAMP AS OF to microseconds; a version is committed at or before
        # it exactly when its millisecond is at or before the floor.
        return None, timestamp_us // 1000
    return None, None
