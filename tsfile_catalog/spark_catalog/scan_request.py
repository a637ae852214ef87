"""The plugin's scan description, parsed once per delegate call into a typed object.

``describe_table`` (:mod:`.tables`) writes what a scan of a loaded version needs as JSON
(``scan``: the table's name, location, version and table UUID, time unit, ``timestampAs`` and
source options); the Java adapter hands it back, opaque, with every scan call (push
predicates, plan a scan, push an aggregation, plan a copy-on-write). Each call parses it here
once, opening the table version once (from the metadata cache the load filled, without
listing the log again), and binds any ``where`` text in one place (:meth:`ScanRequest.bind`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from tsfile_catalog.metadata import expressions as ex
from tsfile_catalog.metadata.expressions.parser import parse_predicate
from tsfile_catalog.metadata.schema import TableSchema
from tsfile_catalog.metadata.schema_merge import merged_read_schema
from tsfile_catalog.storage_options import storage_options_from
from tsfile_catalog.table.handle import Table, open_table

__all__ = ["ScanRequest"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ScanRequest:
    """One call's scan: the loaded version Spark reads, and that version opened.

    Attributes:
        table: the name plans and messages show (``ts.db.t``, or a URL reference's text).
        location: the table's root.
        version: the version Spark loaded, which every scan of the query reads.
        unit: the unit of the table's raw times.
        timestamp_as: how ``time`` reads (``long`` or ``timestamp``).
        options: the ``tsfile`` source options of the scan (path, storage settings, ...).
        opened: the table at ``version`` (from the process's metadata cache).
        merged: the schema the scan reads ``version`` under when its options carry
            ``mergedSchema`` (a MERGE WITH SCHEMA EVOLUTION's target); else None.
    """

    table: str
    location: str
    version: int
    unit: ex.TimeUnit
    timestamp_as: ex.TimestampAs
    options: Mapping[str, str]
    opened: Table
    merged: TableSchema | None = None

    @classmethod
    def parse(cls, scan: Mapping[str, Any]) -> ScanRequest:
        """The request of ``scan`` (the JSON :func:`~.tables.describe_table` wrote), its
        table opened at the version it names."""
        options = {str(k): str(v) for k, v in scan["options"].items()}
        version = int(scan["version"])
        # The version its load opened (describe_table names its table): from the process's
        # metadata cache, no listing of the log, when the load ran in this process.
        opened = open_table(
            scan["location"],
            version=version,
            storage_options=storage_options_from(options),
            table_uuid=scan.get("table_uuid"),
        )
        text = next((v for k, v in options.items() if k.lower() == "mergedschema"), None)
        return cls(
            merged=None if text is None else merged_read_schema(opened.schema, text),
            table=str(scan["table"]),
            location=str(scan["location"]),
            version=version,
            # Written by describe_table from the table's own unit and timestampAs.
            unit=cast(ex.TimeUnit, scan["unit"]),
            timestamp_as=cast(ex.TimestampAs, scan["timestamp_as"]),
            options=options,
            opened=opened,
        )

    @property
    def schema(self) -> TableSchema:
        return self.opened.schema if self.merged is None else self.merged

    @property
    def shown(self) -> str:
        """How a plan names the scan: ``tsfile <table> version <n>``."""
        return f"tsfile {self.table} version {self.version}"

    def bind(self, where: str, time_zone: str | None) -> ex.Expr:
        """``where`` (the ``where`` option's SQL text) bound to this version's columns, with
        Spark's semantics for the scan's types (time unit, ``timestampAs``, ``time_zone``).

        Raises:
            PredicateError: text the model cannot parse, or a comparison it cannot bind
                exactly (naming it).
        """
        context = ex.BindContext(
            unit=self.unit, timestamp_as=self.timestamp_as, time_zone=time_zone
        )
        return ex.bind(parse_predicate(where), self.schema, context)
